"""An independent speed ratio for a correct candidate of benchmarks/wrong_candidates.py: the original and the
candidate timed in a plain loop on the arguments the library's own tests call the function with.

    python benchmarks/wrong_candidates_ratio.py TREE FILE FUNCTION CANDIDATE.py [--json out.json]

Run from wrong_candidates.py in a process of its own, with TREE (the unpacked sdist) as the working folder.
Nothing of coderefine is used: the library's test suite runs once in this process (pytest.main) with a profile
hook that keeps the arguments of every call to FUNCTION's code object (through any reference, up to
MAX_CALLS); the candidate is the data file's code executed in a copy of the module's namespace (so it sees the
module's imports and constants). Then both are timed over all kept calls in a loop of LOOPS passes sized to
TARGET_SECONDS, in PAIRS interleaved pairs (original first in even pairs, candidate first in odd ones), with the
garbage collector off as timeit does. Printed (JSON): the median of the pairs' ratios (original time over
candidate time) with the lowest and highest, the ratio of the fastest passes (timeit's reading, the main
figure), nanoseconds per call of each, how many calls were kept, and how
many of them gave a different result on the candidate (a check of the data file's "correct", not a proof).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import math
import os
import statistics
import sys
import threading
import time
import types
from typing import Any

MAX_CALLS = 3000  # kept calls: enough to weigh every test's inputs, few enough to time in a loop
TARGET_SECONDS = 0.05  # one timed pass of the loop at least this long
PAIRS = 15


def module_name(file: str) -> str:
    parts = file.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def captured_calls(module: types.ModuleType, function: str) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Run the library's tests in this process and keep the arguments of the calls to `function`."""
    import pytest

    code = getattr(module, function).__code__
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    positional = code.co_argcount
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def hook(frame: types.FrameType, event: str, arg: object) -> None:
        if event == "call" and frame.f_code is code and len(calls) < MAX_CALLS:
            values = frame.f_locals
            args = tuple(values[name] for name in names[:positional])
            kwargs = {name: values[name] for name in names[positional:]}
            calls.append((args, kwargs))

    threading.setprofile(hook)
    sys.setprofile(hook)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            pytest.main(["-q", "-p", "no:cacheprovider", "--no-header", "-W", "ignore"])
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return calls


def candidate_function(module: types.ModuleType, function: str, source: str) -> Any:
    namespace = dict(vars(module))
    exec(compile(source, f"<candidate {function}>", "exec"), namespace)
    return namespace[function]


def _pass(func: Any, calls: list[tuple[tuple[Any, ...], dict[str, Any]]], loops: int) -> float:
    """Seconds of `loops` passes over the calls. Calls that all take the same one to three positional arguments
    are made as a user's loop makes them, `f(a, b)`: through `f(*args, **kwargs)` each call costs ~30-40 ns more
    (3.11), which on tabulate's 50-80 ns candidates read `_padleft`'s 5.48x as 3.95x."""
    clock = time.perf_counter
    arities = {len(args) for args, kwargs in calls if not kwargs}
    positional = [args for args, kwargs in calls if not kwargs]
    arity = arities.pop() if len(arities) == 1 and len(positional) == len(calls) else None
    if arity == 1:
        ones = [args[0] for args in positional]
        started = clock()
        for _ in range(loops):
            for a in ones:
                func(a)
        return clock() - started
    if arity == 2:
        started = clock()
        for _ in range(loops):
            for a, b in positional:
                func(a, b)
        return clock() - started
    if arity == 3:
        started = clock()
        for _ in range(loops):
            for a, b, c in positional:
                func(a, b, c)
        return clock() - started
    started = clock()
    for _ in range(loops):
        for args, kwargs in calls:
            func(*args, **kwargs)
    return clock() - started


def _outcome(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, Any]:
    try:
        return "return", func(*args, **kwargs)
    except Exception as exc:
        return "raise", type(exc)


def measure(original: Any, candidate: Any, calls: list[tuple[tuple[Any, ...], dict[str, Any]]]) -> dict[str, Any]:
    differ = 0
    for args, kwargs in calls:
        with contextlib.suppress(Exception):
            if _outcome(original, args, kwargs) != _outcome(candidate, args, kwargs):
                differ += 1
    one = max(_pass(original, calls, 1), 1e-7)
    loops = max(1, math.ceil(TARGET_SECONDS / one))
    times: dict[str, list[float]] = {"original": [], "candidate": []}
    enabled = gc.isenabled()
    gc.disable()
    try:
        _pass(original, calls, loops)  # warm both
        _pass(candidate, calls, loops)
        for pair in range(PAIRS):
            order = [("original", original), ("candidate", candidate)]
            for name, func in order if pair % 2 == 0 else reversed(order):
                times[name].append(_pass(func, calls, loops))
    finally:
        if enabled:
            gc.enable()
    ratios = sorted(o / c for o, c in zip(times["original"], times["candidate"], strict=True))
    per_call = loops * len(calls)
    return {
        # timeit's reading: the fastest pass of each, the one least disturbed by the rest of the machine
        "ratio": round(min(times["original"]) / min(times["candidate"]), 3),
        "pair_median": round(statistics.median(ratios), 3),
        "pair_low": round(ratios[0], 3),
        "pair_high": round(ratios[-1], 3),
        "original_ns": round(min(times["original"]) / per_call * 1e9, 1),
        "candidate_ns": round(min(times["candidate"]) / per_call * 1e9, 1),
        "calls": len(calls),
        "differing_calls": differ,
        "loops": loops,
        "pairs": PAIRS,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree")
    parser.add_argument("file")
    parser.add_argument("function")
    parser.add_argument("candidate", help="a file holding the candidate's code")
    args = parser.parse_args()
    tree = os.path.abspath(args.tree)
    os.chdir(tree)
    sys.path.insert(0, tree)
    import importlib

    module = importlib.import_module(module_name(args.file))
    where = os.path.abspath(getattr(module, "__file__", "") or "")
    if not where.startswith(tree + os.sep):
        raise SystemExit(f"{module.__name__} was imported from {where}, not from {tree}")
    original = getattr(module, args.function)
    with open(args.candidate, encoding="utf-8") as fh:
        candidate = candidate_function(module, args.function, fh.read())
    calls = captured_calls(module, args.function)
    if not calls:
        print(json.dumps({"error": "the tests made no call to it"}))
        return
    print(json.dumps(measure(original, candidate, calls)))


if __name__ == "__main__":
    main()
