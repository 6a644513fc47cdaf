"""coderefine/bench/causes.py: each rejected candidate counted under its real cause."""

from __future__ import annotations

from coderefine import records
from coderefine.bench.causes import count_causes
from coderefine.records import BehaviorReport, Evaluation, Iteration, Role, Verdict


def _iteration(accepted: bool, *, failed: int = 0, mismatches: int = 0, error: str | None = None) -> Iteration:
    tests = records.TestReport(1, 0 if failed else 1, failed, 0, 0.1, 1 if failed else 0)
    evaluation = Evaluation(tests, BehaviorReport(3, mismatches), None, {}, error=error)
    return Iteration(0, Role.GENERATE, None, evaluation, Verdict(accepted, "", None))


def test_timing_failures_and_slow_candidates_are_not_behaviour_rejections():
    iterations = (
        _iteration(False, failed=1),
        _iteration(False, mismatches=2),
        _iteration(False, error="timing failed: timed out after 60s"),
        _iteration(False, error="the sandbox runner failed: boom"),
        _iteration(False),
        _iteration(True),
        Iteration(1, Role.REFINE, None, None, Verdict(False, "identical", None)),
    )
    assert count_causes(iterations) == {"tests": 1, "behaviour": 1, "timing": 1, "sandbox": 1, "not_improved": 1}
