"""A project whose sweep is interrupted half way, for the Ctrl-C tests of both engines: `quick` finishes in
seconds; `held`'s test sleeps for two minutes in the sweep's own runs (not under the scan's profiler or
line tracer), so a Ctrl-C always finds its sandbox run going. Each function has its own test file, so the
traced selection of one never runs the other's test (held's names neither quick nor imports pkg by a
statement)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

from tests.conftest import inherited_environment

QUICK = "def quick(xs):\n    out = 0\n    for x in xs:\n        out += x\n    return out\n"
HELD = QUICK.replace("quick", "held")
QUICK_TESTS = """
from pkg.quick import quick


def test_quick():
    for n in (500, 1000, 2000):
        assert quick(range(n)) == sum(range(n))
"""
# Imported through importlib, not an import statement: a first run also traces the test files importing the
# target's package (within a budget), and quick's must not run this one.
HELD_TESTS = """
import importlib
import sys
import time

held = importlib.import_module("pkg.held").held


def test_held():
    if sys.getprofile() is None and sys.gettrace() is None:
        time.sleep(120)  # the sweep's own runs of this test (not the scan's profiled ones) outlast the Ctrl-C
    for n in range(5):
        assert held(range(n)) == sum(range(n))
"""
FILES = {
    "pkg/__init__.py": "",
    "pkg/quick.py": QUICK,
    "pkg/held.py": HELD,
    "tests/test_quick.py": QUICK_TESTS,
    "tests/test_held.py": HELD_TESTS,
}
NO_CODE = json.dumps({"generate": ["no code this time"]})  # each function's run is its baseline only


def sweep_env(tmp_path: Path, scratch: Path) -> dict[str, str]:
    """Without the developer's model settings; temporary folders in `scratch`, to check the cleanup; a
    selection cache of its own, so every run traces its tests as a first run does."""
    env = inherited_environment()
    env.update(TMPDIR=str(scratch), XDG_CACHE_HOME=str(tmp_path / "cache"), COLUMNS="200", NO_COLOR="1")
    return env


def outcomes(state: Path) -> list[dict]:
    """The finished functions in a sweep's state file (a line being written is skipped)."""
    found = []
    for line in state.read_text().splitlines()[1:] if state.exists() else []:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "outcome" in record:
            found.append(record["outcome"])
    return found


def start_and_interrupt(
    args: list[str | Path], root: Path, env: dict[str, str], state: Path, watch: int
) -> tuple[subprocess.CompletedProcess[str], list[psutil.Process], list[psutil.Process], float]:
    """Start `coderefine ARGS` in a session of its own; once a function is finished, send SIGINT to the
    whole session, as a terminal's Ctrl-C does, while a sandbox run goes on under process `watch` (0: the
    command's). Returns the run, the processes under `watch` just before the signal, the sandbox runs among
    them, and the seconds from the signal to the exit."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "coderefine", *map(str, args)],
        cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 240
    running: list[psutil.Process] = []
    runs: list[psutil.Process] = []
    while time.monotonic() < deadline and proc.poll() is None:
        if outcomes(state):  # one finished; the other's sandbox run (its test sleeping) is going, or soon
            running = psutil.Process(watch or proc.pid).children(recursive=True)
            runs = sandbox_runs(running)
            if [p for p in runs if time.time() - p.create_time() > 2]:  # not a short one
                break
        time.sleep(0.2)
    assert proc.poll() is None, proc.communicate()
    signalled = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    finished = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    return finished, running, runs, time.monotonic() - signalled


def still_running(processes: list[psutil.Process]) -> list[psutil.Process]:
    """Those not ended within a few seconds (a pool's resource tracker ends a moment after its parent)."""
    _, alive = psutil.wait_procs(processes, timeout=10)
    return [p for p in alive if p.status() != psutil.STATUS_ZOMBIE]


def sandbox_runs(processes: list[psutil.Process]) -> list[psutil.Process]:
    """The sandbox runners among `processes` (those ended since they were listed are left out)."""
    found = []
    for process in processes:
        try:
            if "coderefine_sandbox.runner" in " ".join(process.cmdline()):
                found.append(process)
        except psutil.Error:
            continue
    return found
