"""A round's drafts verified side by side in the real sandbox: worker processes of coderefine.pool, one
workspace each, tests and replay overlapping, timing never (the timing lock's holds do not overlap)."""

from __future__ import annotations

import time
from itertools import combinations

import pytest

from coderefine.evaluation.evaluator import SandboxEvaluator
from coderefine.evaluation.project import resolve_project
from coderefine.evaluation.settings import EvaluationSettings
from coderefine.evaluation.verdicts import correctness_problem
from coderefine.refine.candidate import original_candidate
from coderefine.sandboxes.registry import make_sandbox

MODULE = """
def total(n):
    s = 0
    for i in range(n):
        s += i
    return s
"""
TESTS = """
import time

from mod import total


def test_total():
    time.sleep(1.0)  # a suite that takes a while: what parallel verification saves
    for n in (0, 1, 10, 3000, 20000):
        assert total(n) == n * (n - 1) // 2
"""
FAST = "def total(n):\n    return n * (n - 1) // 2 if n > 0 else 0\n"
WRONG = "def total(n):\n    return n * n\n"
SAME = "def total(n):\n    return sum(range(n))\n"


@pytest.mark.slow
def test_three_drafts_on_two_workers_overlap_their_tests_but_never_their_timing(make_project):
    root = make_project({"mod.py": MODULE, "test_mod.py": TESTS})
    settings = EvaluationSettings(measure_speed=True, timing_pairs=3, draft_workers=2)
    evaluator = SandboxEvaluator(resolve_project(root / "mod.py"), ("total",), make_sandbox("process"), settings)
    try:
        evaluator.baseline(MODULE)
        started = time.perf_counter()
        fast, wrong, same = evaluator.evaluate_many([original_candidate(c) for c in (FAST, WRONG, SAME)])
        wall = time.perf_counter() - started
    finally:
        evaluator.close()
    assert correctness_problem(fast) is None and fast.timing is not None and fast.timing.speedup > 2
    assert "test_total" in (correctness_problem(wrong) or "") and wrong.timing is None
    assert correctness_problem(same) is None and same.timing is not None
    # Side by side: the round took less than its drafts one after another.
    assert wall < fast.wall_seconds + wrong.wall_seconds + same.wall_seconds - 0.5
    # Timing one at a time: every hold of the lock (the runner's timing steps) is apart from the others.
    holds = [hold for evaluation in (fast, same) for hold in evaluation.timing_holds]
    assert len(holds) >= 2
    for (a_start, a_end), (b_start, b_end) in combinations(holds, 2):
        assert a_end <= b_start or b_end <= a_start


def test_one_worker_or_one_draft_is_evaluated_in_this_process(make_project, monkeypatch):
    calls = []
    evaluator = SandboxEvaluator.__new__(SandboxEvaluator)
    evaluator.settings = EvaluationSettings(measure_speed=True, draft_workers=1)
    monkeypatch.setattr(
        evaluator, "evaluate", lambda candidate: calls.append(candidate.code) or candidate.code, raising=False
    )
    assert evaluator.evaluate_many([original_candidate("x = 1\n"), original_candidate("x = 2\n")]) == [
        "x = 1\n",
        "x = 2\n",
    ]
    assert calls == ["x = 1\n", "x = 2\n"]
