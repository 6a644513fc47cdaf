"""The protocol of the behaviour stage: how outcomes are compared, the powers a version uses, the requests of
its two steps (replaying recorded or generated calls, generating inputs), each run as a process of its own,
their reports, and the calls the original does not repeat; boundary variants of the recorded calls (inputs the
tests never tried) and what deriving them kept."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BehaviorTolerances:
    """How a candidate's outcome is compared with the recorded one (see behaviour/compare.py)."""

    rel_tol: float
    abs_tol: float
    unordered: tuple[str, ...]  # targets whose returned sequences compare in any order


@dataclass(frozen=True)
class GeneratedPaths:
    """Where the inputs generated from type hints (--gen-inputs) go; `count` per target (baseline only)."""

    count: int
    calls_path: str
    report_path: str
    unstable_path: str


@dataclass(frozen=True)
class BoundaryPaths:
    """Where the boundary variants of the recorded calls go (behaviour/boundary.py): at most `count` variants
    and about `seconds` of the original's time to derive and keep them (baseline), then replayed on every
    candidate."""

    count: int
    seconds: float
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
    # (call index, bytes): how far the resident high-water mark rose during the call, for the calls with the
    # largest arguments (behaviour/memory.py); empty where it cannot be read
    peak_memory: tuple[tuple[int, int], ...] = ()
    mismatch_kinds: tuple[str, ...] = ()  # per mismatch index, what differed (return, exception, yield...)

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
class UnstableCalls:
    """The calls of a calls file the original does not repeat identically (its replay on its own recording):
    left out whenever a candidate is judged or timed."""

    indices: tuple[int, ...]


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
class BoundaryReport:
    """Boundary variants derived from the recorded calls and which were kept: those on which the original
    returns, twice alike, within the per-variant time limit. `kept` counts before the original's replay in a
    process of its own, which finds `unstable` more (left out)."""

    derived: int  # distinct variants derived (within the count budget)
    kept: dict[str, int]  # per target
    raised: int  # the original raises on them: not held against a candidate
    slow: int  # the original runs past the per-variant limit (or the seconds budget ran out first)
    not_deterministic: int  # two runs of the original differ
    unpicklable: int  # arguments or outcome cannot be pickled
    unstable: int  # differ when the original replays them in a process of its own
    seconds: float  # spent deriving, running and checking them on the original
    error: str | None

    @classmethod
    def failed(cls, error: str) -> BoundaryReport:
        return cls(0, {}, 0, 0, 0, 0, 0, 0.0, error)

    @property
    def usable(self) -> int:
        return max(0, sum(self.kept.values()) - self.unstable)


# ----------------------------------------------------------------------------- the steps' requests
# The runner writes each as JSON and runs the step on it; the step reads it back strictly.


@dataclass(frozen=True)
class ReplayRequest:
    """One replay: `python -m coderefine_sandbox.behaviour.replay STEP.json` replays the calls of a calls file
    on the module as `workspace` has it, and writes a `ReplayReport` to `out`."""

    workspace: str  # the module version replayed
    module: str
    import_root: str  # relative to the workspace
    calls: str  # the calls file (the tests' recording, or the generated inputs)
    exclude: str | None  # the calls the original does not repeat (UnstableCalls), left out; absent: none
    out: str
    tolerances: BehaviorTolerances
    profile: bool  # profile the calls for the module's hot spots
    original_workspace: str | None  # the original's, which a layered candidate workspace links into (audit.py)
    audit: bool  # the audit hook on; off only to measure what it costs (benchmarks/audit_cost.py)
    # Hold every second call out of the examples (recorded calls: their inputs are never shown to the model);
    # off for boundary variants, whose inputs are the counterexample the model is shown.
    hold_out: bool = True
    memory: bool = True  # read peak memory per call (behaviour/memory.py); off only to measure what it costs


@dataclass(frozen=True)
class GenerateRequest:
    """Inputs from type hints: `python -m coderefine_sandbox.behaviour.generate STEP.json` writes `count` inputs
    per target with the original's outcomes as a calls file (`out`) and a `GeneratedReport` (`report`)."""

    workspace: str  # the original's
    module: str
    import_root: str  # relative to the workspace
    targets: tuple[str, ...]
    count: int
    out: str
    report: str


@dataclass(frozen=True)
class BoundaryRequest:
    """Boundary variants: `python -m coderefine_sandbox.behaviour.boundary STEP.json` derives variants of the
    recorded calls (`calls`, less `exclude` and the held-out ones), runs the original on each, and writes the
    kept ones with the original's outcomes as a calls file (`out`) and a `BoundaryReport` (`report`)."""

    workspace: str  # the original's
    module: str
    import_root: str  # relative to the workspace
    calls: str  # the tests' recorded calls
    exclude: str | None  # the recorded calls the original does not repeat (UnstableCalls)
    count: int
    seconds: float
    out: str
    report: str
