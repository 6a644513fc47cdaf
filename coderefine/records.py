"""The records that flow one way through a run: Candidate -> Evaluation -> Iteration -> Result.

They are plain typed dataclasses so that every part (loop, providers, reports) agrees on one shape and
the JSON report is a direct projection of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import Enum


class Role(str, Enum):
    GENERATE = "generate"
    FEEDBACK = "feedback"
    REFINE = "refine"


@dataclass(frozen=True)
class Candidate:
    """A complete module proposed as a replacement for the target file."""

    code: str
    origin: str  # "original", "generate" or "refine"
    message: str  # the raw model message the code was taken from
    extracted: str  # the code block as the model wrote it (what the history shows)
    sha256: str
    ast_key: str  # hash of the normalised AST: equal keys mean the same program
    changed: tuple[str, ...] = ()  # names of definitions the candidate replaced or added
    notes: tuple[str, ...] = ()  # what the merge ignored or could not use, for the feedback step


@dataclass(frozen=True)
class TestFailure:
    nodeid: str
    message: str


@dataclass(frozen=True)
class TestReport:
    collected: int
    passed: int
    failed: int  # failures and errors together: anything that is not a pass or a skip
    skipped: int
    duration: float
    exit_code: int
    timed_out: bool = False
    failures: tuple[TestFailure, ...] = ()
    output_tail: str = ""

    @property
    def all_passed(self) -> bool:
        return not self.timed_out and self.failed == 0 and self.passed > 0 and self.exit_code == 0


@dataclass(frozen=True)
class TestsSelected:
    """Which tests judged the run, and why (coderefine.evaluation.selection)."""

    __test__ = False  # not a pytest test class

    mode: str  # given (--tests), all (test_selection = all), traced (found by this run), cached (by an earlier one)
    reason: str
    baseline_tests: int  # tests the original ran
    candidate_tests: int  # tests each candidate runs
    files_seen: int | None = None  # test files pytest found (None: no name filter applied)
    files_kept: int | None = None  # of them, the ones the name filter kept
    node_ids: tuple[str, ...] = ()  # the tests each candidate runs, when a selection named them


@dataclass(frozen=True)
class Mismatch:
    function: str
    kind: str  # "return", "exception", "mutation", "stdout" or "error"
    args: str
    expected: str
    got: str
    generated: bool = False  # on an input generated from type hints (--gen-inputs), not a test's call
    held_out: bool = False  # on a held-out recorded call: never shown to the model (its inputs nor outcome)


@dataclass(frozen=True)
class BehaviorReport:
    calls_compared: int
    mismatches: int
    examples: tuple[Mismatch, ...] = ()
    skipped: int = 0  # recorded calls that could not be replayed (unpicklable, non-deterministic)
    generated_compared: int = 0  # calls on inputs generated from type hints (--gen-inputs), counted apart
    generated_mismatches: int = 0
    held_out_mismatches: int = 0  # of `mismatches`, on held-out calls (never shown to the model)
    mismatched_functions: tuple[str, ...] = ()  # the targets with a call that differed
    unit: str = "call"  # what was replayed: recorded calls, or recorded runs of a program ("run")

    @property
    def equivalent(self) -> bool:
        return self.mismatches == 0 and self.generated_mismatches == 0


# How far below the shown calls' speedup the held-out calls' may lie (upper bound against lower bound)
# before the speedup is taken to come from the shown inputs themselves, as a lookup table would.
HELD_OUT_GAP = 4.0


@dataclass(frozen=True)
class Timing:
    """Original and candidate timed on the same workload, interleaved, in the same sandbox."""

    speedup: float  # geometric mean of the paired original/candidate ratios
    ci_low: float
    ci_high: float
    original_seconds: float  # mean workload time of one pass, original
    candidate_seconds: float
    pairs: int
    loops: int
    min_speedup: float  # the noise floor the lower bound had to clear
    # "steady" (later passes in a process) or "first" (first pass: state such as a cache flattered later passes)
    basis: str = "steady"
    workload: str = "recorded calls"  # what one pass runs: the recorded calls, or the user's --bench
    # The second, independent series of pairs run when the first cleared the floor: (speedup, low, high).
    confirmation: tuple[float, float, float] | None = None
    # (speedup, low, high) on the held-out calls alone (never shown to the model) and on the shown ones.
    held_out: tuple[float, float, float] | None = None
    shown: tuple[float, float, float] | None = None
    # (speedup, low, high) with each side's import work charged to its pass, and that work in seconds.
    charged: tuple[float, float, float] | None = None
    import_seconds: tuple[float, float] | None = None  # (original, candidate)

    @property
    def fast_only_on_shown(self) -> bool:
        """The speedup does not hold on the held-out calls: none there, or far below the shown calls'."""
        if self.held_out is None or self.shown is None:
            return False
        _, _, held_high = self.held_out
        return held_high < 1.0 + self.min_speedup or held_high * HELD_OUT_GAP < self.shown[1]

    @property
    def import_eats_it(self) -> bool:
        """Work moved to import time: the candidate's extra import work is at least half the time it saves
        per pass, and with each side's import charged the speedup no longer clears the floor."""
        if self.charged is None or self.import_seconds is None:
            return False
        extra = self.import_seconds[1] - self.import_seconds[0]
        saved = self.original_seconds - self.candidate_seconds
        return extra > 0 and extra >= 0.5 * saved and self.charged[1] < 1.0 + self.min_speedup

    # Each target's own (speedup, low, high) over every pair, and on the second series when there was one.
    per_function: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    per_function_confirmation: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    # Programs (basis "process": whole processes): the speedup of the part after interpreter start-up,
    # (speedup, low, high), reported beside the whole process's, which is the verdict's.
    after_startup: tuple[float, float, float] | None = None

    @property
    def cleared(self) -> bool:
        return self.ci_low >= 1.0 + self.min_speedup

    @property
    def confirmed(self) -> bool:
        return self.confirmation is not None and self.confirmation[1] >= 1.0 + self.min_speedup

    @property
    def faster(self) -> bool:
        """Faster only when the interval over every pair and the second series' own interval both clear."""
        return self.cleared and self.confirmed


@dataclass(frozen=True)
class HotSpot:
    function: str
    line: int
    share: float  # fraction of the profiled workload spent in the function itself
    calls: int


@dataclass(frozen=True)
class Refusal:
    """A power the candidate used while replayed that the original never did (coderefine_sandbox.audit)."""

    kind: str  # network, process, file_write, file_read, native, dynamic_code, import, thread, clock
    detail: str
    call: str  # "import" or the call it happened in


@dataclass(frozen=True)
class Evaluation:
    """Execution facts about one candidate (or the original, for the baseline)."""

    tests: TestReport | None
    behavior: BehaviorReport | None
    timing: Timing | None
    metrics: dict[str, float]
    hot_spots: tuple[HotSpot, ...] = ()
    error: str | None = None  # why evaluation could not happen (syntax error, sandbox failure, ...)
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0  # CPU time of the sandbox run, as its runner measured it (itself and its steps)
    refused: tuple[Refusal, ...] = ()  # powers gained over the original (not --allow'ed): never accepted
    setup_seconds: float = 0.0  # making the candidate's workspace (links into the original's, or a copy)


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

    def text(self) -> str:
        figure = f" {self.speedup:.2f}x [{self.ci_low:.2f}, {self.ci_high:.2f}]" if self.speedup is not None else ""
        return f"{self.function}: {self.verdict}{figure}{'' if self.kept else ' (dropped)'}"


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

    def add(self, prompt_tokens: int, completion_tokens: int, *, cached: bool = False, estimated: bool = False) -> None:
        self.calls += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
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


INSUFFICIENT_TESTS = "insufficient_tests"  # Result.status of a run the sufficiency gate stopped


@dataclass(frozen=True)
class TargetEvidence:
    """What the original's tests give to judge one target by."""

    target: str
    calls: int  # outermost calls the tests made to it
    recorded: int  # of those, recorded (replayable arguments, within the capture limits)
    usable: int  # of those, deterministic: the ones candidates are replayed on
    lines: int  # its lines (statements), nested code included
    covered: int  # the lines the tests ran
    missed_lines: tuple[int, ...] = ()

    @property
    def coverage(self) -> float | None:
        return self.covered / self.lines if self.lines else None


@dataclass(frozen=True)
class Sufficiency:
    """Whether the tests can support a verdict: enough usable calls and enough of the targets run."""

    applies: bool  # False for a script whose tests record no calls: its tests alone judge it
    sufficient: bool
    calls: int  # usable recorded calls over the run's targets
    lines: int  # lines of the run's targets
    covered: int
    min_calls: int
    min_coverage: float
    allowed: bool  # --allow-insufficient-tests: judge anyway
    reason: str  # what is missing (empty when sufficient), or why the gate does not apply

    @property
    def coverage(self) -> float | None:
        return self.covered / self.lines if self.lines else None

    @property
    def blocks(self) -> bool:
        return self.applies and not self.sufficient and not self.allowed


@dataclass(frozen=True)
class GeneratedInputs:
    """Inputs generated from the targets' type hints (--gen-inputs), with the original's outcomes."""

    per_target: dict[str, int]  # usable generated calls per target
    skipped: dict[str, str]  # target -> why no inputs were generated for it
    unstable: int = 0  # generated calls the original itself does not repeat: left out
    error: str | None = None

    @property
    def calls(self) -> int:
        return sum(self.per_target.values()) - self.unstable


@dataclass(frozen=True)
class ProgramFacts:
    """A target judged by the program runs its tests made (stdin -> stdout), and its timing figures."""

    runs: int  # runs of the program the tests made
    replayable: int
    usable: int  # the runs candidates are compared on
    problems: dict[str, int]  # why runs were left out -> how many
    startup_seconds: float | None  # interpreter start-up (an empty program started the same way)
    run_seconds: float | None  # the original's processes over one timing pass
    timing_runs: int  # processes in one timing pass
    timing_inputs: int  # of those, stdin files the user gave (--timing-inputs)

    @property
    def startup_share(self) -> float | None:
        """How much of the original's process time is interpreter start-up."""
        if self.startup_seconds is None or not self.run_seconds:
            return None
        return min(1.0, self.startup_seconds * self.timing_runs / self.run_seconds)

    @property
    def too_short(self) -> bool:
        """Start-up is half the time or more: a gain in the program's own work hardly shows."""
        share = self.startup_share
        return share is not None and share >= 0.5


@dataclass(frozen=True)
class BaselineFacts:
    """What the original's run in the sandbox established; the evaluator's half of a Baseline."""

    evaluation: Evaluation
    calls_recorded: int
    loops: int | None  # calibrated timing loops, reused for every candidate
    workload_seconds: float | None  # one pass over the recorded calls, original
    evidence: tuple[TargetEvidence, ...] = ()
    sufficiency: Sufficiency | None = None
    pinned: tuple[str, ...] = ()  # what was made deterministic for the recorded calls and the tests
    not_pinned: tuple[str, ...] = ()  # sources of nondeterminism that could not be pinned
    generated: GeneratedInputs | None = None
    untimed: str | None = None  # why candidates are not timed although speed is the task (too fast a workload)
    timed_calls: int = 0  # calls in the stratified timing sample when a full pass exceeds the budget (0: all)
    tests_selected: TestsSelected | None = None
    program: ProgramFacts | None = None  # set when candidates are judged by recorded program runs


@dataclass(frozen=True, kw_only=True)
class Baseline(BaselineFacts):
    """The original's facts and the task's score of them: what every candidate is judged against."""

    score: float

    @classmethod
    def scored(cls, facts: BaselineFacts, score: float) -> Baseline:
        return cls(**{item.name: getattr(facts, item.name) for item in fields(BaselineFacts)}, score=score)


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
