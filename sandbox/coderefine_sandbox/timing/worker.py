"""A pyperf worker that times the recorded workload on one module version.

    python -m coderefine_sandbox.timing.worker STEP.json

STEP.json is a protocol.TimingWorkerRequest: the module version, the calls (or the user's benchmark), and
pyperf's values, warmups, minimum time and loops (or none: calibrate them), which become pyperf's own
worker command line (`pyperf_argv`). pyperf does the calibration of loops, the warmups, the values and the
metadata; the runner (timing/steps.py) spawns these workers itself so that original and candidate processes
can be interleaved, which pyperf's own manager does not do.

One loop = every recorded call once, or, with a bench file the user named (`--bench`), every benchmark
function once. The arguments of each call are unpickled fresh before it (the call
may mutate them) and only the call itself is timed, so copying costs nothing in the figure.

Timing a call on its own still costs two clock reads around it, and the work between calls (unpickling,
resetting the random state) evicts what a plain loop keeps warm: after each call the worker unpickles and
resets again and times a call that does nothing, with the same arguments, the same way, and in a plain loop,
and reports the difference per call (protocol.HarnessCost); the runner takes it out of both sides' figures
(timing/steps.py).

Besides pyperf's file the worker writes its own figures (a protocol.WorkerFigures, where the request's
`figures` says): the seconds executing the module at import (compiling excepted: work moved to import time
is charged to the candidate), the time spent on held-out and on shown calls over every pass, each target's
and each call's share, and any tampering with the timer it saw. The clock it times with is bound before
the module under judgement is imported, and pyperf's and this module's state is checked after the import
and after the timing: a candidate that replaces them is caught.

An async call (a coroutine, an async generator: behaviour/asynchronous.py) is awaited on an event loop made
fresh for each pass, inside a driver task that reads the clock around the `await` alone; the same reading of a
do-nothing coroutine is taken off each call, on both sides, so the loop's own cost (creating the task,
turning the loop: ~18 us a call) is in neither figure.

Work moved to a thread is charged where it was moved from: a thread the module starts at import is waited
for inside the import's time, and a thread a call leaves running is waited for inside that call's time
(threads are refused unless `--allow thread`; this is what makes them honest when allowed).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import os
import pickle
import random
import statistics
import sys
import threading
import types
from time import perf_counter as _clock  # bound before any candidate code runs
from time import process_time as _processor_clock
from typing import Any

import pyperf
import pyperf._runner
import pyperf._worker

from coderefine_sandbox.audit import clock_state, replaced_clocks
from coderefine_sandbox.behaviour import asynchronous
from coderefine_sandbox.behaviour.asynchronous import TimingLoop
from coderefine_sandbox.behaviour.lazy import LazyResult, drain, has_iterator_arguments, supply
from coderefine_sandbox.pinning import Pin
from coderefine_sandbox.protocol import (
    HarnessCost,
    TimingTally,
    TimingWorkerRequest,
    WorkerFigures,
    read_json,
    write_json,
)
from coderefine_sandbox.relocation import relocation
from coderefine_sandbox.timing.imports import preload
from coderefine_sandbox.timing.sampling import read_sample
from coderefine_sandbox.workload import (
    add_import_paths,
    import_module,
    load_bench,
    resolve,
    timed_calls,
)

try:  # the thread's own resource usage (Linux): what tells a preempted call (unpreempted)
    from resource import RUSAGE_THREAD as THREAD
    from resource import getrusage
except ImportError:  # no such reading here: calls keep their wall time
    THREAD = None
    getrusage = None  # type: ignore[assignment]

NO_ARGUMENTS = pickle.dumps(((), {}))
# A workload entry: the function, its pickled arguments, the random states it had, whether it is held out,
# and for a lazy or async call what to supply, consume and await (_shape).
Shape = tuple[bool, "LazyResult | None", "str | None"]
Entry = tuple[Any, bytes, Any, bool, "Shape | None"]
_CLOCKS = clock_state()
# Where the figures beside pyperf's are summed: seconds on held-out and shown calls, passes made, the import,
# threads waited for, the first pass alone (protocol.TimingTally).
TALLY = TimingTally(held_out=0.0, shown=0.0, passes=0, import_seconds=0.0, thread_seconds=0.0, first_pass=-1.0)

# Timed seconds per workload entry, and passes made, over the worker's life (see per_target).
PER_CALL: list[float] = []
# PER_CALL as it stood at the end of the process's first pass: each entry's first-pass seconds (a copy taken
# once per process, outside the timed region), for each target's own first-pass figure (see per_target_first).
FIRST_CALL: list[float] = []
# Each workload entry's last timed seconds while not preempted (-1: none yet), and the longest call whose
# preempted timing is replaced by it (see unpreempted).
CLEAN: list[float] = []
CLEAN_LIMIT = 50e-6
PASSES = [0]
# With a sample of the calls (sampling.py), what each timed call stands for; else empty (all 1).
WEIGHTS: list[float] = []
# The harness probe, one figure per pass over the worker's life: seconds per call timing a do-nothing call on
# its own with each call's arguments, minus that call per iteration of a plain loop. Timing a call on its own
# costs two clock reads and the statements between them (~100 ns): on a 1 us function that alone turns a
# 1.30x rewrite into ~1.2x, so the difference is measured here, in the process and on the arguments being
# timed, and taken out of both sides' times (steps.py). The median over passes is used: a pass the scheduler
# interrupted (a loaded machine does, for milliseconds) would otherwise decide a mean.
HARNESS: list[float] = []
PROBE_LOOP = (range(1), range(5))
# Up to this many pickled bytes a call's arguments are unpickled afresh for its probe (see time_workload).
PROBE_FRESH_BYTES = 64 << 10

# The plain-loop passes (plain_loop_pass). The probe takes out the cost of the clock reads and the statements
# around a call, but a call timed on its own still runs slower than in a loop, by an amount that grows with the
# call's own code: the clock's read is ordered (it waits for the call's last instructions to retire) and the
# work between calls evicts what the call keeps warm. Measured on a 1.28x rewrite of a 0.43 us function, 8 fresh
# processes: net of a do-nothing call timed alike, the original ran 22 ns slower a call than in a plain loop and
# the candidate 5 ns, so the ratio read 1.33x even with nothing but the clock between calls (in the tool, with its
# work between calls, 1.24-1.27x for the loop's 1.28x: off by a few per cent, in a direction the code decides).
# So after each pass, where the workload allows, the same calls are made again in plain loops under one clock
# reading, as a user's loop (and pyperf's timeit) makes them. Each process reports those passes' seconds beside
# its per-call passes' (means over the passes, as the steady figure is a mean), and the runner scales the
# process's per-call figures to the plain loop's (steps.as_plain_loop): the calls timed one by one give the
# shares (per target, held out, the first pass against the steady ones), the plain loop the level.
# Per pass: the plain loop's seconds (its own loop's cost made a plain loop's, see plain_loop_pass), and the same
# pass's calls timed one by one (unweighted: each entry once, as the plain loop makes them).
PLAIN: list[float] = []
ALONE: list[float] = []
# Whether another process ran inside each plain-loop measurement (was_preempted): its seconds hold that process's
# slice, which the calls timed one by one leave out (unpreempted), so it is left out of both means (plain_figures).
PLAIN_PREEMPTED: list[bool] = []
# How many plain passes this process makes per measurement, 0 for none (decided on its second pass, empty until
# then: _plain_repeats). Only recorded calls that are plain synchronous calls, drew nothing from the pinned random
# states or clock and started no thread on that pass (the plain loop cannot reset them between calls), whose
# arguments fit in PLAIN_BYTES, and whose mean call is short enough for the difference to matter (PLAIN_CALL_LIMIT:
# on longer calls it is a fraction of a per cent, and the extra passes would only cost values their passes).
PLAIN_REPEATS: list[int] = []
PLAIN_BYTES = 16 << 20
PLAIN_CALL_LIMIT = 20e-6
# Plain passes made back to back per measurement (plain_loop_pass), after an untimed one: the first one after
# the per-call pass reads slow. Measured on the two microsecond pairs of benchmarks/harness_ratios.py, 6 processes
# each, against a user's loop: one pass read 1.30x for 1.28x and 1.61x for 1.63x, 4 read 1.30x/1.29x and
# 1.62x/1.62x, 8 read 1.279x/1.274x and 1.627x/1.626x. Fewer where 8 passes would take more than PLAIN_SECONDS.
PLAIN_REPEATS_MOST = 8
PLAIN_SECONDS = 2e-3
# Wall seconds of the per-call passes made since the process's plain-loop measurements began, and of those
# measurements. A measurement is made after a pass only while the measurements have taken at most PLAIN_SHARE of
# the per-call passes' time, so those keep at least four fifths of every value: they give each function's, the
# held-out calls' and the first pass's figures, and on a workload where a few 50 us calls outweigh many 0.1 us ones
# a measurement after every pass took nine tenths of the process, and a cheap function's own figure, from a tenth of
# the passes, read 1000x rewrites "not faster" in 2 of 4 CI dry runs.
PLAIN_WALL = [0.0, 0.0]
PLAIN_SHARE = 0.25

# Wall seconds one value may take. Only the calls themselves are timed, so on calls of a microsecond the
# untimed work around them (unpickling the arguments, pinning) can be many times the timed figure, and the
# loops pyperf calibrates on the timed figure would take minutes. Past this budget a value stops and
# reports the mean of the passes it made (pyperf divides by the loops it asked for, hence the scaling):
# the same estimate from fewer passes, the same rule for original and candidate.
# 0.1 s, pyperf's own minimum for a value: on calls of a microsecond what moves a pair's ratio is the spread
# between processes (where each one's code and data land), not within one. Measured on a 1.3x rewrite of a
# 0.6 us function, 48 pairs each, quiet and beside one and two busy loops: the pairs' ratios spread by 0.034
# (log) with 3 values of 0.1 s and by 0.042 with 3 of 0.5 s, while a worker took 0.58 s against 1.78 s. So a
# pair is as precise at a third of the cost, and a series that must run on to decide (sequential.py) gets three
# times the pairs in its time budget. Longer calls end their values on pyperf's loops (min_time of timed calls)
# at about the same length either way.
WALL_BUDGET = 0.1
# Wall seconds the warm-up value may take (with fixed loops; calibration keeps WALL_BUDGET). No figure is read
# from the warm-up's mean: the process's first pass is its first pass whatever the warm-up's length, and the
# values after it are timed as before; what it is for (the interpreter's specialised code, the allocator's
# blocks, the caches touched) takes a pass or two. At the full budget it was a sixth of a worker's life.
WARMUP_BUDGET = 0.1
# Warm-up values still to come in this process (main sets it from the request).
WARMUPS_LEFT = [0]
# How long one wait for threads left running may take. A thread still alive after it (an idle pool's
# worker) is not waited for again: its work so far is charged, what it does later competes for the GIL
# with the timed calls and slows them, which charges it too.
THREAD_WAIT = 2.0


def wait_for_new_threads(known: set[threading.Thread]) -> float:
    """Wait (bounded) for the threads started since `known` was taken; return the seconds waited. The
    threads still running afterwards join `known`, so they are waited for once."""
    started = _clock()
    deadline = started + THREAD_WAIT
    for thread in threading.enumerate():
        if thread not in known:
            thread.join(max(0.0, deadline - _clock()))
            if thread.is_alive():
                known.add(thread)
    waited = _clock() - started
    TALLY.thread_seconds += waited
    return waited


def _guarded() -> dict[str, object]:
    """What the timing relies on, by identity: pyperf's runner and worker, and this module's functions."""
    found: dict[str, object] = {}
    for owner in (pyperf._runner.Runner, pyperf._worker.WorkerTask, pyperf._worker.WorkerProcessTask):
        for name, value in vars(owner).items():
            found[f"pyperf.{owner.__name__}.{name}"] = value
    # The async calls' timing: its loop driver and the idle coroutine whose cost is taken off each call.
    for name in ("TimingLoop", "idle", "drain"):
        found[f"asynchronous.{name}"] = getattr(asynchronous, name)
    for name, value in vars(TimingLoop).items():
        found[f"asynchronous.TimingLoop.{name}"] = value
    names = (
        "time_workload",
        "_clock",
        "_processor_clock",
        "TALLY",
        "_nothing",
        "_probe",
        "_looped",
        "_form",
        "HARNESS",
        "PROBE_LOOP",
        "PLAIN",
        "ALONE",
        "PLAIN_PREEMPTED",
        "PLAIN_WALL",
        "PLAIN_SHARE",
        "plain_figures",
        "PLAIN_REPEATS",
        "_plain",
        "_plain_idle",
        "plain_loop_pass",
        "_entropy_state",
    )
    for name in (*names, "unpreempted", "was_preempted", "getrusage", "THREAD", "CLEAN", "CLEAN_LIMIT"):
        # Named as before the module moved to timing/worker.py: the names reach the report (what was replaced).
        found[f"timing_worker.{name}"] = globals()[name]
    return found


def tampering(guarded: dict[str, object]) -> list[str]:
    """What was replaced since `guarded` was taken: clocks, pyperf's state, the worker's own functions."""
    changed = replaced_clocks(_CLOCKS)
    now = _guarded()
    changed += [name for name, value in guarded.items() if now.get(name) is not value]
    changed += [name for name in now if name not in guarded]
    return changed


def timed_import(name: str) -> Any:
    """Import the module, timing only the execution of its body (and what it newly imports): compiling
    depends on the source's length and is cached in real installs, module-level work is not."""
    spec = importlib.util.find_spec(name)  # imports the parent packages, untimed
    get_code = getattr(getattr(spec, "loader", None), "get_code", None)
    if spec is None or get_code is None:
        started = _clock()
        module = import_module(name)
        TALLY.import_seconds = _clock() - started
        return module
    code = get_code(name)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    known = set(threading.enumerate())
    try:
        before = getrusage(THREAD) if THREAD is not None else None
        processor = _processor_clock()
        started = _clock()
        exec(code, module.__dict__)
        elapsed = _clock() - started
        processor = _processor_clock() - processor
        if before is not None and was_preempted(before, getrusage(THREAD)):
            # Switched out involuntarily and never waiting itself: the wall time holds what other processes ran,
            # the process's processor time does not (the process's, not the thread's: a thread the module starts
            # works on its account; read from the clock, as getrusage's user and system times lag, see
            # unpreempted). An import of tens of milliseconds is preempted as a rule on a loaded machine:
            # HumanEval_113's import cache (30 ms of answers computed at import) had its readings preempted in all
            # but one or two of seven processes at load 4, and leaving those out, as the rule did, left too few
            # pairs to show the 30 ms. On a clean reading the two clocks agree (measured here: 1.000-1.006).
            elapsed = min(elapsed, processor)
        TALLY.import_seconds = elapsed + wait_for_new_threads(known)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def build_workload(request: TimingWorkerRequest) -> tuple[list[Entry], list[str], list[int]]:
    """The workload entries, the target (or bench function) of each, and how many recorded calls each
    stands for (workload.timed_calls: each distinct call once per pass)."""
    add_import_paths(request.workspace, request.import_root)
    bench = request.bench
    if bench is not None:  # loaded from the workspace being timed, so it imports that workspace's target
        functions = load_bench(os.path.join(request.workspace, bench.file), list(bench.functions))
        return (
            [(func, NO_ARGUMENTS, None, False, None) for func in functions],
            list(bench.functions),
            [1] * len(functions),
        )
    preload(request.preload, request.workspace)  # what both versions import: the same on both sides, untimed
    module = timed_import(request.module)
    distinct = timed_calls(request.calls, request.exclude)
    # Each call made as if recorded in the workspace timed, as the replay makes it (relocation.py): a path
    # argument into the recording's folder would send the candidate down another path than the original.
    workload = [
        (
            resolve(module, call.target),
            relocation(call.origin, request.workspace).blob(call.record["args"]),
            settable(call.record.get("entropy")),
            call.held_out,
            _shape(call),
        )
        for call, _ in distinct
    ]
    return workload, [call.target for call, _ in distinct], [count for _, count in distinct]


# Whether numpy restores a state given with its key as a list (settable): found once per process, then kept.
LIST_KEYS_RESTORE: list[bool] = []


def settable(note: Any) -> Any:
    """A recorded call's random states (pinning.py) in the form that is quickest to restore: the same states.

    numpy's legacy `set_state` copies the generator's 624 key words one by one, and from an array each copy
    makes a numpy scalar: 130-190 us per reset, twice per call (before the call and before its probe), most of
    a pass's untimed work on calls of a microsecond (networkx's `pairwise`: 45 ms of wall time per 1 ms pass
    timed, so a value made a dozen passes). From a list of the same words it takes ~7 us. Used only where this
    process has checked that numpy restores the list form to the very same state (_list_keys_restore)."""
    if not isinstance(note, dict):
        return note
    state = note.get("numpy_state")
    if not (isinstance(state, tuple) and len(state) == 5 and hasattr(state[1], "tolist")):
        return note
    listed = (state[0], state[1].tolist(), *state[2:])
    return {**note, "numpy_state": listed} if _list_keys_restore(state, listed) else note


def _list_keys_restore(state: tuple[Any, ...], listed: tuple[Any, ...]) -> bool:
    """Whether numpy's global generator, given `listed`, holds exactly `state` (checked once per process, on
    the first state met; the generator's own state is put back afterwards)."""
    checked = LIST_KEYS_RESTORE
    if checked:
        return checked[0]
    numpy = sys.modules.get("numpy")
    ok = False
    if numpy is not None:
        try:
            saved = numpy.random.get_state()
            numpy.random.set_state(listed)
            now = numpy.random.get_state()
            ok = now[0] == state[0] and list(now[1]) == listed[1] and tuple(now[2:]) == tuple(state[2:])
            numpy.random.set_state(saved)
        except Exception:
            ok = False
    checked.append(ok)
    return ok


def _shape(call: Any) -> Shape | None:
    """For a lazy or async call (behaviour/lazy.py, asynchronous.py): whether its arguments hold iterators to
    supply afresh, the lazy result to consume as the test did, and its async kind (awaited on the pass's event
    loop); None for a plain call."""
    args, kwargs = pickle.loads(call.record["args"])
    supplied = has_iterator_arguments(args, kwargs)
    result = pickle.loads(call.record["value"]) if call.record.get("lazy") else None
    kind = asynchronous.expected_kind(call.record)
    return (supplied, result, kind) if supplied or result is not None or kind is not None else None


def _nothing(*args: Any, **kwargs: Any) -> None:
    """The harness probe's call: it does nothing, so timing it measures the timing itself (see HARNESS)."""


def _form(args: tuple[Any, ...], kwargs: dict[str, Any], lazy: LazyResult | None) -> int:
    """How a call is made in the timed region: 0-3 positional arguments passed as such (the call a plain loop
    makes, which CPython specialises), -1 through *args/**kwargs (keywords, more arguments, a lazy result)."""
    return -1 if kwargs or lazy is not None or len(args) > 3 else len(args)


def _probe(form: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> float:
    """Seconds timing a do-nothing call on its own the way time_workload times a call of this form, minus that
    call per iteration of a plain loop: what the harness adds to one call (HARNESS)."""
    perf_counter = _clock
    nothing = _nothing
    rounds = PROBE_LOOP
    try:  # the timed statement of time_workload, around nothing
        if form == 1:
            (a,) = args
            started = perf_counter()
            nothing(a)
        elif form == 2:
            a, b = args
            started = perf_counter()
            nothing(a, b)
        elif form == 0:
            started = perf_counter()
            nothing()
        elif form == 3:
            a, b, c = args
            started = perf_counter()
            nothing(a, b, c)
        else:
            started = perf_counter()
            nothing(*args, **kwargs)
        alone = perf_counter() - started
    except Exception:
        alone = perf_counter() - started
    # A plain loop's cost per call: the slope between a short and a longer loop, so that the clock reads
    # around the loops cancel out.
    short = _looped(form, args, kwargs, rounds[0])
    long = _looped(form, args, kwargs, rounds[1])
    return alone - (long - short) / (len(rounds[1]) - len(rounds[0]))


def _looped(form: int, args: tuple[Any, ...], kwargs: dict[str, Any], rounds: range) -> float:
    """Seconds of a plain loop making the do-nothing call of this form `len(rounds)` times."""
    perf_counter = _clock
    nothing = _nothing
    if form == 1:
        (a,) = args
        started = perf_counter()
        for _ in rounds:
            nothing(a)
    elif form == 2:
        a, b = args
        started = perf_counter()
        for _ in rounds:
            nothing(a, b)
    elif form == 0:
        started = perf_counter()
        for _ in rounds:
            nothing()
    elif form == 3:
        a, b, c = args
        started = perf_counter()
        for _ in rounds:
            nothing(a, b, c)
    else:
        started = perf_counter()
        for _ in rounds:
            nothing(*args, **kwargs)
    return perf_counter() - started


def _entropy_state(pin: Pin) -> tuple[Any, ...]:
    """The pinned inputs a call could draw on, as they stand: `random`'s state, numpy's global generator's (when
    numpy is imported), and how many clock readings were served."""
    numpy = sys.modules.get("numpy")
    numpy_state: Any = None
    if numpy is not None:
        with contextlib.suppress(Exception):
            state = numpy.random.get_state()
            numpy_state = (state[0], state[1].tolist(), *state[2:])
    return (random.getstate(), numpy_state, pin.clock.index)


def _plain(batches: list[list[tuple[Any, ...]]], form: int | None) -> float:
    """Seconds of plain loops making every call of `batches` in turn. With `form` (0-3: every call takes that
    many positional arguments) an entry is the function and its arguments, called as a user's loop calls it;
    with None, the function, args and kwargs. A call that raises is part of the workload (replay checked it
    raises alike); the try costs nothing until it catches (3.11), and the do-nothing loop taken off has it too."""
    perf_counter = _clock
    if form == 1:
        started = perf_counter()
        for entries in batches:
            for func, a in entries:
                try:
                    func(a)
                except Exception:  # not contextlib.suppress: a context manager would be timed
                    continue
    elif form == 2:
        started = perf_counter()
        for entries in batches:
            for func, a, b in entries:
                try:
                    func(a, b)
                except Exception:  # not contextlib.suppress: a context manager would be timed
                    continue
    elif form == 0:
        started = perf_counter()
        for entries in batches:
            for (func,) in entries:
                try:
                    func()
                except Exception:  # not contextlib.suppress: a context manager would be timed
                    continue
    elif form == 3:
        started = perf_counter()
        for entries in batches:
            for func, a, b, c in entries:
                try:
                    func(a, b, c)
                except Exception:  # not contextlib.suppress: a context manager would be timed
                    continue
    else:
        started = perf_counter()
        for entries in batches:
            for func, args, kwargs in entries:
                try:
                    func(*args, **kwargs)
                except Exception:  # not contextlib.suppress: a context manager would be timed
                    continue
    return perf_counter() - started


# The same loops for the do-nothing calls, in a code object of their own: CPython specialises each call site for
# the function it meets (3.11), so one site alternating between the calls and the do-nothing function was
# re-specialised every time and read both ~7 ns a call slow (1.61x for a user's loop's 1.63x).
_plain_idle = types.FunctionType(_plain.__code__.replace(), globals(), "_plain_idle")


def plain_loop_pass(workload: list[Entry], reset: Any, repeats: int) -> float:
    """Seconds of one pass over the workload's calls made in a plain loop (each entry once), the mean of
    `repeats` such passes made back to back, each on arguments of its own unpickled before them all, after one
    untimed pass: after the per-call pass and the unpickling, the first plain pass finds what the calls keep
    warm evicted and reads slow (~10 ns a call of 0.4 us), the next ones are a user's loop. The loop's own cost
    is made a plain loop's: the same loops making a do-nothing call are taken off and a plain `for` over
    do-nothing calls put back. What is left is what the per-call passes are scaled to (PLAIN)."""
    loads = pickle.loads
    # One copy of the arguments per pass, and one for the untimed pass: a call may mutate its own.
    warm, *batches = [[(func, *loads(blob)) for func, blob, *_rest in workload] for _ in range(repeats + 1)]
    forms = {_form(args, kwargs, None) for _func, args, kwargs in warm}
    form = forms.pop() if len(forms) == 1 and -1 not in forms else None
    if form is not None:  # the arguments themselves, called as a user's loop calls them
        warm, *batches = [[(func, *args) for func, args, _kwargs in batch] for batch in (warm, *batches)]
    reset(workload[0][2])  # the calls drew nothing from it when watched (PLAIN_REPEATS); as the first call's
    _plain([warm], form)  # untimed: what the calls keep warm, back in place after the per-call pass
    ran = _plain(batches, form)
    idle = _plain_idle([[(_nothing, *entry[1:]) for entry in batch] for batch in batches], form)
    arity = 1 if form is None else form
    calls = range(len(workload) * repeats)
    looped = _looped(arity, (None,) * arity, {}, calls) - _looped(arity, (None,) * arity, {}, range(0))
    return (ran - idle + looped) / repeats


def _plain_repeats(workload: list[Entry], untouched: bool, alone: float) -> int:
    """How many plain passes back to back each plain-loop measurement makes in this process (0: none),
    judged on one pass (PLAIN_REPEATS) that took `alone` seconds: up to PLAIN_REPEATS_MOST, as many as make
    PLAIN_SECONDS, and as many as the arguments of all of them and the untimed pass fit PLAIN_BYTES."""
    if not untouched or not workload or any(entry[4] is not None for entry in workload):
        return 0
    if alone / len(workload) > PLAIN_CALL_LIMIT:
        return 0
    size = sum(len(entry[1]) for entry in workload)
    by_time = int(PLAIN_SECONDS / alone) if alone > 0 else PLAIN_REPEATS_MOST
    return max(0, min(PLAIN_REPEATS_MOST, max(1, by_time), PLAIN_BYTES // max(1, size) - 1))


def was_preempted(before: Any, after: Any) -> bool:
    """Whether the thread was switched out involuntarily between the two readings and never gave the processor
    up itself (no sleep, no wait on I/O or a lock)."""
    return after.ru_nivcsw != before.ru_nivcsw and after.ru_nvcsw == before.ru_nvcsw


def unpreempted(elapsed: float, before: Any, after: Any, clean: float) -> float:
    """A call's seconds with the time the scheduler gave another process during it left out: when the thread
    was switched out involuntarily (preempted) and never gave the processor up itself (no voluntary switch:
    no sleep, no wait on I/O or a lock), the same call's last unpreempted time in this process (`clean`, -1
    for none yet), if less. `before` and `after` are the thread's resource usage read just outside the timed
    region.

    On a loaded machine a timed call of a microsecond is preempted about once in two thousand and loses the
    milliseconds another process then runs (measured on a real worker request: 14-24 such calls in ~40,000
    added 2.5-4.7x to a 0.5 us mean). Which calls that hits is chance, so it inflated both sides and made
    the processes' figures differ by tens of per cent. The thread's processor time over the window does not
    tell the lost time here (on this virtual machine it read ~1 ms for a 0.5 us call), the call's own
    unpreempted time does. Only calls of up to CLEAN_LIMIT are replaced: a longer one is preempted as a
    matter of course, and a call slow on some passes only could otherwise have its slow passes replaced by
    its fast ones. A call that waits keeps its wall time."""
    if not was_preempted(before, after):
        return elapsed
    return min(elapsed, clean) if 0.0 <= clean <= CLEAN_LIMIT else elapsed


def time_workload(loops: int, workload: list[Entry], tolerate_errors: bool) -> float:
    perf_counter = _clock
    loads = pickle.loads
    probe = _probe
    usage = getrusage
    total = held_total = 0.0
    harness = HARNESS
    sink = io.StringIO()
    pin = Pin()  # the random states and clock readings each call had when recorded, set outside the timing
    reset = pin.reset
    pin.install()
    per_call = PER_CALL
    if len(per_call) != len(workload):
        per_call[:] = [0.0] * len(workload)
    clean = CLEAN
    if len(clean) != len(workload):
        clean[:] = [-1.0] * len(workload)
    weights = WEIGHTS if len(WEIGHTS) == len(workload) else [1.0] * len(workload)
    # Threads are counted outside the timed region, so a workload that starts none pays nothing for it.
    thread_count = threading.active_count
    known = set(threading.enumerate())
    threads = len(known)
    done = 0
    preempted = False  # a call of this pass preempted with no clean time to put in its place
    warming = WARMUPS_LEFT[0] > 0
    WARMUPS_LEFT[0] -= warming
    deadline = perf_counter() + (WARMUP_BUDGET if warming else WALL_BUDGET)
    event_loop = TimingLoop(perf_counter)
    # Recorded calls only (a bench function is the user's own loop, and long): see PLAIN.
    plain = tolerate_errors and (not PLAIN_REPEATS or PLAIN_REPEATS[0] > 0)
    with contextlib.redirect_stdout(sink):
        for _ in range(loops):
            extra = 0.0
            alone = 0.0  # the pass's calls timed one by one, unweighted (see PLAIN)
            pass_started = perf_counter()
            # The second pass of the process: what the calls draw on is watched (PLAIN_REPEATS). Not the first, whose
            # figure is read on its own (the first-pass basis) and would carry the watching's work between calls.
            deciding = plain and not PLAIN_REPEATS and TALLY.first_pass >= 0
            untouched = deciding
            for index, (func, blob, entropy, held, shape) in enumerate(workload):
                args, kwargs = loads(blob)
                lazy = None
                if shape is not None:
                    if shape[0]:  # fresh iterator arguments, made outside the timed region
                        args, kwargs, _ = supply(args, kwargs, log=False)
                    lazy = shape[1]
                form = _form(args, kwargs, lazy)
                reset(entropy)
                if shape is not None and shape[2] is not None:
                    # Awaited on the pass's loop, timed inside it with the idle coroutine's cost taken off (that
                    # subtraction is the async calls' harness cost: no probe for them).
                    elapsed, error = event_loop.time(functools.partial(func, *args, **kwargs), shape[1])
                    if error is not None and not tolerate_errors:
                        raise error
                else:
                    # The timed region holds the call and nothing else: its form is chosen and its arguments
                    # unpacked before the clock starts, and a call of up to three positional arguments is made as
                    # a plain loop makes it (through *args it costs ~100 ns more). A try costs nothing until it
                    # catches (3.11).
                    drawn = _entropy_state(pin) if untouched else None
                    before = usage(THREAD) if THREAD is not None else None
                    try:
                        if form == 1:
                            (a,) = args
                            started = perf_counter()
                            func(a)
                        elif form == 2:
                            a, b = args
                            started = perf_counter()
                            func(a, b)
                        elif form == 0:
                            started = perf_counter()
                            func()
                        elif form == 3:
                            a, b, c = args
                            started = perf_counter()
                            func(a, b, c)
                        elif lazy is None:
                            started = perf_counter()
                            func(*args, **kwargs)
                        else:  # a lazy result: consumed as the test did, its body's work is the call's
                            started = perf_counter()
                            drain(func(*args, **kwargs), lazy)
                        elapsed = perf_counter() - started
                    except Exception:
                        elapsed = perf_counter() - started
                        # Recorded calls that raise are part of the workload (replay checked they raise the same
                        # way). A bench function that raises has no such check, and failing fast would look like
                        # a speedup: that ends the worker, and the timing is rejected.
                        if not tolerate_errors:
                            raise
                    if before is not None:
                        timed = elapsed
                        after = usage(THREAD)
                        elapsed = unpreempted(elapsed, before, after, clean[index])
                        if elapsed == timed:
                            clean[index] = elapsed
                            preempted = preempted or was_preempted(before, after)
                    alone += elapsed
                    if drawn is not None:
                        untouched = _entropy_state(pin) == drawn
                    # The harness probe, interleaved with the calls, with this call's arguments and form, timed
                    # in the state the call was timed in: right after a fresh unpickling and reset. That work
                    # between calls evicts what a plain loop keeps warm (measured on a 1 us function: ~90 ns of
                    # every call's time, as much for a do-nothing call as for the function), so a probe timed
                    # straight after the previous call saw ~60 ns where the harness costs ~150 ns.
                    # Arguments of many kilobytes (arrays) are not unpickled twice: their calls take far longer
                    # than the harness, and the second copy would only halve the passes a value makes.
                    if len(blob) <= PROBE_FRESH_BYTES:
                        args, kwargs = loads(blob)
                    reset(entropy)
                    extra += probe(form, args, kwargs)
                if thread_count() != threads:  # the call left threads running: their work is this call's
                    elapsed += wait_for_new_threads(known)
                    threads = thread_count()
                    untouched = False
                elapsed *= weights[index]
                total += elapsed
                per_call[index] += elapsed
                if held:
                    held_total += elapsed
            event_loop.close()  # a fresh event loop for every pass, made when its first async call comes
            sink.seek(0)
            sink.truncate()
            harness.append(extra / len(workload))
            if deciding:
                PLAIN_REPEATS.append(_plain_repeats(workload, untouched, alone))
                plain = PLAIN_REPEATS[0] > 0
            elif plain and PLAIN_REPEATS and not warming:
                PLAIN_WALL[0] += perf_counter() - pass_started
                if PLAIN_WALL[1] <= PLAIN_SHARE * PLAIN_WALL[0]:
                    measuring = perf_counter()
                    before = usage(THREAD) if THREAD is not None else None
                    PLAIN.append(plain_loop_pass(workload, reset, PLAIN_REPEATS[0]))
                    ALONE.append(alone)
                    PLAIN_PREEMPTED.append(before is not None and was_preempted(before, usage(THREAD)))
                    PLAIN_WALL[1] += perf_counter() - measuring
            if TALLY.first_pass < 0:
                TALLY.first_pass = total
                TALLY.first_pass_preempted = preempted
                FIRST_CALL[:] = per_call
            done += 1
            if perf_counter() > deadline:
                break
    pin.uninstall()
    TALLY.held_out += held_total
    TALLY.shown += total - held_total
    TALLY.passes += done
    PASSES[0] += done
    return total * loops / done


def harness_cost(workload: list[Entry], names: list[str]) -> HarnessCost:
    """What timing each call on its own costs beyond a plain loop, per call (never below zero), and the
    weighted calls one pass makes: in all, held out, and per target (what it is subtracted for, steps.py)."""
    per_call = max(0.0, statistics.median(HARNESS)) if HARNESS else 0.0
    weights = WEIGHTS if len(WEIGHTS) == len(workload) else [1.0] * len(workload)
    targets: dict[str, float] = {}
    for name, weight in zip(names, weights, strict=False):
        targets[name] = targets.get(name, 0.0) + weight
    held = sum(weight for entry, weight in zip(workload, weights, strict=False) if entry[3])
    held_targets: dict[str, float] = {}
    for name, entry, weight in zip(names, workload, weights, strict=False):
        if entry[3]:
            held_targets[name] = held_targets.get(name, 0.0) + weight
    return HarnessCost(
        per_call=per_call,
        calls=sum(weights),
        held_out_calls=held,
        per_target_calls=targets,
        per_target_held_out_calls=held_targets,
        **plain_figures(),
        distinct_calls=len(workload),
    )


def plain_figures() -> dict[str, float]:
    """The plain-loop measurements' mean seconds per pass and their per-call passes' (HarnessCost.plain_loop and
    timed_alone), over the measurements no other process ran inside. Where every one was (a loaded machine, a
    long measurement), the medians of all of them: a preempted one only ever reads longer, and a process without
    the figure would leave the whole series on its per-call figures (steps.as_plain_loop). Zeros: none made."""
    clean = [index for index, preempted in enumerate(PLAIN_PREEMPTED) if not preempted]
    if clean:
        return {
            "plain_loop": statistics.fmean(PLAIN[index] for index in clean),
            "timed_alone": statistics.fmean(ALONE[index] for index in clean),
        }
    if PLAIN:
        return {"plain_loop": statistics.median(PLAIN), "timed_alone": statistics.median(ALONE)}
    return {"plain_loop": 0.0, "timed_alone": 0.0}


def per_target(names: list[str]) -> dict[str, float]:
    """Seconds per pass of each target's calls over every pass this worker made (warmups included): what
    each function's own speedup is computed from (one verdict per function)."""
    passes = PASSES[0] or 1
    found: dict[str, float] = {}
    for name, seconds in zip(names, PER_CALL, strict=False):
        found[name] = found.get(name, 0.0) + seconds / passes
    return found


def per_target_first(names: list[str]) -> dict[str, float]:
    """Seconds of each target's calls on the process's first pass alone (empty before any pass): the whole's
    first-pass figure split by target, so a cache on one function shows in that function's own figures."""
    found: dict[str, float] = {}
    for name, seconds in zip(names, FIRST_CALL, strict=False):
        found[name] = found.get(name, 0.0) + seconds
    return found


def per_target_held_out(names: list[str], workload: list[Entry]) -> dict[str, float]:
    """Seconds per pass of each target's held-out calls over every pass (as per_target): a target's shown calls
    are the rest of its figure. Only targets with a held-out call are named."""
    passes = PASSES[0] or 1
    found: dict[str, float] = {}
    for name, entry, seconds in zip(names, workload, PER_CALL, strict=False):
        if entry[3]:
            found[name] = found.get(name, 0.0) + seconds / passes
    return found


def pyperf_argv(request: TimingWorkerRequest) -> list[str]:
    """pyperf's own command line for one worker process of the request (pyperf parses it as a worker's)."""
    loops = ["--calibrate-loops"] if request.loops is None else ["--loops", str(request.loops)]
    return [
        "--worker",
        "--quiet",
        "--values",
        str(request.values),
        "--warmups",
        str(request.warmups),
        "--min-time",
        str(request.min_time),
        "-o",
        request.out,
        *loops,
    ]


# How much of the heap is faulted in before anything is timed (see prefault_heap).
PREFAULT_BYTES = 64 << 20


def prefault_heap(total: int = PREFAULT_BYTES) -> None:
    """Grow the heap by `total` bytes of touched memory and free it, before any call is timed. The timing
    environment keeps freed memory in the heap (steps.STEADY_ALLOCATOR), so the calls' arrays and buffers
    come from pages already mapped: otherwise a process's first pass pays the page faults of every block size
    it meets for the first time (~0.1 ms per 400 KB array), which reads like a cache filling up and would
    decide the first-pass basis (steps.basis) for a vectorised rewrite that keeps no state at all."""
    blocks = [bytearray(8 << 20) for _ in range(max(1, total >> 23))]  # zero-filled: every page touched
    del blocks


def main(argv: list[str]) -> int:
    global WALL_BUDGET
    request = read_json(TimingWorkerRequest, argv[0])
    if request.wall_budget is not None:
        WALL_BUDGET = request.wall_budget
    # The modules' bytecode is cached in the workspaces' __pycache__ folders (the steps' environment says not
    # to write it, for the tests' sake): every worker of a pair otherwise compiles the whole package again
    # (networkx: 300 modules, 0.7 s of each process). Compiling is outside every figure (timed_import), so
    # nothing measured changes. The original's copy gets its cache from the baseline's workers and is
    # read-only for candidate jobs, where a write fails silently and the module is compiled as before.
    sys.dont_write_bytecode = False
    WARMUPS_LEFT[0] = request.warmups if request.loops is not None else 0
    prefault_heap()
    runner = pyperf.Runner(add_cmdline_args=None)
    runner.parse_args(pyperf_argv(request))
    guarded = _guarded()  # before any of the module under judgement runs
    workload, names, repeats = build_workload(request)
    tampered = tampering(guarded)
    if tampered:  # nothing this process would measure could be believed
        write_json(request.figures, WorkerFigures(TALLY, tuple(tampered), per_target={}, call_costs=None))
        return 3
    # Each distinct call stands for its repeats; a sampled one for its stratum too.
    WEIGHTS[:] = [float(count) for count in repeats]
    sample = None if request.bench is not None else read_sample(request.sample)
    if sample is not None:
        workload = [workload[index] for index, _ in sample]
        names = [names[index] for index, _ in sample]
        WEIGHTS[:] = [repeats[index] * weight for index, weight in sample]
    runner.bench_time_func("workload", time_workload, workload, request.bench is None)
    # Without a sample, each call's cost in the original is what the baseline chooses a sample from.
    costs = None if sample is not None else tuple(seconds / (PASSES[0] or 1) for seconds in PER_CALL)
    figures = WorkerFigures(
        TALLY,
        tuple(tampering(guarded)),
        per_target=per_target(names),
        call_costs=costs,
        harness=harness_cost(workload, names),
        per_target_first=per_target_first(names),
        per_target_held_out=per_target_held_out(names, workload),
    )
    write_json(request.figures, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
