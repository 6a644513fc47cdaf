"""Worker processes for jobs run side by side (bench --jobs, sweep --engine local), and Ctrl-C.

The terminal's Ctrl-C reaches every process of the group and the parent forwards it to its workers too;
each worker answers it once, while a job runs, so that the job's own cleanup (sandbox, scratch folders)
is not cut short by a second KeyboardInterrupt; an idle worker ignores it and waits to be shut down.
Workers are spawned, not forked: the parent's progress display runs a thread.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
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


def _run_interruptible(job: Callable[..., T], *args: Any) -> T | None:
    """`job(*args)` in a worker, answering the first Ctrl-C; None when interrupted (not finished)."""
    _forget_interrupt()
    signal.signal(signal.SIGINT, _on_sigint)
    try:
        return job(*args)
    except KeyboardInterrupt:
        return None
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def run_in_workers(
    job: Callable[..., T], arguments: Iterable[tuple[Any, ...]], workers: int, on_result: Callable[[T], None]
) -> bool:
    """`job(*args)` for each of `arguments` on `workers` processes, each result to `on_result` as it comes
    (in the parent). True when interrupted: running jobs stop through their own cleanup, queued ones never
    start, and what finished before was passed on."""
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=_init_worker)
    interrupted = False
    try:
        pending: set[Future[T | None]] = {pool.submit(_run_interruptible, job, *args) for args in arguments}
        while pending:
            ready, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in ready:
                result = future.result()
                if result is None:  # a worker was interrupted (Ctrl-C reached its process group)
                    raise KeyboardInterrupt
                on_result(result)
    except KeyboardInterrupt:
        interrupted = True
        # The executor keeps its worker processes in a private mapping: there is no public way to signal them.
        for process in list(getattr(pool, "_processes", {}).values()):
            if process.is_alive() and process.pid is not None:
                os.kill(process.pid, signal.SIGINT)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return interrupted
