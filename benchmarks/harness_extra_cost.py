"""What the timing worker's per-call extra work costs in wall time outside the clock.

    .venv/bin/python benchmarks/harness_extra_cost.py [--seconds 1] [--repeat 3] [--calls 20]

Besides the call itself, time_workload (sandbox/coderefine_sandbox/timing/worker.py) does per call, outside
the timed region: the unpickling of the arguments and the reset of the pinned state before the call; for the
harness probe a second unpickling and reset, the probe (a do-nothing call timed alone and in two plain loops);
and a `getrusage` pair that tells a preempted call. This script runs time_workload in this process on two
workloads of `--calls` recorded calls each (sum_squares on lists of ~5 items, ~1 us a call, and of 300 items,
~30 us a call) and prints, per call, the wall seconds and the timed seconds as shipped and with each part left
out (the probe: `_probe` made a no-op and its second unpickling skipped; the `getrusage` pair: no
RUSAGE_THREAD). Leaving a part out is only for the measurement here: what it measures is then missing.

What that means for a timing step: a worker makes 1 warmup and 3 values (EvaluationSettings), pyperf
calibrates the loops on the timed seconds (at least min_time, 0.1 s, a value), and a value stops at
WALL_BUDGET (0.5 s) of wall time. A value therefore lasts min(WALL_BUDGET, min_time * wall / timed): the
script prints that estimate per worker (4 values, process start excluded) and per pair (2 workers).
"""

from __future__ import annotations

import argparse
import os
import pickle
import random
import sys
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "sandbox"))

from coderefine_sandbox.pinning import Pin
from coderefine_sandbox.timing import worker

SHIPPED_BUDGET = worker.WALL_BUDGET
MIN_TIME = 0.1  # EvaluationSettings.timing_min_time
VALUES = 1 + 3  # EvaluationSettings.timing_warmups + timing_values
VARIANTS = ("as shipped", "no probe", "no rusage", "no probe, no rusage")


def sum_squares(values: list[int]) -> int:
    total = 0
    for value in values:
        total += value * value
    return total


def workload(calls: int, size: int) -> list[worker.Entry]:
    blobs = [pickle.dumps(((list(range(size + i % 7)),), {})) for i in range(calls)]
    return [(sum_squares, blob, None, False, None) for blob in blobs]


def rate(entries: list[worker.Entry], seconds: float) -> tuple[float, float]:
    """(wall seconds per call, timed seconds per call) over about `seconds` of passes."""
    loops = 1
    while True:
        started = time.perf_counter()
        timed = worker.time_workload(loops, entries, False)
        wall = time.perf_counter() - started
        if wall >= seconds:
            return wall / (loops * len(entries)), timed / (loops * len(entries))
        loops *= 2


def variant(name: str, entries: list[worker.Entry], seconds: float) -> tuple[float, float]:
    saved = (worker._probe, worker.PROBE_FRESH_BYTES, worker.THREAD, worker.WALL_BUDGET)
    try:
        worker.WALL_BUDGET = 1e9  # every pass asked for
        if "no probe" in name:
            worker._probe = lambda form, args, kwargs: 0.0
            worker.PROBE_FRESH_BYTES = -1
        if "no rusage" in name:
            worker.THREAD = None
        return rate(entries, seconds)
    finally:
        worker._probe, worker.PROBE_FRESH_BYTES, worker.THREAD, worker.WALL_BUDGET = saved


def parts(entries: list[worker.Entry], repeat: int) -> dict[str, float]:
    """Each part of the extra work alone, seconds per call (timeit, the best of `repeat` rounds): less moved by
    the machine's load than the differences between whole passes."""
    _, blob, entropy, _, _ = entries[0]
    args, kwargs = pickle.loads(blob)
    form = worker._form(args, kwargs, None)
    pin = Pin()
    recorded = {"random_state": random.getstate()}  # what a recorded call's entropy holds
    thread = worker.THREAD
    usage = worker.getrusage
    clean = -1.0
    steps = {
        "unpickle": lambda: pickle.loads(blob),
        "reset (seeded)": lambda: pin.reset(entropy),
        "reset (a recorded state)": lambda: pin.reset(recorded),
        "probe call": lambda: worker._probe(form, args, kwargs),
        "getrusage pair": lambda: worker.unpreempted(1e-6, usage(thread), usage(thread), clean),
    }
    number = 2000
    return {name: min(timeit.repeat(step, number=number, repeat=repeat)) / number for name, step in steps.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="wall seconds per variant and repetition")
    parser.add_argument("--calls", type=int, default=20, help="recorded calls in the workload")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions, variants interleaved; the least kept")
    args = parser.parse_args()
    alone = parts(workload(1, 3), 7 * args.repeat)
    probe = alone["unpickle"] + alone["reset (seeded)"] + alone["probe call"]
    print(f"load average {os.getloadavg()[0]:.2f}; each part alone, per call (best of {7 * args.repeat}):")
    print("  " + ", ".join(f"{name} {seconds * 1e6:.2f} us" for name, seconds in alone.items()))
    print(f"  the probe's work (a second unpickle and seeded reset, and the probe call) {probe * 1e6:.2f} us")
    for size in (3, 300):
        entries = workload(args.calls, size)
        print(f"sum_squares on lists of {size}+: load average {os.getloadavg()[0]:.2f}, {len(entries)} calls a pass")
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in VARIANTS}
        for _ in range(args.repeat):
            for name in VARIANTS:  # interleaved: the machine's load moves every variant alike
                results[name].append(variant(name, entries, args.seconds))
        bare = min(w for w, _ in results[VARIANTS[-1]])
        for name in VARIANTS:
            wall = min(w for w, _ in results[name])
            timed = min(t for _, t in results[name])
            value = min(SHIPPED_BUDGET, MIN_TIME * wall / timed)
            passes = value / (wall * len(entries))
            print(
                f"  {name:20s} wall {wall * 1e6:7.2f} us/call ({(wall - bare) * 1e6:+6.2f} over the last), "
                f"timed {timed * 1e6:6.3f} us/call; a value {value:.2f} s ({passes:,.0f} passes), "
                f"a worker {VALUES * value:.2f} s, a pair {2 * VALUES * value:.2f} s"
            )


if __name__ == "__main__":
    main()
