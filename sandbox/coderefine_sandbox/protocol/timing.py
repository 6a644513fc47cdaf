"""The protocol of the timing stage: how to time, the user's own benchmark, the request of one timing worker
process and the figures it writes beside pyperf's, the sample of the calls timed when a pass is too long, and
the calibration and the interleaved timing reported back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


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
    value_seconds: float | None = None  # wall seconds one timing value may take (None: the worker's own)


@dataclass(frozen=True)
class Bench:
    """The user's own timing workload (`--bench`): a file relative to the workspace and its functions."""

    file: str
    functions: tuple[str, ...]


@dataclass(frozen=True)
class Calibration:
    """The original's timing loops and the seconds of one pass over the workload."""

    loops: int
    seconds: float
    timed_calls: int = 0  # calls in the timing sample (0: every call is timed)
    calls: int = 0  # the calls the sample was drawn from
    # What timing one call on its own costs beyond a plain loop, in seconds (the baseline worker's harness probe,
    # HarnessCost; 0.0: none measured): what decides whether the calls are too short to time (verdicts.too_fast).
    harness_per_call: float = 0.0


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
    # each target's own first-pass estimate on this series (what a target decided on its first pass reads)
    per_target_first: dict[str, Estimate] = field(default_factory=dict)


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
    # The candidate's import seconds minus the original's over the paired worker processes: (mean, low, high)
    # of a 95% t interval; None with fewer than two pairs (timing/imports.py).
    import_extra: tuple[float, float, float] | None = None
    # each target's own estimate over every pair (one verdict per function)
    per_target: dict[str, Estimate] = field(default_factory=dict)
    # The trust rules' figures of each target on its own calls, as the whole's above: its first pass, the basis
    # its own first and later passes give ("first": it gains much more from repetition than the original, e.g.
    # a cache on that one function), and its held-out and shown calls apart (when both took time).
    per_target_first: dict[str, Estimate] = field(default_factory=dict)
    per_target_basis: dict[str, str] = field(default_factory=dict)
    per_target_held_out: dict[str, Estimate] = field(default_factory=dict)
    per_target_shown: dict[str, Estimate] = field(default_factory=dict)
    # What timing each call on its own costs beyond a plain loop, in seconds per call, as measured in the
    # original's worker processes; taken out of both sides' times before every ratio (timing/steps.py).
    harness_seconds_per_call: float = 0.0
    # Whether the figures are plain loops' (each process's per-call figures scaled to its plain-loop passes,
    # timing/worker.py PLAIN); False where some process made none (async, lazy, random calls) or the run is older.
    plain_loop: bool = False
    # Each target's own estimate over every pair with that cost left in (the ratio of what each side's calls took
    # as timed): for a target whose calls cost about what the harness does, taking the same seconds out of both
    # sides leaves two small numbers whose ratio read 0.45-2.2x for a function the candidate left unchanged.
    # Left in, a ratio only moves toward 1: a target slower here is slower on the net figure too.
    per_target_with_harness: dict[str, Estimate] = field(default_factory=dict)


# ----------------------------------------------------------------------------- the worker's request


@dataclass(frozen=True)
class TimingWorkerRequest:
    """One timing worker: `python -m coderefine_sandbox.timing.worker STEP.json` times the workload on the module
    as `workspace` has it, as a pyperf worker process writing pyperf's file to `out`.

    One pass is every recorded call once (or the sample of them, when `sample` exists), or every function of
    the user's benchmark; pyperf takes `values` values after `warmups` warmups, each of `loops` passes (None:
    pyperf calibrates the loops, each value lasting `min_time` seconds at least)."""

    workspace: str  # the module version timed
    module: str
    import_root: str  # relative to the workspace
    calls: str  # the calls file
    exclude: str | None  # the calls the original does not repeat (UnstableCalls), never timed
    sample: str  # where the run's TimingSample lives; absent until the baseline chose one
    bench: Bench | None  # the user's benchmark instead of the calls (loaded from this workspace)
    values: int
    warmups: int
    min_time: float
    loops: int | None
    out: str
    figures: str  # where the worker's own figures go (WorkerFigures)
    # Modules both versions import at module level, imported untimed before the timed import (timing/imports.py).
    preload: tuple[str, ...] = ()
    # Wall seconds one value may take (None: the worker's WALL_BUDGET); shorter once a series is far past the
    # floor on every basis (timing/steps.py).
    wall_budget: float | None = None


@dataclass
class TimingTally:
    """A timing worker's own figures beside pyperf's, summed over every pass it makes (warmups too); the worker
    fills it as it times."""

    held_out: float  # seconds on the held-out calls (never shown to the model)
    shown: float  # seconds on the other calls
    passes: int
    # Executing the module at import (compiling excepted), its threads waited for; the process's processor time
    # instead of the wall time when the scheduler preempted it (timing/worker.py timed_import).
    import_seconds: float
    thread_seconds: float  # waiting for threads the import or a call left running
    # The process's very first pass alone (-1: none yet): a pyperf value averages `loops` passes, all but one
    # of them after a cache could have filled, and the warm-gain rule compares this one (timing/steps.py).
    first_pass: float
    # Whether a call of that first pass was preempted (switched out involuntarily, never waiting itself): with no
    # earlier clean reading of the call to put in its place, the pass then carries the milliseconds another
    # process ran. basis() leaves such first passes out, on either side, of what it compares.
    first_pass_preempted: bool = False


@dataclass(frozen=True)
class HarnessCost:
    """The timing harness's own cost in one worker process (timing/worker.py): timing a do-nothing call on its
    own, with each call's arguments, minus that call in a plain loop, in seconds per call (never below zero);
    and the weighted calls one pass makes, in all, held out, and per target (each call stands for its
    repeats, a sampled one for its stratum), so that the cost can be taken out of each figure."""

    per_call: float
    calls: float
    held_out_calls: float
    per_target_calls: dict[str, float]
    per_target_held_out_calls: dict[str, float] = field(default_factory=dict)  # of each target's, held out
    # Seconds of one pass made in a plain loop, and of the same passes' calls timed one by one, each entry once
    # (means over the passes, as the steady figure is a mean; 0.0: no plain-loop passes were made, timing/worker.py
    # PLAIN), and the entries.
    plain_loop: float = 0.0
    timed_alone: float = 0.0
    distinct_calls: int = 0


@dataclass(frozen=True)
class WorkerFigures:
    """What a timing worker writes beside pyperf's file (the request's `figures`)."""

    tally: TimingTally
    tampered: tuple[str, ...]  # what was replaced (a clock, pyperf's runner, the worker's own): nothing counts
    per_target: dict[str, float]  # seconds per pass of each target's calls (one verdict per function)
    call_costs: tuple[float, ...] | None  # seconds per pass of each call; None: a sample was timed
    harness: HarnessCost | None = None  # None: the worker made no pass (it was tampered with)
    # Each target's seconds on the process's first pass alone, and per pass on its held-out calls (every pass,
    # as per_target): the whole's first-pass and held-out figures, target by target (the trust rules per function).
    per_target_first: dict[str, float] = field(default_factory=dict)
    per_target_held_out: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class TimingSample:
    """The calls timed when one pass over all of them exceeds the budget (timing/sampling.py): (index into the
    workload, the calls it stands for), chosen once from the original's costs."""

    calls: tuple[tuple[int, float], ...]
