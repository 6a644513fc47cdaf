"""The loop's side of the flow: each iteration's verdict, the model usage, and the one Result a run returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from coderefine.records.baseline import INSUFFICIENT_TESTS, Baseline
from coderefine.records.evaluation import Candidate, Evaluation


class Role(str, Enum):
    GENERATE = "generate"
    FEEDBACK = "feedback"
    REFINE = "refine"


@dataclass(frozen=True)
class Verdict:
    accepted: bool
    reason: str
    score: float | None


@dataclass(frozen=True)
class FunctionVerdict:
    """One changed target judged on its own calls (a candidate that changes several is judged per function)."""

    function: str
    verdict: str  # "faster", "not faster", "behaviour changed" or "not measured"
    speedup: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    kept: bool = True  # False: the change was dropped from the candidate before it was verified again
    # "first" when the figure is the function's first pass (it gained much more from repetition than the
    # original: state kept between calls, e.g. a cache), else "steady".
    basis: str = "steady"
    # Why a figure that cleared on some basis is still not a speedup (the trust rules on the function's own
    # calls: faster only after the first pass, or only on the shown inputs); empty when none applies.
    reason: str = ""

    def text(self) -> str:
        dropped = "" if self.kept else " (dropped)"
        if self.reason:  # the reason carries the figures it rests on
            return f"{self.function}: {self.verdict}, {self.reason}{dropped}"
        figure = f" {self.speedup:.2f}x [{self.ci_low:.2f}, {self.ci_high:.2f}]" if self.speedup is not None else ""
        on = " on the first pass" if figure and self.basis == "first" else ""
        return f"{self.function}: {self.verdict}{figure}{on}{dropped}"


@dataclass(frozen=True)
class Iteration:
    index: int
    role: Role
    candidate: Candidate | None  # None when the message held no usable code
    evaluation: Evaluation | None  # None when the candidate was not run (duplicate, syntax error)
    verdict: Verdict
    message: str = ""  # the model's raw answer
    feedback: str | None = None
    functions: tuple[FunctionVerdict, ...] = ()  # per changed target, when the candidate changed several
    # Several drafts per round (--drafts N): `index` numbers every attempt of the run; `round` is the
    # generate/refine step that asked for it and `draft` its number there (0: the round's only draft).
    # Only the round's carried draft (its best) gets feedback and is shown in full to later rounds.
    round: int = 0
    draft: int = 0
    carried: bool = True
    thinking_chars: int = 0  # a reasoning model's thinking before this answer (set apart, never taken)


@dataclass(frozen=True)
class Round:
    """One generate/refine step: the attempts it made (its drafts), the one carried forward, and the best
    verified candidate of the run once the step was judged (None: nothing verified yet)."""

    number: int
    role: Role
    attempts: tuple[int, ...]  # iteration indices, in draft order
    carried: int
    best: int | None


@dataclass
class Usage:
    """Model calls and tokens. Cached answers count toward the budgets (so a repeated run takes the same
    path) but are reported apart: they cost nothing."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_calls: int = 0
    cached_tokens: int = 0
    estimated: bool = False  # some token counts were estimated from text: the endpoint reported none
    reasoning_tokens: int = 0  # of completion_tokens, those a reasoning model spent thinking
    model_seconds: float = 0.0  # waiting for answers, summed over the calls

    def add(
        self,
        prompt_tokens: int,
        completion_tokens: int,
        *,
        cached: bool = False,
        estimated: bool = False,
        reasoning_tokens: int = 0,
        seconds: float = 0.0,
    ) -> None:
        self.calls += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.reasoning_tokens += reasoning_tokens
        self.model_seconds += seconds
        if cached:
            self.cached_calls += 1
            self.cached_tokens += prompt_tokens + completion_tokens
        self.estimated = self.estimated or estimated

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def billed_tokens(self) -> int:
        return self.total_tokens - self.cached_tokens


@dataclass(frozen=True)
class RunError:
    """How a run ended early: its documented exit code, that code's name, and the one-line message."""

    code: int
    kind: str  # "usage", "baseline_fails", "insufficient_tests", "interrupted", "internal", ...
    message: str
    traceback: str | None = None  # internal errors only: shown with --debug, never in a report


@dataclass(frozen=True)
class Result:
    """One run, built once when it ends (`coderefine.refine.run.execute`); reports only render it."""

    task: str
    file: str
    status: str  # the loop's: "improved", "unchanged", "insufficient_tests", or "failed" before a baseline
    stop_reason: str
    original_code: str
    baseline: Baseline | None
    best: Iteration | None
    iterations: tuple[Iteration, ...] = ()
    rounds: tuple[Round, ...] = ()
    usage: Usage = field(default_factory=Usage)
    warnings: tuple[str, ...] = ()
    provider: str = ""
    provider_reason: str = ""  # why this provider: a flag, a setting, a key in the environment, or none
    model: str | None = None  # "model M at URL" for model providers
    sandbox: str = ""
    sandbox_reason: str = ""  # why this backend: `auto`'s choice, or the setting that named it
    written: bool = False
    error: RunError | None = None  # what ended the run early, if anything (the exit code comes from it)

    @property
    def interrupted(self) -> bool:
        return self.error is not None and self.error.kind == "interrupted"

    @property
    def final_status(self) -> str:
        """The status the machine-readable reports give: an error makes the run "failed", whatever it had
        verified before (the console still shows that); insufficient tests is a verdict, not a failure."""
        if self.error is not None and self.error.kind != INSUFFICIENT_TESTS:
            return "failed"
        return self.status
