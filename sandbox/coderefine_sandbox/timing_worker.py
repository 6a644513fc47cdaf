"""A pyperf worker that times the recorded workload on one module version.

    python -m coderefine_sandbox.timing_worker --worker (--calibrate-loops | --loops N) --values V
        --warmups W -o out.json --workspace DIR --module NAME --import-root REL --calls calls.pkl
        [--exclude unstable.json] [--bench-file FILE --bench-function NAME ...]

pyperf does the calibration of loops, the warmups, the values and the metadata; the runner (runner.py)
spawns these workers itself so that original and candidate processes can be interleaved, which pyperf's
own manager does not do.

One loop = every recorded call once, or, with a bench file the user named (`--bench`), every benchmark
function once. The arguments of each call are unpickled fresh before it (the call
may mutate them) and only the call itself is timed, so copying costs nothing in the figure.
"""

from __future__ import annotations

import contextlib
import io
import json
import pickle
import sys
import time
from typing import Any

import pyperf

from coderefine_sandbox.pinning import Pin
from coderefine_sandbox.sampling import read_sample
from coderefine_sandbox.workload import add_import_paths, import_module, load_bench, load_calls, resolve

NO_ARGUMENTS = pickle.dumps(((), {}))

# Timed seconds per workload entry, and passes made, over the worker's life (see write_per_target).
PER_CALL: list[float] = []
PASSES = [0]
# With a sample of the calls (sampling.py), what each timed call stands for; else empty (all 1).
WEIGHTS: list[float] = []

# Wall seconds one value may take. Only the calls themselves are timed, so on calls of a microsecond the
# untimed work around them (unpickling the arguments, pinning) can be many times the timed figure, and the
# loops pyperf calibrates on the timed figure would take minutes. Past this budget a value stops and
# reports the mean of the passes it made (pyperf divides by the loops it asked for, hence the scaling):
# the same estimate from fewer passes, the same rule for original and candidate.
WALL_BUDGET = 0.5


def build_workload(args: Any) -> list[tuple[Any, bytes, Any]]:
    add_import_paths(args.workspace, args.import_root)
    if args.bench_file:
        return [(func, NO_ARGUMENTS, None) for func in load_bench(args.bench_file, args.bench_function)]
    module = import_module(args.module)
    return [
        (resolve(module, call.target), call.record["args"], call.record.get("entropy"))
        for call in load_calls(args.calls, args.exclude)
    ]


def time_workload(loops: int, workload: list[tuple[Any, bytes, Any]], tolerate_errors: bool) -> float:
    perf_counter = time.perf_counter
    loads = pickle.loads
    total = 0.0
    sink = io.StringIO()
    pin = Pin()  # the random states and clock readings each call had when recorded, set outside the timing
    reset = pin.reset
    pin.install()
    per_call = PER_CALL
    if len(per_call) != len(workload):
        per_call[:] = [0.0] * len(workload)
    weights = WEIGHTS if len(WEIGHTS) == len(workload) else [1.0] * len(workload)
    done = 0
    deadline = perf_counter() + WALL_BUDGET
    with contextlib.redirect_stdout(sink):
        for _ in range(loops):
            for index, (func, blob, entropy) in enumerate(workload):
                args, kwargs = loads(blob)
                reset(entropy)
                started = perf_counter()
                # A bare try/except costs less than contextlib.suppress in this timed loop.
                try:
                    func(*args, **kwargs)
                except Exception:
                    # Recorded calls that raise are part of the workload (replay checked they raise the
                    # same way). A bench function that raises has no such check, and failing fast would
                    # look like a speedup: that ends the worker, and the timing is rejected.
                    if not tolerate_errors:
                        raise
                elapsed = (perf_counter() - started) * weights[index]
                total += elapsed
                per_call[index] += elapsed
            sink.seek(0)
            sink.truncate()
            done += 1
            if perf_counter() > deadline:
                break
    pin.uninstall()
    PASSES[0] += done
    return total * loops / done


def write_per_target(path: str, names: list[str]) -> None:
    """Seconds per pass of each target's calls over every pass this worker made (warmups included): what
    each function's own speedup is computed from (one verdict per function)."""
    passes = PASSES[0] or 1
    per_target: dict[str, float] = {}
    for name, seconds in zip(names, PER_CALL, strict=False):
        per_target[name] = per_target.get(name, 0.0) + seconds / passes
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(per_target, fh)


def main() -> None:
    runner = pyperf.Runner(add_cmdline_args=None)
    parser = runner.argparser
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--module", required=True)
    parser.add_argument("--import-root", default="")
    parser.add_argument("--calls", required=True)
    parser.add_argument("--exclude")
    parser.add_argument("--bench-file")
    parser.add_argument("--bench-function", action="append", default=[])
    parser.add_argument("--sample", help="the calls to time and their weights (sampling.py)")
    args = runner.parse_args()
    workload = build_workload(args)
    names = workload_names(args)
    sample = None if args.bench_file else read_sample(args.sample)
    if sample is not None:
        workload = [workload[index] for index, _ in sample]
        names = [names[index] for index, _ in sample]
        WEIGHTS[:] = [weight for _, weight in sample]
    runner.bench_time_func("workload", time_workload, workload, not args.bench_file)
    if args.output:
        write_per_target(args.output + ".targets.json", names)
        if sample is None:  # each call's cost in the original, to choose a sample from (baseline)
            with open(args.output + ".calls.json", "w", encoding="utf-8") as fh:
                json.dump([seconds / (PASSES[0] or 1) for seconds in PER_CALL], fh)


def workload_names(args: Any) -> list[str]:
    """The target (or bench function) of each workload entry, in build_workload's order."""
    if args.bench_file:
        return list(args.bench_function)
    return [call.target for call in load_calls(args.calls, args.exclude)]


if __name__ == "__main__":
    sys.exit(main())
