"""`--engine local`: a pool of worker processes on this machine, one timing run at a time.

Every sandbox run that times code holds an exclusive lock on one file for this sweep (the same lock as
`bench --jobs`), so timing never overlaps another job's timing on this machine. With one worker the jobs
run in this process, one after another (the sequential baseline the benchmark compares with). A worker
that dies (killed, out of memory) takes the pool's running jobs with it: each runs again alone, and one
whose worker dies a second time is a failed outcome of its own (as on Ray; `attempts` says which ran twice).
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from coderefine.pool import run_in_workers
from coderefine.sweep.engines.base import EngineRun, OnDone, OnStart
from coderefine.sweep.jobs import FunctionJob, FunctionOutcome, lost_outcome, refine_function


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


class LocalEngine:
    name = "local"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers or default_workers()

    def run(self, jobs: Sequence[FunctionJob], root: Path, on_done: OnDone, on_start: OnStart) -> EngineRun:
        workers = min(self.workers, max(1, len(jobs)))
        description = f"local: {workers} worker process{'es' if workers != 1 else ''}"
        with tempfile.TemporaryDirectory(prefix="coderefine-sweep-lock-") as lock_dir:
            lock = str(Path(lock_dir) / "timing.lock") if workers > 1 else None
            jobs = [replace(job, timing_lock=lock) for job in jobs]
            try:
                if workers == 1:
                    for job in jobs:
                        on_start(job)
                        on_done(refine_function(job, root))
                    return EngineRun(False, description=description)
                return self._parallel(jobs, root, workers, on_done, on_start, description)
            except KeyboardInterrupt:
                return EngineRun(True, description=description)

    @staticmethod
    def _parallel(
        jobs: list[FunctionJob], root: Path, workers: int, on_done: OnDone, on_start: OnStart, description: str
    ) -> EngineRun:
        retried: Counter[str] = Counter()
        lost: list[str] = []

        def started(job: FunctionJob) -> tuple[FunctionJob, Path]:
            on_start(job)
            return job, root

        def done(outcome: FunctionOutcome) -> None:
            on_done(replace(outcome, attempts=1 + retried[outcome.key]) if outcome.key in retried else outcome)

        def died(args: tuple[FunctionJob, Path], why: str, runs: int) -> None:
            lost.append(args[0].key)
            on_done(lost_outcome(args[0], root, runs, why))

        interrupted = run_in_workers(
            refine_function,
            (started(job) for job in jobs),
            workers,
            done,
            died,
            lambda args: retried.update((args[0].key,)),
        )
        return EngineRun(interrupted, tuple(lost), description)
