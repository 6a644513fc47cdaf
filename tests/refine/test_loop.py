"""The loop's rules with a fake evaluator: stop rules, budgets, best selection, dedup, the one history,
the sufficiency gate and what is kept when a run ends in an exception. Milliseconds each, no sandbox.

The provider (scripted), the tasks and their scorers are the real ones; only the evaluator is a stand-in
(tests/refine/fake_evaluator.py). The same rules end to end, through the CLI and the sandbox, are in
test_loop_rules.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coderefine.providers.base import ModelReply, ModelRequest, RunContext
from coderefine.providers.scripted import ScriptedProvider
from coderefine.records import INSUFFICIENT_TESTS, Role, Sufficiency
from coderefine.refine.evaluator import Evaluator
from coderefine.refine.loop import LoopOutcome, LoopSettings, RefinementLoop
from coderefine.refine.scoring import scorer_for
from coderefine.refine.tasks import load_task
from tests.conftest import fenced
from tests.refine.examples import (
    BETTER,
    BETTER_WIDE,
    BROKEN_BEST,
    CONTINUE,
    GOOD,
    ORIGINAL,
    SLIGHT,
    TIE,
    check_f,
)
from tests.refine.fake_evaluator import FakeEvaluator, confirmed_timing

STOP = "Clear names now.\nVERDICT: STOP"


class Raw(str):
    """A model message used as it is, not fenced as code."""


class Recording:
    """The real scripted provider, keeping the requests it was given (to read the prompts back)."""

    def __init__(self, inner: ScriptedProvider) -> None:
        self.inner = inner
        self.name = inner.name
        self.requests: list[ModelRequest] = []

    def complete(self, request: ModelRequest) -> ModelReply:
        self.requests.append(request)
        return self.inner.complete(request)


def make_loop(
    tmp_path: Path,
    generate: list[Any],
    feedback: list[Any] = (),
    refine: list[Any] = (),
    *,
    task: str = "readability",
    evaluator: Evaluator | None = None,
    original: str = ORIGINAL,
    function: str | None = None,
    **settings: Any,
) -> tuple[RefinementLoop, Recording]:
    """A loop on ORIGINAL as `coderefine TASK mod.py` would build it; code entries are fenced like a model's."""

    def message(entry: Any) -> Any:
        if isinstance(entry, Raw):
            return str(entry)
        return {**entry, "content": fenced(entry["content"])} if isinstance(entry, dict) else fenced(entry)

    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "generate": [message(e) for e in generate],
                "feedback": list(feedback),
                "refine": [message(e) for e in refine],
            }
        )
    )
    spec = load_task(task)
    provider = Recording(ScriptedProvider(script))
    context = RunContext(
        task=spec.name,
        file="mod.py",
        original_code=original,
        targets=("f",),
        allowed=("f",) if function else None,
        whole_module=False,
        offline_rules=spec.offline_rules,
    )
    loop_settings = LoopSettings(
        max_iterations=settings.pop("max_iterations", spec.max_iterations),
        patience=settings.pop("patience", spec.patience),
        min_improvement=spec.min_improvement,
        **settings,
    )
    loop = RefinementLoop(spec, scorer_for(spec), provider, evaluator or FakeEvaluator(check_f), context, loop_settings)
    return loop, provider


def run(tmp_path: Path, *script: Any, **options: Any) -> LoopOutcome:
    loop, _ = make_loop(tmp_path, *script, **options)
    return loop.run()


def verdicts(outcome: LoopOutcome) -> list[str]:
    return ["accepted" if it.verdict.accepted else "rejected" for it in outcome.iterations]


# ----------------------------------------------------------------- stop rules


def test_feedback_stop_signal_ends_the_run(tmp_path):
    outcome = run(tmp_path, [GOOD], [STOP], [BETTER])
    assert outcome.stop_reason == "feedback: nothing left to improve"
    assert outcome.usage.calls == 2 and len(outcome.iterations) == 1
    assert outcome.status == "improved" and outcome.best.verdict.score > outcome.baseline.score + 20
    assert outcome.iterations[0].feedback.endswith("VERDICT: STOP")


def test_patience_stops_when_a_refinement_does_not_improve(tmp_path):
    outcome = run(tmp_path, [GOOD], [CONTINUE, CONTINUE], [TIE, BETTER])
    assert outcome.stop_reason.startswith("converged")
    assert outcome.stop_reason == "converged: no improvement above 1 for 1 round"
    assert verdicts(outcome) == ["accepted", "accepted"]
    assert outcome.usage.calls == 3  # no feedback asked for the round that ended the run


def test_patience_two_allows_one_stale_round(tmp_path):
    outcome = run(tmp_path, [GOOD], [CONTINUE, CONTINUE], [TIE, BETTER], patience=2)
    assert len(outcome.iterations) == 3 and outcome.best.index == 2


def test_patience_counts_only_refinements_that_passed_the_tests(tmp_path):
    # A broken refinement is not a stale round: patience 1 still allows the next one.
    outcome = run(tmp_path, [GOOD], [CONTINUE, CONTINUE], [BROKEN_BEST, BETTER], patience=1)
    assert verdicts(outcome) == ["accepted", "rejected", "accepted"] and outcome.best.index == 2


def test_max_iterations(tmp_path):
    outcome = run(tmp_path, [GOOD], [CONTINUE, CONTINUE], [BETTER, TIE], max_iterations=2, patience=5)
    assert outcome.stop_reason == "max iterations reached (2)"
    assert outcome.best.index == 1
    assert outcome.usage.calls == 3  # no feedback on the last attempt: nothing would read it


def test_call_budget(tmp_path):
    outcome = run(tmp_path, [GOOD], [CONTINUE, CONTINUE], [BETTER, TIE], max_calls=3, patience=5)
    assert outcome.stop_reason == "call budget exhausted (3 calls)"
    assert outcome.usage.calls == 3 and len(outcome.iterations) == 2


def test_token_budget_spent(tmp_path):
    spent = {"content": GOOD, "usage": {"prompt_tokens": 500, "completion_tokens": 100}}
    outcome = run(tmp_path, [spent], [CONTINUE], [BETTER], max_tokens=600, patience=5)
    assert outcome.stop_reason == "token budget exhausted (600 of 600 tokens)"
    assert outcome.usage.calls == 1 and outcome.usage.total_tokens == 600
    assert len(outcome.iterations) == 1 and outcome.best.index == 0  # what was verified is kept


def test_token_budget_stops_before_a_prompt_that_would_exceed_it(tmp_path):
    loop, provider = make_loop(tmp_path, [GOOD], [CONTINUE], [BETTER], max_tokens=50)
    outcome = loop.run()
    assert outcome.stop_reason.startswith("token budget: the next prompt (~")
    assert outcome.stop_reason.endswith("tokens) would exceed the 50 left of 50")
    assert provider.requests == [] and outcome.usage.calls == 0
    assert outcome.status == "unchanged" and outcome.baseline is not None and outcome.iterations == ()


def test_a_script_that_runs_out_stops_the_run(tmp_path):
    outcome = run(tmp_path, [GOOD], [], [], patience=5)
    assert outcome.stop_reason == "script exhausted"
    assert len(outcome.iterations) == 1 and outcome.status == "improved" and outcome.best.index == 0
    assert outcome.iterations[0].feedback is None


# ----------------------------------------------------------------- which attempts count


def test_unusable_answers_are_rejected_with_a_reason_and_the_loop_goes_on(tmp_path):
    outcome = run(tmp_path, [Raw("I cannot help with that.")], ["Please answer with code.\nVERDICT: CONTINUE"], [GOOD])
    first, second = outcome.iterations
    assert not first.verdict.accepted and first.verdict.reason.startswith("no usable code: ")
    assert first.candidate is None and first.evaluation is None
    assert second.verdict.accepted


def test_an_answer_cut_off_at_the_length_limit_is_rejected_unevaluated(tmp_path):
    evaluator = FakeEvaluator(check_f)
    cut = {"content": GOOD, "finish_reason": "length"}
    outcome = run(tmp_path, [cut], [CONTINUE], [GOOD], evaluator=evaluator)
    first, second = outcome.iterations
    assert first.verdict.reason == "the answer was cut off at the model's length limit (finish_reason=length)"
    assert not first.verdict.accepted and first.evaluation is None
    assert second.verdict.accepted and evaluator.evaluated == [GOOD]


def test_not_more_readable_is_rejected(tmp_path):
    outcome = run(tmp_path, ["def f(a, b):\n    c = b + a\n    d = c * 2\n    return d\n"])  # same score
    (only,) = outcome.iterations
    assert not only.verdict.accepted and "not more readable" in only.verdict.reason
    assert outcome.status == "unchanged" and outcome.best is None


def test_identical_candidate_is_not_evaluated_twice(tmp_path):
    evaluator = FakeEvaluator(check_f)
    outcome = run(
        tmp_path,
        [GOOD],
        [CONTINUE, CONTINUE],
        ["# same program, new comment\n" + GOOD, BETTER],
        patience=5,
        evaluator=evaluator,
    )
    second = outcome.iterations[1]
    assert not second.verdict.accepted and second.verdict.reason == "identical to attempt 0; not evaluated again"
    assert second.evaluation is None and second.candidate is not None
    assert outcome.iterations[2].verdict.accepted
    assert evaluator.evaluated == [GOOD, BETTER]


def test_a_candidate_identical_to_the_original_is_not_evaluated(tmp_path):
    evaluator = FakeEvaluator(check_f)
    outcome = run(tmp_path, ["# reformatted\n" + ORIGINAL.replace("a + b", "(a + b)")], evaluator=evaluator)
    (only,) = outcome.iterations
    assert only.verdict.reason == "identical to the original (same program up to comments and layout); not evaluated"
    assert evaluator.evaluated == [] and outcome.best is None


def test_a_speed_candidate_that_only_renames_locals_is_not_evaluated(tmp_path):
    evaluator = FakeEvaluator(check_f, timing=lambda code: confirmed_timing(1.5))
    renamed = "def f(a, b):\n    total = a + b\n    doubled = total * 2\n    return doubled\n"
    outcome = run(tmp_path, [renamed], task="optimize", evaluator=evaluator)
    (only,) = outcome.iterations
    assert only.verdict.reason.startswith("not faster: the same instructions as the original")
    assert evaluator.evaluated == [] and outcome.best is None
    # For readability the names are the change: it is evaluated.
    evaluator = FakeEvaluator(check_f)
    (tmp_path / "readability").mkdir()
    run(tmp_path / "readability", [renamed], evaluator=evaluator)
    assert evaluator.evaluated == [renamed]


# ----------------------------------------------------------------- the best


def test_the_best_score_wins(tmp_path):
    outcome = run(tmp_path, [GOOD], [CONTINUE, CONTINUE], [BETTER, SLIGHT], patience=5, max_iterations=3)
    assert verdicts(outcome) == ["accepted", "accepted", "accepted"]
    assert outcome.best.index == 1 and outcome.best.candidate.code == BETTER


def test_a_later_lower_score_does_not_replace_the_best(tmp_path):
    outcome = run(tmp_path, [BETTER], [CONTINUE], [SLIGHT], patience=5, max_iterations=2)
    assert outcome.iterations[1].verdict.accepted
    assert outcome.best.index == 0


def test_best_is_never_an_unverified_candidate(tmp_path):
    outcome = run(tmp_path, [SLIGHT], [CONTINUE, CONTINUE], [BROKEN_BEST], patience=5)
    broken = outcome.iterations[1]
    assert not broken.verdict.accepted and broken.evaluation.tests.failed == 1
    assert broken.verdict.score > outcome.iterations[0].verdict.score  # it would have scored higher
    assert outcome.best.index == 0 and outcome.best.candidate.code == SLIGHT


def test_ties_go_to_the_smaller_diff(tmp_path):
    outcome = run(tmp_path, [BETTER_WIDE], [CONTINUE], [BETTER], patience=5)
    scores = [it.verdict.score for it in outcome.iterations]
    assert abs(scores[0] - scores[1]) < 1.0
    assert outcome.best.index == 1 and outcome.best.candidate.code == BETTER


def test_a_tie_with_a_larger_diff_keeps_the_earlier_best(tmp_path):
    outcome = run(tmp_path, [BETTER], [CONTINUE], [BETTER_WIDE], patience=5)
    assert verdicts(outcome) == ["accepted", "accepted"] and outcome.best.index == 0


OPTIMIZE_ORIGINAL = "def f(a, b):\n    return sum([a, b]) * 2\n"
FAST = "def f(a, b):\n    return (a + b) * 2\n"  # 1 changed line
FAST_WIDE = "def f(a, b):\n    total = a + b\n    doubled = total * 2\n    return doubled\n"  # 4 changed lines


def test_speedups_are_compared_with_the_tasks_min_improvement(tmp_path):
    """The loop is task-agnostic: with the optimize task the score is the measured speedup, and two speedups
    within 5% of each other tie, so the smaller diff wins."""
    speedups = {FAST_WIDE: 2.0, FAST: 2.06}
    evaluator = FakeEvaluator(check_f, timing=lambda code: confirmed_timing(speedups[code]))
    outcome = run(
        tmp_path, [FAST_WIDE], [CONTINUE], [FAST], task="optimize", original=OPTIMIZE_ORIGINAL, evaluator=evaluator
    )
    assert verdicts(outcome) == ["accepted", "accepted"]
    assert outcome.best.index == 1 and outcome.stop_reason.startswith("converged")

    speedups[FAST] = 2.5  # now clearly faster: the score decides, whatever the diff
    speedups[FAST_WIDE] = 3.0
    outcome = run(
        tmp_path, [FAST], [CONTINUE], [FAST_WIDE], task="optimize", original=OPTIMIZE_ORIGINAL, evaluator=evaluator
    )
    assert outcome.best.index == 1 and outcome.best.verdict.score == 3.0


# ----------------------------------------------------------------- the one history


def test_feedback_is_attached_to_its_iteration_and_read_by_the_next_refine(tmp_path):
    feedback = ["First: rename c.\nVERDICT: CONTINUE", "Second: inline d.\nVERDICT: CONTINUE"]
    loop, provider = make_loop(tmp_path, [GOOD], feedback, [BETTER, TIE], patience=5, max_iterations=3)
    outcome = loop.run()
    assert [it.feedback for it in outcome.iterations] == [*feedback, None]
    assert [it.index for it in outcome.iterations] == [0, 1, 2]
    assert outcome.iterations == loop.context.history  # one history: the outcome is the loop's own
    roles = [request.role for request in provider.requests]
    assert roles == [Role.GENERATE, Role.FEEDBACK, Role.REFINE, Role.FEEDBACK, Role.REFINE]
    second_refine = provider.requests[4].messages[1]["content"]
    assert "### Attempt 0 (generate)" in second_refine and "First: rename c." in second_refine
    assert "### Attempt 1 (refine)" in second_refine and "Second: inline d." in second_refine


def test_the_best_is_updated_when_its_feedback_arrives(tmp_path):
    loop, _ = make_loop(tmp_path, [BETTER], ["Good.\nVERDICT: CONTINUE"], [SLIGHT], patience=5, max_iterations=2)
    outcome = loop.run()
    assert outcome.best is outcome.iterations[0]
    assert outcome.best.feedback == "Good.\nVERDICT: CONTINUE"


# ----------------------------------------------------------------- the sufficiency gate


def _gate(*, allowed: bool) -> Sufficiency:
    return Sufficiency(
        applies=True,
        sufficient=False,
        calls=0,
        lines=3,
        covered=0,
        min_calls=1,
        min_coverage=0.5,
        allowed=allowed,
        reason="the tests make 0 usable calls to f (at least 1 needed)",
    )


def test_the_sufficiency_gate_blocks_before_any_model_call(tmp_path):
    evaluator = FakeEvaluator(check_f, sufficiency=_gate(allowed=False))
    loop, provider = make_loop(tmp_path, [GOOD], [STOP], evaluator=evaluator)
    outcome = loop.run()
    assert outcome.status == INSUFFICIENT_TESTS
    assert outcome.stop_reason == "the tests make 0 usable calls to f (at least 1 needed)"
    assert provider.requests == [] and outcome.usage.calls == 0 and evaluator.evaluated == []
    assert outcome.baseline is not None and outcome.iterations == () and outcome.best is None


def test_allowing_insufficient_tests_judges_anyway_with_a_warning(tmp_path):
    evaluator = FakeEvaluator(check_f, sufficiency=_gate(allowed=True))
    outcome = run(tmp_path, [GOOD], [STOP], evaluator=evaluator)
    assert outcome.status == "improved"
    assert outcome.warnings == (
        "the tests make 0 usable calls to f (at least 1 needed); candidates judged anyway (--allow-insufficient-tests)",
    )


# ----------------------------------------------------------------- ending early


def test_outcome_after_an_exception_keeps_what_was_verified(tmp_path):
    evaluator = FakeEvaluator(check_f, raise_on={1: RuntimeError("the sandbox died")})
    loop, _ = make_loop(tmp_path, [GOOD], [CONTINUE], [BETTER], patience=5, evaluator=evaluator)
    with pytest.raises(RuntimeError, match="the sandbox died"):
        loop.run()
    outcome = loop.outcome()
    assert outcome.baseline is not None and outcome.status == "improved"
    assert len(outcome.iterations) == 1 and outcome.best is outcome.iterations[0]
    assert outcome.best.feedback == CONTINUE and outcome.usage.calls == 3
    assert evaluator.evaluated == [GOOD, BETTER]


def test_an_interrupt_is_the_stop_reason_and_keeps_what_was_verified(tmp_path):
    evaluator = FakeEvaluator(check_f, raise_on={1: KeyboardInterrupt()})
    loop, _ = make_loop(tmp_path, [GOOD], [CONTINUE], [BETTER], patience=5, evaluator=evaluator)
    with pytest.raises(KeyboardInterrupt):
        loop.run()
    outcome = loop.outcome()
    assert outcome.stop_reason == "interrupted"
    assert outcome.status == "improved" and outcome.best.candidate.code == GOOD


def test_a_failed_baseline_leaves_a_failed_outcome(tmp_path):
    evaluator = FakeEvaluator(check_f, raise_on={"baseline": RuntimeError("no sandbox")})
    loop, provider = make_loop(tmp_path, [GOOD], evaluator=evaluator)
    with pytest.raises(RuntimeError):
        loop.run()
    outcome = loop.outcome()
    assert outcome.status == "failed" and outcome.baseline is None and outcome.stop_reason == ""
    assert provider.requests == []
