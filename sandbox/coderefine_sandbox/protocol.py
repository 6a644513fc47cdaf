"""The typed contract between coderefine (the host) and its sandbox runner: every request and every report.

Both sides import this very module (the host loads it from the folder the sandbox runs it from, see
`coderefine.resources`), so it imports only the standard library (and codec.py, which does too). The wire
format is JSON; `to_dict`/`from_dict` (codec.py) convert any dataclass below, generically over its fields
and type hints. Decoding is strict: a field missing, a field unknown, or a value of the wrong type raises
`ProtocolError` naming the type and the field, so a host and a runner that disagree fail loudly instead
of reading a default.

No field here has a default that stands for a user's setting: those come from the host (its settings
specs), and the request carries them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# The codec, re-exported: a side that speaks the protocol needs this one module.
from coderefine_sandbox.codec import ProtocolError as ProtocolError
from coderefine_sandbox.codec import from_dict as from_dict
from coderefine_sandbox.codec import from_json as from_json
from coderefine_sandbox.codec import to_dict as to_dict
from coderefine_sandbox.codec import to_json as to_json

# ----------------------------------------------------------------------------- requests

Mode = Literal["baseline", "candidate"]


@dataclass(frozen=True)
class TimingParameters:
    """How to time: interleaved process pairs, pyperf's values/warmups/min_time per process, the calibrated
    loops (None while calibrating) and the noise floor the early stop and the confirmation use."""

    pairs: int
    values: int
    warmups: int
    min_time: float
    loops: int | None
    floor: float
    budget: float  # seconds one pass may take; beyond, a stratified sample of the calls is timed


@dataclass(frozen=True)
class CaptureLimits:
    """How much of the tests' calls to the targets the recording keeps."""

    max_calls_per_target: int
    max_bytes: int


@dataclass(frozen=True)
class BehaviorTolerances:
    """How a candidate's outcome is compared with the recorded one (see compare.py)."""

    rel_tol: float
    abs_tol: float
    unordered: tuple[str, ...]  # targets whose returned sequences compare in any order


@dataclass(frozen=True)
class Bench:
    """The user's own timing workload (`--bench`): a file relative to the workspace and its functions."""

    file: str
    functions: tuple[str, ...]


@dataclass(frozen=True)
class GeneratedPaths:
    """Where the inputs generated from type hints (--gen-inputs) go; `count` per target (baseline only)."""

    count: int
    calls_path: str
    report_path: str
    unstable_path: str


@dataclass(frozen=True)
class Capability:
    """A power a module version used while imported or replayed (see audit.py): its kind (network, process,
    file_write, file_read, native, dynamic_code, import, thread, clock), what tells two uses of the kind
    apart (a path, a module; empty when the kind alone counts), what happened, and where ("import" or the
    call, as `f(args)`)."""

    kind: str
    key: str
    detail: str
    call: str


@dataclass(frozen=True)
class TestSelection:
    """Which of the tests pytest finds a test run keeps (pytest_plugin.py).

    `names`: keep only the test files whose text names one of these words (the target module, the targets
    and their callers; for data files a conftest collects, only the functions): the heuristic that bounds the
    first, traced run. `node_ids`: keep only these tests
    (found by that run to call a target). Empty: no filter of that kind."""

    __test__ = False  # not a pytest test class

    names: tuple[str, ...]
    node_ids: tuple[str, ...]
    data_names: tuple[str, ...]  # the words a data file (not Python) must name: the functions, not the module


@dataclass(frozen=True)
class ProgramSpec:
    """A target its tests run as a program (stdin -> stdout): how its runs are recorded, replayed, timed.

    Set for the baseline of every file that can run as a program (the runner then records the runs the
    tests make, and uses them when the tests made no calls it could record); set for candidates only when
    the baseline judged by runs.
    """

    file: str  # the target file, relative to the workspace
    runs_path: str  # the baseline's recorded runs with the original's outcomes (JSON)
    output: Literal["exact", "whitespace", "numeric"]  # how stdout (and stderr, when compared) must match
    compare_stderr: bool
    max_runs: int  # runs kept (the first ones)
    max_bytes: int  # stdin and files read, per run
    timing_inputs: tuple[str, ...]  # stdin files (relative to the workspace) to time on instead of the runs
    repeats: int  # processes per input and version in one timing pair (the fastest counts)


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


# ----------------------------------------------------------------------------- reports: the steps


@dataclass(frozen=True)
class TestFailure:
    __test__ = False  # not a pytest test class

    nodeid: str
    message: str


@dataclass(frozen=True)
class SelectionCounts:
    """What a `TestSelection` kept: test files pytest found and kept, tests collected and deselected."""

    files_seen: int
    files_kept: int
    deselected: int


@dataclass(frozen=True)
class TestRun:
    """The project's tests, run by pytest in the workspace."""

    __test__ = False

    timed_out: bool
    duration: float
    exit_code: int
    output_tail: str
    collected: int
    passed: int
    failed: int
    skipped: int
    failures: tuple[TestFailure, ...]
    session_error: str | None  # pytest ended without a result (could not start, or was killed)
    module_file: str | None  # where the tests imported the module from
    selected: SelectionCounts | None  # what a TestSelection kept (None: no selection was asked for)

    @property
    def stops_the_run(self) -> bool:
        """Nothing after the tests means anything when they did not all pass (or none ran)."""
        return self.timed_out or bool(self.failed) or not self.passed


@dataclass(frozen=True)
class MismatchExample:
    function: str
    kind: str  # return, exception, mutation, stdout, error
    args: str
    expected: str
    got: str
    held_out: bool = False  # a held-out call: its inputs are never shown to the model


@dataclass(frozen=True)
class HotSpot:
    function: str
    line: int
    share: float  # of the profiled time spent in the target's module
    calls: int


@dataclass(frozen=True)
class ReplayReport:
    """Recorded (or generated) calls replayed on a module version and compared with the recording."""

    calls_compared: int
    mismatches: int
    mismatch_indices: tuple[int, ...]
    examples: tuple[MismatchExample, ...]
    seconds: float | None
    profile: tuple[HotSpot, ...]
    import_error: str | None  # the module version cannot be imported
    error: str | None  # the replay step itself timed out or crashed
    capabilities: tuple[Capability, ...] = ()  # the powers it used while imported and replayed
    held_out_mismatches: int = 0  # of the mismatches, on held-out calls
    mismatched_targets: tuple[str, ...] = ()  # the targets with a call that differed (one verdict per function)

    @classmethod
    def failed(cls, error: str) -> ReplayReport:
        return cls(0, 0, (), (), None, (), None, error)

    @property
    def problem(self) -> str | None:
        """Why nothing can be concluded from this replay, if so."""
        if self.error is not None:
            return self.error
        return None if self.import_error is None else f"the module cannot be imported: {self.import_error}"

    @property
    def differs(self) -> bool:
        return self.problem is not None or self.mismatches > 0


@dataclass(frozen=True)
class CaptureSummary:
    """What recording the tests' calls gave."""

    recorded: int
    counts: dict[str, int]  # outermost calls per target, recorded or not
    unreplayable: dict[str, int]
    truncated: bool
    patched: tuple[str, ...]
    module_file: str | None
    reached: tuple[str, ...]  # node ids of the tests that called a target (the selection for candidates)


@dataclass(frozen=True)
class TargetEvidence:
    """Per target: outermost calls, calls recorded, calls usable (replayable and deterministic), lines."""

    calls: int
    recorded: int
    usable: int
    lines: int
    covered: int
    missed_lines: tuple[int, ...]


@dataclass(frozen=True)
class GeneratedReport:
    """Inputs generated from type hints and the original's outcomes on them."""

    generated: dict[str, int]  # per target
    skipped: dict[str, str]  # target -> why none were generated
    unstable: int  # generated calls the original does not repeat
    usable: int
    error: str | None

    @classmethod
    def failed(cls, error: str) -> GeneratedReport:
        return cls({}, {}, 0, 0, error)


@dataclass(frozen=True)
class Calibration:
    """The original's timing loops and the seconds of one pass over the workload."""

    loops: int
    seconds: float
    timed_calls: int = 0  # calls in the timing sample (0: every call is timed)
    calls: int = 0  # the calls the sample was drawn from


@dataclass(frozen=True)
class Estimate:
    speedup: float
    ci: tuple[float, float]
    original_seconds: float
    candidate_seconds: float


@dataclass(frozen=True)
class Confirmation:
    """The second, independent series a speedup must clear again."""

    speedup: float
    ci: tuple[float, float]
    original_seconds: float
    candidate_seconds: float
    pairs: int
    per_target: dict[str, Estimate] = field(default_factory=dict)  # each target's own estimate on this series


@dataclass(frozen=True)
class TimingReport:
    """The interleaved timing of original and candidate: the estimate on `basis`, and both estimates."""

    speedup: float
    ci: tuple[float, float]
    original_seconds: float
    candidate_seconds: float
    basis: Literal["steady", "first", "process"]  # "process": whole program runs (programs/timing.py)
    estimates: dict[str, Estimate]
    pairs: int
    loops: int
    floor: float
    confirmation: Confirmation | None  # None: the first series did not clear the floor
    # The held-out calls alone (never shown to the model) and the shown ones alone, steady state.
    held_out: Estimate | None = None
    shown: Estimate | None = None
    # Import charged: each side's pass plus the seconds executing its module at import, and those seconds.
    charged: Estimate | None = None
    import_seconds: tuple[float, float] | None = None  # (original, candidate), mean per worker process
    # each target's own estimate over every pair (one verdict per function)
    per_target: dict[str, Estimate] = field(default_factory=dict)


@dataclass(frozen=True)
class ProgramBaseline:
    """What recording the program runs the tests made gave, and the original's timing on them."""

    runs: int  # runs of the target the tests made (recorded)
    replayable: int  # of those, with everything needed to run them again
    usable: int  # of those, repeating their outcome on the original: what candidates are judged on
    problems: dict[str, int]  # why runs are not replayable or not usable -> how many
    startup_seconds: float | None  # interpreter start-up (an empty program, same flags and hooks)
    run_seconds: float | None  # the original's whole processes over one timing pass
    timing_runs: int  # processes in one timing pass
    timing_inputs: int  # of those, stdin files the user gave (--timing-inputs)
    error: str | None
    capabilities: tuple[Capability, ...] = ()  # the powers the original used in its replayed runs (audit.py)


# ----------------------------------------------------------------------------- reports: the modes
# The runner fills these step by step (so they are not frozen); a step that did not run stays None.


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


# ----------------------------------------------------------------------------- profiling (`coderefine scan`)
# A mode of its own with its own request: it works on a whole project, not on one module's targets.


@dataclass(frozen=True)
class ProfileRequest:
    """Profile the project's tests (or a workload command) and measure coverage of the hot functions."""

    mode: Literal["profile"]
    workspace: str  # the project copy
    io_dir: str
    import_roots: tuple[str, ...]  # relative to the workspace: put on sys.path (the project's own code)
    tests: tuple[str, ...]  # pytest arguments; () lets pytest use the project's config
    command: tuple[str, ...] | None  # a workload instead of the tests: python's argv after the interpreter
    paths: tuple[str, ...]  # relative to the workspace: only functions defined under these are reported
    min_calls: int  # functions with fewer calls get no coverage pass (they cannot be judged anyway)
    timeout: float  # per step (the profiled run, the coverage run)
    hash_seed: int


@dataclass(frozen=True)
class ProfiledFunction:
    """One function of the project as the profiler saw it (cProfile's key: file, first line, code name)."""

    file: str  # relative to the workspace
    line: int  # the code object's first line (a decorated function's first decorator)
    name: str
    own_seconds: float  # exclusive time: in the function's own code, not in what it calls
    cumulative_seconds: float
    calls: int  # all calls, recursive ones included
    primitive_calls: int  # calls not made from within itself
    test_count: int  # the tests during which it ran (0 for a workload command) ...
    tests: tuple[str, ...]  # ... and the first of them by name (at most 20)
    lines: int  # its statements (coverage pass; 0: not measured)
    covered: int


@dataclass
class ProfileReport:
    tests: TestRun | None = None  # the profiled test run (None for a workload command)
    command_exit: int | None = None  # the workload command's exit code
    command_output: str = ""
    total_seconds: float = 0.0  # every function's own time added up (the profiled run's total)
    functions: tuple[ProfiledFunction, ...] = ()
    coverage_method: str = "none"
    coverage_error: str | None = None
    runner_error: str | None = None
    cpu_seconds: float = 0.0
