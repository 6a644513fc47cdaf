"""Peak memory per call, read during the replay's first pass (never while timing).

A call's peak is how far the process's resident high-water mark (`VmHWM`, reset before the call through
`/proc/self/clear_refs`) rose above its resident size just before the call: Python objects and native
allocations alike (numpy buffers, a C library's own malloc), the call's return value included, its
arguments (unpickled before the reading starts) not. Reading it costs a few file operations per call and
does not slow the call itself, unlike tracemalloc (ten times slower on allocation-heavy code here), so it
can be read inside the pass that already runs every call.

What it does not see: memory the allocator already holds from earlier calls and reuses (a call that
rebuilds the table an earlier call freed may read lower than its need; the largest inputs are measured
and both sides are read the same way, in the same order), memory another thread allocates after the call
returned, and pages the kernel never makes resident. Where the high-water mark cannot be reset (not Linux,
or /proc not writable) nothing is measured and no memory verdict is taken.

Only the MEMORY_CALLS recorded calls with the largest arguments are read: peak memory grows with the input,
and a handful of readings keeps the cost to well under a millisecond per replay.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

MEMORY_CALLS = 8
_CLEAR_REFS = "/proc/self/clear_refs"
_STATUS = "/proc/self/status"
_STATM = "/proc/self/statm"


def chosen_calls(calls: list[Any]) -> frozenset[int]:
    """The indices of the calls whose peak is read: the largest pickled arguments, then recording order."""
    ranked = sorted(calls, key=lambda call: (-len(call.record["args"]), call.index))
    return frozenset(call.index for call in ranked[:MEMORY_CALLS])


class PeakMeter:
    """Reads a call's peak resident memory growth; `available` False where the high-water mark cannot be
    reset (then every reading is None)."""

    def __init__(self) -> None:
        self.available = self._reset() and self._high_water() is not None
        self.peaks: dict[int, int] = {}

    @contextlib.contextmanager
    def reading(self, index: int, wanted: bool) -> Iterator[None]:
        """Around one call: its peak growth, in bytes, goes to `peaks[index]` when `wanted`."""
        if not (wanted and self.available) or not self._reset():
            yield
            return
        before = self._resident()
        try:
            yield
        finally:
            high = self._high_water()
            if high is not None and before is not None:
                self.peaks[index] = max(0, high - before)

    @staticmethod
    def _reset() -> bool:
        try:
            with open(_CLEAR_REFS, "w") as fh:
                fh.write("5")  # resets the peak resident set size to the current one (Linux 4.0+)
            return True
        except OSError:
            return False

    @staticmethod
    def _resident() -> int | None:
        try:
            with open(_STATM) as fh:
                return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError, AttributeError):
            return None

    @staticmethod
    def _high_water() -> int | None:
        try:
            with open(_STATUS) as fh:
                for line in fh:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            return None
        return None
