"""Speedup with a confidence interval from interleaved, paired timing processes.

Process k times the original and the candidate back to back (the order alternates), so each pair sees
the same machine state; the ratio within a pair cancels slow drifts such as another job starting. The
interval is a Student t interval on the log of the paired ratios (ratios are multiplicative), turned back
into a ratio: the geometric-mean speedup and its 95% bounds.
"""

from __future__ import annotations

import math
import statistics

# Two-sided 95% Student t quantiles by degrees of freedom (the stdlib has no t distribution).
_T95 = {
    1: 12.706,
    2: 4.303,
    3: 3.182,
    4: 2.776,
    5: 2.571,
    6: 2.447,
    7: 2.365,
    8: 2.306,
    9: 2.262,
    10: 2.228,
    11: 2.201,
    12: 2.179,
    13: 2.160,
    14: 2.145,
    15: 2.131,
    16: 2.120,
    17: 2.110,
    18: 2.101,
    19: 2.093,
    20: 2.086,
    25: 2.060,
    30: 2.042,
    40: 2.021,
    60: 2.000,
    120: 1.980,
}


def t95(dof: int) -> float:
    if dof in _T95:
        return _T95[dof]
    larger = [d for d in _T95 if d > dof]
    return _T95[min(larger)] if larger else 1.960


def paired_speedup(original: list[float], candidate: list[float]) -> tuple[float, float, float]:
    """(speedup, low, high): original time / candidate time, paired by index."""
    if len(original) != len(candidate) or not original:
        raise ValueError("need the same, non-zero number of original and candidate measurements")
    logs = [math.log(o / c) for o, c in zip(original, candidate, strict=True)]
    centre = statistics.fmean(logs)
    if len(logs) < 2:
        return math.exp(centre), 0.0, math.inf
    half = t95(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(centre), math.exp(centre - half), math.exp(centre + half)
