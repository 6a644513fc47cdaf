"""One timing run at a time on a machine: `coderefine bench --jobs N` and `sweep` give every job the same lock
file. When it was held travels in the records (`Evaluation.timing_holds`): the evidence that timing never
overlapped."""

from __future__ import annotations

import fcntl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def exclusive_lock(path: Path | None) -> Iterator[list[tuple[float, float]]]:
    """Hold an exclusive lock on `path` (nothing when None). flock is released by the kernel when the holder
    dies, so a crashed or killed job never leaves the others waiting.

    Yields a list that holds, once the block is left, when the lock was held (wall-clock start, end)."""
    holds: list[tuple[float, float]] = []
    if path is None:
        yield holds
        return
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        held = time.time()
        try:
            yield holds
        finally:
            released = time.time()  # read before unlocking: the next holder's start is after it
            fcntl.flock(handle, fcntl.LOCK_UN)
            holds.append((held, released))
