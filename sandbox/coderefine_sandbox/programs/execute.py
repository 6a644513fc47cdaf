"""Run a recorded program run on one version of the program: a fresh working folder holding the files the
run read, the recorded stdin, argv and allow-listed environment, `PYTHONHASHSEED` and `random` pinned.

The interpreter is started the way the test started it (`python [flags] file args` or `python [flags] -m
module args`), on the version's own file, so the only difference between original and candidate is the
program. Files the run creates or changes in its folder are part of its outcome.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass

from coderefine_sandbox.process import SANDBOX_DIR, remove_stale
from coderefine_sandbox.programs import HOOK_DIR
from coderefine_sandbox.programs.runs import Outcome, Run
from coderefine_sandbox.protocol import Capability


@dataclass(frozen=True)
class Version:
    """Where one version of the program lives: its workspace, the file in it and the import root."""

    workspace: str
    file: str  # relative to the workspace
    import_root: str  # relative to the workspace

    def argv(self, run: Run) -> list[str]:
        if run.kind == "module":
            return [sys.executable, *run.flags, "-m", run.target, *run.args]
        if run.kind == "script":  # the same wrapper; it imports this version's module (import root first)
            script = run.target if os.path.isabs(run.target) else os.path.join(self.workspace, run.target)
            return [sys.executable, *run.flags, script, *run.args]
        return [sys.executable, *run.flags, os.path.join(self.workspace, self.file), *run.args]

    def env(self, run: Run, hash_seed: int) -> dict[str, str]:
        env = {name: os.environ[name] for name in ("PATH", "HOME", "TMPDIR", "SYSTEMROOT") if name in os.environ}
        env.update(run.env)
        paths = [HOOK_DIR]
        if run.kind in ("module", "script"):
            paths.append(os.path.normpath(os.path.join(self.workspace, self.import_root)))
        env.update(
            {
                "PYTHONPATH": os.pathsep.join(paths),
                "PYTHONHASHSEED": str(hash_seed),
                "PYTHONDONTWRITEBYTECODE": "1",
                "PYTHONNOUSERSITE": "1",
                "CODEREFINE_PROGRAM_PIN": "1",
                "CODEREFINE_PROGRAM_FILE": os.path.realpath(os.path.join(self.workspace, self.file)),
            }
        )
        return env


@contextlib.contextmanager
def run_folder(run: Run, parent: str) -> Iterator[str]:
    """A fresh working folder with the files the run read; removed afterwards."""
    folder = tempfile.mkdtemp(prefix="run-", dir=parent)
    try:
        for path, data in run.files.items():
            target = os.path.join(folder, path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as fh:
                fh.write(data)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def execute_audited(
    run: Run, version: Version, scratch: str, hash_seed: int, timeout: float, where: str, original: str
) -> tuple[Outcome, tuple[Capability, ...]]:
    """The version's outcome on the run, and the powers it used (audit.py, through the start-up hook's
    coderefine_program_audit); `where` names the run in a refusal, `original` is the original's workspace."""
    out = os.path.join(scratch, "run-powers.jsonl")
    remove_stale(out)
    spec = {"WORKSPACE": version.workspace, "ORIGINAL": original, "SANDBOX": SANDBOX_DIR, "WHERE": where}
    audit = {"CODEREFINE_PROGRAM_AUDIT": out, **{f"CODEREFINE_PROGRAM_AUDIT_{k}": v for k, v in spec.items()}}
    outcome = execute(run, version, scratch, hash_seed, timeout, extra_env=audit)
    found: list[Capability] = []
    with contextlib.suppress(OSError), open(out, encoding="utf-8") as fh:
        for line in fh:
            with contextlib.suppress(ValueError, TypeError):
                found.append(Capability(**json.loads(line)))
    return outcome, tuple(found)


def execute(
    run: Run,
    version: Version,
    scratch: str,
    hash_seed: int,
    timeout: float,
    lines_out: str | None = None,
    extra_env: dict[str, str] | None = None,
) -> Outcome:
    """The version's outcome on the run; with `lines_out`, the program's lines it ran go there (JSON)."""
    env = version.env(run, hash_seed)
    env.update(extra_env or {})
    if lines_out is not None:
        env["CODEREFINE_PROGRAM_LINES"] = lines_out
    ran_out = os.path.join(scratch, "run-ran.txt")
    if run.kind == "script":
        remove_stale(ran_out)
        env["CODEREFINE_PROGRAM_RAN"] = ran_out
    with run_folder(run, scratch) as folder:
        before = _snapshot(folder)
        started = time.perf_counter()
        proc = subprocess.Popen(
            version.argv(run),
            cwd=folder,
            env=env,
            stdin=subprocess.PIPE if run.stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        timed_out = False
        try:
            stdout, stderr = proc.communicate(run.stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_group(proc)
            stdout, stderr = proc.communicate()
        finally:
            kill_group(proc)
        seconds = time.perf_counter() - started
        written = {path: digest for path, digest in _snapshot(folder).items() if before.get(path) != digest}
    stderr = stderr.replace(version.workspace.encode(), b"<workspace>").replace(folder.encode(), b"<cwd>")
    return Outcome(proc.returncode, stdout, stderr, written, seconds, timed_out, _ran(run, ran_out))


def _ran(run: Run, ran_out: str) -> bool:
    """False only when a wrapper's run said at exit that it never imported the version's own file."""
    if run.kind != "script":
        return True
    try:
        with open(ran_out, encoding="utf-8") as fh:
            return fh.read().strip() != "0"
    except OSError:
        return True


def kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _snapshot(folder: str) -> dict[str, str]:
    found = {}
    for root, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            with contextlib.suppress(OSError), open(path, "rb") as fh:
                found[os.path.relpath(path, folder)] = hashlib.sha256(fh.read()).hexdigest()
    return found
