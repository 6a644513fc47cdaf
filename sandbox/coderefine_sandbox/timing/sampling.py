"""A representative, deterministic sample of the recorded calls to time when one pass over all of them
would take longer than the per-pass budget. Behaviour is still compared on every call (behaviour/replay.py); only
timing uses the sample.

Per target (so that every function keeps calls to be judged by), the calls are sorted by their cost in
the original and cut into strata of equal total cost. Each stratum gets an equal part of the target's
share of the budget (a target's share follows its share of the workload): a stratum of a few heavy calls
is timed whole, a stratum of many light ones is sampled evenly along the cost order, and each call timed
stands for the calls of its stratum it represents (its weight), so one weighted pass estimates the time
of the full pass. Heavy calls thus neither dominate the sample nor vanish from it.

The sample is chosen once, from the original's costs, and the same one is used for original and
candidate in every timing of the run.
"""

from __future__ import annotations

import math
import os

from coderefine_sandbox.protocol import TimingSample, read_json, write_json

STRATA = 4


def stratified_sample(costs: list[float], targets: list[str], budget: float) -> list[tuple[int, float]]:
    """(index into the workload, weight) pairs, sorted by index; every call with weight 1 when the whole pass
    fits the budget."""
    total = sum(costs)
    if total <= budget or not costs:
        return [(index, 1.0) for index in range(len(costs))]
    groups: dict[str, list[int]] = {}
    for index, target in enumerate(targets):
        groups.setdefault(target, []).append(index)
    chosen: list[tuple[int, float]] = []
    for indices in groups.values():
        share = budget * sum(costs[i] for i in indices) / total
        # A call that alone costs a stratum's part of the budget is timed whole, standing for itself only.
        heavy = [i for i in indices if costs[i] >= share / STRATA]
        chosen += [(i, 1.0) for i in heavy]
        rest = [i for i in indices if costs[i] < share / STRATA]
        cost = sum(costs[i] for i in rest)
        left = max(share - sum(costs[i] for i in heavy), 0.0)
        for stratum in _strata(sorted(rest, key=lambda i: (-costs[i], i)), costs, cost):
            if not stratum:
                continue
            stratum_cost = sum(costs[i] for i in stratum)
            wanted = left / STRATA
            count = len(stratum)
            take = count if stratum_cost <= 0 else min(count, max(1, math.ceil(count * wanted / stratum_cost)))
            picks = sorted({min(count - 1, int((k + 0.5) * count / take)) for k in range(take)})
            weight = count / len(picks)
            chosen += [(stratum[p], weight) for p in picks]
    return sorted(chosen)


def _strata(ordered: list[int], costs: list[float], total: float) -> list[list[int]]:
    """`ordered` cut into at most STRATA runs of about equal total cost."""
    strata: list[list[int]] = [[]]
    running = 0.0
    for index in ordered:
        if strata[-1] and running >= total * len(strata) / STRATA and len(strata) < STRATA:
            strata.append([])
        strata[-1].append(index)
        running += costs[index]
    return strata


def sample_path(calls_path: str) -> str:
    """Where the run's sample lives: beside the recorded calls, in the baseline's folder."""
    return os.path.join(os.path.dirname(calls_path), "sample.json")


def write_sample(path: str, sample: list[tuple[int, float]]) -> None:
    write_json(path, TimingSample(tuple(sample)))


def read_sample(path: str | None) -> list[tuple[int, float]] | None:
    if not path or not os.path.exists(path):
        return None
    return list(read_json(TimingSample, path).calls)
