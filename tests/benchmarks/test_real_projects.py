"""The real-projects benchmark's own parts: its scripted candidates and what it reads from a report."""

from __future__ import annotations

import ast
import importlib.util
import json
import sys

from tests.conftest import REPO


def _load():
    spec = importlib.util.spec_from_file_location("real_projects", REPO / "benchmarks" / "real_projects.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["real_projects"] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


real_projects = _load()


def test_every_scripted_candidate_is_one_function_of_the_targets_name():
    for library in real_projects.LIBRARIES:
        for target in library.targets:
            assert len(target.candidates) == 3, target  # the three-candidate run the targets speak of
            for code in target.candidates:
                (node,) = ast.parse(code).body
                assert isinstance(node, ast.FunctionDef) and node.name == target.function


def test_the_script_offers_the_candidates_in_order(tmp_path):
    path = real_projects.write_script(
        tmp_path / "s.json", ("def f(): return 1", "def f(): return 2", "def f(): return 3")
    )
    script = json.loads(path.read_text())
    assert len(script["generate"]) == 1 and len(script["refine"]) == 2 and len(script["feedback"]) == 2
    assert "return 1" in script["generate"][0] and "return 3" in script["refine"][1]


def test_a_report_becomes_one_row():
    report = {
        "status": "improved",
        "baseline": {
            "selection": {"mode": "traced", "candidate_tests": 36, "baseline_tests": 219, "test_files": 4,
                          "test_files_run": 2},
            "test_seconds": 4.7, "seconds": 10.7, "calls_recorded": 48,
        },
        "iterations": [{"seconds": 37.8, "verdict": "accepted", "reason": "2.03x faster"}],
    }  # fmt: skip
    row = real_projects.summary(report, 105.84, 0)
    assert row["tests_selected"] == 36 and row["tests_baseline"] == 219 and row["test_files"] == [2, 4]
    assert row["wall_seconds"] == 105.8 and row["candidate_seconds"] == [37.8]
    assert row["verdicts"] == ["accepted: 2.03x faster"] and row["error"] is None
