"""The timing steps: calibrating the original's loops (baseline) and timing original against candidate in
interleaved worker processes (candidates), with the statistics of stats.py."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from coderefine_sandbox.process import base_env, remove_stale, run_step, step_argv
from coderefine_sandbox.protocol import (
    Calibration,
    Confirmation,
    Estimate,
    ProtocolError,
    RunnerRequest,
    TimingParameters,
    TimingReport,
    TimingTally,
    TimingWorkerRequest,
    WorkerFigures,
    read_json,
)
from coderefine_sandbox.timing.imports import import_extra, module_file, shared_imports
from coderefine_sandbox.timing.sampling import sample_path, stratified_sample, write_sample
from coderefine_sandbox.timing.sequential import EXTEND_FACTOR, decided, keep_measuring
from coderefine_sandbox.timing.stats import paired_speedup
from coderefine_sandbox.workload import timed_calls

# Native thread pools (BLAS, OpenMP, numexpr) sized to one thread in every timing worker, both sides alike: a
# pool that spreads an array operation over the cores it finds times the machine's other jobs as much as the
# code (the timing slot is one core's), and its spin-up is noise in a per-call figure.
ONE_THREAD_POOLS = {
    name: "1"
    for name in (
        "OPENBLAS_NUM_THREADS",
        "OMP_NUM_THREADS",
        "MKL_NUM_THREADS",
        "VECLIB_MAXIMUM_THREADS",
        "NUMEXPR_NUM_THREADS",
        "BLIS_NUM_THREADS",
    )
}

# glibc's allocator kept from returning freed memory to the system between calls, both sides alike. By default
# a block above 128 KiB (a numpy array of 16k doubles) is mapped afresh and unmapped on free, and the top of the
# heap is trimmed: with the timing's fresh arguments unpickled before every call, a vectorised call then pays
# the page faults of its output arrays on every call (measured: 3x its steady-state time on 400 KB arrays),
# which a program calling it in a loop does not. Blocks up to 32 MiB come from the heap and are reused instead.
STEADY_ALLOCATOR = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(256 << 20)}

# How much more a candidate may gain from repeated passes than the original before the first pass is used.
WARM_GAIN_LIMIT = 1.25
# The share of the candidate's processes in which repetition must save it more than the original (basis()).
REPEAT_SAVING_SHARE = 0.8
# An undecided series runs on (sequential.py) for at most this many times the seconds its planned pairs took,
# and this many seconds at most: each pair costs two worker processes.
EXTEND_TIME_FACTOR = 2.0
EXTEND_SECONDS = 120.0
# Where the planned pairs were cheap, the extension may take this long all the same. Those are the microsecond
# workloads, where a small true speedup is hardest to confirm (process-to-process spread of 12-15% against a
# +10% floor) and a pair costs one to two seconds: twice their ~10 s stopped a 1.25x rewrite near 18 pairs,
# where the count limit would let it run to 30 (simulated, spread 0.12: confirmed in 73% of runs at 18 pairs,
# 88% at 30). A series of expensive pairs is bounded by twice its planned time, as before.
EXTEND_MIN_SECONDS = 40.0
# The most of a figure the harness's own cost may take away: taking the same seconds from both sides of a pair
# moves their ratio away from 1 (a faster candidate reads faster, a slower one slower, never across), so the
# cap only keeps a noisy probe from blowing a ratio up where the calls are hardly longer than the timing.
HARNESS_CAP = 0.9
# The plain-loop factors believed (as_plain_loop): a call timed on its own never runs faster than in a loop by
# more than noise, and the work between calls (unpickling, resets, the probe, the clock's ordered reads) made
# calls of 0.2-0.4 us read 1.4 times their plain loop's time net of the probe here (factors 0.58-0.81 over 36
# processes of tabulate's _isnumber). Outside this range a reading is distrusted and the series keeps its
# per-call figures.
PLAIN_LOOP_FACTORS = (0.25, 1.1)
# Once every pair of a run so far shows the candidate this many times the floor faster on every basis a verdict reads,
# its next worker processes take values of SHORT_VALUE_SECONDS of wall time instead of the run's own, where those are
# longer (`--timing-value-seconds` above its default, the worker's WALL_BUDGET of 0.1 s; it was 0.5 s when this was
# written) (far_past_floor). On calls of up to tens of microseconds every value runs to its wall budget whatever the
# speedup (the work around each call, outside the clock, outweighs the call), so a 90x candidate of a trivial project
# paid ~2.3 s per worker process, 28 s for its 6 pairs, to confirm what its first pair already showed thirty-fold. A
# shorter value is the same estimate from fewer passes: noisier, and the paired interval, which is computed from the
# pairs' own spread, widens with it; so it is spent only where precision is not what decides, and never on a candidate
# near the floor, a cache (its first pass is not far past), work moved to import time (nor is a pass with the extra
# import charged) or a lookup of the shown inputs (nor are the held-out calls).
FAR_PAST_FLOOR = 3.0
SHORT_VALUE_SECONDS = 0.1
# The baseline's worker process takes short values too. Its figure compares with nothing: it is the workload's
# size (the seconds of one pass, which picks the noise floor's band and whether a pass is too long and a sample
# of the calls is timed instead, and each call's cost, which that sample is drawn from), where a mean over
# 0.3 s of calls is as good as over 1.5 s; every ratio a verdict reads comes from the pairs, which all keep
# their full values. It was 1.2 s of every run's baseline (3 values of 0.5 s each, the values of that time); at
# the default values of 0.1 s the two are the same.
BASELINE_VALUE_SECONDS = SHORT_VALUE_SECONDS


@dataclass(frozen=True)
class WorkerRun:
    """One timing worker's figures, in seconds per workload pass: its steady state (the mean of its values),
    its first pass (the process's very first pass alone, before any state such as a cache could build up),
    and its loop count."""

    steady: float
    first: float
    loops: int
    held_out: float = 0.0  # seconds per pass on the held-out calls (every pass of the process, warmups too)
    shown: float = 0.0  # seconds per pass on the other calls
    import_seconds: float = 0.0  # executing the module at import
    per_target: dict[str, float] = field(default_factory=dict)  # seconds per pass of each target's calls
    # Each target's own trust figures, as the whole's above: its first pass alone, and per pass its held-out
    # and its shown calls (the targets with a held-out call only).
    per_target_first: dict[str, float] = field(default_factory=dict)
    per_target_held_out: dict[str, float] = field(default_factory=dict)
    per_target_shown: dict[str, float] = field(default_factory=dict)
    call_costs: tuple[float, ...] | None = None  # seconds per pass of each call (None: a sample was timed)
    # A call of the first pass was preempted with no clean reading to put in its place (TimingTally): the first
    # pass then carries another process's milliseconds.
    first_preempted: bool = False
    # The harness's own cost (protocol.HarnessCost): seconds per call, and the weighted calls of one pass in
    # all, held out, and per target.
    harness_per_call: float = 0.0
    calls: float = 0.0
    held_out_calls: float = 0.0
    target_calls: dict[str, float] = field(default_factory=dict)
    target_held_out_calls: dict[str, float] = field(default_factory=dict)
    # The plain-loop pass beside the per-call one (HarnessCost; 0.0: none made): what as_plain_loop scales by.
    plain_loop: float = 0.0
    timed_alone: float = 0.0
    distinct_calls: int = 0

    def on(self, basis: str) -> float:
        if basis == "held_out":
            return self.held_out
        if basis == "shown":
            return self.shown
        if basis == "charged":  # one pass with the import's own work counted: what a caller pays once
            return self.steady + self.import_seconds
        return self.steady if basis == "steady" else self.first


Series = dict[str, list[WorkerRun]]  # "original" and "candidate", pair k at index k


def _worker_request(
    request: RunnerRequest, workspace: str, out: str, figures: str, loops: int | None, wall_budget: float | None
) -> TimingWorkerRequest:
    """One worker process on `workspace`: `loops` passes per value, or None to calibrate them; each value
    within `wall_budget` seconds (None: the worker's own)."""
    timing = request.timing
    assert timing is not None
    return TimingWorkerRequest(
        workspace=workspace,
        module=request.module_name,
        import_root=request.import_root,
        calls=request.calls_path,
        exclude=request.unstable_path,
        sample=sample_path(request.calls_path),  # absent (all calls timed) until the baseline chose one
        bench=request.bench,  # the user's benchmark, loaded from the workspace being timed, or None
        values=timing.values,
        warmups=timing.warmups,
        min_time=timing.min_time,
        loops=loops,
        out=out,
        figures=figures,
        preload=shared_imports(
            module_file(request.original_workspace, request.import_root, request.module_name),
            module_file(request.workspace, request.import_root, request.module_name),
            request.module_name,
        ),
        wall_budget=wall_budget,
    )


def timing_env(request: RunnerRequest, workspace: str, seed: int) -> dict[str, str]:
    """A timing worker's environment: the steps' own, its hash seed, native thread pools of one thread, an
    allocator that keeps freed memory for reuse."""
    env = base_env(request, workspace)
    env["PYTHONHASHSEED"] = str(seed)
    env.update(ONE_THREAD_POOLS)
    env.update(STEADY_ALLOCATOR)
    return env


def _shorter(seconds: float, timing: TimingParameters) -> float:
    """A short value's wall seconds: `seconds`, or the run's own values (`--timing-value-seconds`) where those
    are shorter still."""
    return seconds if timing.value_seconds is None else min(seconds, timing.value_seconds)


def _timing_run(
    request: RunnerRequest, workspace: str, loops: int | None, tag: str, seed: int, wall_budget: float | None = None
) -> WorkerRun:
    """One fresh worker process: `loops` passes per value, or None to calibrate them; values within
    `wall_budget` seconds of wall time (None: the worker's own budget)."""
    import pyperf  # only the runner process needs it, and only when timing

    out = os.path.join(request.io_dir, f"timing-{tag}.json")
    figures_path = os.path.join(request.io_dir, f"timing-{tag}.figures.json")
    remove_stale(out, figures_path)
    env = timing_env(request, workspace, seed)
    step = _worker_request(request, workspace, out, figures_path, loops, wall_budget)
    argv = step_argv("timing.worker", step, os.path.join(request.io_dir, f"timing-{tag}.request.json"))
    proc = run_step(argv, cwd=workspace, env=env, timeout=request.step_timeout)
    figures = _read_figures(figures_path)
    if figures is not None and figures.tampered:
        side = "candidate" if tag.startswith("candidate") else "original"
        raise RuntimeError(f"the {side} tampered with the timer: it replaced {', '.join(figures.tampered[:4])}")
    if not os.path.exists(out):
        raise RuntimeError(f"timing worker failed:\n{proc.stdout[-1500:]}")
    run = pyperf.Benchmark.load(out).get_runs()[-1]
    warmups = [value for _, value in run.warmups]
    values = list(run.values) or warmups[-1:]
    # A worker that wrote no figures (it died after pyperf's file) is timed by pyperf's figures alone.
    tally = figures.tally if figures is not None else None
    passes = max(1, tally.passes if tally is not None else 0)
    return WorkerRun(
        steady=sum(values) / len(values),
        first=_first_pass(tally, warmups or values),
        first_preempted=tally.first_pass_preempted if tally is not None else False,
        loops=int(run.get_metadata().get("loops", 1)),
        held_out=(tally.held_out if tally is not None else 0.0) / passes,
        shown=(tally.shown if tally is not None else 0.0) / passes,
        import_seconds=tally.import_seconds if tally is not None else 0.0,
        per_target=figures.per_target if figures is not None else {},
        **_target_trust_fields(figures),
        call_costs=figures.call_costs if figures is not None else None,
        **_harness_fields(figures),
    )


def _target_trust_fields(figures: WorkerFigures | None) -> dict[str, dict[str, float]]:
    """Each target's first pass, and its held-out and shown calls per pass (for the targets with a held-out
    call: a target's shown calls are the rest of its figure)."""
    if figures is None:
        return {}
    held = figures.per_target_held_out
    return {
        "per_target_first": dict(figures.per_target_first),
        "per_target_held_out": dict(held),
        "per_target_shown": {name: figures.per_target.get(name, 0.0) - seconds for name, seconds in held.items()},
    }


def _harness_fields(figures: WorkerFigures | None) -> dict[str, object]:
    harness = figures.harness if figures is not None else None
    if harness is None:  # nothing to take out: the figures stay as timed
        return {}
    return {
        "harness_per_call": harness.per_call,
        "calls": harness.calls,
        "held_out_calls": harness.held_out_calls,
        "target_calls": dict(harness.per_target_calls),
        "target_held_out_calls": dict(harness.per_target_held_out_calls),
        "plain_loop": harness.plain_loop,
        "timed_alone": harness.timed_alone,
        "distinct_calls": harness.distinct_calls,
    }


def harness_per_call(series: Series) -> float:
    """The harness's cost per call to take out of the series: the median of the original's worker processes.
    The candidate's own processes measure it too, but code under judgement must not choose what is taken
    out of its figures."""
    measured = [r.harness_per_call for r in series["original"]]
    return statistics.median(measured) if measured else 0.0


def without_harness(series: Series, per_call: float) -> Series:
    """The series with the harness's cost (`per_call` seconds per call) taken out of both sides' figures: the
    same seconds from the original's and the candidate's figure of each pair, at most HARNESS_CAP of the
    smaller of the two."""
    if per_call <= 0:
        return series
    net: Series = {"original": [], "candidate": []}
    for original, candidate in zip(series["original"], series["candidate"], strict=True):

        def cut(a: float, b: float, calls: float) -> float:
            return max(0.0, min(per_call * calls, HARNESS_CAP * min(a, b)))

        steady = cut(original.steady, candidate.steady, original.calls)
        first = cut(original.first, candidate.first, original.calls)
        held = cut(original.held_out, candidate.held_out, original.held_out_calls)
        shown = cut(original.shown, candidate.shown, original.calls - original.held_out_calls)
        # Each target's own figures lose the same share: its calls per pass, on the first pass, its held-out calls
        # and its shown ones per pass.
        target_calls, target_held = original.target_calls, original.target_held_out_calls
        targets = _cuts(cut, original.per_target, candidate.per_target, target_calls)
        firsts = _cuts(cut, original.per_target_first, candidate.per_target_first, target_calls)
        helds = _cuts(cut, original.per_target_held_out, candidate.per_target_held_out, target_held)
        shown_calls = {name: calls - target_held.get(name, 0.0) for name, calls in target_calls.items()}
        showns = _cuts(cut, original.per_target_shown, candidate.per_target_shown, shown_calls)
        for tag, run in (("original", original), ("candidate", candidate)):
            net[tag].append(
                replace(
                    run,
                    steady=run.steady - steady,
                    first=run.first - first,
                    held_out=run.held_out - held,
                    shown=run.shown - shown,
                    per_target=_less(run.per_target, targets),
                    per_target_first=_less(run.per_target_first, firsts),
                    per_target_held_out=_less(run.per_target_held_out, helds),
                    per_target_shown=_less(run.per_target_shown, showns),
                )
            )
    return net


def _cuts(
    cut: Callable[[float, float, float], float],
    original: dict[str, float],
    candidate: dict[str, float],
    calls: dict[str, float],
) -> dict[str, float]:
    """The harness's seconds to take out of each target's figure in `original` and `candidate` alike."""
    return {
        name: cut(seconds, candidate[name], calls.get(name, 0.0))
        for name, seconds in original.items()
        if name in candidate
    }


def _less(figures: dict[str, float], cuts: dict[str, float]) -> dict[str, float]:
    return {name: seconds - cuts.get(name, 0.0) for name, seconds in figures.items()}


def _first_pass(tally: TimingTally | None, values: list[float]) -> float:
    """The worker's first pass alone; its first value (a mean over `loops` passes) if it has none to tell."""
    first = tally.first_pass if tally is not None else -1.0
    return first if first > 0 else values[0]


def _read_figures(path: str) -> WorkerFigures | None:
    """The worker's figures beside pyperf's; None when it wrote none. Figures that are not a WorkerFigures
    fail the timing: the worker process runs the code under judgement, which could have written them."""
    if not os.path.exists(path):
        return None
    try:
        return read_json(WorkerFigures, path)
    except (OSError, ProtocolError) as exc:
        raise RuntimeError(f"the timing worker's figures cannot be read: {exc}") from None


def calibrate(request: RunnerRequest) -> Calibration:
    """The original's loop count, and the seconds of one pass over the workload (and, when that exceeds the
    per-pass budget, the sample of calls timed from then on); StepTimeout or RuntimeError when its timing
    fails."""
    timing = request.timing
    assert timing is not None
    remove_stale(sample_path(request.calls_path))
    loops = _timing_run(request, request.workspace, None, "calibrate", 0).loops
    # A second pass with the calibrated loops gives a cleaner figure than the calibration itself.
    baseline = _timing_run(request, request.workspace, loops, "baseline", 1, _shorter(BASELINE_VALUE_SECONDS, timing))
    seconds, costs = baseline.steady, baseline.call_costs
    if request.bench is None and seconds > timing.budget and costs is not None:
        # Too long a pass: time a stratified sample of the calls from now on (sampling.py). One pass of
        # the sample is a weighted estimate of the full pass, so the figure and the loops stay valid.
        targets = [call.target for call, _ in timed_calls(request.calls_path, request.unstable_path)]
        if len(targets) == len(costs):
            sample = stratified_sample(list(costs), targets, timing.budget)
            write_sample(sample_path(request.calls_path), sample)
            return Calibration(
                loops=loops,
                seconds=seconds,
                timed_calls=len(sample),
                calls=len(costs),
                harness_per_call=baseline.harness_per_call,
            )
    return Calibration(loops=loops, seconds=seconds, harness_per_call=baseline.harness_per_call)


def warm_gain(runs: list[WorkerRun]) -> float:
    """Median of first-pass time over steady-state time: how much repetition speeds a process up."""
    ratios = sorted(r.first / r.steady for r in runs if r.steady > 0)
    return ratios[len(ratios) // 2] if ratios else 1.0


def estimates(runs: Series, bases: tuple[str, ...] = ("steady", "first")) -> dict[str, Estimate]:
    found = {}
    for basis in bases:
        original = [r.on(basis) for r in runs["original"]]
        candidate = [r.on(basis) for r in runs["candidate"]]
        speedup, low, high = paired_speedup(original, candidate)
        found[basis] = Estimate(
            speedup=speedup,
            ci=(low, high),
            original_seconds=sum(original) / len(original),
            candidate_seconds=sum(candidate) / len(candidate),
        )
    return found


def per_target(runs: Series, figure: str = "per_target") -> dict[str, Estimate]:
    """Each target's own paired speedup, from its calls' share of every worker's passes; or from another of
    WorkerRun's per-target figures (`figure`: its first pass, its held-out or its shown calls). A target some
    process has no such figure for, or none above zero, has no estimate."""
    found = {}
    everyone = runs["original"] + runs["candidate"]
    names = set.intersection(*(set(getattr(r, figure)) for r in everyone)) if everyone else set()
    for name in sorted(names):
        original = [getattr(r, figure)[name] for r in runs["original"]]
        candidate = [getattr(r, figure)[name] for r in runs["candidate"]]
        if min(original + candidate) <= 0:
            continue
        speedup, low, high = paired_speedup(original, candidate)
        found[name] = Estimate(
            speedup=speedup,
            ci=(low, high),
            original_seconds=sum(original) / len(original),
            candidate_seconds=sum(candidate) / len(candidate),
        )
    return found


def per_target_trust(runs: Series) -> dict[str, dict[str, Estimate]]:
    """Each target's own first-pass estimate ("first"), and its held-out and shown calls' ("held_out", "shown")
    for the targets where both took time in every process: the whole's trust figures, target by target."""
    held, shown = per_target(runs, "per_target_held_out"), per_target(runs, "per_target_shown")
    both = set(held) & set(shown)
    return {
        "first": per_target(runs, "per_target_first"),
        "held_out": {name: e for name, e in held.items() if name in both},
        "shown": {name: e for name, e in shown.items() if name in both},
    }


def target_series(runs: Series, name: str) -> Series:
    """One target's own figures as a series: its seconds per pass as the steady state, its first pass as the
    first (what basis() reads)."""
    return {
        tag: [
            WorkerRun(
                steady=r.per_target[name],
                first=r.per_target_first[name],
                loops=r.loops,
                first_preempted=r.first_preempted,
            )
            for r in runs[tag]
        ]
        for tag in runs
    }


def per_target_basis(runs: Series, floor: float = 0.0) -> dict[str, str]:
    """The basis of each target's own verdict: basis() on its own first and later passes, so a cache on one
    function is caught even where the whole's figures do not show it (another function's work dominates the
    pass, or carries the whole past the floor). Only the targets every process has both figures for."""
    everyone = runs["original"] + runs["candidate"]
    if not everyone:
        return {}
    names = set.intersection(*(set(r.per_target) & set(r.per_target_first) for r in everyone))
    found = {}
    for name in sorted(names):
        if min(min(r.per_target[name], r.per_target_first[name]) for r in everyone) <= 0:
            continue
        found[name] = basis(target_series(runs, name), floor)
    return found


def basis(runs: Series, floor: float = 0.0) -> str:
    """ "first" when the candidate gains much more from repeated passes than the original (state kept between
    calls, e.g. a cache), else "steady".

    Repetition must also save the candidate at least half the noise floor (`floor`, a fraction) of the
    original's pass: a process's one-time costs (a numpy function's first calls, memory met for the first
    time) are a large share of a vectorised rewrite's short pass but a few per cent of the original's, and a
    cache saving less than that cannot by itself lift a candidate over the floor (with the saving capped at
    f/2 of the original's pass, a candidate no faster when cold reads at most 1/(1 - f/2) < 1 + f steady). Where
    the original's own first use is large, the allowance below widens that margin, and such a candidate can read
    up to 1/(1 - 1/4) = 1.33x: the price of not taking a rewrite's first use for a cache.

    And it must do so process by process: in at least REPEAT_SAVING_SHARE of its worker processes the candidate's
    saving exceeds the original's usual one (the median over the original's processes) by that much, and by half the
    original's usual saving too, up to a quarter of its pass (the first use of the code, which grows with a
    rewrite's code and not with the pass). A process's first pass is one reading, the noisiest there is: on a 16-20
    ms pass it moved by +-5 ms either way (an ENAMEL reference that keeps no state), and on a ~1 us function the
    interpreter's own warm-up is a large share of the shorter pass. Medians alone let that noise pick the first-pass
    basis for about one run in three of an honest candidate, which then reads "a cache" or fails to confirm. A cache
    saves the candidate the same in every process, so it clears the rule in every one.

    The original's side is its median, not each pair's own reading: that noise goes both ways. On a loaded
    machine a first pass is preempted for a whole scheduler slice (an original's 3.6 ms first pass read 7.9
    and 8.0 ms in 2 of 7 processes, which no per-call correction can see on a first pass), and subtracting
    such a reading pair by pair took the pair away from a real cache: an lru_cache candidate was then timed
    steady and accepted at 1,572x."""
    # Both sides' gains and savings come from the first passes that no other process ran inside (all of a side's
    # where every one was preempted): a preempted first pass only ever reads longer. At load 4-5 on 2 cores they
    # were common enough on the original's side to move its median and hide a per-call cache (HumanEval_16,
    # accepted 6.46x); left in on the candidate's side alone, they would make an honest candidate read like one.
    reference = _unpreempted(runs["original"])
    judged = _unpreempted(runs["candidate"])
    if warm_gain(judged) <= WARM_GAIN_LIMIT * warm_gain(reference):
        return "steady"
    saved = statistics.median(r.first - r.steady for r in judged)
    pass_seconds = statistics.median(r.steady for r in runs["original"])
    threshold = floor / 2 * pass_seconds
    if saved < threshold:
        return "steady"
    original_saves = statistics.median(r.first - r.steady for r in reference)
    # What the candidate must save beyond the original: also half the original's own saving, the first use of its
    # code (the interpreter's and the harness's paths met for the first time). A rewrite's own first use grows
    # with its code, not with the pass: tabulate's correct _padboth (more Python than the `format` call it
    # replaces) saved a steady ~8 us more than the original's ~35 us on a 132-call pass, over the 2.3 us of
    # floor/2, and was refused as a cache about one run in four. Caches that were faster saved 6.6 to 51 spreads
    # of the original's savings beyond it, far past half of them. Never more than a quarter of a pass: where the
    # original's first use outweighs its pass (a regular expression compiled on the first call of a microsecond
    # function; HumanEval_83 and 162 pay 2x and 20x a pass on their first), a cache saving the whole pass still
    # clears it (the price of the allowance is in the docstring).
    margin = max(threshold, min(original_saves / 2, pass_seconds / 4))
    beyond = [(c.first - c.steady) - original_saves >= margin for c in judged]
    return "first" if sum(beyond) >= REPEAT_SAVING_SHARE * len(beyond) else "steady"


def _unpreempted(runs: list[WorkerRun]) -> list[WorkerRun]:
    """The processes whose first pass no other process ran inside, or all of them where every one was."""
    return [r for r in runs if not r.first_preempted] or runs


def far_past_floor(series: Series, floor: float, changed: tuple[str, ...] = ()) -> bool:
    """Whether every pair of `series` shows the candidate at least FAR_PAST_FLOOR times `floor` (a ratio) faster
    on every basis a verdict reads: steady state, first pass, steady with the candidate's extra import seconds
    charged, the held-out and the shown calls, and each changed target's own calls (`changed`; empty: every
    target): over every pass, its first pass, its held-out and its shown calls. False for an empty series."""
    if not series["original"]:
        return False
    bar = FAR_PAST_FLOOR * floor
    for original, candidate in zip(series["original"], series["candidate"], strict=True):
        # The import's extra seconds charged to one pass: work moved to import time is not far past anything.
        extra_import = max(0.0, candidate.import_seconds - original.import_seconds)
        figures = [(original.on(basis), candidate.on(basis)) for basis in ("steady", "first")]
        figures.append((original.steady, candidate.steady + extra_import))
        figures += [
            (original.on(basis), candidate.on(basis))
            for basis in ("held_out", "shown")
            if original.on(basis) > 0 or candidate.on(basis) > 0  # a side without such calls reads 0 on both
        ]
        # Each target's own calls: over every pass, on its first pass, its held-out and its shown calls (a cache
        # or a lookup on one function is not far past anything either).
        for own in ("per_target", "per_target_first", "per_target_held_out", "per_target_shown"):
            theirs = getattr(candidate, own)
            figures += [
                (seconds, theirs.get(name, 0.0))
                for name, seconds in getattr(original, own).items()
                if not changed or name in changed
            ]
        if any(after <= 0 or before / after < bar for before, after in figures):
            return False
    return True


def _decided(series: Series, floor: float, chosen: str) -> bool:
    """Whether the series may stop: slower on both bases, or faster on the basis that will be reported."""
    verdicts = {
        tag: decided([r.on(tag) for r in series["original"]], [r.on(tag) for r in series["candidate"]], floor)
        for tag in ("steady", "first")
    }
    return all(v == "slower" for v in verdicts.values()) or verdicts[chosen] == "faster"


def _time_pairs(request: RunnerRequest, first: int, count: int, earlier: Series | None = None) -> Series:
    """`count` interleaved pairs, stopping early once the interval is decisive either way, and running on
    past them (up to EXTEND_FACTOR times, within the time budget) while undecided and looking faster
    (sequential.py). Pair k is numbered from `first`: its hash seeds and file names. A second series is
    decided as measure() will judge it: with the harness figure and the basis of the whole run (`earlier`,
    the first series, and this one)."""
    timing = request.timing
    assert timing is not None
    floor = 1.0 + timing.floor
    earlier = earlier or {"original": [], "candidate": []}
    series: Series = {"original": [], "candidate": []}
    started = time.monotonic()
    planned_seconds = 0.0
    short, full = _shorter(SHORT_VALUE_SECONDS, timing), timing.value_seconds
    changed = request.changed_targets
    wall_budget = short if far_past_floor(_net(earlier), floor, changed) else full
    for k in range(first, first + EXTEND_FACTOR * count):
        order = [("original", request.original_workspace), ("candidate", request.workspace)]
        if k % 2:
            order.reverse()
        for tag, workspace in order:
            series[tag].append(_timing_run(request, workspace, timing.loops, f"{tag}-{k}", k + 1, wall_budget))
        whole = {tag: earlier[tag] + series[tag] for tag in series}
        net_whole = _net(whole)
        wall_budget = short if far_past_floor(net_whole, floor, changed) else full
        net = {tag: net_whole[tag][len(earlier[tag]) :] for tag in series}
        chosen = basis(net_whole, timing.floor)
        if _decided(net, floor, chosen):
            break
        done = k + 1 - first
        if done == count:
            planned_seconds = time.monotonic() - started
        if done >= count and not _extend(net, floor, chosen, count, time.monotonic() - started, planned_seconds):
            break
    return series


def _net(series: Series) -> Series:
    """The series with the harness's cost taken out, by the figure its own original processes measured, and
    its figures made a plain loop's where every process measured one."""
    per_call = harness_per_call(series)
    return as_plain_loop(without_harness(series, per_call), per_call)


def plain_loop_factor(run: WorkerRun, per_call: float) -> float | None:
    """What the process's per-call figures (net of `per_call`, the harness cost taken out) are multiplied by to
    read as its plain-loop pass did (worker.PLAIN); None where it made none or the two disagree beyond
    PLAIN_LOOP_FACTORS (a reading to distrust rather than apply)."""
    if run.plain_loop <= 0 or run.distinct_calls <= 0:
        return None
    alone = run.timed_alone - per_call * run.distinct_calls
    if alone <= 0:
        return None
    factor = run.plain_loop / alone
    return factor if PLAIN_LOOP_FACTORS[0] <= factor <= PLAIN_LOOP_FACTORS[1] else None


def as_plain_loop(series: Series, per_call: float) -> Series:
    """The series with each process's per-pass figures scaled to its plain-loop pass (plain_loop_factor): the
    level from the plain loop, the shares (per target, held out, shown) and the first pass's relation to the
    steady passes from the calls timed one by one. All or nothing: unless every process of both sides has a
    factor, the series stays as timed, so the two sides of a pair are never read in two ways."""
    factors = plain_loop_factors(series, per_call)
    if factors is None:
        return series
    return {
        tag: [_scaled(run, factor) for run, factor in zip(runs, factors[tag], strict=True)]
        for tag, runs in series.items()
    }


def plain_loop_factors(series: Series, per_call: float) -> dict[str, list[float]] | None:
    """Each process's plain_loop_factor, side by side; None unless every process has one."""
    found: dict[str, list[float]] = {tag: [] for tag in series}
    for tag, runs in series.items():
        for run in runs:
            factor = plain_loop_factor(run, per_call)
            if factor is None:
                return None
            found[tag].append(factor)
    return found


def _scaled(run: WorkerRun, factor: float) -> WorkerRun:
    def each(figures: dict[str, float]) -> dict[str, float]:
        return {name: seconds * factor for name, seconds in figures.items()}

    return replace(
        run,
        steady=run.steady * factor,
        first=run.first * factor,
        held_out=run.held_out * factor,
        shown=run.shown * factor,
        per_target=each(run.per_target),
        per_target_first=each(run.per_target_first),
        per_target_held_out=each(run.per_target_held_out),
        per_target_shown=each(run.per_target_shown),
    )


def _extend(series: Series, floor: float, chosen: str, planned: int, elapsed: float, planned_seconds: float) -> bool:
    """Whether a series at or past its planned pairs times another (sequential.keep_measuring on the basis
    that will be reported, `chosen`), within the time budget: the extension may take at most
    EXTEND_TIME_FACTOR times what the planned pairs took (EXTEND_MIN_SECONDS all the same), and EXTEND_SECONDS at
    most."""
    extension = elapsed - planned_seconds
    if extension > extension_budget(planned_seconds):
        return False
    original = [r.on(chosen) for r in series["original"]]
    candidate = [r.on(chosen) for r in series["candidate"]]
    return keep_measuring(original, candidate, floor, planned, EXTEND_FACTOR * planned)


def extension_budget(planned_seconds: float) -> float:
    """The seconds an undecided series may run on past its planned pairs, which took `planned_seconds`."""
    return min(max(EXTEND_TIME_FACTOR * planned_seconds, EXTEND_MIN_SECONDS), EXTEND_SECONDS)


def measure(request: RunnerRequest) -> TimingReport:
    """Interleave original (A) and candidate (B) worker processes: AB, BA, AB, ... one pair per hash seed.

    Two estimates come out: steady state (the later passes in a process) and first pass. They agree
    unless the candidate keeps state between calls, typically a cache: replaying the same recorded calls
    pass after pass then flatters it in a way no real caller would see. When the candidate gains much
    more from repetition than the original does, the (noisier) first-pass estimate is reported instead.

    A speedup is claimed only when it shows twice: if the first series of pairs clears the noise floor,
    a second, independent series must clear it too (a 95% interval alone is wrong one time in forty, and
    a tool that times many candidates meets that one time). The figure reported is then the estimate
    over both series.

    A series stops as soon as it is decisive (sequential.py): from the second pair once both intervals
    lie wholly below the noise floor (that only ever rejects), from the third once a stricter 99.9%
    interval clears it (the extra looks cost at most ~0.6% on that series; the second series still has
    to clear the floor on its own). A series that reaches its planned pairs undecided, its interval
    straddling the floor with the point estimate above it, runs on (up to three times the pairs, within a
    time budget) and is judged where it ends; either series alike.

    Raises StepTimeout or RuntimeError when a worker fails.
    """
    timing = request.timing
    assert timing is not None
    if timing.loops is None:
        raise RuntimeError("the original's timing was never calibrated")
    floor = 1.0 + timing.floor
    raw = _time_pairs(request, 0, timing.pairs)
    runs = _net(raw)
    confirmation = None
    # A file run judges each function on its own calls too, so one function clearing the floor on its own
    # is a claim to confirm as well.
    if estimates(runs)[basis(runs, timing.floor)].ci[0] >= floor or any(
        e.ci[0] >= floor for e in per_target(runs).values()
    ):
        raw_second = _time_pairs(request, timing.pairs, timing.pairs, raw)
        raw = {tag: raw[tag] + raw_second[tag] for tag in raw}
        # One figure for the whole run, taken out of both series alike.
        runs = _net(raw)
        second = {tag: runs[tag][-len(raw_second[tag]) :] for tag in runs}
        confirmed = estimates(second)[basis(runs, timing.floor)]
        confirmation = Confirmation(
            speedup=confirmed.speedup,
            ci=confirmed.ci,
            original_seconds=confirmed.original_seconds,
            candidate_seconds=confirmed.candidate_seconds,
            pairs=len(second["original"]),
            per_target=per_target(second),
            per_target_first=per_target(second, "per_target_first"),
        )
    found = estimates(runs)
    chosen = basis(runs, timing.floor)
    per_call = harness_per_call(raw)  # what `runs` are net of, and what decided whether they were scaled
    trust = _trust_estimates(runs)
    targets = per_target_trust(runs)
    return TimingReport(
        speedup=found[chosen].speedup,
        ci=found[chosen].ci,
        original_seconds=found[chosen].original_seconds,
        candidate_seconds=found[chosen].candidate_seconds,
        basis="first" if chosen == "first" else "steady",
        estimates=found,
        pairs=len(runs["original"]),
        loops=timing.loops,
        floor=timing.floor,
        confirmation=confirmation,
        held_out=trust.get("held_out"),
        shown=trust.get("shown"),
        charged=trust.get("charged"),
        import_seconds=(_mean(runs, "original"), _mean(runs, "candidate")),
        import_extra=import_extra(*_import_readings(runs)),
        per_target=per_target(runs),
        per_target_first=targets["first"],
        per_target_basis=per_target_basis(runs, timing.floor),
        per_target_held_out=targets["held_out"],
        per_target_shown=targets["shown"],
        harness_seconds_per_call=per_call,
        plain_loop=plain_loop_factors(raw, per_call) is not None,
        per_target_with_harness=per_target(raw),
    )


def _import_readings(runs: Series) -> tuple[list[float], list[float]]:
    """The two sides' import seconds, pair by pair, for the import-time rule. A reading the scheduler preempted
    is the process's processor time over the import (worker.timed_import), so every pair is read: leaving such
    pairs out starved the rule of pairs under load, where a long import is preempted in most processes."""
    return [r.import_seconds for r in runs["original"]], [r.import_seconds for r in runs["candidate"]]


def _mean(runs: Series, tag: str) -> float:
    return sum(r.import_seconds for r in runs[tag]) / len(runs[tag])


def _trust_estimates(runs: Series) -> dict[str, Estimate]:
    """The held-out and shown calls apart (when both parts took time), and the pass with the import charged."""
    bases = ["charged"]
    if all(r.held_out > 0 and r.shown > 0 for tag in runs for r in runs[tag]):
        bases += ["held_out", "shown"]
    return estimates(runs, tuple(bases))
