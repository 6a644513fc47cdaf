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
