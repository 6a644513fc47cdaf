"""sandbox/coderefine_sandbox/timing/sequential.py: stopping a timing series once it is decisive, either way."""

from __future__ import annotations

import random

from coderefine_sandbox.timing.sequential import decided, strict_lower_bound, t999
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
