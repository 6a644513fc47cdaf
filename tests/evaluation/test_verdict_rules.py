"""coderefine/evaluation/verdicts.py, called directly: the first-pass rule, the verdict when nothing was
timed, and the readability verdict (the speed series and the trust rules have their own test modules)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from coderefine import records
from coderefine.evaluation import verdicts
from coderefine.records import Baseline, BehaviorReport, Evaluation, Timing

PASSED = records.TestReport(collected=3, passed=3, failed=0, skipped=0, duration=0.1, exit_code=0)
FAILED = records.TestReport(
    collected=3, passed=2, failed=1, skipped=0, duration=0.1, exit_code=1, failures=(records.TestFailure("t::a", "x"),)
)
# A cache kept between calls: no faster on the first pass of each process, far faster on the later ones.
CACHED = Timing(
    speedup=1.02,
    ci_low=0.95,
    ci_high=1.1,
    original_seconds=0.01,
    candidate_seconds=0.0098,
    pairs=6,
    loops=1,
    min_speedup=0.05,
    basis="first",
    steady=(40.0, 35.0, 45.0),
)


def evaluation(
    tests: records.TestReport = PASSED, timing: Timing | None = None, readability: float = 70.0
) -> Evaluation:
    return Evaluation(tests=tests, behavior=BehaviorReport(5, 0), timing=timing, metrics={"readability": readability})


def baseline(calls: int = 5, untimed: str | None = None, score: float = 70.0) -> Baseline:
    return Baseline(evaluation(), calls_recorded=calls, loops=1, workload_seconds=0.01, score=score, untimed=untimed)


def test_a_speedup_only_after_the_first_pass_is_refused_with_both_figures():
    assert verdicts.flattered_by_repetition(CACHED)
    verdict = verdicts.speed_verdict(evaluation(timing=CACHED), baseline())
    assert not verdict.accepted
    assert verdict.reason.startswith("faster only after the first pass (state kept between calls, e.g. a cache)")
    assert "40.00x [35.00, 45.00] on later ones" in verdict.reason


def test_the_first_pass_rule_does_not_touch_a_speedup_that_holds_from_the_first_pass():
    honest = replace(CACHED, speedup=3.0, ci_low=2.5, ci_high=3.5, confirmation=(3.0, 2.6, 3.4))
    assert not verdicts.flattered_by_repetition(honest)
    assert verdicts.speed_verdict(evaluation(timing=honest), baseline()).accepted
    steady_basis = replace(CACHED, basis="steady")
    assert not verdicts.flattered_by_repetition(steady_basis)


def test_a_first_pass_speedup_the_second_series_did_not_confirm_is_not_called_a_cache():
    # The first pass cleared the floor over both series; the second series alone did not.
    unconfirmed = replace(CACHED, speedup=2.27, ci_low=1.47, ci_high=3.5, confirmation=(1.3, 0.9, 1.9))
    assert not verdicts.flattered_by_repetition(unconfirmed)
    verdict = verdicts.speed_verdict(evaluation(timing=unconfirmed), baseline())
    assert not verdict.accepted and verdict.reason.startswith("not faster: not confirmed"), verdict.reason


@pytest.mark.parametrize(
    ("calls", "untimed", "reason"),
    [
        (0, None, "speed not measurable: the tests make no recordable calls to the target"),
        (5, "too fast to measure reliably: ...", "speed not measured: too fast to measure reliably: ..."),
        (5, None, "speed was not measured"),
    ],
)
def test_without_timing_the_verdict_says_why_nothing_was_measured(calls, untimed, reason):
    verdict = verdicts.speed_verdict(evaluation(), baseline(calls, untimed))
    assert (verdict.accepted, verdict.reason, verdict.score) == (False, reason, None)


def test_a_failing_test_decides_before_any_figure():
    fast = replace(CACHED, basis="steady", speedup=9.0, ci_low=8.0, ci_high=10.0, confirmation=(9.0, 8.0, 10.0))
    verdict = verdicts.speed_verdict(evaluation(FAILED, fast), baseline())
    assert (verdict.accepted, verdict.reason) == (False, "1 test failed: t::a")


@pytest.mark.parametrize(("score", "accepted"), [(73.0, True), (72.9, False), (60.0, False)])
def test_readability_needs_its_minimum_gain(score, accepted):
    verdict = verdicts.readability_verdict(evaluation(readability=score), baseline(score=70.0), 3.0)
    assert verdict.accepted is accepted and verdict.score == score
    figure = f"readability 70.0 -> {score:.1f} ({score - 70:+.1f})"
    assert verdict.reason == (figure if accepted else f"not more readable: {figure}, needs +3")


def test_a_more_readable_candidate_that_fails_a_test_is_refused_for_the_test():
    verdict = verdicts.readability_verdict(evaluation(FAILED, readability=95.0), baseline(score=70.0), 3.0)
    assert (verdict.accepted, verdict.reason, verdict.score) == (False, "1 test failed: t::a", 95.0)
