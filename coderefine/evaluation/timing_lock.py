"""One timing run at a time on a machine: `coderefine bench --jobs N` gives every job the same lock file."""

from __future__ import annotations

import fcntl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def exclusive_lock(path: Path | None) -> Iterator[None]:
    """Hold an exclusive lock on `path` (nothing when None). flock is released by the kernel when the holder
    dies, so a crashed or killed job never leaves the others waiting."""
    if path is None:
        yield
        return
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        held = time.time()
        try:
            yield
        finally:
            released = time.time()  # read before unlocking: the next holder's start is after it
            fcntl.flock(handle, fcntl.LOCK_UN)
            HOLDS.append((held, released))


# When this process held a timing lock (wall-clock start, end): `coderefine sweep` reports them per function,
# the evidence that timing never overlapped on a machine.
HOLDS: list[tuple[float, float]] = []
