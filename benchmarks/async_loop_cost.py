"""How much an event loop's own cost would dilute the speedup of an async rewrite, and how much is left of it
in the timing worker's figure (issue 24, item 3).

    python benchmarks/async_loop_cost.py [--calls 2000] [--rounds 7]

Two versions of a small coroutine (a Python loop over 60 numbers; `sum(range(...))`), each timed three ways,
interleaved, `--rounds` times (the fastest round of each is reported: the machine's other load only adds):

- naive: every call run to its end by `loop.run_until_complete`, the clock read around that (a task created
  and the loop turned per call, as a harness running each call on its own would time it);
- worker: the timing worker's way (behaviour/asynchronous.TimingLoop): one loop for the pass, the clock read
  around the `await` alone inside a driver task, a do-nothing coroutine's reading taken off each call;
- independent: one coroutine awaiting the call `--calls` times in a row, the clock read around the whole
  run (no per-call clock reading, no task per call): the reference ratio.

The ratio of each way is original / candidate; `dilution` is how far a way's ratio falls short of the
independent one.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "sandbox")]

from coderefine_sandbox.behaviour.asynchronous import TimingLoop  # noqa: E402


async def original(n: int) -> int:
    total = 0
    for value in range(n):
        total += value
    return total


async def candidate(n: int) -> int:
    return sum(range(n))


N = 60


def naive(func: object, calls: int) -> float:
    loop = asyncio.new_event_loop()
    try:
        total = 0.0
        for _ in range(calls):
            started = time.perf_counter()
            loop.run_until_complete(func(N))  # type: ignore[operator]
            total += time.perf_counter() - started
        return total / calls
    finally:
        loop.close()


def worker(func: object, calls: int) -> float:
    timing = TimingLoop(time.perf_counter)
    try:
        return sum(timing.time(lambda: func(N), None)[0] for _ in range(calls)) / calls  # type: ignore[operator]
    finally:
        timing.close()


def independent(func: object, calls: int) -> float:
    async def run() -> float:
        started = time.perf_counter()
        for _ in range(calls):
            await func(N)  # type: ignore[operator]
        return (time.perf_counter() - started) / calls

    return asyncio.run(run())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    options = parser.parse_args()
    figures: dict[str, dict[str, list[float]]] = {way: {"original": [], "candidate": []} for way in ("naive", "worker")}
    figures["independent"] = {"original": [], "candidate": []}
    ways = {"naive": naive, "worker": worker, "independent": independent}
    for _ in range(options.rounds):
        for way, measure in ways.items():
            for side, func in (("original", original), ("candidate", candidate)):
                figures[way][side].append(measure(func, options.calls))
    reference = min(figures["independent"]["original"]) / min(figures["independent"]["candidate"])
    print(f"{'way':12} {'original us':>12} {'candidate us':>13} {'ratio':>7} {'dilution':>9}")
    for way in ways:
        before = min(figures[way]["original"])
        after = min(figures[way]["candidate"])
        ratio = before / after
        print(f"{way:12} {before * 1e6:12.3f} {after * 1e6:13.3f} {ratio:7.2f}x {ratio / reference - 1:+9.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
