"""The embedded default: the offline provider improves a real example with no model and no key."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import REPO


@pytest.mark.slow  # not `timed`: a 7x-1000x candidate holds under load (see timed_last.py)
def test_offline_optimize_improves_the_example(cli, tmp_path):
    example = tmp_path / "routes"
    shutil.copytree(REPO / "examples" / "routes", example)
    report = tmp_path / "report.json"
    # 3 pairs a series, not the default 6: the ~200x rewrite clears the floor on 3 (CI's quick start runs the
    # same command with the defaults)
    options = ("--report", report, "--timing-pairs", "3")
    proc = cli("optimize", example / "routes.py", *options, env={"OPENAI_API_KEY": ""})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(report.read_text())
    assert data["provider"] == "offline" and data["llm"]["prompt_tokens"] == 0
    assert data["status"] == "improved"
    best = data["best"]
    assert best["tests"]["failed"] == 0 and best["tests"]["passed"] == 10
    assert best["behavior"]["calls_compared"] >= 10 and best["behavior"]["mismatches"] == 0
    assert best["speedup_ci"][0] > 1.05
    assert "status: improved" in proc.stdout and "--write" in proc.stdout
    assert (example / "routes.py").read_text() == (REPO / "examples" / "routes" / "routes.py").read_text()


@pytest.mark.slow  # not `timed`: a 7x-1000x candidate holds under load (see timed_last.py)
def test_offline_feedback_is_built_from_execution_facts(cli, tmp_path):
    example = tmp_path / "routes"
    shutil.copytree(REPO / "examples" / "routes", example)
    report = tmp_path / "report.json"
    proc = cli(
        "optimize", example / "routes.py", "--function", "unique_stops", "--report", report, "--timing-pairs", "3"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(report.read_text())
    first = data["iterations"][0]
    assert first["changed"] == ["unique_stops"]
    feedback = first["feedback"]
    assert "Tests: 2 passed" in feedback and "Speed:" in feedback  # the 2 of 10 tests that call unique_stops
    assert "Where the time goes:" in feedback and feedback.rstrip().endswith(("VERDICT: STOP", "VERDICT: CONTINUE"))
    # --function: count_routes is not touched even though memoizing it would pay off
    assert "functools" not in data["best"]["code"]


@pytest.mark.slow  # not `timed`: a 7x-1000x candidate holds under load (see timed_last.py)
def test_offline_rule_that_changes_behaviour_is_rejected_and_rules_are_retried_one_by_one(cli, make_project, tmp_path):
    # sorted(x)[0] -> min(x) is only safe for non-empty input: on [] the exception type changes.
    root = make_project(
        {
            "mod.py": "def smallest(values):\n    try:\n        return sorted(values)[0]\n    except IndexError:\n"
            "        return None\n\n\ndef unique(items):\n    seen = []\n    for item in items:\n"
            "        if item not in seen:\n            seen.append(item)\n    return seen\n",
            "test_mod.py": "from mod import smallest, unique\n\n\n"
            "def test_smallest():\n    assert smallest([3, 1]) == 1\n"
            "    assert smallest([]) is None\n\n\ndef test_unique():\n"
            "    assert len(unique([i % 700 for i in range(5000)])) == 700\n",
        }
    )
    report = tmp_path / "report.json"
    proc = cli("optimize", root / "mod.py", "--report", report, "--timing-pairs", "3")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(report.read_text())
    verdicts = [(it["role"], it["verdict"]) for it in data["iterations"]]
    assert verdicts[0] == ("generate", "rejected"), data["iterations"][0]["reason"]
    assert ("refine", "accepted") in verdicts, [it["reason"] for it in data["iterations"]]
    assert "seen_set" in data["best"]["code"] or "set()" in data["best"]["code"]
    assert "sorted(values)[0]" in data["best"]["code"]
