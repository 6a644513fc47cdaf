"""`--engine local`: a pool of worker processes on this machine, one timing run at a time.

Every sandbox run that times code holds an exclusive lock on one file for this sweep (the same lock as
`bench --jobs`), so timing never overlaps another job's timing on this machine. With one worker the jobs
run in this process, one after another (the sequential baseline the benchmark compares with).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from coderefine.pool import run_in_workers
from coderefine.sweep.engines.base import EngineRun, OnDone, OnStart
from coderefine.sweep.jobs import FunctionJob, refine_function


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
                return EngineRun(self._parallel(jobs, root, workers, on_done, on_start), description=description)
            except KeyboardInterrupt:
                return EngineRun(True, description=description)

    @staticmethod
    def _parallel(jobs: list[FunctionJob], root: Path, workers: int, on_done: OnDone, on_start: OnStart) -> bool:
        """True when interrupted."""

        def started(job: FunctionJob) -> tuple[FunctionJob, Path]:
            on_start(job)
            return job, root

        return run_in_workers(refine_function, (started(job) for job in jobs), workers, on_done)
