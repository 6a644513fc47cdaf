"""sandbox/coderefine_sandbox/timing/sequential.py: stopping a timing series once it is decisive, either way."""

from __future__ import annotations

import math
import random

from coderefine_sandbox.timing.sequential import EXTEND_FACTOR, decided, keep_measuring, strict_lower_bound, t999
from coderefine_sandbox.timing.stats import paired_speedup


def test_a_clear_slowdown_stops_from_the_second_pair():
    assert decided([1.0], [2.0], 1.05) is None
    assert decided([1.0, 1.0], [2.0, 2.1], 1.05) == "slower"


def test_a_clear_speedup_stops_from_the_third_pair_only():
    assert decided([3.0, 3.1], [1.0, 1.0], 1.05) is None
    assert decided([3.0, 3.1, 2.9], [1.0, 1.0, 1.0], 1.05) == "faster"


def test_a_noisy_series_keeps_measuring():
    assert decided([1.3, 0.9, 1.2], [1.0, 1.0, 1.0], 1.05) is None


def test_the_strict_bound_is_below_the_95_percent_one_and_the_table_rounds_safely():
    original, candidate = [1.5, 1.4, 1.6, 1.5], [1.0, 1.0, 1.0, 1.0]
    assert strict_lower_bound(original, candidate) < paired_speedup(original, candidate)[1]
    assert t999(11) == t999(10) > t999(12)


def test_looking_after_every_pair_keeps_false_claims_near_the_one_look_rate():
    """No true speedup, the floor at 1.0 (the worst case): the share of series that end claiming a speedup,
    early or at the last pair, stays near the 2.5% a single look allows."""
    rng = random.Random(7)
    claims, trials, pairs = 0, 2000, 6
    for _ in range(trials):
        original: list[float] = []
        candidate: list[float] = []
        verdict = None
        for _ in range(pairs):
            original.append(rng.lognormvariate(0.0, 0.1))
            candidate.append(rng.lognormvariate(0.0, 0.1))
            verdict = decided(original, candidate, 1.0)
            if verdict is not None:
                break
        if verdict == "faster" or (verdict is None and paired_speedup(original, candidate)[1] >= 1.0):
            claims += 1
    assert claims / trials < 0.035


# ----------------------------------------------------------------------------- running on when undecided


def test_an_undecided_series_that_looks_faster_runs_on_and_only_a_strict_interval_ends_it_early():
    straddling = ([1.3, 1.0, 1.25, 1.1, 1.35, 1.05], [1.0] * 6)  # 1.17x [1.03, 1.33] against a +10% floor
    assert keep_measuring(*straddling, 1.1, planned=6, limit=18)
    assert not keep_measuring(*straddling, 1.1, planned=6, limit=6)  # no room to run on: judged as before
    assert not keep_measuring([1.3] * 6, [1.0] * 6, 1.1, planned=6, limit=18)  # cleared at the planned pair: a claim
    assert not keep_measuring([1.05, 1.0, 1.1] * 2, [1.0] * 6, 1.1, planned=6, limit=18)  # looks no faster: done
    # Past the planned pairs a 95% interval clearing the floor does not end the series (that look is the last
    # one's), a 99.9% one does, and so does the point estimate falling below the floor.
    original, candidate = [1.3, 1.0, 1.25, 1.1, 1.35, 1.05, 1.3, 1.25, 1.3], [1.0] * 9
    assert paired_speedup(original, candidate)[1] >= 1.1 > strict_lower_bound(original, candidate)
    assert keep_measuring(original, candidate, 1.1, planned=6, limit=18)
    assert not keep_measuring(original, candidate, 1.1, planned=6, limit=9)
    assert not keep_measuring([*original, 0.8, 0.8, 0.8], [1.0] * 12, 1.1, planned=6, limit=18)


def _series(rng: random.Random, speedup: float, spread: float, floor: float, limit: int):
    """One series as steps.py runs it, on synthetic log-normal pairs: (claimed, original, candidate)."""
    original: list[float] = []
    candidate: list[float] = []
    while True:
        original.append(rng.lognormvariate(0.0, spread))
        candidate.append(rng.lognormvariate(-math.log(speedup), spread))
        if not keep_measuring(original, candidate, floor, 6, limit):
            break
    return paired_speedup(original, candidate)[1] >= floor, original, candidate


def _claims(speedup: float, spread: float, floor: float, limit: int, trials: int = 600) -> tuple[float, float]:
    """The share of first series that claim, and of candidates accepted (both series and the interval over
    both clear the floor, as verdicts.faster requires)."""
    rng = random.Random(11)
    first = accepted = 0
    for _ in range(trials):
        claimed, original, candidate = _series(rng, speedup, spread, floor, limit)
        if claimed:
            first += 1
            again, more_original, more_candidate = _series(rng, speedup, spread, floor, limit)
            both = paired_speedup(original + more_original, candidate + more_candidate)[1] >= floor
            accepted += again and both
    return first / trials, accepted / trials


LIMIT = 6 * EXTEND_FACTOR  # the most pairs a series of six planned ones runs to


def test_running_on_never_accepts_a_null_candidate_and_keeps_the_worst_case_false_claims_bounded():
    # The same code on both sides, a +10% floor, 15% process-to-process spread: never accepted.
    assert _claims(1.0, 0.15, 1.1, LIMIT, trials=300)[1] == 0.0
    # A candidate exactly at the floor (the worst case): a series claims at most the union bound over its looks
    # (2.5% + 2.5% + 26 x 0.05% at five times six pairs), and an acceptance, needing both series, stays near
    # what it was without.
    before, after = _claims(1.1, 0.15, 1.1, 6), _claims(1.1, 0.15, 1.1, LIMIT)
    assert before[0] < 0.035 and after[0] < 0.063
    assert after[1] < 0.005


def test_running_on_confirms_a_small_true_speedup_that_six_pairs_cannot():
    # A 1.25x rewrite of a ~1 us function: +10% floor, 15% spread between processes. Running on to three times
    # the planned pairs confirmed it in about 45% of runs, to five times in about 70%.
    before, after = _claims(1.25, 0.15, 1.1, 6, trials=150), _claims(1.25, 0.15, 1.1, LIMIT, trials=150)
    three_times = _claims(1.25, 0.15, 1.1, 18, trials=150)
    assert before[1] < 0.15 and three_times[1] < 0.55 < after[1]
