"""Run one step of an evaluation (tests, replay, generation, a timing worker) as a process of its own.

Each step runs in a new session and is killed as a group when its time limit passes, so an infinite loop
or a crash in candidate code becomes a fact in the report, never a hung or broken runner.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from coderefine_sandbox.confine import reap
from coderefine_sandbox.protocol import RunnerRequest, write_json

SANDBOX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class StepTimeout(Exception):
    pass


def run_step(argv: list[str], *, cwd: str, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    """Run argv in its own session; on timeout kill the whole group (children included).

    Output goes to a temporary file, not a pipe: a background process the step leaves behind would
    keep a pipe open and make us wait for it; with a file we wait for the step itself.
    """
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as output:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.wait()
            raise StepTimeout(f"timed out after {timeout:g}s") from None
        finally:
            _kill_group(proc)  # stray children left in the group (background processes)
            _kill_strays()
        output.seek(0)
        return subprocess.CompletedProcess(argv, proc.returncode, output.read(), "")


def run_steps_side_by_side(
    argv: list[str],
    *,
    cwd: str,
    envs: list[dict[str, str]],
    timeout: float,
    stop_others: Callable[[int], bool] | None = None,
) -> list[int | None]:
    """Run argv once per environment, side by side, each in its own session: their return codes (None: stopped
    because `stop_others(code)` said so when another one ended, e.g. a fail-fast run that failed). Their output
    is discarded (pytest's results come back through files). On timeout every group is killed. Strays are
    killed once all have ended, never while one still runs (as run_step's clean-up would)."""
    procs = [
        subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        for env in envs
    ]
    codes: list[int | None] = [None] * len(procs)
    deadline = time.monotonic() + timeout
    try:
        while any(code is None for code in codes):
            for index, proc in enumerate(procs):
                if codes[index] is None and proc.poll() is not None:
                    codes[index] = proc.returncode
                    if stop_others is not None and stop_others(proc.returncode):
                        return codes  # the others are killed below, their codes left None
            if time.monotonic() > deadline:
                raise StepTimeout(f"timed out after {timeout:g}s")
            time.sleep(0.05)
        return codes
    finally:
        for proc in procs:
            _kill_group(proc)
            if proc.poll() is None:
                proc.wait()
        _kill_strays()


def _kill_group(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _kill_strays() -> None:
    """Kill what a step left running outside its process group (a new session, a double fork), where the
    sandbox says every process of our user belongs to this job: otherwise a candidate's background
    process could load the machine while the original is being timed, and fake a speedup."""
    if os.environ.get("CODEREFINE_SOLE_USER") == "1":
        reap()


def base_env(request: RunnerRequest, workspace: str) -> dict[str, str]:
    env = dict(os.environ)
    paths = [SANDBOX_DIR, os.path.normpath(os.path.join(workspace, request.import_root))]
    # The workspace copy must shadow any installed (e.g. editable) copy of the user's package.
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["PYTHONHASHSEED"] = str(request.hash_seed)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["CODEREFINE_MODULE"] = request.module_name
    # The steps' temporary area, apart from HOME: what a module writes here is not a new power (audit.py).
    temp = os.path.join(request.io_dir, "tmp")
    os.makedirs(temp, exist_ok=True)
    env["TMPDIR"] = temp
    return env


def step_argv(step: str, step_request: object, path: str) -> list[str]:
    """A step that imports the user's module, run on its typed request: the request is written to `path`, and
    the step (`coderefine_sandbox.<step>`) reads it back strictly, its one argument."""
    write_json(path, step_request)
    # the interpreter running us (inside an image, not the host path in the request)
    return [sys.executable, "-m", f"coderefine_sandbox.{step}", path]


def remove_stale(*paths: str) -> None:
    """Delete a previous step's output, so that a step that writes none cannot pass off an old one."""
    for path in paths:
        if os.path.exists(path):
            os.remove(path)


def read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return ""
