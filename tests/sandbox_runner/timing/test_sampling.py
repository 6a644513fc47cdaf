"""sandbox/coderefine_sandbox/timing/sampling.py: a stratified, weighted sample of the calls to time."""

from __future__ import annotations

import random

from coderefine_sandbox.timing.sampling import stratified_sample


def test_a_pass_within_the_budget_times_every_call():
    assert stratified_sample([0.1, 0.2], ["f", "f"], budget=0.5) == [(0, 1.0), (1, 1.0)]


def test_the_sample_fits_the_budget_estimates_the_pass_and_keeps_heavy_calls_and_every_target():
    rng = random.Random(3)
    costs = [rng.uniform(1e-4, 2e-3) for _ in range(2000)] + [0.4, 0.3] + [rng.uniform(1e-4, 1e-3) for _ in range(300)]
    targets = ["f"] * 2002 + ["g"] * 300
    sample = stratified_sample(costs, targets, budget=0.5)
    timed = sum(costs[i] for i, _ in sample)
    estimate = sum(costs[i] * weight for i, weight in sample)
    assert timed < 0.5 * 1.6  # about the budget (at least one call per stratum may overshoot it)
    assert abs(estimate / sum(costs) - 1) < 0.05  # one weighted pass estimates the full one
    chosen = {i for i, _ in sample}
    assert {2000, 2001} <= chosen  # the two heavy calls neither vanish...
    assert dict(sample)[2000] == 1.0  # ...nor stand for more than themselves
    assert any(targets[i] == "g" for i in chosen)  # every target keeps calls to be judged by
    assert stratified_sample(costs, targets, budget=0.5) == sample  # deterministic
