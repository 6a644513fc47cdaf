"""Replay recorded calls on a module version and compare every outcome with the recording.

    python -m coderefine_sandbox.replay --workspace W --module M --import-root R --calls calls.pkl
        --out result.json --rel-tol X --abs-tol Y [--exclude unstable.json] [--profile] [--unordered f,g]

The result is a protocol.ReplayReport (JSON).

Compared per call: return value (deep equality, float tolerance, NaN-aware), exception type and message,
the arguments after the call (in-place mutation), and what was printed; for the targets named by
--unordered a returned list, tuple or other sequence may hold the same elements in another order. Each
call gets the random states and clock readings it had when recorded (pinning.py). The original replayed against
its own recording finds the calls that are not deterministic; those are excluded for candidates.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import pickle
import pstats
import time
from typing import Any

from coderefine_sandbox.compare import deep_equal, describe, unordered_equal
from coderefine_sandbox.pinning import pinned_call
from coderefine_sandbox.protocol import HotSpot, MismatchExample, ReplayReport, to_json
from coderefine_sandbox.workload import (
    add_import_paths,
    import_module,
    load_calls,
    qualnames_by_line,
    resolve,
)

MAX_EXAMPLES = 5


def _outcome(func: Any, record: dict[str, Any], profiler: cProfile.Profile | None) -> tuple[str, Any, Any, str, tuple]:
    args, kwargs = pickle.loads(record["args"])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        # Profile the call alone, so hot-spot shares are shares of the target's own work.
        if profiler is not None:
            profiler.enable()
        try:
            with pinned_call(record.get("entropy")):  # the random states and clock readings it had
                value = func(*args, **kwargs)
            kind, exc = "return", None
        except Exception as error:
            kind, value, exc = "exception", None, error
        finally:
            if profiler is not None:
                profiler.disable()
    return kind, value, exc, out.getvalue(), (args, kwargs)


def compare_call(
    func: Any,
    record: dict[str, Any],
    rel_tol: float,
    abs_tol: float,
    profiler: cProfile.Profile | None = None,
    unordered: bool = False,
) -> dict[str, str] | None:
    """None when the call behaves as recorded; else a description of the first difference."""
    args_text = describe(pickle.loads(record["args"]), 160)
    kind, value, exc, printed, after = _outcome(func, record, profiler)
    if kind != record["outcome"]:
        if kind == "exception":
            assert exc is not None
            got = f"raised {type(exc).__name__}: {describe(str(exc), 120)}"
            expected = f"returned {describe(pickle.loads(record['value']))}"
        else:
            got = f"returned {describe(value)}"
            expected = f"raised {record['exc_type'].rsplit('.', 1)[-1]}: {describe(record['exc_message'], 120)}"
        return {"kind": "exception", "args": args_text, "expected": expected, "got": got}
    if kind == "return":
        expected_value = pickle.loads(record["value"])
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
        if got_type != record["exc_type"] or str(exc) != record["exc_message"]:
            return {
                "kind": "exception",
                "args": args_text,
                "expected": f"{record['exc_type'].rsplit('.', 1)[-1]}: {describe(record['exc_message'], 120)}",
                "got": f"{type(exc).__name__}: {describe(str(exc), 120)}",
            }
    expected_after = pickle.loads(record["args_after"] or record["args"])
    if not deep_equal(expected_after, after, rel_tol=rel_tol, abs_tol=abs_tol):
        return {
            "kind": "mutation",
            "args": args_text,
            "expected": describe(expected_after),
            "got": describe(after),
        }
    if printed != record["stdout"]:
        return {
            "kind": "stdout",
            "args": args_text,
            "expected": describe(record["stdout"]),
            "got": describe(printed),
        }
    return None


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--module", required=True)
    parser.add_argument("--import-root", default="")
    parser.add_argument("--calls", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--exclude")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--rel-tol", type=float, required=True)
    parser.add_argument("--abs-tol", type=float, required=True)
    parser.add_argument("--unordered", default="", help="targets whose returned sequences compare in any order")
    args = parser.parse_args(argv)
    unordered = {name for name in args.unordered.split(",") if name}

    add_import_paths(args.workspace, args.import_root)
    calls = load_calls(args.calls, args.exclude)
    try:
        module = import_module(args.module)
    except Exception as exc:
        failed = ReplayReport(0, len(calls), (), (), None, (), f"{type(exc).__name__}: {exc}", None)
        _write(args.out, failed)
        return 0
    profiler = cProfile.Profile() if args.profile else None
    started = time.perf_counter()
    mismatch_indices: list[int] = []
    examples: list[MismatchExample] = []
    for call in calls:
        try:
            func = resolve(module, call.target)
        except Exception as exc:
            difference: dict[str, str] | None = {
                "kind": "error",
                "args": "",
                "expected": f"a function {call.target}",
                "got": f"{type(exc).__name__}: {exc}",
            }
        else:
            try:
                difference = compare_call(
                    func, call.record, args.rel_tol, args.abs_tol, profiler, unordered=call.target in unordered
                )
            except Exception as exc:  # e.g. the expected value cannot be unpickled against this module
                difference = {
                    "kind": "error",
                    "args": "",
                    "expected": "a comparable outcome",
                    "got": f"{type(exc).__name__}: {exc}",
                }
        if difference is not None:
            mismatch_indices.append(call.index)
            if len(examples) < MAX_EXAMPLES:
                examples.append(MismatchExample(function=call.target, **difference))
    seconds = time.perf_counter() - started
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
        mismatched_targets=tuple(sorted({calls_by_index[i] for i in mismatch_indices})),
    )
    _write(args.out, report)
    return 0


def _write(path: str, report: ReplayReport) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(to_json(report))


if __name__ == "__main__":
    raise SystemExit(main())
