"""benchmarks/verdict_quality.py: the parts that decide what its figures mean."""

from __future__ import annotations

import ast
import sys

import pytest

from tests.conftest import BENCH, REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import verdict_quality


def test_the_comment_edit_keeps_the_program_of_every_suite_solution():
    solutions = sorted((BENCH / "optimize").glob("*/solution.py"))
    if not solutions:
        pytest.skip(f"no optimize suite under {BENCH}")
    for path in solutions:
        code = path.read_text()
        edited = verdict_quality.comment_edit(code)
        assert edited != code, path
        assert ast.dump(ast.parse(edited)) == ast.dump(ast.parse(code)), path


def test_mutants_are_counted_only_when_the_inputs_tell_them_apart(tmp_path):
    import pickle

    cases = tmp_path / "cases.pkl"
    cases.write_bytes(pickle.dumps([((3,), 3), ((-2,), 2)]))
    original = "def f(x):\n    if x < 0:\n        return -x\n    return x\n"
    assert verdict_quality.distinguishable(original, original.replace("if x < 0", "if x > 0"), "f", cases)
    assert not verdict_quality.distinguishable(original, original.replace("x < 0", "x <= 0"), "f", cases)
    hangs = "def f(x):\n    while True:\n        pass\n"
    assert verdict_quality.distinguishable(original, hangs, "f", cases, timeout=2)


def test_summary_rates():
    judged = [
        verdict_quality.Judged("t1", "null", False, "not faster", 1.0, [0.9, 1.1], 5.0),
        verdict_quality.Judged("t1", "comment", True, "1.2x faster", 1.2, [1.06, 1.3], 5.0),
        verdict_quality.Judged("t1", "reference", True, "4x faster", 4.0, [3.5, 4.5], 6.0),
        verdict_quality.Judged("t1", "mutant", False, "1 test failed", None, None, 1.0),
        verdict_quality.Judged("t2", "reference", False, "not faster", 1.5, [0.9, 2.0], 6.0),
    ]
    results = [
        verdict_quality.TaskFigures("t1", 10, 5.0, judged[:4]),
        verdict_quality.TaskFigures("t2", 10, 1.5, judged[4:]),
    ]
    summary = verdict_quality.summarise(results)
    assert summary["false_speedup"] == "1/2 = 50.0%" and summary["false_speedups"] == ["t1 comment 1.2x faster"]
    assert summary["detection_at_2x"] == "1/1 = 100.0%"  # t2's reference is not 2x faster independently
    assert summary["median_reported_over_independent"] == 0.9  # 4/5 and 1.5/1.5
    assert summary["false_accept_mutants"] == "0/1 = 0.0%"
