"""Derive boundary variants of the recorded calls (variants.py), run the ORIGINAL on each, and keep those it
answers the same way twice, fast, without raising, as a calls file like the tests' recording (so replay.py
compares every candidate on them as well).

    python -m coderefine_sandbox.behaviour.boundary STEP.json

STEP.json is a protocol.BoundaryRequest; the result is the calls file at its `out` and a
protocol.BoundaryReport at its `report`.

What is not held against a candidate: a variant on which the original raises (outside its domain, most
likely; a rewrite may raise something else there), one whose two runs differ, one that runs past the
per-variant limit (a multiple of the slowest recorded call: far slower than anything the tests asked is
outside what they exercise), and those left when the seconds budget runs out. Held-out recorded calls are
never varied: a variant would show their inputs.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import os
import pickle
import select
import signal
import sys
import time
from typing import Any

from coderefine_sandbox.behaviour import lazy
from coderefine_sandbox.behaviour.compare import deep_equal
from coderefine_sandbox.behaviour.variants import Variant, derive, string_constants
from coderefine_sandbox.pinning import pinned_call
from coderefine_sandbox.protocol import (
    CALLS_PICKLE,
    BoundaryReport,
    BoundaryRequest,
    CallsHeader,
    read_json,
    write_calls,
    write_json,
)
from coderefine_sandbox.workload import add_import_paths, import_module, load_calls, resolve

MIN_LIMIT = 0.02  # seconds a variant may always take
MAX_LIMIT = 0.5  # seconds a variant may never exceed
SLOWER = 20.0  # times the slowest recorded call a variant may take
TIMED_SOURCES = 50  # recorded calls timed to set the per-variant limit
# Seconds past a variant's two runs before its child is killed (C code ignores the alarm): generous, since a
# child on a loaded machine may wait for a core; a variant stuck in C costs this once, within the budget.
HARD_GRACE = 1.0


class _TooSlow(BaseException):
    """Not an Exception: a target's own `except Exception` must not swallow the time limit."""


def _too_slow(signum: int, frame: Any) -> None:
    raise _TooSlow


def _run(func: Any, blob: bytes, entropy: Any, limit: float) -> tuple[str, Any, bytes, bytes, str]:
    """(outcome, value or exception, the arguments before and after the call pickled, stdout) of one call.

    Iterator and function arguments are supplied as replay supplies them (lazy.supply), never passed as the
    recording's placeholders; the arguments are then pickled as recording keeps them, with what this call took
    from each iterator and the calls it made to each function. A lazy result is consumed to its end within the
    limit, its body being the call's work, and kept as a test reaching its end would have kept it."""
    args, kwargs = pickle.loads(blob)
    live_args, live_kwargs, feeds = lazy.supply(args, kwargs)
    out = io.StringIO()
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        with contextlib.redirect_stdout(out), pinned_call(entropy):
            value = func(*live_args, **live_kwargs)
            if lazy.is_lazy(value) or lazy.is_lazy_each(value):
                value = lazy.taken_whole(value)
        outcome = "return"
    except lazy.Unusable:  # over MAX_ITEMS items: far past anything the tests consumed, as a slow variant is
        raise _TooSlow from None
    except Exception as exc:
        outcome, value = "exception", exc
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if not feeds:
        return outcome, value, blob, pickle.dumps((args, kwargs), protocol=CALLS_PICKLE), out.getvalue()
    taken = lazy.as_recorded(feeds)
    before = pickle.dumps(lazy.with_recorded(*pickle.loads(blob), taken), protocol=CALLS_PICKLE)
    after = pickle.dumps(lazy.with_recorded(args, kwargs, taken), protocol=CALLS_PICKLE)
    return outcome, value, before, after, out.getvalue()


def _limit(module: Any, sources: list[Any]) -> float:
    slowest = 0.0
    for call in sources[:TIMED_SOURCES]:
        started = time.perf_counter()
        try:
            _run(resolve(module, call.target), call.record["args"], call.record.get("entropy"), MAX_LIMIT)
        except _TooSlow:
            return MAX_LIMIT
        slowest = max(slowest, time.perf_counter() - started)
    return min(MAX_LIMIT, max(MIN_LIMIT, SLOWER * slowest))


def main(argv: list[str]) -> int:
    request = read_json(BoundaryRequest, argv[0])
    started = time.perf_counter()
    add_import_paths(request.workspace, request.import_root)
    module = import_module(request.module)
    signal.signal(signal.SIGALRM, _too_slow)
    # Async calls are not varied: their outcome is only known once awaited on a loop (asynchronous.py).
    recorded = [call for call in load_calls(request.calls, request.exclude) if "asynchronous" not in call.record]
    sources = [call for call in recorded if not call.held_out]
    unpicklable = 0
    domain = []
    for call in recorded:
        try:
            args, kwargs = pickle.loads(call.record["args"])
        except Exception:
            unpicklable += 1
            continue
        domain.append((call.index, call.target, args, kwargs))
    # Held-out calls are never varied (a variant would show their inputs), but what is near the domain
    # (the smallest size, a negative number, None) is read off every recorded call.
    held_out = {call.index for call in recorded if call.held_out}
    constants: dict[str, tuple[str, ...]] = {}
    for target in {call[1] for call in domain}:
        with contextlib.suppress(Exception):  # a target that does not resolve to code has no constants
            constants[target] = string_constants(inspect.unwrap(resolve(module, target)).__code__)
    variants = derive([call for call in domain if call[0] not in held_out], request.count, domain, constants)
    limit = _limit(module, sources)
    entropy = {call.index: call.record.get("entropy") for call in sources}
    counts = {"raised": 0, "slow": 0, "not_deterministic": 0, "unpicklable": unpicklable}
    kept: dict[str, int] = {}
    records: list[dict[str, Any]] = []
    # The budget is the variants' own: a large library's import does not use it up.
    deadline = time.perf_counter() + request.seconds
    for done, variant in enumerate(variants):
        if time.perf_counter() > deadline:
            counts["slow"] += len(variants) - done  # not tried: the budget ran out
            break
        verdict, record = _keep(module, variant, entropy.get(variant.source), limit)
        if record is None:
            counts[verdict] += 1
            continue
        records.append(record)
        kept[variant.target] = kept.get(variant.target, 0) + 1
    write_calls(request.out, CallsHeader(module=request.module, recording=None, folder=request.workspace), records)
    report = BoundaryReport(
        derived=len(variants),
        kept=kept,
        raised=counts["raised"],
        slow=counts["slow"],
        not_deterministic=counts["not_deterministic"],
        unpicklable=counts["unpicklable"],
        unstable=0,  # the runner's to find out: it replays these calls on the original in a process of its own
        seconds=time.perf_counter() - started,
        error=None,
    )
    write_json(request.report, report)
    return 0


def _keep(module: Any, variant: Variant, entropy: Any, limit: float) -> tuple[str, dict[str, Any] | None]:
    """The variant's record with the original's outcome, or (why it is left out, None)."""
    try:
        blob = pickle.dumps((variant.args, variant.kwargs), protocol=CALLS_PICKLE)
    except Exception:
        return "unpicklable", None
    func = resolve(module, variant.target)
    if not hasattr(os, "fork"):
        return _judge(func, variant, blob, entropy, limit)
    return _judge_in_child(func, variant, blob, entropy, limit)


def _judge_in_child(func: Any, variant: Variant, blob: bytes, entropy: Any, limit: float) -> tuple[str, Any]:
    """`_judge` in a forked child, killed past the two runs' limits: the alarm stops Python code only, and a
    loop in C code on a large variant (`sum(range(2**64 + 1))`, `math.factorial`) would hold the step until
    its time-out (seen: 38 s of a baseline's 48). Forking costs about a millisecond per variant."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: judge, send the verdict, leave without running any exit handler
        try:
            os.close(read_end)
            signal.signal(signal.SIGALRM, _too_slow)
            try:
                payload = pickle.dumps(_judge(func, variant, blob, entropy, limit), protocol=CALLS_PICKLE)
            except BaseException:  # SystemExit and the like from the original: outside its domain, as a raise
                payload = pickle.dumps(("raised", None), protocol=CALLS_PICKLE)
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(payload)
        finally:
            os._exit(0)  # never back into the step's own code, whatever happened (the parent may have gone)
    os.close(write_end)
    deadline = time.monotonic() + 2 * limit + HARD_GRACE
    chunks = []
    with os.fdopen(read_end, "rb", buffering=0) as pipe:
        while True:
            ready, _, _ = select.select([pipe], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return "slow", None
            chunk = pipe.read(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    os.waitpid(pid, 0)
    if not chunks:  # the original's process died on this input (a crash, an exit): outside its domain
        return "raised", None
    try:
        return pickle.loads(b"".join(chunks))
    except Exception:
        return "unpicklable", None


def _judge(func: Any, variant: Variant, blob: bytes, entropy: Any, limit: float) -> tuple[str, dict[str, Any] | None]:
    """Run the original twice on the variant: kept with its outcome, or why it is left out."""
    try:
        first = _run(func, blob, entropy, limit)
        second = _run(func, blob, entropy, limit)
    except _TooSlow:
        return "slow", None
    except Exception:  # the arguments after the call cannot be pickled
        return "unpicklable", None
    if first[0] == "exception" or second[0] == "exception":
        return "raised", None
    if not (deep_equal(first[1], second[1]) and first[2:] == second[2:]):
        return "not_deterministic", None
    try:
        value = pickle.dumps(first[1], protocol=CALLS_PICKLE)
    except Exception:
        return "unpicklable", None
    record = {
        "target": variant.target,
        "args": first[2],
        "test": f"<boundary: {variant.change}>",
        "outcome": "return",
        "value": value,
        "args_after": first[3] if first[3] != first[2] else None,
        "stdout": first[4],
    }
    if isinstance(first[1], (lazy.LazyResult, lazy.LazyResults)):
        record["lazy"] = True  # replayed by consuming the candidate's result as recorded (to its end)
    if entropy is not None:
        record["entropy"] = entropy
    return "kept", record


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
