"""`--engine local`: a pool of worker processes on this machine, one timing run at a time.

Every sandbox run that times code holds an exclusive lock on one file for this sweep (the same lock as
`bench --jobs`), so timing never overlaps another job's timing on this machine. With one worker the jobs
run in this process, one after another (the sequential baseline the benchmark compares with).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import tempfile
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import replace
from pathlib import Path
from types import FrameType

from coderefine.interrupts import redeliver_lost_interrupts
from coderefine.sweep.engines.base import EngineRun, OnDone, OnStart
from coderefine.sweep.jobs import FunctionJob, FunctionOutcome, refine_function


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


_interrupted = False


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    # Once: the terminal's Ctrl-C reaches the worker directly and the sweep forwards it too; a second
    # KeyboardInterrupt would cut the first one's cleanup (sandbox, scratch folders) short.
    global _interrupted
    if not _interrupted:
        _interrupted = True
        raise KeyboardInterrupt


def _forget_interrupt() -> None:
    global _interrupted
    _interrupted = False


def _worker_init() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # an idle worker just waits to be shut down
    # A Ctrl-C that lands while the sandbox starts a process (preexec_fn) is dropped by Python: resend it,
    # and forget the first, or the forwarded one is taken for a second and ignored, and the job runs on.
    redeliver_lost_interrupts(before_resend=_forget_interrupt)


def _run_in_worker(job: FunctionJob, root: str) -> FunctionOutcome | None:
    global _interrupted
    _interrupted = False
    signal.signal(signal.SIGINT, _on_sigint)
    try:
        return refine_function(job, Path(root))
    except KeyboardInterrupt:
        return None
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


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
        """True when interrupted. Spawned workers: the console's progress display runs a thread."""
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_init)
        interrupted = False
        try:
            pending: set[Future[FunctionOutcome | None]] = set()
            for job in jobs:
                on_start(job)
                pending.add(pool.submit(_run_in_worker, job, str(root)))
            while pending:
                ready, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in ready:
                    outcome = future.result()
                    if outcome is None:
                        raise KeyboardInterrupt
                    on_done(outcome)
        except KeyboardInterrupt:
            interrupted = True
            # Running jobs stop through their own cleanup (sandbox, scratch folders); queued ones never start.
            for process in list(getattr(pool, "_processes", {}).values()):
                if process.is_alive() and process.pid is not None:
                    os.kill(process.pid, signal.SIGINT)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        return interrupted
