"""The Self-Refine loop, grounded in execution (Madaan et al., 2023).

    generate y0 -> evaluate -> feedback -> refine y1 (with the whole history) -> evaluate -> ...

Task-agnostic: the task supplies the prompts and a scorer; the evaluator supplies facts. The model only
proposes: a candidate is accepted when the scorer says so from execution facts, and the result is the
best accepted candidate, never an unverified one.

Stops, whichever comes first:
- `max_iterations` candidates have been made;
- `patience` refinement rounds in a row passed the tests without beating the best score by more than
  `min_improvement`;
- the feedback says nothing is left to improve;
- the call budget is spent, or a scripted provider runs out of messages.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace
from typing import Protocol

from coderefine.evaluation.verdicts import correctness_problem, function_verdicts, per_function_verdict
from coderefine.providers.base import (
    ModelReply,
    ModelRequest,
    Provider,
    RunContext,
    ScriptExhausted,
    feedback_says_stop,
)
from coderefine.records import (
    INSUFFICIENT_TESTS,
    Baseline,
    Candidate,
    Evaluation,
    FunctionVerdict,
    Iteration,
    Role,
    Usage,
    Verdict,
)
from coderefine.refine import per_function
from coderefine.refine.candidate import build_candidate, original_candidate
from coderefine.refine.evaluator import Evaluator
from coderefine.refine.extract import CandidateRejected
from coderefine.refine.prompts import build_prompt
from coderefine.refine.scoring import Scorer
from coderefine.refine.tasks import TaskSpec


@dataclass(frozen=True)
class LoopSettings:
    max_iterations: int
    patience: int
    min_improvement: float
    max_calls: int | None = None
    max_tokens: int | None = None  # prompt + answer tokens over the run
    context_tokens: int | None = None  # prompt budget: older history is left out beyond it


@dataclass(frozen=True)
class LoopOutcome:
    """The loop's part of a run's Result."""

    baseline: Baseline | None
    iterations: tuple[Iteration, ...]
    best: Iteration | None
    status: str
    stop_reason: str
    usage: Usage
    warnings: tuple[str, ...]


class LoopObserver(Protocol):
    """Progress hooks for a live view; the loop works without one."""

    def note(self, text: str) -> None:
        """A one-line fact about the run's setup (which provider and sandbox, and why)."""

    def baseline_done(self, baseline: Baseline) -> None: ...

    def step_started(self, text: str) -> None: ...

    def iteration_done(self, iteration: Iteration, best: Iteration | None) -> None: ...


class _Silent:
    def note(self, text: str) -> None:
        pass

    def baseline_done(self, baseline: Baseline) -> None:
        pass

    def step_started(self, text: str) -> None:
        pass

    def iteration_done(self, iteration: Iteration, best: Iteration | None) -> None:
        pass


def diff_size(original: str, code: str) -> int:
    """Changed lines, the tie-breaker between equally good candidates: the smaller change wins."""
    return sum(
        1
        for line in difflib.unified_diff(original.splitlines(), code.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )


class RefinementLoop:
    def __init__(
        self,
        task: TaskSpec,
        scorer: Scorer,
        provider: Provider,
        evaluator: Evaluator,
        context: RunContext,
        settings: LoopSettings,
        observer: LoopObserver | None = None,
    ) -> None:
        self.task = task
        self.scorer = scorer
        self.provider = provider
        self.evaluator = evaluator
        self.setup = context  # the run's fixed facts; its state below is the loop's alone
        self.baseline: Baseline | None = None
        self.history: list[Iteration] = []  # the one history: prompts, the best and the outcome all read it
        self.best: Iteration | None = None  # the best verified candidate so far
        self.settings = settings
        self.observer = observer or _Silent()
        self.usage = Usage()
        self.stop_reason: str | None = None
        self.blocked = False  # the sufficiency gate stopped the run after the baseline
        self.warnings: list[str] = []
        self.original = original_candidate(context.original_code)
        self.seen: dict[str, int] = {}  # normalised AST -> the iteration that had it

    @property
    def context(self) -> RunContext:
        """The run as it stands, frozen: what prompts and providers are given."""
        return replace(self.setup, baseline=self.baseline, history=tuple(self.history), best=self.best)

    # ----------------------------------------------------------------- run

    def run(self) -> LoopOutcome:
        """Baseline, then generate / evaluate / feedback / refine until a stop rule holds.

        The state lives on the loop as it goes, so that `outcome()` still tells what was verified when an
        error or Ctrl-C ends the run early."""
        self.observer.step_started("baseline: running the original's tests and recording calls")
        facts = self.evaluator.baseline(self.setup.original_code)
        baseline = Baseline.scored(facts, self.scorer.baseline_score(facts.evaluation, self.setup.original_code))
        self.baseline = baseline
        self.observer.baseline_done(baseline)
        gate = baseline.sufficiency
        if gate is not None and gate.blocks:
            # Nothing a candidate does could be told apart well enough: no model call is worth making.
            self.stop_reason = gate.reason
            self.blocked = True
            return self.outcome()
        if gate is not None and gate.applies and not gate.sufficient:
            self.warnings.append(f"{gate.reason}; candidates judged anyway (--allow-insufficient-tests)")
        try:
            self._iterate()
        except KeyboardInterrupt:
            self.stop_reason = "interrupted"
            raise
        return self.outcome()

    def outcome(self) -> LoopOutcome:
        """What the loop has established so far (all of it once `run` has returned)."""
        if self.baseline is None:
            status = "failed"
        elif self.blocked:
            status = INSUFFICIENT_TESTS
        else:
            status = "improved" if self.best is not None else "unchanged"
        return LoopOutcome(
            baseline=self.baseline,
            iterations=tuple(self.history),
            best=self.best,
            status=status,
            stop_reason=self.stop_reason or ("max iterations reached" if self.baseline is not None else ""),
            usage=self.usage,
            warnings=tuple(self.warnings),
        )

    def _iterate(self) -> None:
        history = self.history
        stale_rounds = 0
        for index in range(self.settings.max_iterations):
            role = Role.GENERATE if index == 0 else Role.REFINE
            reply = self._call(role, None)
            if reply is None:
                return
            best_before = self.best
            iteration = self._make_iteration(index, role, reply)
            history.append(iteration)
            self._update_best(iteration)
            self.observer.iteration_done(iteration, self.best)

            if index + 1 >= self.settings.max_iterations:
                self.stop_reason = f"max iterations reached ({self.settings.max_iterations})"
                return
            if index > 0 and self._passed(iteration):
                stale_rounds = 0 if self._improved(iteration, best_before) else stale_rounds + 1
                if stale_rounds >= self.settings.patience:
                    self.stop_reason = (
                        f"converged: no improvement above {self.settings.min_improvement:g} "
                        f"for {stale_rounds} round{'s' if stale_rounds != 1 else ''}"
                    )
                    return
            feedback = self._call(Role.FEEDBACK, iteration)
            if feedback is None:
                return
            iteration = replace(iteration, feedback=feedback.content)
            history[-1] = iteration
            if self.best is not None and self.best.index == iteration.index:
                self.best = iteration
            if feedback_says_stop(feedback.content):
                self.stop_reason = "feedback: nothing left to improve"
                return

    # ----------------------------------------------------------------- steps

    def _call(self, role: Role, current: Iteration | None) -> ModelReply | None:
        if self.settings.max_calls is not None and self.usage.calls >= self.settings.max_calls:
            self.stop_reason = f"call budget exhausted ({self.settings.max_calls} calls)"
            return None
        context = self.context
        prompt = build_prompt(self.task, role, context, current, self.settings.context_tokens)
        budget = self.settings.max_tokens
        if budget is not None:
            spent = self.usage.total_tokens
            if spent >= budget:
                self.stop_reason = f"token budget exhausted ({spent} of {budget} tokens)"
                return None
            if spent + prompt.estimated_tokens > budget:
                self.stop_reason = (
                    f"token budget: the next prompt (~{prompt.estimated_tokens} tokens) would exceed the "
                    f"{budget - spent} left of {budget}"
                )
                return None
        self.observer.step_started(f"{self.provider.name}: {role.value}")
        request = ModelRequest(
            role=role, messages=prompt.messages, context=context, omitted_attempts=prompt.omitted_attempts
        )
        try:
            reply = self.provider.complete(request)
        except ScriptExhausted:
            self.stop_reason = "script exhausted"
            return None
        self.usage.add(
            reply.prompt_tokens, reply.completion_tokens, cached=reply.cached, estimated=reply.usage_estimated
        )
        return reply

    def _make_iteration(self, index: int, role: Role, reply: ModelReply) -> Iteration:
        def rejected(reason: str, candidate: Candidate | None = None) -> Iteration:
            return Iteration(index, role, candidate, None, Verdict(False, reason, None), message=reply.content)

        if reply.finish_reason == "length":
            return rejected("the answer was cut off at the model's length limit (finish_reason=length)")
        try:
            candidate = build_candidate(
                reply.content,
                self.setup.original_code,
                self.setup.allowed,
                whole_module=self.setup.whole_module,
                origin=role.value,
            )
        except CandidateRejected as exc:
            return rejected(f"no usable code: {exc}")
        if candidate.ast_key == self.original.ast_key:
            return rejected(
                "identical to the original (same program up to comments and layout); not evaluated", candidate
            )
        if candidate.ast_key in self.seen:
            earlier = self.seen[candidate.ast_key]
            return rejected(f"identical to attempt {earlier}; not evaluated again", candidate)
        self.seen[candidate.ast_key] = index
        self.observer.step_started(f"evaluating attempt {index} in the sandbox")
        evaluation = self.evaluator.evaluate(candidate)
        assert self.baseline is not None
        verdict = self.scorer.judge(evaluation, self.baseline, candidate.code)
        # A file run (several targets) judges each changed function on its own calls (per_function.py).
        changed = per_function.changed_targets(candidate, self.setup.targets)
        functions = function_verdicts(evaluation, changed) if len(self.setup.targets) > 1 else ()
        kept = per_function.keep(functions, evaluation) if functions else None
        if kept is not None:
            narrowed = self._narrowed(index, role, reply, kept, functions)
            if narrowed is not None:
                candidate, evaluation, verdict = narrowed
                again = {v.function: v for v in function_verdicts(evaluation, kept)}
                functions = per_function.mark_dropped(tuple(again.get(v.function, v) for v in functions), kept)
        if functions:
            verdict = per_function_verdict(verdict, evaluation, functions)
            verdict = replace(verdict, reason=f"{verdict.reason}; {per_function.summary(functions)}")
        return Iteration(index, role, candidate, evaluation, verdict, message=reply.content, functions=functions)

    def _narrowed(
        self, index: int, role: Role, reply: ModelReply, kept: tuple[str, ...], functions: tuple[FunctionVerdict, ...]
    ) -> tuple[Candidate, Evaluation, Verdict] | None:
        """The candidate with only the `kept` targets' changes, evaluated again as a whole (per_function.py)."""
        allowed = self.setup.allowed
        try:
            candidate = build_candidate(
                reply.content,
                self.setup.original_code,
                kept if allowed is None else tuple(k for k in kept if k in allowed),
                whole_module=False,
                origin=role.value,
            )
        except CandidateRejected:
            return None
        if candidate.ast_key == self.original.ast_key or candidate.ast_key in self.seen:
            return None
        self.seen[candidate.ast_key] = index
        dropped = [f"{v.function} ({v.verdict})" for v in functions if v.function not in kept]
        note = f"kept the changes to {', '.join(kept)}; dropped {', '.join(dropped)} and verified again"
        candidate = replace(candidate, notes=(*candidate.notes, note))
        self.observer.step_started(f"evaluating attempt {index} again with only {', '.join(kept)} changed")
        evaluation = self.evaluator.evaluate(candidate)
        assert self.baseline is not None
        return candidate, evaluation, self.scorer.judge(evaluation, self.baseline, candidate.code)

    @staticmethod
    def _passed(iteration: Iteration) -> bool:
        return iteration.evaluation is not None and correctness_problem(iteration.evaluation) is None

    def _improved(self, iteration: Iteration, best_before: Iteration | None) -> bool:
        if not iteration.verdict.accepted or iteration.verdict.score is None:
            return False
        assert self.baseline is not None
        reference = (
            best_before.verdict.score if best_before and best_before.verdict.score is not None else self.baseline.score
        )
        return self.scorer.improvement(iteration.verdict.score, reference) > self.settings.min_improvement

    def _update_best(self, iteration: Iteration) -> None:
        if not iteration.verdict.accepted or iteration.verdict.score is None or iteration.candidate is None:
            return
        best = self.best
        if best is None or best.verdict.score is None or best.candidate is None:
            self.best = iteration
            return
        gain = self.scorer.improvement(iteration.verdict.score, best.verdict.score)
        if gain > self.settings.min_improvement:
            self.best = iteration
        elif abs(gain) <= self.settings.min_improvement:
            original = self.setup.original_code
            if diff_size(original, iteration.candidate.code) < diff_size(original, best.candidate.code):
                self.best = iteration
