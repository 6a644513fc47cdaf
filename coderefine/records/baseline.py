"""What the original's baseline run established, before any candidate: the evidence its tests give and
the facts the loop and the reports build on."""

from __future__ import annotations

from dataclasses import dataclass, fields

from coderefine.records.evaluation import Evaluation, TestsSelected

INSUFFICIENT_TESTS = "insufficient_tests"  # Result.status of a run the sufficiency gate stopped
PROGRAM_TARGET = "<program>"  # the evidence key the sandbox uses for a program's runs and lines
# Why a run of a program could not be recorded, as the sandbox words it (coderefine_sandbox.programs.runs.MISSED)
MISSED_PROGRAM_RUNS = "started by the tests without the start-up hook"


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
    # why the calls that are not usable are not, most calls first: (reason, calls) ("argument 1 is a socket")
    unusable: tuple[tuple[str, int], ...] = ()

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
class BoundaryInputs:
    """Boundary variants of the recorded calls (inputs the tests never tried) and the original's outcomes."""

    per_target: dict[str, int]  # variants kept per target, before the original's replay in a process of its own
    derived: int  # variants derived within the count budget
    raised: int  # the original raises on them: left out, not held against a candidate
    slow: int  # the original runs past the per-variant limit, or the seconds budget ran out first
    not_deterministic: int  # two runs of the original in a row differ
    unpicklable: int
    unstable: int  # kept ones the original's replay in a process of its own does not repeat: left out
    seconds: float  # spent deriving and checking them on the original
    error: str | None = None

    @property
    def calls(self) -> int:
        """The variants every candidate is compared on."""
        return 0 if self.error else max(0, sum(self.per_target.values()) - self.unstable)


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
    boundary: BoundaryInputs | None = None
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
