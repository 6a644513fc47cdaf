"""When a timing series stops: before its last planned pair as soon as its interval is decisive on either side,
and after it only once decided (an undecided series that looks faster runs longer, up to EXTEND_FACTOR times
its planned pairs).

Rejection side: once the 95% interval lies wholly below the noise floor the candidate cannot turn out
faster; stopping there can only ever reject, so it costs no false speedup.

Acceptance side: looking at the interval after every pair and stopping at the first that clears would
make a false speedup likelier than the 2.5% one look allows (the more looks, the more chances). An early
look therefore accepts only on a 99.9% interval (0.05% one-sided each): over at most a dozen early looks
that adds at most ~0.6% to the series' false-claim rate, and a claim still needs a second, independent
series to clear the floor too.

Running longer when undecided: a series that reaches its planned pairs with its 95% interval straddling the
floor and its point estimate above it (a small true speedup measured on noisy processes: a 1.25x rewrite of a
1 us function under a +10% floor, process-to-process spread ~15%) used to end there, rejected. It now times
more pairs, up to EXTEND_FACTOR times the planned ones (and a time budget, steps.py), looking after each:
rejected as soon as the 95% interval falls below the floor, or the point estimate does (futility: stopping
for it can only reject); accepted early only on a 99.9% interval, as before; and judged at its last pair on
the 95% interval, the criterion the verdict applies. The false-claim rate stays bounded, spent over the
looks: for a candidate exactly at the floor (the worst case; a null candidate sits a whole floor below it)
a series claims at most 2.5% (the planned last look) + 2.5% (the extended last look) + 0.05% per 99.9% look
(P - 3 before, (EXTEND_FACTOR - 1)P - 1 during the extension: 1.3% for P = 6), 6.3% by the union bound; the
extended last look is reached only by series that did not claim at the planned one and share its first P
pairs, so its own share is far below 2.5% (simulated: tests/sandbox_runner/timing/test_sequential.py). A
speedup is still claimed only when a second, independent series, run the same way, clears the floor too, and
the interval over both series does.
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
# An undecided series that looks faster runs up to this many times its planned pairs (and within steps.py's time
# budget). Five, not three: a 1.25x rewrite of a microsecond function under a +10% floor, with 12% spread between
# processes, is confirmed in 73% of runs at three times six pairs and 88% at five (simulated as the tests do),
# while a candidate exactly at the floor is accepted in 0.4% of runs instead of 0.2%.
EXTEND_FACTOR = 5


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


def keep_measuring(original: list[float], candidate: list[float], floor: float, planned: int, limit: int) -> bool:
    """After a look at a series of len(original) pairs: whether to time another pair. Up to `planned` pairs,
    until decided. At `planned`, on only when the 95% interval straddles `floor` with the point estimate at
    or above it (an interval clearing it is a claim, judged there as before). Past it, up to `limit`, on while
    undecided and the point estimate stays at or above the floor: only the 99.9% interval stops it early with
    a claim, the 95% one is looked at once, where the series ends."""
    if decided(original, candidate, floor) is not None:
        return False
    done = len(original)
    if done < planned:
        return True
    speedup, low, _ = paired_speedup(original, candidate)
    if done == planned:
        return low < floor <= speedup and done < limit
    return done < limit and speedup >= floor
