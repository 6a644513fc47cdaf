"""One verdict per function: a candidate changing several targets keeps only the changes verified faster,
and the narrowed candidate is evaluated again before it can be accepted."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from coderefine import records
from coderefine.evaluation.verdicts import function_verdicts
from coderefine.providers.base import RunContext
from coderefine.providers.scripted import ScriptedProvider
from coderefine.records import BehaviorReport, Candidate, Evaluation, Timing
from coderefine.refine.loop import LoopSettings, RefinementLoop
from coderefine.refine.per_function import keep
from coderefine.refine.scoring import scorer_for
from coderefine.refine.tasks import load_task
from tests.conftest import fenced
from tests.refine.fake_evaluator import FakeEvaluator, confirmed_timing

ORIGINAL = "def f(n):\n    return sum(range(n))\n\n\ndef g(n):\n    return n * 2\n"
BOTH = "def f(n):\n    return n * (n - 1) // 2\n\n\ndef g(n):\n    return sum(n for _ in range(2))\n"
F_FAST = "n * (n - 1) // 2"
G_SLOW = "sum(n for _ in range(2))"


def _timing(speedup: float, low: float, per_function: dict[str, tuple[float, float, float]]) -> Timing:
    return Timing(speedup, low, speedup * 1.1, 0.01, 0.01 / speedup, 6, 100, 0.05, per_function=per_function)


def _evaluation(timing: Timing | None, mismatched: tuple[str, ...] = ()) -> Evaluation:
    return Evaluation(
        tests=records.TestReport(collected=1, passed=1, failed=0, skipped=0, duration=0.1, exit_code=0),
        behavior=BehaviorReport(calls_compared=6, mismatches=len(mismatched), mismatched_functions=mismatched),
        timing=timing,
        metrics={},
    )


def test_each_changed_function_gets_its_own_verdict_and_only_the_faster_are_kept():
    timing = _timing(1.1, 0.95, {"f": (2.0, 1.8, 2.2), "g": (0.8, 0.7, 0.9)})
    verdicts = function_verdicts(_evaluation(timing), ("f", "g"))
    assert [(v.function, v.verdict, v.speedup) for v in verdicts] == [("f", "faster", 2.0), ("g", "not faster", 0.8)]
    assert keep(verdicts, _evaluation(timing)) == ("f",)
    # a second series that does not hold for f makes it "not faster" too: nothing to keep
    confirmed = replace(timing, per_function_confirmation={"f": (1.02, 0.9, 1.1), "g": (0.8, 0.7, 0.9)})
    assert keep(function_verdicts(_evaluation(confirmed), ("f", "g")), _evaluation(confirmed)) is None


def test_a_function_whose_behaviour_changed_is_dropped_and_the_rest_is_timed_again():
    evaluation = _evaluation(None, mismatched=("g",))
    verdicts = function_verdicts(evaluation, ("f", "g"))
    assert [v.verdict for v in verdicts] == ["not measured", "behaviour changed"]
    assert keep(verdicts, evaluation) == ("f",)
    failing = replace(evaluation, tests=replace(evaluation.tests, passed=0, failed=1, exit_code=1))
    assert keep(verdicts, failing) is None  # a failing test cannot be put on one function


def _timing_of(code: str) -> Timing | None:
    if F_FAST in code and G_SLOW in code:  # the whole: f faster, g slower, the blend not clear
        return _timing(1.1, 0.95, {"f": (2.0, 1.8, 2.2), "g": (0.8, 0.7, 0.9)})
    if F_FAST in code:
        return replace(confirmed_timing(1.6), per_function={"f": (2.0, 1.8, 2.2), "g": (1.0, 0.97, 1.03)})
    return None


def test_the_loop_verifies_the_narrowed_candidate_again_and_reports_every_function(tmp_path: Path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"generate": [fenced(BOTH)], "feedback": [], "refine": []}))
    spec = load_task("optimize")
    context = RunContext("optimize", "mod.py", ORIGINAL, ("f", "g"), None, False, spec.offline_rules)
    evaluator = FakeEvaluator(lambda namespace: None, timing=_timing_of)
    settings = LoopSettings(max_iterations=1, patience=1, min_improvement=spec.min_improvement)
    outcome = RefinementLoop(spec, scorer_for(spec), ScriptedProvider(script), evaluator, context, settings).run()
    assert len(evaluator.evaluated) == 2
    assert F_FAST in evaluator.evaluated[1] and "return n * 2" in evaluator.evaluated[1]
    (iteration,) = outcome.iterations
    assert outcome.best is iteration and iteration.verdict.accepted
    assert isinstance(iteration.candidate, Candidate) and iteration.candidate.changed == ("f",)
    assert [(v.function, v.verdict, v.kept) for v in iteration.functions] == [
        ("f", "faster", True),
        ("g", "not faster", False),
    ]
    assert "per function: f: faster 2.00x [1.80, 2.20]; g: not faster 0.80x [0.70, 0.90] (dropped)" in (
        iteration.verdict.reason
    )
    assert any("dropped g (not faster)" in note for note in iteration.candidate.notes)


def test_a_function_faster_on_its_own_calls_in_both_series_is_accepted_whatever_the_blend():
    from coderefine.evaluation.verdicts import per_function_verdict as judged
    from coderefine.records import FunctionVerdict, Verdict

    rejected = Verdict(False, "not faster: 1.03x [0.98, 1.08]", 1.03)
    per_function = {"f": (2.0, 1.8, 2.2), "g": (1.0, 0.97, 1.03)}
    timing = replace(_timing(1.03, 0.98, per_function), per_function_confirmation={"f": (1.9, 1.7, 2.1)})
    functions = (FunctionVerdict("f", "faster", 2.0, 1.8, 2.2),)
    verdict = judged(rejected, _evaluation(timing), functions)
    assert verdict.accepted and verdict.reason.startswith("f faster on its own calls (confirmed)")
    # not confirmed by the second series, or another target slower: the blend's verdict stands
    assert judged(rejected, _evaluation(replace(timing, per_function_confirmation={})), functions) == rejected
    slower = replace(timing, per_function={**per_function, "g": (0.8, 0.7, 0.9)})
    assert judged(rejected, _evaluation(slower), functions) == rejected


def test_no_target_slower_reads_each_figure_with_the_harness_cost_left_in():
    from coderefine.evaluation.verdicts import per_function_verdict as judged
    from coderefine.records import FunctionVerdict, Verdict

    rejected = Verdict(False, "not faster: 1.03x [0.98, 1.08]", 1.03)
    # g left unchanged, its calls about what the harness costs: net of that cost its figure read 0.62x [0.48, 0.81]
    # (two small numbers), with it left in 1.00x [0.98, 1.02]. Not slower: f's change is accepted on its own calls.
    per_function = {"f": (2.0, 1.8, 2.2), "g": (0.62, 0.48, 0.81)}
    timing = replace(
        _timing(1.03, 0.98, per_function),
        per_function_confirmation={"f": (1.9, 1.7, 2.1)},
        per_function_with_harness={"f": (1.6, 1.5, 1.7), "g": (1.0, 0.98, 1.02)},
    )
    functions = (FunctionVerdict("f", "faster", 2.0, 1.8, 2.2),)
    assert judged(rejected, _evaluation(timing), functions).accepted
    # g slower even with the harness's cost in both sides' seconds: slower, the blend's verdict stands.
    slower = replace(timing, per_function_with_harness={"f": (1.6, 1.5, 1.7), "g": (0.93, 0.9, 0.96)})
    assert judged(rejected, _evaluation(slower), functions) == rejected
    # A report without the figures (older) reads the net ones, as before.
    assert judged(rejected, _evaluation(replace(timing, per_function_with_harness={})), functions) == rejected


def test_a_speedup_the_trust_rules_caught_on_the_whole_is_never_overruled_per_function():
    from coderefine.evaluation.verdicts import per_function_verdict as judged
    from coderefine.records import FunctionVerdict, Verdict

    # A whole-file run where one function got an lru_cache: decided on the first pass (1.06x), while that
    # function's own figure, over every pass, read 118x in both series.
    per_function = {"square": (118.0, 109.0, 128.0), "cube": (1.0, 0.97, 1.03)}
    timing = replace(
        _timing(1.06, 0.98, per_function),
        basis="first",
        steady=(8.3, 7.8, 8.9),
        per_function_confirmation={"square": (110.0, 100.0, 121.0)},
    )
    rejected = Verdict(False, "faster only after the first pass (state kept between calls, e.g. a cache): ...", 1.06)
    functions = (FunctionVerdict("square", "faster", 118.0, 109.0, 128.0),)
    assert judged(rejected, _evaluation(timing), functions) == rejected
    # Timed on the steady basis, the same figures are a function faster on its own calls.
    assert judged(rejected, _evaluation(replace(timing, basis="steady")), functions).accepted
    # Fast only on the shown inputs over the whole: its held-out calls far below the shown ones.
    lookup = replace(timing, basis="steady", held_out=(1.0, 0.9, 1.05), shown=(30.0, 20.0, 40.0))
    assert judged(rejected, _evaluation(lookup), functions) == rejected
    # An honest blend that does not clear the floor reads alike on held-out and shown calls: still accepted.
    honest = replace(timing, basis="steady", held_out=(1.02, 0.98, 1.04), shown=(1.03, 0.99, 1.06))
    assert judged(rejected, _evaluation(honest), functions).accepted


# A file run where g got a cache and f an honest rewrite: g's own first pass is no faster, its later passes are.
CACHED = {"f": (2.0, 1.8, 2.2), "g": (1.01, 0.97, 1.05)}
CACHED_STEADY = {"g": (96.0, 90.0, 102.0)}


def test_a_cache_on_one_function_is_judged_on_its_first_pass_and_dropped():
    timing = replace(
        confirmed_timing(1.9),
        per_function=CACHED,
        per_function_confirmation={"f": (1.9, 1.7, 2.1), "g": (1.0, 0.96, 1.04)},
        per_function_steady=CACHED_STEADY,
    )
    f, g = function_verdicts(_evaluation(timing), ("f", "g"))
    assert (f.verdict, f.basis, f.reason) == ("faster", "steady", "")
    assert (g.verdict, g.basis, g.speedup) == ("not faster", "first", 1.01)
    assert g.text() == (
        "g: not faster, faster only after the first pass (a cache): 1.01x [0.97, 1.05] on the first pass, "
        "96.00x [90.00, 102.00] on later ones"
    )
    assert keep((f, g), _evaluation(timing)) == ("f",)  # dropped, and the rest verified again
    # A function decided on its first pass that is faster there too: faster, on its first-pass figure.
    cold_too = replace(timing, per_function={**CACHED, "g": (3.0, 2.5, 3.5)}, per_function_confirmation={})
    g = function_verdicts(_evaluation(cold_too), ("g",))[0]
    assert (g.verdict, g.text()) == ("faster", "g: faster 3.00x [2.50, 3.50] on the first pass")


def test_a_lookup_of_one_functions_shown_inputs_is_not_faster():
    lookup = replace(
        confirmed_timing(1.9),
        per_function={"f": (2.0, 1.8, 2.2), "g": (2.0, 1.8, 2.2)},
        per_function_held_out={"g": (1.0, 0.9, 1.04)},
        per_function_shown={"g": (30.0, 20.0, 40.0)},
        per_function_held_out_cost={"g": 1.1},
    )
    f, g = function_verdicts(_evaluation(lookup), ("f", "g"))
    assert f.verdict == "faster" and g.verdict == "not faster"
    assert g.reason == (
        "fast only on the shown inputs: 30.00x [20.00, 40.00] on the calls the prompts may show, "
        "1.00x [0.90, 1.04] on held-out calls (2.00x overall)"
    )
    # An honest rewrite reads alike on both halves of its calls.
    honest = replace(lookup, per_function_held_out={"g": (1.9, 1.7, 2.1)}, per_function_shown={"g": (2.1, 1.9, 2.3)})
    assert [v.verdict for v in function_verdicts(_evaluation(honest), ("f", "g"))] == ["faster", "faster"]


def test_a_whole_accepted_with_a_change_its_own_figures_caught_is_refused_naming_it():
    from coderefine.evaluation.verdicts import per_function_verdict as judged
    from coderefine.records import Verdict

    # Nothing else to keep (g alone changed): the whole cleared, 1.11x on the steady basis, a cache too small in
    # the pass for the whole's rule; g's own figures say cache.
    timing = replace(confirmed_timing(1.11), per_function=CACHED, per_function_steady=CACHED_STEADY)
    accepted = Verdict(True, "1.11x [1.09, 1.13] faster (confirmed)", 1.11)
    functions = function_verdicts(_evaluation(timing), ("g",))
    verdict = judged(accepted, _evaluation(timing), functions)
    assert not verdict.accepted and verdict.reason.startswith("g: faster only after the first pass (a cache): 1.01x")
    assert "not shipped as faster" in verdict.reason and "(1.11x [1.09, 1.13])" in verdict.reason
    # Without the cache's figures, the same whole stands.
    honest = replace(timing, per_function={"g": (1.12, 1.08, 1.16)}, per_function_steady={})
    assert judged(accepted, _evaluation(honest), function_verdicts(_evaluation(honest), ("g",))) == accepted


def _cached_timing_of(code: str) -> Timing | None:
    if F_FAST in code and G_SLOW in code:  # f honest, g "cached": the whole clears on f alone
        return replace(
            confirmed_timing(1.9),
            per_function=CACHED,
            per_function_confirmation={"f": (1.9, 1.7, 2.1), "g": (1.0, 0.96, 1.04)},
            per_function_steady=CACHED_STEADY,
        )
    if F_FAST in code:
        return replace(confirmed_timing(1.8), per_function={"f": (2.0, 1.8, 2.2), "g": (1.0, 0.97, 1.03)})
    return None


def test_the_loop_drops_a_cached_function_and_verifies_the_rest_again(tmp_path: Path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"generate": [fenced(BOTH)], "feedback": [], "refine": []}))
    spec = load_task("optimize")
    context = RunContext("optimize", "mod.py", ORIGINAL, ("f", "g"), None, False, spec.offline_rules)
    evaluator = FakeEvaluator(lambda namespace: None, timing=_cached_timing_of)
    settings = LoopSettings(max_iterations=1, patience=1, min_improvement=spec.min_improvement)
    outcome = RefinementLoop(spec, scorer_for(spec), ScriptedProvider(script), evaluator, context, settings).run()
    assert len(evaluator.evaluated) == 2 and "return n * 2" in evaluator.evaluated[1]
    (iteration,) = outcome.iterations
    assert outcome.best is iteration and iteration.verdict.accepted
    assert isinstance(iteration.candidate, Candidate) and iteration.candidate.changed == ("f",)
    assert [(v.function, v.verdict, v.basis, v.kept) for v in iteration.functions] == [
        ("f", "faster", "steady", True),
        ("g", "not faster", "first", False),
    ]
    assert "g: not faster, faster only after the first pass (a cache): 1.01x" in iteration.verdict.reason
