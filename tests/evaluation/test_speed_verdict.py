"""The speed verdict: a speedup is claimed only when its interval clears the floor in two timing series."""

from __future__ import annotations

import pytest

from coderefine import records
from coderefine.evaluation import verdicts
from coderefine.records import Baseline, BehaviorReport, Evaluation, Timing
from coderefine.refine.scoring import SpeedupScorer

PASSED = records.TestReport(collected=3, passed=3, failed=0, skipped=0, duration=0.1, exit_code=0)


def judged(ci_low: float, confirmation: tuple[float, float, float] | None):
    timing = Timing(
        speedup=1.3,
        ci_low=ci_low,
        ci_high=1.5,
        original_seconds=0.013,
        candidate_seconds=0.01,
        pairs=12,
        loops=10,
        min_speedup=0.05,
        confirmation=confirmation,
    )
    evaluation = Evaluation(tests=PASSED, behavior=BehaviorReport(5, 0), timing=timing, metrics={})
    baseline = Baseline(evaluation=evaluation, score=1.0, calls_recorded=5, loops=10, workload_seconds=0.013)
    return timing, SpeedupScorer().judge(evaluation, baseline, "")


@pytest.mark.parametrize(
    ("ci_low", "confirmation", "faster", "reason"),
    [
        (1.10, (1.3, 1.08, 1.5), True, "1.30x [1.10, 1.50] faster (confirmed)"),
        (1.10, (1.02, 0.95, 1.10), False, "not confirmed; the first timing series cleared +5% but a second one gave"),
        (1.10, None, False, "does not clear +5%"),  # no second series: the first never cleared the floor
        (1.01, (1.3, 1.08, 1.5), False, "does not clear +5%"),  # both series together do not clear
    ],
)
def test_a_speedup_must_show_in_a_second_series(ci_low, confirmation, faster, reason):
    timing, verdict = judged(ci_low, confirmation)
    assert verdicts.faster(timing) is faster and verdict.accepted is faster
    assert reason in verdict.reason, verdict.reason
