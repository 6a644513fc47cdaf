"""When a timing series may stop before its last pair: as soon as its interval is decisive on either side.

Rejection side: once the 95% interval lies wholly below the noise floor the candidate cannot turn out
faster; stopping there can only ever reject, so it costs no false speedup.

Acceptance side: looking at the interval after every pair and stopping at the first that clears would
make a false speedup likelier than the 2.5% one look allows (the more looks, the more chances). An early
look therefore accepts only on a 99.9% interval (0.05% one-sided each): over at most a dozen early looks
that adds at most ~0.6% to the series' false-claim rate, and a claim still needs a second, independent
series to clear the floor too.
"""

from __future__ import annotations

import math
import statistics

from coderefine_sandbox.timing.stats import paired_speedup

# Two-sided 99.9% Student t quantiles by degrees of freedom.
_T999 = {
    1: 636.62,
    2: 31.599,
    3: 12.924,
    4: 8.610,
    5: 6.869,
    6: 5.959,
    7: 5.408,
    8: 5.041,
    9: 4.781,
    10: 4.587,
    12: 4.318,
    15: 4.073,
    20: 3.850,
    30: 3.646,
    60: 3.460,
    120: 3.373,
}
MIN_PAIRS_TO_ACCEPT = 3


def t999(dof: int) -> float:
    if dof in _T999:
        return _T999[dof]
    smaller = [d for d in _T999 if d < dof]  # a smaller row has the larger (safer) quantile
    return _T999[max(smaller)] if smaller else _T999[1]


def strict_lower_bound(original: list[float], candidate: list[float]) -> float:
    """The lower bound of the 99.9% interval of the paired speedup (0.0 with fewer than two pairs)."""
    if len(original) < 2:
        return 0.0
    logs = [math.log(o / c) for o, c in zip(original, candidate, strict=True)]
    half = t999(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(statistics.fmean(logs) - half)


def decided(original: list[float], candidate: list[float], floor: float) -> str | None:
    """ "slower" when the 95% interval lies below `floor` (a ratio, e.g. 1.05), "faster" when (from the
    third pair) the 99.9% interval lies above it, else None: keep measuring."""
    if len(original) < 2:
        return None
    if paired_speedup(original, candidate)[2] < floor:
        return "slower"
    if len(original) >= MIN_PAIRS_TO_ACCEPT and strict_lower_bound(original, candidate) >= floor:
        return "faster"
    return None
