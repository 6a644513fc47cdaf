"""`coderefine scan` and `coderefine sweep` end to end: the real CLI, the process sandbox, two worker processes.

The scripted provider offers one module in which both functions of pkg/ops.py are rewritten; each function's
run keeps only its own function's change (--function), so the two verified changes must be merged and
verified again together before --write applies them.
"""

from __future__ import annotations

import json

import pytest

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
