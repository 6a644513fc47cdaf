"""`coderefine scan` and `coderefine sweep` end to end: the real CLI, the process sandbox, two worker processes.

The scripted provider offers one module in which both functions of pkg/ops.py are rewritten; each function's
run keeps only its own function's change (--function), so the two verified changes must be merged and
verified again together before --write applies them.
"""

from __future__ import annotations

import json

import pytest

from tests.sandboxes.test_docker import require_docker
from tests.sweep import interrupted

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


@pytest.mark.slow  # not `timed`: a 7x-1000x candidate holds under load (see timed_last.py)
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


@pytest.mark.slow
def test_ctrl_c_of_a_local_sweep_keeps_what_finished_leaves_nothing_behind_and_a_rerun_continues(
    make_project, cli, tmp_path
):
    root = make_project(interrupted.FILES)
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    script = tmp_path / "script.json"
    script.write_text(interrupted.NO_CODE)
    state, report = tmp_path / "state.jsonl", tmp_path / "r.json"
    args = ["sweep", "pkg", "--script", script, "--sandbox", "process", "--timing-pairs", "2", "--workers", "2",
            "--state", state, "--report", report]  # fmt: skip
    scratch = tmp_path / "scratch"  # the sweep's, its workers' and the sandbox's temporary folders
    scratch.mkdir()
    env = interrupted.sweep_env(tmp_path, scratch)
    proc, running, held, _ = interrupted.start_and_interrupt(args, root, env, state, watch=0)
    assert held and len(running) >= 3, running  # the pool's workers, the held function's sandbox run
    assert proc.returncode == 130, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr and proc.stderr == "", proc.stderr
    [message] = [line for line in proc.stdout.splitlines() if line.startswith("interrupted: ")]
    assert message == f"interrupted: 1 finished functions kept in {state}; rerun the same command to continue (1 left)"
    assert "pkg/quick.py::quick" in proc.stdout and "pkg/held.py::held" not in proc.stdout  # what finished, only
    assert [o["key"] for o in interrupted.outcomes(state)] == ["pkg/quick.py::quick"]
    data = json.loads(report.read_text())
    assert data["interrupted"] and [o["key"] for o in data["functions"]] == ["pkg/quick.py::quick"]
    assert data["summary"]["chosen"] == 2 and data["summary"]["finished"] == 1
    assert interrupted.still_running(running) == []
    assert list(scratch.iterdir()) == []  # the stopped job's copies and sandbox folders are cleaned up
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".coderefine" not in p.parts} == before

    # The held test no longer waits: the rerun reuses the scan and the finished function, runs the other one.
    (root / "tests/test_held.py").write_text(interrupted.HELD_TESTS.replace("time.sleep(120)", "pass"))
    rerun = cli(*args, cwd=root, env=env)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    again = json.loads(report.read_text())
    assert not again["interrupted"] and again["summary"]["resumed"] == 1 and again["summary"]["finished"] == 2
    assert sorted(o["key"] for o in interrupted.outcomes(state)) == ["pkg/held.py::held", "pkg/quick.py::quick"]
    assert all(o["error"] is None for o in again["functions"]), again["functions"]


@pytest.mark.slow
def test_a_sweep_in_the_docker_sandbox_times_each_candidate_under_the_shared_lock_one_at_a_time(
    make_project, cli, tmp_path
):
    require_docker()
    root = make_project({"pkg/__init__.py": "", "pkg/ops.py": OPS, "tests/test_ops.py": TESTS})
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"generate": [f"```python\n{FASTER}```"], "feedback": ["VERDICT: STOP"]}))
    report = tmp_path / "r.json"
    # The lock file sits in a private temporary folder of the sweep's; the container's job users are
    # strangers to the host, so they open it only if its folder and file modes let them.
    proc = cli("sweep", "pkg", "--top", "2", "--script", script, "--sandbox", "docker", "--timing-pairs", "2",
               "--max-iterations", "1", "--workers", "2", "--report", report, cwd=root)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(report.read_text())
    assert data["scan"]["sandbox"].startswith("docker")
    for outcome in data["functions"]:
        assert outcome["error"] is None and outcome["status"] != "failed", outcome["reason"]
        # The baseline's calibration and the candidate's timing, each inside a container, under the lock.
        assert len(outcome["placement"]["timing"]) >= 2, outcome
    assert data["summary"]["timing_overlaps"] == []
