"""Worker processes for jobs run side by side (bench --jobs, sweep --engine local), and Ctrl-C.

The terminal's Ctrl-C reaches every process of the group and the parent forwards it to its workers too;
each worker answers it once, while a job runs, so that the job's own cleanup (sandbox, scratch folders)
is not cut short by a second KeyboardInterrupt; an idle worker ignores it and waits to be shut down.
Workers are spawned, not forked: the parent's progress display runs a thread.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import signal
import tempfile
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

from coderefine.interrupts import redeliver_lost_interrupts

T = TypeVar("T")

_interrupted = False


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    global _interrupted
    if not _interrupted:  # once: the second (the forwarded copy) must not cut the first one's cleanup short
        _interrupted = True
        raise KeyboardInterrupt


def _forget_interrupt() -> None:
    global _interrupted
    _interrupted = False


def _init_worker() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # an idle worker just waits to be shut down
    # A Ctrl-C that lands while the sandbox starts a process (preexec_fn) is dropped by Python: resend it,
    # and forget the first, or the forwarded one is taken for a second and ignored, and the job runs on.
    redeliver_lost_interrupts(before_resend=_forget_interrupt)


def _run_interruptible(job: Callable[..., T], mark: str, *args: Any) -> T | None:
    """`job(*args)` in a worker, answering the first Ctrl-C; None when interrupted (not finished). `mark` is
    a file created first: after a worker dies, the parent tells the jobs that had started from the rest."""
    _forget_interrupt()
    signal.signal(signal.SIGINT, _on_sigint)
    try:
        Path(mark).touch()
        return job(*args)
    except KeyboardInterrupt:
        return None
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity), the default number of workers."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


class WorkerDied(Exception):
    """A job's worker process died (killed, out of memory, a crash) every time the job was run."""


WORKER_DIED = "its worker process died twice while running it alone (killed, or out of memory?)"
OnLost = Callable[[tuple[Any, ...], str, int], None]


@dataclass
class _PoolRun:
    interrupted: bool = False
    unstarted: list[tuple[int, tuple[Any, ...]]] = field(default_factory=list)  # to run on a fresh pool
    died: list[tuple[int, tuple[Any, ...]]] = field(default_factory=list)  # running when a worker died


def run_in_workers(
    job: Callable[..., T],
    arguments: Iterable[tuple[Any, ...]],
    workers: int,
    on_result: Callable[[T], None],
    on_lost: OnLost | None = None,
    on_retry: Callable[[tuple[Any, ...]], None] | None = None,
) -> bool:
    """`job(*args)` for each of `arguments` on `workers` processes, each result to `on_result` as it comes
    (in the parent). True when interrupted: running jobs stop through their own cleanup, queued ones never
    start, and what finished before was passed on.

    A worker that dies breaks the whole pool, and every job running then with it. Those jobs run again one
    at a time, each on a pool of its own (`on_retry(args)` before each run), where a death is the job's own
    doing; a job whose worker dies twice by its own doing (alone, or the only job running when it died) goes
    to `on_lost(args, why, runs)` (WorkerDied without one); the others run on, on a fresh pool."""
    todo = list(enumerate(arguments))
    with tempfile.TemporaryDirectory(prefix="coderefine-pool-") as marks:
        while todo:
            run = _run_pool(job, todo, workers, on_result, Path(marks))
            if run.interrupted:
                return True
            if len(run.unstarted) == len(todo):  # no job even started: the workers themselves cannot run
                raise WorkerDied("the worker processes died before running any job")
            for suspect in run.died:
                deaths = 1 if len(run.died) == 1 else 0
                for runs in itertools.count(2):
                    if on_retry is not None:
                        on_retry(suspect[1])
                    alone = _run_pool(job, [suspect], 1, on_result, Path(marks))
                    if alone.interrupted:
                        return True
                    if not (alone.died or alone.unstarted):
                        break
                    deaths += 1
                    if deaths == 2:
                        if on_lost is None:
                            raise WorkerDied(WORKER_DIED)
                        on_lost(suspect[1], WORKER_DIED, runs)
                        break
            todo = run.unstarted
    return False


def _run_pool(
    job: Callable[..., T],
    todo: list[tuple[int, tuple[Any, ...]]],
    workers: int,
    on_result: Callable[[T], None],
    marks: Path,
) -> _PoolRun:
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=_init_worker)
    run = _PoolRun()
    futures: dict[Future[T | None], tuple[int, tuple[Any, ...]]] = {}
    try:
        for index, args in todo:
            (marks / str(index)).unlink(missing_ok=True)
            futures[pool.submit(_run_interruptible, job, str(marks / str(index)), *args)] = (index, args)
        pending = set(futures)
        while pending:
            ready, pending = wait(pending, return_when=FIRST_COMPLETED)
            if any(isinstance(future.exception(), BrokenProcessPool) for future in ready):
                wait(pending)  # a broken pool fails every future it still holds at once
                _sort_out_broken(futures, ready | pending, on_result, marks, run)
                return run
            for future in ready:
                result = future.result()
                if result is None:  # a worker was interrupted (Ctrl-C reached its process group)
                    raise KeyboardInterrupt
                on_result(result)
    except KeyboardInterrupt:
        run.interrupted = True
        # The executor keeps its worker processes in a private mapping: there is no public way to signal them.
        for process in list(getattr(pool, "_processes", {}).values()):
            if process.is_alive() and process.pid is not None:
                os.kill(process.pid, signal.SIGINT)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return run


def _sort_out_broken(
    futures: dict[Future[T | None], tuple[int, tuple[Any, ...]]],
    left: set[Future[T | None]],
    on_result: Callable[[T], None],
    marks: Path,
    run: _PoolRun,
) -> None:
    """After a worker died: the results that came before it, and which jobs had started (to be run again
    alone) and which had not (for a fresh pool)."""
    for future, (index, args) in futures.items():  # in submission order
        if future not in left:
            continue
        if not isinstance(future.exception(), BrokenProcessPool):
            result = future.result()  # finished just before the pool broke (or its own error: raised)
            if result is not None:
                on_result(result)
            continue
        (run.died if (marks / str(index)).exists() else run.unstarted).append((index, args))
