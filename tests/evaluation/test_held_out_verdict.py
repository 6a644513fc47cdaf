"""coderefine/evaluation/verdicts.py: when a speedup is taken to come from the inputs the prompts showed (the
held-out calls)."""

from __future__ import annotations

from coderefine.evaluation.verdicts import fast_only_on_shown
from coderefine.records import Timing


def timing(
    held_out: tuple[float, float, float] | None, shown: tuple[float, float, float] | None, cost: float | None
) -> Timing:
    return Timing(
        speedup=40.0,
        ci_low=35.0,
        ci_high=45.0,
        original_seconds=1.0,
        candidate_seconds=0.025,
        pairs=8,
        loops=1,
        min_speedup=0.05,
        held_out=held_out,
        shown=shown,
        held_out_cost=cost,
    )


def test_no_gain_on_the_held_out_calls_is_fast_only_on_the_shown_ones() -> None:
    # A lookup table of the shown inputs: the held-out calls run the original's code.
    assert fast_only_on_shown(timing((1.0, 0.96, 1.03), (50.0, 45.0, 55.0), 1.0))


def test_a_far_smaller_gain_on_held_out_calls_of_the_same_cost_is_fast_only_on_the_shown_ones() -> None:
    assert fast_only_on_shown(timing((3.0, 2.5, 3.5), (50.0, 45.0, 55.0), 0.9))


def test_a_smaller_gain_on_cheaper_held_out_calls_is_an_honest_speedup_that_grows_with_the_input() -> None:
    # examples/routes: O(n^2) -> O(n); the held-out call is the small one (measured 2.25x vs 143x shown).
    assert not fast_only_on_shown(timing((2.25, 1.86, 2.72), (143.0, 130.0, 158.0), 0.05))


def test_without_held_out_calls_nothing_is_said() -> None:
    assert not fast_only_on_shown(timing(None, (50.0, 45.0, 55.0), None))
    assert not fast_only_on_shown(timing((50.0, 45.0, 55.0), (50.0, 45.0, 55.0), 1.0))
