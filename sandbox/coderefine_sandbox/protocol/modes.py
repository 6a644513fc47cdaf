"""The protocol of the runner's two modes, `baseline` and `candidate`: the one request (`python -m
coderefine_sandbox.runner REQUEST.json`) and each mode's report, which the runner fills step by step (so the
reports are not frozen; a step that did not run stays None)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from coderefine_sandbox.protocol.behaviour import (
    BehaviorTolerances,
    BoundaryPaths,
    BoundaryReport,
    Capability,
    GeneratedPaths,
    GeneratedReport,
    ReplayReport,
)
from coderefine_sandbox.protocol.programs import ProgramBaseline, ProgramSpec
from coderefine_sandbox.protocol.reach import RecordedTests
from coderefine_sandbox.protocol.recording import (
    CaptureLimits,
    CaptureSummary,
    FailFast,
    TargetEvidence,
    TestRun,
    TestSelection,
)
from coderefine_sandbox.protocol.timing import Bench, Calibration, TimingParameters, TimingReport

Mode = Literal["baseline", "candidate"]


@dataclass(frozen=True)
class RunnerRequest:
    """One run of `python -m coderefine_sandbox.runner REQUEST.json`, in either mode."""

    mode: Mode
    python: str
    workspace: str  # the project copy under evaluation
    original_workspace: str  # the original's copy (timing interleaves the two)
    io_dir: str  # this run's scratch files
    module_name: str
    import_root: str
    targets: tuple[str, ...]
    tests: tuple[str, ...]
    test_timeout: float
    step_timeout: float
    calls_path: str  # the baseline's recorded calls
    unstable_path: str  # indices of the recorded calls the original does not repeat
    capture: CaptureLimits
    hash_seed: int
    behavior: BehaviorTolerances
    timing: TimingParameters | None  # None: no timing (the readability task)
    bench: Bench | None
    replay: bool  # candidate: whether there are recorded calls to replay
    generate: GeneratedPaths | None  # baseline: generate inputs from type hints
    generated: GeneratedPaths | None  # candidate: replay the generated inputs too
    original_capabilities: tuple[Capability, ...]  # candidate: what the original used (the baseline's replay)
    allow: tuple[str, ...]  # capability kinds a candidate may gain (`--allow`)
    selection: TestSelection | None  # None: every test the pytest arguments name
    # A file (readable in the sandbox) to lock exclusively around each timing step, shared by every job on
    # the machine (`coderefine sweep`): their tests and replays may overlap, their timing never does.
    timing_lock: str | None
    program: ProgramSpec | None = None  # the target as a program (programs/); None: calls only
    # Boundary variants of the recorded calls: baseline, derive them; candidate, replay them (None: off, or
    # the baseline kept none)
    boundary: BoundaryPaths | None = None
    # Candidate: run the tests most likely to fail first and stop at the first failure (None: every test, in
    # pytest's order: the baseline, always)
    fail_fast: FailFast | None = None
    # Baseline: the tests already ran, traced and recorded, in a first run's trace (recording/merged.py); None:
    # the baseline runs them itself
    recorded: RecordedTests | None = None
    # Candidate: pytest processes its selected tests are split across, by test file, side by side (1: one run;
    # recording/split.py). The host asks for more only where the tests write nothing into the project tree.
    test_workers: int = 1
    # Candidate: a TimedTests file of the original's run (the baseline's, or the first trace's): the split
    # deals test files by their seconds, not by their count (one networkx file takes 10 s, its neighbour 0.1 s)
    test_seconds: str | None = None
    # Candidate: the targets whose definitions it changed (empty: not known, every target counts). The timing's
    # choice of short values reads the per-target figures of these only, as the per-function verdicts do: a
    # target left unchanged is never far past the floor, however far its changed neighbours are.
    changed_targets: tuple[str, ...] = ()


@dataclass
class BaselineReport:
    tests: TestRun | None = None
    capture_error: str | None = None
    capture: CaptureSummary | None = None
    pinned: tuple[str, ...] = ()
    not_pinned: tuple[str, ...] = ()
    coverage_method: str = "none"
    evidence: dict[str, TargetEvidence] = field(default_factory=dict)
    self_check: ReplayReport | None = None  # the original replayed on its own recording
    generated: GeneratedReport | None = None
    boundary: BoundaryReport | None = None
    calibration: Calibration | None = None
    calibration_error: str | None = None
    runner_error: str | None = None  # the runner itself failed
    cpu_seconds: float = 0.0
    program: ProgramBaseline | None = None  # set when candidates are judged by recorded program runs
    timing_holds: tuple[tuple[float, float], ...] = ()  # when the request's timing lock was held (wall clock)


@dataclass
class CandidateReport:
    tests: TestRun | None = None
    behavior: ReplayReport | None = None
    generated_behavior: ReplayReport | None = None
    boundary_behavior: ReplayReport | None = None  # the boundary variants replayed
    timing: TimingReport | None = None
    timing_error: str | None = None
    runner_error: str | None = None
    cpu_seconds: float = 0.0
    refused: tuple[Capability, ...] = ()  # powers the original never used (not allowed): not timed
    timing_holds: tuple[tuple[float, float], ...] = ()


RunnerReport = BaselineReport | CandidateReport
REPORTS: dict[str, type[RunnerReport]] = {
    "baseline": BaselineReport,
    "candidate": CandidateReport,
}
