"""`coderefine scan` and `coderefine sweep` end to end: the real CLI, the process sandbox, two worker processes.

The scripted provider offers one module in which both functions of pkg/ops.py are rewritten; each function's
run keeps only its own function's change (--function), so the two verified changes must be merged and
verified again together before --write applies them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from tests.conftest import MODEL_ENVIRONMENT

OPS = """
def dedupe(items):
    out = []
    for x in items:
        if x not in out:
            out.append(x)
    return out


def common(a, b):
    return [x for x in a if x in b]


def tiny(x):
    return x + 1
"""
FASTER = """
def dedupe(items):
    return list(dict.fromkeys(items))


def common(a, b):
    bs = set(b)
    return [x for x in a if x in bs]
"""
TESTS = """
from pkg.ops import common, dedupe, tiny


def test_dedupe():
    for n in (10, 600, 900):
        assert dedupe(list(range(n)) * 2) == list(range(n))


def test_common():
    for n in (10, 600, 900):
        assert common(list(range(n)), list(range(0, 2 * n, 2))) == list(range(0, n, 2))


def test_tiny():
    assert tiny(1) == 2
"""


@pytest.mark.slow
@pytest.mark.timed
def test_sweep_refines_in_parallel_merges_per_file_writes_and_resumes(make_project, cli, tmp_path):
    root = make_project({"pkg/__init__.py": "", "pkg/ops.py": OPS, "tests/test_ops.py": TESTS})
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"generate": [f"```python\n{FASTER}```"], "feedback": ["VERDICT: STOP"]}))
    report, html, markdown, sarif = (tmp_path / n for n in ("r.json", "r.html", "r.md", "r.sarif"))
    common = ("sweep", "pkg", "--top", "5", "--script", script, "--sandbox", "process", "--timing-pairs", "3")
    common += ("--workers", "2", "--report", report)
    first = cli(*common, "--html", html, "--markdown", markdown, "--sarif", sarif, cwd=root)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "2 can be judged" in first.stdout and "tiny" in first.stdout  # the scan's table and its verdicts
    data = json.loads(report.read_text())
    assert data["engine_description"] == "local: 2 worker processes"
    ranked = {e["target"]: e for e in data["scan"]["functions"]}
    assert ranked["tiny"]["judgeable"] is False and ranked["tiny"]["why_not"] == "1 call < min_calls 3"
    assert {ranked["dedupe"]["rank"], ranked["common"]["rank"]} == {1, 2}
    assert ranked["dedupe"]["tests"] == ["tests/test_ops.py::test_dedupe"]
    assert {o["key"]: o["status"] for o in data["functions"]} == {
        "pkg/ops.py::dedupe": "improved",
        "pkg/ops.py::common": "improved",
    }
    [plan] = data["files"]
    assert plan["file"] == "pkg/ops.py" and sorted(plan["functions"]) == ["common", "dedupe"]
    assert plan["verified_by"].startswith("merged run (3 tests passed") and not plan["written"]
    assert data["summary"]["timing_overlaps"] == []
    holds = [hold for o in data["functions"] for hold in o["placement"]["timing"]]
    assert len(holds) >= 4  # each function: its baseline's calibration, its candidate's timing (in the sandbox)
    assert (root / "pkg/ops.py").read_text() == OPS.lstrip("\n")  # nothing written without --write
    assert "<svg" in html.read_text() and "| `pkg/ops.py::dedupe` |" in markdown.read_text()
    assert [r["ruleId"] for r in json.loads(sarif.read_text())["runs"][0]["results"]] == ["verified-speedup"] * 2

    # Rerun with --write: the scan, both functions and the merge's verdict come from the state file.
    second = cli(*common, "--write", cwd=root)
    assert second.returncode == 0, second.stdout + second.stderr
    again = json.loads(report.read_text())
    assert again["summary"]["resumed"] == 2 and again["summary"]["written"] == ["pkg/ops.py"]
    written = (root / "pkg/ops.py").read_text()
    assert "dict.fromkeys(items)" in written and "bs = set(b)" in written and "def tiny(x):" in written


QUICK = "def quick(xs):\n    out = 0\n    for x in xs:\n        out += x\n    return out\n"
HELD = "def held(xs):\n    out = 0\n    for x in xs:\n        out += x\n    return out\n"
QUICK_TESTS = """
from pkg.quick import quick


def test_quick():
    for n in (500, 1000, 2000):
        assert quick(range(n)) == sum(range(n))
"""
HELD_TESTS = """
import sys
import time

from pkg.held import held


def test_held():
    if sys.getprofile() is None and sys.gettrace() is None:
        time.sleep(120)  # the sweep's own runs of this test (not the scan's profiled ones) outlast the Ctrl-C
    for n in range(5):
        assert held(range(n)) == sum(range(n))
"""


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


@pytest.mark.slow
def test_ctrl_c_of_a_local_sweep_keeps_what_finished_leaves_nothing_behind_and_a_rerun_continues(
    make_project, tmp_path
):
    root = make_project(
        {
            "pkg/__init__.py": "",
            "pkg/quick.py": QUICK,
            "pkg/held.py": HELD,
            "tests/test_quick.py": QUICK_TESTS,
            "tests/test_held.py": HELD_TESTS,
        }
    )
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"generate": ["no code this time"]}))  # each run is its baseline only
    state, report = tmp_path / "state.jsonl", tmp_path / "r.json"
    args = ["sweep", "pkg", "--script", script, "--sandbox", "process", "--timing-pairs", "2", "--workers", "2",
            "--state", state, "--report", report]  # fmt: skip
    scratch = tmp_path / "scratch"  # the sweep's, its workers' and the sandbox's temporary folders
    scratch.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in MODEL_ENVIRONMENT}
    env.update(TMPDIR=str(scratch), XDG_CACHE_HOME=str(tmp_path / "cache"), COLUMNS="200", NO_COLOR="1")
    # A session of its own, signalled as a whole: what a terminal's Ctrl-C does (the workers get it too).
    proc = subprocess.Popen(
        [sys.executable, "-m", "coderefine", *map(str, args)],
        cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 240
    while len(_outcomes(state)) < 1 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert proc.poll() is None, proc.communicate()
    running = _descendants(proc.pid)  # the pool's workers, the held function's sandbox run
    assert len(running) >= 3, running
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, out + err
    assert "Traceback" not in out + err and err == "", err
    [message] = [line for line in out.splitlines() if line.startswith("interrupted: ")]
    assert message == f"interrupted: 1 finished functions kept in {state}; rerun the same command to continue (1 left)"
    assert "pkg/quick.py::quick" in out and "pkg/held.py::held" not in out  # the finished one's line, only
    assert [o["key"] for o in _outcomes(state)] == ["pkg/quick.py::quick"]
    data = json.loads(report.read_text())
    assert data["interrupted"] and [o["key"] for o in data["functions"]] == ["pkg/quick.py::quick"]
    assert data["summary"]["chosen"] == 2 and data["summary"]["finished"] == 1
    # The pool's resource tracker ends when this process's pipe closes, a moment after it exits.
    _, alive = psutil.wait_procs(running, timeout=10)
    assert [p for p in alive if p.status() != psutil.STATUS_ZOMBIE] == []
    assert list(scratch.iterdir()) == []  # the stopped job's copies and sandbox folders are cleaned up
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".coderefine" not in p.parts} == before

    # The held test no longer waits: the rerun reuses the scan and the finished function, runs the other one.
    (root / "tests/test_held.py").write_text(HELD_TESTS.replace("time.sleep(120)", "pass"))
    rerun = subprocess.run(
        [sys.executable, "-m", "coderefine", *map(str, args)], cwd=root, env=env, capture_output=True, text=True,
        timeout=240,
    )  # fmt: skip
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    again = json.loads(report.read_text())
    assert not again["interrupted"] and again["summary"]["resumed"] == 1 and again["summary"]["finished"] == 2
    assert sorted(o["key"] for o in _outcomes(state)) == ["pkg/held.py::held", "pkg/quick.py::quick"]  # once each
    assert all(o["error"] is None for o in again["functions"]), again["functions"]


def _outcomes(state) -> list[dict]:
    lines = state.read_text().splitlines()[1:] if state.exists() else []
    return [record["outcome"] for record in map(_json_or_none, lines) if record and "outcome" in record]


def _json_or_none(line: str) -> dict | None:
    try:
        return json.loads(line)
    except json.JSONDecodeError:
        return None  # a line being written
