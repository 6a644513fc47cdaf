"""sandbox/coderefine_sandbox/timing/stats.py: the paired speedup and its 95% interval."""

from __future__ import annotations

import math
import statistics

import pytest
from coderefine_sandbox.timing.stats import paired_speedup, t95


def test_t95_reads_the_table_and_rounds_degrees_of_freedom_up():
    assert t95(1) == 12.706
    assert t95(5) == 2.571
    assert t95(21) == t95(25) == 2.060  # between rows: the next larger row (a wider, safer interval)
    assert t95(500) == 1.960  # beyond the table: the normal quantile


def test_equal_ratios_give_that_speedup_with_a_zero_width_interval():
    speedup, low, high = paired_speedup([2.0, 4.0, 6.0], [1.0, 2.0, 3.0])
    assert speedup == pytest.approx(2.0)
    assert low == pytest.approx(2.0)
    assert high == pytest.approx(2.0)


def test_speedup_is_the_geometric_mean_of_the_paired_ratios_with_a_t_interval_on_their_logs():
    original = [1.0, 1.0, 1.0, 1.0]
    candidate = [0.5, 0.8, 0.4, 1.0]
    logs = [math.log(o / c) for o, c in zip(original, candidate, strict=True)]
    half = 3.182 * statistics.stdev(logs) / 2  # 3 degrees of freedom, sqrt(4) pairs
    speedup, low, high = paired_speedup(original, candidate)
    assert speedup == pytest.approx(math.exp(statistics.fmean(logs)))
    assert (low, high) == pytest.approx(
        (math.exp(statistics.fmean(logs) - half), math.exp(statistics.fmean(logs) + half))
    )
    assert low < speedup < high


def test_a_slower_candidate_gives_a_speedup_below_one():
    speedup, low, high = paired_speedup([1.0, 1.1, 0.9], [2.0, 2.1, 1.9])
    assert high < 1.0
    assert low < speedup < high


def test_pairing_cancels_a_drift_that_affects_both_sides():
    # The machine slows down over the series; the ratio within each pair stays 1.5.
    original = [1.5, 3.0, 6.0, 12.0]
    candidate = [1.0, 2.0, 4.0, 8.0]
    speedup, low, high = paired_speedup(original, candidate)
    assert (speedup, low, high) == pytest.approx((1.5, 1.5, 1.5))


def test_one_pair_gives_no_interval():
    speedup, low, high = paired_speedup([2.0], [1.0])
    assert speedup == pytest.approx(2.0)
    assert (low, high) == (0.0, math.inf)


@pytest.mark.parametrize(("original", "candidate"), [([], []), ([1.0, 2.0], [1.0])])
def test_unpaired_or_empty_measurements_are_refused(original, candidate):
    with pytest.raises(ValueError, match="same, non-zero number"):
        paired_speedup(original, candidate)
