"""Replay recorded calls on a module version and compare every outcome with the recording.

    python -m coderefine_sandbox.behaviour.replay STEP.json

STEP.json is a protocol.ReplayRequest (the module version, the calls file, the calls to leave out, the
tolerances); the result is a protocol.ReplayReport (JSON) at the request's `out`.

Compared per call: return value (deep equality, float tolerance, NaN-aware), exception type and message,
the arguments after the call (in-place mutation), and what was printed; for the targets the tolerances name
`unordered` a returned list, tuple or other sequence may hold the same elements in another order. Each
call gets the random states and clock readings it had when recorded (pinning.py). The original replayed against
its own recording finds the calls that are not deterministic; those are excluded for candidates.
"""

from __future__ import annotations

# Loaded before any audit window opens, as it always was here: the audit counts a module's first import inside
# a window (socket, ssl, concurrent among the sensitive ones, which asyncio brings), and what the replay itself
# had loaded decides what a module's own imports read as. asynchronous.py no longer imports asyncio for every
# sandbox process, so the replay keeps it here, and a candidate's `import asyncio` reads as before.
import asyncio  # noqa: F401
import contextlib
import cProfile
import io
import pickle
import pstats
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from coderefine_sandbox.audit import Recorder
from coderefine_sandbox.behaviour import asynchronous, lazy
from coderefine_sandbox.behaviour.compare import deep_equal, describe, unordered_equal
from coderefine_sandbox.behaviour.memory import PeakMeter, chosen_calls
from coderefine_sandbox.pinning import pinned_call
from coderefine_sandbox.protocol import HotSpot, MismatchExample, ReplayReport, ReplayRequest, read_json, write_json
from coderefine_sandbox.relocation import Relocation, relocation
from coderefine_sandbox.workload import (
    add_import_paths,
    import_module,
    load_calls,
    qualnames_by_line,
    resolve,
)

MAX_EXAMPLES = 5
REPEATS = 64  # calls replayed a second time, in reverse order, to find state that changes later results


Watch = Callable[[], contextlib.AbstractContextManager[None]]


Outcome = tuple[str, Any, Any, str, tuple, "tuple[str, str] | None", "asynchronous.LoopWatch | None"]


def _outcome(
    func: Any,
    record: dict[str, Any],
    profiler: cProfile.Profile | None,
    watch: Watch | None = None,
    relocation: Relocation | None = None,
) -> Outcome:
    """The call's outcome, what it printed, its arguments after it, how its taking from iterator arguments
    differed from the recording's (None: as recorded), and for an async call what its event loop saw. A lazy
    result is consumed as the test consumed the recorded one (lazy.consume), inside the same window: the
    generator's body is the call's work; an async one is awaited (or consumed) on a fresh loop of its own.
    The arguments are read as if recorded in the folder replayed in (`relocation`)."""
    args, kwargs = relocation.loads(record["args"]) if relocation is not None else pickle.loads(record["args"])
    live_args, live_kwargs, feeds = lazy.supply(args, kwargs)
    recorded_lazy = pickle.loads(record["value"]) if record.get("lazy") else None
    wanted_async = asynchronous.expected_kind(record)
    fresh = asynchronous.FreshLoop() if wanted_async is not None else None  # made outside the audit window
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        # Profile the call alone, so hot-spot shares are shares of the target's own work.
        if profiler is not None:
            profiler.enable()
        try:
            # The random states and clock readings it had; the audit window around the call alone.
            with pinned_call(record.get("entropy")), watch() if watch is not None else contextlib.nullcontext():
                value = func(*live_args, **live_kwargs)
                if fresh is not None:
                    value = _awaited(value, wanted_async, recorded_lazy, fresh)
                elif recorded_lazy is not None and lazy.consumable(value, recorded_lazy):
                    value = lazy.consume(value, recorded_lazy)  # else not an iterator: compared as such
                elif asynchronous.kind_of(value) is not None:
                    value = _Unawaited(value)  # a coroutine where the original returned a value
            kind, exc = "return", None
        except Exception as error:
            kind, value, exc = "exception", None, error
        finally:
            if profiler is not None:
                profiler.disable()
            if fresh is not None:
                fresh.close()  # after the audit window: counts the tasks left, cancels them
    taking = lazy.consumption_difference(feeds)
    return kind, value, exc, out.getvalue(), (args, kwargs), taking, None if fresh is None else fresh.watch


class _Unawaited:
    """What a call returned when it should have been awaited, or awaited when it should not: compared as a
    difference by its kind alone (the coroutine is closed, never run)."""

    def __init__(self, value: Any) -> None:
        self.kind = asynchronous.kind_of(value) or type(value).__name__
        self.text = f"a {self.kind}" if asynchronous.kind_of(value) else f"returned {describe(value)}"
        close = getattr(value, "close", None) or getattr(value, "aclose", None)
        if asynchronous.kind_of(value) == asynchronous.COROUTINE and close is not None:
            close()

    def __repr__(self) -> str:
        return self.text


def _awaited(value: Any, wanted: str, recorded_lazy: Any, fresh: asynchronous.FreshLoop) -> Any:
    """An async call's result run on a fresh event loop: the awaited value (its exception raised), or an async
    generator consumed as the test consumed the recorded one; what it returned unrun if it is not of the
    recorded kind."""
    if asynchronous.kind_of(value) != wanted:
        return _Unawaited(value)
    if wanted == asynchronous.COROUTINE:
        return fresh.run(lambda: value)
    return fresh.run(lambda: asynchronous.consume(value, recorded_lazy))


def compare_call(
    func: Any,
    record: dict[str, Any],
    rel_tol: float,
    abs_tol: float,
    profiler: cProfile.Profile | None = None,
    unordered: bool = False,
    watch: Watch | None = None,
    relocation: Relocation | None = None,
) -> dict[str, str] | None:
    """None when the call behaves as recorded; else a description of the first difference.

    Recorded in another folder than the one replayed in (`relocation` active), the call is made and judged as
    if recorded here. When it then differs, it is made again as recorded (the arguments as they were) and
    matches if that matches the recording as it was: text that only mentions a path (a message holding a file
    name, whose columns a function counts) is not a path to relocate, and a path resolved through a layered
    workspace's links names the original's copy, as the recording did. A call is judged as before relocation
    existed, or better."""
    outcome = _outcome(func, record, profiler, watch, relocation)
    moved = relocation if relocation is not None and relocation.active else None
    difference = _judged(outcome, record, rel_tol, abs_tol, unordered, moved)
    if difference is None or moved is None or not _touched(record, moved):
        return difference  # as relocated is as recorded: nothing to try again
    as_recorded = _outcome(func, record, None, watch)
    return None if _judged(as_recorded, record, rel_tol, abs_tol, unordered) is None else difference


def _touched(record: dict[str, Any], relocation: Relocation) -> bool:
    """Whether relocation changed anything the call is made or judged on."""
    blobs = (record["args"], record.get("value"), record.get("args_after"))
    texts = (record.get("exc_message"), record.get("stdout"))
    return any(text is not None and relocation.text(text) is not text for text in texts) or any(
        blob is not None and relocation.touches(blob) for blob in blobs
    )


def _judged(
    outcome: Outcome,
    record: dict[str, Any],
    rel_tol: float,
    abs_tol: float,
    unordered: bool,
    relocation: Relocation | None = None,
) -> dict[str, str] | None:
    """The first difference between a call's outcome and its recording (read as if recorded in the folder
    `relocation` names, when given)."""
    loads = relocation.loads if relocation is not None else pickle.loads
    text = relocation.text if relocation is not None else str
    args_text = describe(pickle.loads(record["args"]), 160)
    kind, value, exc, printed, after, taking, loop_watch = outcome
    if loop_watch is not None:  # waiting on the loop or leaving tasks makes the call judge nothing
        waited = loop_watch.difference()
        if waited is not None:
            return {"args": args_text, **waited}
    if isinstance(value, _Unawaited):
        wanted = asynchronous.expected_kind(record)
        if wanted is not None:
            expected = f"a {wanted}"
        elif record["outcome"] == "return":
            expected = f"returned {describe(loads(record['value']))}"
        else:
            expected = f"raised {record['exc_type'].rsplit('.', 1)[-1]}: {describe(record['exc_message'], 120)}"
        return {"kind": "return", "args": args_text, "expected": expected, "got": value.text}
    if kind != record["outcome"]:
        if kind == "exception":
            assert exc is not None
            got = f"raised {type(exc).__name__}: {describe(str(exc), 120)}"
            expected = f"returned {describe(loads(record['value']))}"
        else:
            got = f"returned {describe(value)}"
            expected = f"raised {record['exc_type'].rsplit('.', 1)[-1]}: {describe(record['exc_message'], 120)}"
        return {"kind": "exception", "args": args_text, "expected": expected, "got": got}
    if kind == "return":
        expected_value = loads(record["value"])
        if isinstance(expected_value, (lazy.LazyResult, lazy.LazyResults)):
            difference = yielded_difference(expected_value, value, rel_tol, abs_tol, loads)
            if difference is not None:
                return {"kind": "yield", "args": args_text, **difference}
        else:
            equal = unordered_equal if unordered else deep_equal
            if not equal(expected_value, value, rel_tol=rel_tol, abs_tol=abs_tol):
                return {
                    "kind": "return",
                    "args": args_text,
                    "expected": describe(expected_value),
                    "got": describe(value),
                }
    else:
        assert exc is not None
        got_type = f"{type(exc).__module__}.{type(exc).__qualname__}"
        if got_type != record["exc_type"] or str(exc) != text(record["exc_message"]):
            return {
                "kind": "exception",
                "args": args_text,
                "expected": f"{record['exc_type'].rsplit('.', 1)[-1]}: {describe(record['exc_message'], 120)}",
                "got": f"{type(exc).__name__}: {describe(str(exc), 120)}",
            }
    if taking is not None:
        return {"kind": "consumption", "args": args_text, "expected": taking[0], "got": taking[1]}
    expected_after = loads(record["args_after"] or record["args"])
    if not deep_equal(expected_after, after, rel_tol=rel_tol, abs_tol=abs_tol):
        return {
            "kind": "mutation",
            "args": args_text,
            "expected": describe(expected_after),
            "got": describe(after),
        }
    if printed != text(record["stdout"]):
        return {
            "kind": "stdout",
            "args": args_text,
            "expected": describe(record["stdout"]),
            "got": describe(printed),
        }
    return None


def yielded_difference(
    expected: lazy.LazyResult | lazy.LazyResults,
    got: Any,
    rel_tol: float,
    abs_tol: float,
    loads: Callable[[bytes], Any] = pickle.loads,
) -> dict[str, str] | None:
    """How a lazy result consumed on replay (a lazy.Consumed, or what the candidate returned if it was not an
    iterator) differs from the recorded one: an item (kinds included: a list is not a tuple), the count, or
    the end (the return value or exception). A tuple or list of them: element by element, named by index.
    `loads` reads the recorded items (relocated, or as they are)."""
    if isinstance(expected, lazy.LazyResults):
        if not isinstance(got, lazy.ConsumedEach):
            wanted = f"a {expected.kind} of {len(expected.elements)} iterators"
            return {"expected": wanted, "got": f"returned {describe(got)}"}
        for index, (element, consumed) in enumerate(zip(expected.elements, got.elements, strict=True)):
            difference = yielded_difference(element, consumed, rel_tol, abs_tol, loads)
            if difference is not None:
                return {key: f"[{index}] {text}" for key, text in difference.items()}
        return None
    if not isinstance(got, lazy.Consumed):
        return {"expected": f"a {expected.kind} (an iterator)", "got": f"returned {describe(got)}"}
    for position, (blob, item) in enumerate(zip(expected.items, got.items, strict=False)):
        wanted = loads(blob)
        if not deep_equal(wanted, item, rel_tol=rel_tol, abs_tol=abs_tol):
            return {"expected": f"item {position}: {describe(wanted)}", "got": f"item {position}: {describe(item)}"}
    if len(got.items) != len(expected.items):
        return {
            "expected": f"{len(expected.items)} items, then {_end_text(expected.end)}",
            "got": f"{len(got.items)} items, then {_end_text(got.end, live=True)}",
        }
    if expected.end is None:
        return None  # the test stopped after these items: nothing after them is compared
    want_kind, want_value, want_message = expected.end
    if got.end is None or got.end[0] != want_kind:
        return {"expected": f"then {_end_text(expected.end)}", "got": f"then {_end_text(got.end, live=True)}"}
    if want_kind == "return":
        wanted = loads(want_value)
        if not deep_equal(wanted, got.end[1], rel_tol=rel_tol, abs_tol=abs_tol):
            return {"expected": f"then returned {describe(wanted)}", "got": f"then returned {describe(got.end[1])}"}
        return None
    error = got.end[1]
    if f"{type(error).__module__}.{type(error).__qualname__}" != want_value or str(error) != want_message:
        return {"expected": f"then {_end_text(expected.end)}", "got": f"then {_end_text(got.end, live=True)}"}
    return None


def _end_text(end: tuple[str, Any, Any] | None, live: bool = False) -> str:
    """How a lazy result ended: recorded (type name, message) or live (the exception itself)."""
    if end is None:
        return "more"
    if end[0] == "return":
        return "the end"
    name = type(end[1]).__name__ if live else str(end[1]).rsplit(".", 1)[-1]
    message = str(end[1]) if live else str(end[2])
    return f"raised {name}: {describe(message, 120)}"


def hot_spots(profiler: cProfile.Profile, module_file: str, limit: int = 5) -> tuple[HotSpot, ...]:
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    total = sum(entry[2] for entry in stats.values()) or 1e-12
    names = qualnames_by_line(module_file)
    spots = []
    for (filename, line, function), (_, calls, own_time, _, _) in stats.items():
        if filename == module_file:
            spots.append(HotSpot(function=names.get(line, function), line=line, share=own_time / total, calls=calls))
    spots.sort(key=lambda s: -s.share)
    return tuple(spots[:limit])


def main(argv: list[str]) -> int:
    request = read_json(ReplayRequest, argv[0])
    tolerances = request.tolerances
    unordered = set(tolerances.unordered)

    add_import_paths(request.workspace, request.import_root)
    calls = load_calls(request.calls, request.exclude, request.hold_out)
    # `audit` is off only to measure what the audit hook costs (benchmarks/audit_cost.py).
    recorder = Recorder(request.workspace, enabled=request.audit, original=request.original_workspace)
    try:
        with recorder.watch("import"):
            module = import_module(request.module)
    except Exception as exc:
        failed = ReplayReport(
            0, len(calls), (), (), None, (), f"{type(exc).__name__}: {exc}", None, recorder.capabilities
        )
        write_json(request.out, failed)
        return 0
    profiler = cProfile.Profile() if request.profile else None
    # Peak memory of the calls with the largest arguments, read in the first pass (memory.py).
    meter = PeakMeter() if request.memory else None
    measured = chosen_calls(calls) if meter is not None and meter.available else frozenset()
    started = time.perf_counter()
    mismatch_indices: list[int] = []
    mismatch_kinds: list[str] = []
    held_out_mismatches = 0
    examples: list[MismatchExample] = []

    def judge(call: Any, prof: cProfile.Profile | None, repeat: bool) -> None:
        nonlocal held_out_mismatches
        reading = meter if meter is not None and not repeat and call.index in measured else None
        difference = _difference(
            module,
            call,
            tolerances.rel_tol,
            tolerances.abs_tol,
            prof,
            call.target in unordered,
            recorder,
            request.workspace,
            reading,
        )
        if difference is None:
            return
        if repeat:  # right the first time, wrong on a repeat: state kept between calls changed the result
            difference["kind"] = "repeat " + difference["kind"]
        mismatch_indices.append(call.index)
        mismatch_kinds.append(difference["kind"])
        held_out_mismatches += call.held_out
        if len(examples) < MAX_EXAMPLES:
            examples.append(MismatchExample(function=call.target, **difference, held_out=call.held_out))

    for call in calls:
        judge(call, profiler, False)
    seconds = time.perf_counter() - started
    # A second pass, in reverse order, over the calls that matched: a global counter, a cache keyed by
    # object identity (ids are reused between calls) or any state that changes later results shows here.
    # On the original, such calls become unstable and are left out, like any non-deterministic call.
    # At most REPEATS calls (the last ones recorded), so the honest path's replay costs at most that more.
    first_bad = set(mismatch_indices)
    for call in [c for c in reversed(calls) if c.index not in first_bad][:REPEATS]:
        judge(call, None, True)
    calls_by_index = {call.index: call.target for call in calls}
    profile: tuple[HotSpot, ...] = ()
    if profiler is not None and getattr(module, "__file__", None):
        profile = hot_spots(profiler, module.__file__)
    report = ReplayReport(
        calls_compared=len(calls),
        mismatches=len(mismatch_indices),
        mismatch_indices=tuple(mismatch_indices),
        examples=tuple(examples),
        seconds=seconds,
        profile=profile,
        import_error=None,
        error=None,
        capabilities=recorder.capabilities,
        held_out_mismatches=held_out_mismatches,
        mismatched_targets=tuple(sorted({calls_by_index[i] for i in mismatch_indices})),
        peak_memory=tuple(sorted(meter.peaks.items())) if meter is not None else (),
        mismatch_kinds=tuple(mismatch_kinds),
    )
    write_json(request.out, report)
    return 0


def _difference(
    module: Any,
    call: Any,
    rel_tol: float,
    abs_tol: float,
    profiler: cProfile.Profile | None,
    unordered: bool,
    recorder: Recorder,
    workspace: str,
    meter: PeakMeter | None = None,
) -> dict[str, str] | None:
    """One call replayed and compared, inside the audit window, as if recorded in `workspace` (the folder
    replayed in); any failure to do so is a difference."""
    try:
        func = resolve(module, call.target)
    except Exception as exc:
        return {"kind": "error", "args": "", "expected": f"a function {call.target}", "got": _error(exc)}
    try:
        return compare_call(
            func,
            call.record,
            rel_tol,
            abs_tol,
            profiler,
            unordered=unordered,
            watch=lambda: _watched(recorder, call, meter),
            relocation=relocation(call.origin, workspace),
        )
    except Exception as exc:  # e.g. the expected value cannot be unpickled against this module
        return {"kind": "error", "args": "", "expected": "a comparable outcome", "got": _error(exc)}


@contextlib.contextmanager
def _watched(recorder: Recorder, call: Any, meter: PeakMeter | None) -> Iterator[None]:
    """Around the call alone: the peak memory reading when it is wanted, and inside it the audit window (the
    reading's own files in /proc are the runner's work, never the call's)."""
    reading = meter.reading(call.index, True) if meter is not None else contextlib.nullcontext()
    with reading, recorder.watch(lambda: _where(call)):
        yield


def _error(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"


def _where(call: Any) -> str:
    """How a capability names the call it happened in; a held-out call's inputs are never shown."""
    if call.held_out:
        return f"{call.target} on a held-out recorded call"
    return f"{call.target}{_call_text(describe(pickle.loads(call.record['args']), 120))}"


def _call_text(args: str) -> str:
    # Recorded args are described as "((a, b), {})"; shown as a call.
    if args.startswith("((") and args.endswith(", {})"):
        inner = args[1:-5]
        return inner[:-2] + ")" if inner.endswith(",)") else inner
    return f"[{args}]"


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
