"""The runner's profile mode on a workload command (`coderefine scan --command`): the program runs as
`python SCRIPT ARGS` would, under cProfile, then the hot functions' lines are traced."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from coderefine.resources import sandbox_dir

MODULE = """
def slow_sum(n):
    total = 0
    for i in range(n):
        total += i
    return total


def once(x):
    if x:
        return 1
    return 2


def countdown(n):
    while n:
        yield n
        n -= 1


def locked(lock, x):
    with lock:
        return x + 1
"""
SCRIPT = """
import sys
import threading
from pkg.work import countdown, locked, once, slow_sum

for _ in range(int(sys.argv[1])):
    slow_sum(20000)
    list(countdown(5))
    locked(threading.Lock(), 1)
once(1)
"""


def run_profile(tmp_path, command):
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "work.py").write_text(MODULE)
    (root / "bench.py").write_text(SCRIPT)
    io_dir = tmp_path / "io"
    io_dir.mkdir()
    request = {
        "mode": "profile",
        "workspace": str(root),
        "io_dir": str(io_dir),
        "import_roots": ["."],
        "tests": [],
        "command": command,
        "paths": ["pkg"],
        "min_calls": 3,
        "timeout": 60,
        "hash_seed": 0,
        "max_calls": 500,
    }
    (io_dir / "request.json").write_text(json.dumps(request))
    proc = subprocess.run(
        [sys.executable, "-m", "coderefine_sandbox.runner", str(io_dir / "request.json")],
        cwd=root,
        env={"PYTHONPATH": str(sandbox_dir()), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return json.loads(proc.stdout)


@pytest.mark.slow
def test_a_workload_command_is_profiled_and_its_hot_functions_covered(tmp_path):
    report = run_profile(tmp_path, ["bench.py", "4"])
    assert report["runner_error"] is None and report["command_exit"] == 0 and report["tests"] is None
    functions = {f["name"]: f for f in report["functions"]}
    assert set(functions) == {"slow_sum", "once", "countdown", "locked"}  # only code under pkg/, not bench.py
    hot, cold = functions["slow_sum"], functions["once"]
    assert hot["file"] == "pkg/work.py" and hot["line"] == 2 and hot["calls"] == 4 and hot["test_count"] == 0
    assert hot["own_seconds"] > 10 * cold["own_seconds"] and 0 < hot["own_seconds"] <= report["total_seconds"]
    assert (hot["lines"], hot["covered"]) == (4, 4)
    assert (cold["lines"], cold["covered"]) == (0, 0)  # one call: too few to be judged, so not traced
    assert (cold["starts"], cold["usable_calls"]) == (None, None)
    assert (hot["starts"], hot["usable_calls"], hot["unusable"]) == (4, 4, {})
    # cProfile counts each resumption of the generator (6 per call: 5 items and the end); it started 4 times
    generator = functions["countdown"]
    assert generator["primitive_calls"] == 24 and generator["starts"] == 4 and generator["usable_calls"] == 4
    lock = functions["locked"]  # called 4 times, but a lock cannot be kept for replay: optimize could use none
    assert lock["starts"] == 4 and lock["usable_calls"] == 0
    assert lock["unusable"] == {"argument 1 is a lock (cannot be kept)": 4}
    failing = run_profile(tmp_path / "again", ["bench.py", "not-a-number"])
    assert failing["command_exit"] == 1 and "ValueError" in failing["command_output"]
