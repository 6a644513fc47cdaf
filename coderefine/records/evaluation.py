"""What running one candidate (or the original) established: tests, behaviour, timing, refusals."""

from __future__ import annotations

from dataclasses import dataclass, field


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
    # a candidate's fail-fast run stopped at its first failure: `ran` of the `collected` tests ran
    stopped_early: bool = False

    @property
    def all_passed(self) -> bool:
        return not self.timed_out and self.failed == 0 and self.passed > 0 and self.exit_code == 0

    @property
    def ran(self) -> int:
        return self.passed + self.failed + self.skipped


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
    files_importing: int | None = None  # of files_kept, those kept only for importing the target's package
    files_untraced: int | None = None  # test files importing the package that the tracing budget left out
    tests_untraced: int | None = None  # collected tests of such files the budget left unrun
    files_unimportable: int | None = None  # such files pytest could not import (left out, not failed)


@dataclass(frozen=True)
class Mismatch:
    function: str
    kind: str  # "return", "exception", "mutation", "stdout" or "error"
    args: str
    expected: str
    got: str
    generated: bool = False  # on an input generated from type hints (--gen-inputs), not a test's call
    held_out: bool = False  # on a held-out recorded call: never shown to the model (its inputs nor outcome)
    boundary: bool = False  # on a boundary variant of a recorded call: an input the tests never tried


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
    boundary_compared: int = 0  # boundary variants of the recorded calls (inputs the tests never tried)
    boundary_mismatches: int = 0
    boundary_seconds: float = 0.0  # spent replaying them on the candidate

    @property
    def equivalent(self) -> bool:
        return self.mismatches == 0 and self.generated_mismatches == 0 and self.boundary_mismatches == 0


@dataclass(frozen=True)
class Timing:
    """Original and candidate timed on the same workload, interleaved, in the same sandbox (what the figures
    mean is decided in coderefine.evaluation.verdicts)."""

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
    # The candidate's import seconds minus the original's over the paired processes: (mean, low, high), 95%.
    import_extra: tuple[float, float, float] | None = None
    # The original's seconds on the held-out calls over its seconds on the shown ones (their relative cost).
    held_out_cost: float | None = None
    # (speedup, low, high) on later passes, when the verdict's basis is the first pass: what a cache kept
    # between calls would have claimed.
    steady: tuple[float, float, float] | None = None

    # Each target's own (speedup, low, high) over every pair, and on the second series when there was one: on
    # its own basis, as the whole's figure is (its first pass when it gains much more from repetition than the
    # original, e.g. a cache on that one function).
    per_function: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    per_function_confirmation: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    # The targets decided on their first pass, with their (speedup, low, high) on later passes: what a cache
    # on that function would have claimed.
    per_function_steady: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    # Each target's own (speedup, low, high) on its held-out and on its shown calls (the targets with both),
    # and the original's seconds on its held-out calls over those on its shown ones (their relative cost).
    per_function_held_out: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    per_function_shown: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    per_function_held_out_cost: dict[str, float] = field(default_factory=dict)
    # Programs (basis "process": whole processes): the speedup of the part after interpreter start-up,
    # (speedup, low, high), reported beside the whole process's, which is the verdict's.
    after_startup: tuple[float, float, float] | None = None
    # What timing each call on its own costs beyond a plain loop (seconds per call), taken out of both sides'
    # times before every ratio above; 0.0 where nothing was taken out (programs, older reports).
    harness_seconds_per_call: float = 0.0
    # Whether the figures above are plain loops' (the calls timed one by one scaled to each worker process's
    # plain-loop passes): False for workloads the plain loop cannot make (async, lazy, calls drawing random
    # numbers), programs and older reports.
    plain_loop: bool = False
    # Each target's own (speedup, low, high) over every pair with that cost left in: what "no target slower" reads
    # (a target whose calls cost about what the harness does reads wide of the mark net of it; left in, a ratio
    # only moves toward 1). Empty in older reports: per_function is read instead.
    per_function_with_harness: dict[str, tuple[float, float, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class MemoryUse:
    """Peak memory per call, original and candidate, on the same recorded calls (those with the largest
    arguments): how far the sandbox process's resident high-water mark rose during each call, the largest
    over the calls read on both sides, in bytes; and the limit it is held to (the verdict is
    coderefine.evaluation.verdicts.memory_grew)."""

    original: int
    candidate: int
    calls: int  # calls read on both sides
    max_ratio: float  # refused when more than this many times the original's peak ...
    min_growth: int  # ... and at least this many bytes over it (max_ratio 0: no limit)
    allowed: bool  # `--allow memory`: shown, never refused


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
    # When this evaluation held the machine's timing lock (wall-clock start, end): `bench --jobs` and `sweep`
    # report them, the evidence that no two timing runs overlapped.
    timing_holds: tuple[tuple[float, float], ...] = ()
    memory: MemoryUse | None = None  # peak memory per call before and after; None: not read on both sides
