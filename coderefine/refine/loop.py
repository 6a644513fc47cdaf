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
import functools
from dataclasses import dataclass, replace
from typing import Protocol

from coderefine.evaluation.verdicts import correctness_problem, function_verdicts, per_function_verdict
from coderefine.providers.base import (
    ModelReply,
    ModelRequest,
    Provider,
    RunContext,
    ScriptExhausted,
    complete_drafts,
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
    Round,
    Usage,
    Verdict,
)
from coderefine.refine import per_function
from coderefine.refine.candidate import AnswerSetting, candidate_from_reply, original_candidate
from coderefine.refine.evaluator import Evaluator
from coderefine.refine.extract import CandidateRefused, CandidateRejected
from coderefine.refine.prompts import build_prompt
from coderefine.refine.scoring import Scorer
from coderefine.refine.tasks import TaskSpec
from coderefine.source import instructions_key


@dataclass(frozen=True)
class LoopSettings:
    max_iterations: int
    patience: int
    min_improvement: float
    max_calls: int | None = None
    max_tokens: int | None = None  # prompt + answer tokens over the run
    context_tokens: int | None = None  # prompt budget: older history is left out beyond it
    drafts: int = 1  # answers asked for per generate/refine step; the best verified one is carried forward


@dataclass(frozen=True)
class LoopOutcome:
    """The loop's part of a run's Result."""

    baseline: Baseline | None
    iterations: tuple[Iteration, ...]
    rounds: tuple[Round, ...]
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
        self.rounds: list[Round] = []  # each step's drafts, the one carried forward, and the best after it
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
            rounds=tuple(self.rounds),
            best=self.best,
            status=status,
            stop_reason=self.stop_reason or ("max iterations reached" if self.baseline is not None else ""),
            usage=self.usage,
            warnings=tuple(self.warnings),
        )

    def _iterate(self) -> None:
        history = self.history
        stale_rounds = 0
        for round_number in range(self.settings.max_iterations):
            role = Role.GENERATE if round_number == 0 else Role.REFINE
            replies = self._call(role, None, self.settings.drafts)
            if not replies:
                return
            best_before = self.best
            drafts = self._round(round_number, role, replies)
            for iteration in drafts:
                history.append(iteration)
                self._update_best(iteration)
                self.observer.iteration_done(iteration, self.best)
            carried = next(iteration for iteration in drafts if iteration.carried)
            attempts = tuple(iteration.index for iteration in drafts)
            best = self.best.index if self.best is not None else None
            self.rounds.append(Round(round_number, role, attempts, carried.index, best))

            if round_number + 1 >= self.settings.max_iterations:
                self.stop_reason = f"max iterations reached ({self.settings.max_iterations})"
                return
            if round_number > 0 and any(self._passed(iteration) for iteration in drafts):
                improved = any(self._improved(iteration, best_before) for iteration in drafts)
                stale_rounds = 0 if improved else stale_rounds + 1
                if stale_rounds >= self.settings.patience:
                    self.stop_reason = (
                        f"converged: no improvement above {self.settings.min_improvement:g} "
                        f"for {stale_rounds} round{'s' if stale_rounds != 1 else ''}"
                    )
                    return
            others = tuple(iteration for iteration in drafts if not iteration.carried)
            feedback = self._call(Role.FEEDBACK, carried, 1, others)
            if not feedback:
                return
            text = feedback[0].split().answer
            position = next(i for i, iteration in enumerate(history) if iteration.index == carried.index)
            carried = replace(carried, feedback=text)
            history[position] = carried
            if self.best is not None and self.best.index == carried.index:
                self.best = carried
            if feedback_says_stop(text):
                self.stop_reason = "feedback: nothing left to improve"
                return

    # ----------------------------------------------------------------- steps

    def _call(
        self, role: Role, current: Iteration | None, drafts: int, others: tuple[Iteration, ...] = ()
    ) -> list[ModelReply]:
        """Up to `drafts` answers for one step, as many as the budgets allow; none when a stop rule holds."""
        settings = self.settings
        if settings.max_calls is not None:
            left = settings.max_calls - self.usage.calls
            if left <= 0:
                self.stop_reason = f"call budget exhausted ({settings.max_calls} calls)"
                return []
            drafts = min(drafts, left)
        context = self.context
        prompt = build_prompt(self.task, role, context, current, settings.context_tokens, others)
        budget = settings.max_tokens
        if budget is not None:
            spent = self.usage.total_tokens
            if spent >= budget:
                self.stop_reason = f"token budget exhausted ({spent} of {budget} tokens)"
                return []
            if spent + prompt.estimated_tokens > budget:
                self.stop_reason = (
                    f"token budget: the next prompt (~{prompt.estimated_tokens} tokens) would exceed the "
                    f"{budget - spent} left of {budget}"
                )
                return []
            # each draft may be a request of its own, its prompt counted again
            drafts = max(1, min(drafts, (budget - spent) // max(1, prompt.estimated_tokens)))
        what = f"{role.value}, {drafts} drafts" if drafts > 1 else role.value
        label = f"{self.provider.name}: {what}"
        self.observer.step_started(label)
        request = ModelRequest(
            role=role,
            messages=prompt.messages,
            context=context,
            omitted_attempts=prompt.omitted_attempts,
            drafts=drafts,
            on_progress=lambda tokens: self.observer.step_started(f"{label} - {tokens} tokens so far"),
        )
        try:
            replies = complete_drafts(self.provider, request)
        except ScriptExhausted:
            self.stop_reason = "script exhausted"
            return []
        for reply in replies:
            self.usage.add(
                reply.prompt_tokens,
                reply.completion_tokens,
                cached=reply.cached,
                estimated=reply.usage_estimated,
                reasoning_tokens=reply.reasoning_tokens,
                seconds=reply.seconds,
            )
        return replies

    def _answer_setting(self) -> AnswerSetting:
        """What the answers of this round are read against; a diff may be written against the best verified
        version or the last attempt, which the refine prompt shows, as well as the original."""
        bases: list[tuple[str, str]] = []
        if self.best is not None and self.best.candidate is not None:
            bases.append((f"attempt {self.best.index} (the best verified)", self.best.candidate.code))
        last = next((it for it in reversed(self.history) if it.carried and it.candidate is not None), None)
        if last is not None and last.candidate is not None and all(code != last.candidate.code for _, code in bases):
            bases.append((f"attempt {last.index} (the last one)", last.candidate.code))
        setup = self.setup
        return AnswerSetting(
            original=setup.original_code,
            targets=setup.targets,
            allowed=setup.allowed,
            whole_module=setup.whole_module,
            filename=setup.file.replace("\\", "/").rsplit("/", 1)[-1],
            diff_bases=tuple(bases),
        )

    def _round(self, round_number: int, role: Role, replies: list[ModelReply]) -> list[Iteration]:
        """One step's drafts: read, verified (side by side when the evaluator can), judged; the best is
        marked as carried forward."""
        several = len(replies) > 1
        first = len(self.history)
        setting = self._answer_setting()
        drafts: list[Iteration] = []
        pending: list[tuple[int, Candidate]] = []  # (position in drafts, candidate to evaluate)
        for number, reply in enumerate(replies, 1):
            index = first + number - 1
            outcome = self._prepare(index, role, reply, setting)
            if isinstance(outcome, Candidate):
                pending.append((len(drafts), outcome))
                outcome = Iteration(index, role, outcome, None, Verdict(False, "", None))
            drafts.append(
                replace(
                    outcome,
                    round=round_number,
                    draft=number if several else 0,
                    message=reply.split().answer,
                    thinking_chars=len(reply.split().thinking),
                )
            )
        if pending:
            evaluations = self._evaluate([candidate for _, candidate in pending], first)
            for (position, candidate), evaluation in zip(pending, evaluations, strict=True):
                draft = drafts[position]
                judged = self._judge(draft.index, role, replies[position], candidate, evaluation)
                drafts[position] = replace(
                    judged,
                    round=draft.round,
                    draft=draft.draft,
                    message=draft.message,
                    thinking_chars=draft.thinking_chars,
                )
        carried = self._pick_carried(drafts)
        return [replace(draft, carried=draft.index == carried) for draft in drafts]

    def _evaluate(self, candidates: list[Candidate], first: int) -> list[Evaluation]:
        if len(candidates) == 1:
            self.observer.step_started(f"evaluating attempt {first} in the sandbox")
            return [self.evaluator.evaluate(candidates[0])]
        many = getattr(self.evaluator, "evaluate_many", None)
        self.observer.step_started(f"verifying {len(candidates)} drafts in the sandbox")
        if callable(many):
            return list(many(candidates))
        return [self.evaluator.evaluate(candidate) for candidate in candidates]

    def _pick_carried(self, drafts: list[Iteration]) -> int:
        """The draft the next step builds on: the best accepted one, else the best that passed the tests,
        else the first that was run, else the first."""
        accepted = [d for d in drafts if d.verdict.accepted and d.verdict.score is not None]
        if accepted:
            return max(accepted, key=lambda d: (d.verdict.score or 0.0, -d.index)).index
        passed = [d for d in drafts if self._passed(d)]
        if passed:
            return max(passed, key=lambda d: (_score_or_least(d), -d.index)).index
        run = [d for d in drafts if d.evaluation is not None]
        return (run or drafts)[0].index

    def _prepare(self, index: int, role: Role, reply: ModelReply, setting: AnswerSetting) -> Iteration | Candidate:
        """The candidate an answer makes, or the rejected iteration when it makes none worth running."""

        def rejected(reason: str, candidate: Candidate | None = None) -> Iteration:
            return Iteration(index, role, candidate, None, Verdict(False, reason, None), message=reply.content)

        try:
            candidate = candidate_from_reply(reply, setting, role.value)
        except CandidateRefused as exc:
            return rejected(f"refused before running: {exc}")
        except CandidateRejected as exc:
            reason = str(exc)
            return rejected(reason if reason.startswith("the answer was cut off") else f"no usable code: {reason}")
        if candidate.ast_key == self.original.ast_key:
            return rejected(
                "identical to the original (same program up to comments and layout); not evaluated", candidate
            )
        if self.task.measure_speed and self._same_instructions(candidate):
            # Nothing a run could measure: timing it would only spend minutes on the noise between processes
            # (a renamed null edit took 6-16 timing pairs, 40-92 s, on networkx).
            return rejected(
                "not faster: the same instructions as the original (only local variables renamed, or layout); "
                "not evaluated",
                candidate,
            )
        if candidate.ast_key in self.seen:
            earlier = self.seen[candidate.ast_key]
            return rejected(f"identical to attempt {earlier}; not evaluated again", candidate)
        self.seen[candidate.ast_key] = index
        return candidate

    def _same_instructions(self, candidate: Candidate) -> bool:
        key = instructions_key(candidate.code)
        return key is not None and key == self._original_instructions

    @functools.cached_property
    def _original_instructions(self) -> str | None:
        return instructions_key(self.original.code)

    def _judge(
        self, index: int, role: Role, reply: ModelReply, candidate: Candidate, evaluation: Evaluation
    ) -> Iteration:
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
        setting = replace(
            self._answer_setting(),
            allowed=kept if allowed is None else tuple(k for k in kept if k in allowed),
            whole_module=False,
        )
        try:
            candidate = candidate_from_reply(reply, setting, role.value)
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


def _score_or_least(iteration: Iteration) -> float:
    return iteration.verdict.score if iteration.verdict.score is not None else float("-inf")
