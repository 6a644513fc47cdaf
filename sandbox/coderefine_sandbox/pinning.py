"""Make a recorded call's randomness and wall-clock readings inputs of the call, like its arguments, so that
a call drawing random numbers or reading the time compares equal between the original and a candidate that
does the same, instead of being left out as non-deterministic.

In the original's test run (capture) nothing the tests see changes: before each recorded call the state
of `random` (and of numpy's global generator, when numpy is imported) is saved with the record, and
`time.time` / `time.time_ns` are read through a wrapper that returns the real clock and notes each
reading. Replay (original and candidates) and the timing workers (outside the timed region) restore those
states before the call and feed the noted readings back in order; after the last one the clock advances
CLOCK_STEP_NS per reading, so a loop waiting for a deadline still ends. Calls without a record of their
own (inputs generated from type hints) start from `random` seeded with SEED and a clock at CLOCK_START.

What cannot be made an input this way is listed in NOT_PINNED (and in the report).

Standard library only: this runs inside the sandbox.
"""

from __future__ import annotations

import contextlib
import random
import sys
import time
from collections.abc import Iterator
from typing import Any

SEED = 0
CLOCK_START = 1_704_067_200.0  # 2024-01-01T00:00:00Z
CLOCK_STEP_NS = 1_000_000  # 1 ms per reading

NOT_PINNED = (
    "datetime.now/date.today (read by C code)",
    "time.monotonic/time.perf_counter (timeouts and timing need them)",
    "os.urandom, secrets, uuid.uuid4, random.SystemRandom",
    "generators created during the call (random.Random(), numpy.random.default_rng())",
    "`from time import time` done before the call (binds the real clock)",
)


class _Clock:
    """Replays noted readings (nanoseconds) in order, then advances CLOCK_STEP_NS per reading."""

    def __init__(self) -> None:
        self.readings: list[int] = []
        self.index = 0

    def load(self, readings: list[int]) -> None:
        self.readings, self.index = readings, 0

    def time_ns(self) -> int:
        index, readings = self.index, self.readings
        self.index += 1
        if index < len(readings):
            return readings[index]
        last = readings[-1] if readings else int(CLOCK_START * 1e9)
        return last + (index - len(readings) + 1) * CLOCK_STEP_NS

    def time(self) -> float:
        return self.time_ns() / 1e9


def _numpy_random() -> Any:
    numpy = sys.modules.get("numpy")
    return getattr(numpy, "random", None) if numpy is not None else None


def pinned_names() -> list[str]:
    """What is made an input of each recorded call in this process (numpy only once something imported it)."""
    names = [
        f"random: its state before each recorded call, restored for every replay (seed {SEED} for generated inputs)"
    ]
    if _numpy_random() is not None:
        names.append("numpy.random global generator: likewise")
    names.append(
        "time.time/time.time_ns: the readings the original made during each recorded call, replayed in order "
        "(then +1 ms per reading)"
    )
    return names


@contextlib.contextmanager
def observed_call() -> Iterator[dict[str, Any]]:
    """Around a recorded call in the original's test run: yields the note to store with the record (the
    random states before the call; the clock readings, filled in during it). The call sees the real ones."""
    note: dict[str, Any] = {"random_state": random.getstate(), "clock": []}
    numpy_random = _numpy_random()
    if numpy_random is not None:
        with contextlib.suppress(Exception):  # a broken or stub numpy must not break the call
            note["numpy_state"] = numpy_random.get_state()
    with noted_clock(note["clock"]):
        yield note


@contextlib.contextmanager
def noted_clock(readings: list[int]) -> Iterator[None]:
    """`time.time`/`time.time_ns` read through a wrapper that returns the real clock and appends each reading
    to `readings`: around a recorded call, and around each later step of an async call's work (recording
    drives a coroutine a step at a time, on the test's loop, after the call itself returned)."""
    real_time, real_time_ns = time.time, time.time_ns

    def noted_time_ns() -> int:
        value = real_time_ns()
        readings.append(value)
        return value

    def noted_time() -> float:
        return noted_time_ns() / 1e9

    time.time, time.time_ns = noted_time, noted_time_ns  # type: ignore[assignment]
    try:
        yield
    finally:
        time.time, time.time_ns = real_time, real_time_ns  # type: ignore[assignment]


class Pin:
    """The replaying clock installed for a while; `reset(note)` before each call gives it the recorded
    random states and readings. The timing worker installs it once and resets outside its timed region,
    so it costs nothing in the figure; pinned_call() does all of it around one call."""

    def __init__(self) -> None:
        self.clock = _Clock()
        self.saved: tuple[Any, Any] | None = None

    def install(self) -> None:
        self.saved = (time.time, time.time_ns)
        time.time, time.time_ns = self.clock.time, self.clock.time_ns  # type: ignore[assignment]

    def uninstall(self) -> None:
        if self.saved is not None:
            time.time, time.time_ns = self.saved  # type: ignore[assignment]
            self.saved = None

    def reset(self, note: dict[str, Any] | None) -> None:
        note = note or {}
        self.clock.load(note.get("clock", []))
        if "random_state" in note:
            random.setstate(note["random_state"])
        else:
            random.seed(SEED)
        numpy_random = _numpy_random()
        if numpy_random is not None:
            with contextlib.suppress(Exception):
                if "numpy_state" in note:
                    numpy_random.set_state(note["numpy_state"])
                else:
                    numpy_random.seed(SEED)


@contextlib.contextmanager
def pinned_call(note: dict[str, Any] | None = None) -> Iterator[None]:
    """Replay one call with the recorded random states and clock readings (`note` from observed_call, or
    None for seeded ones), then put back this process's own states and the real clock."""
    saved_random = random.getstate()
    numpy_random = _numpy_random()
    saved_numpy = None
    if numpy_random is not None:
        with contextlib.suppress(Exception):
            saved_numpy = numpy_random.get_state()
    pin = Pin()
    pin.reset(note)
    pin.install()
    try:
        yield
    finally:
        pin.uninstall()
        random.setstate(saved_random)
        if saved_numpy is not None:
            with contextlib.suppress(Exception):
                numpy_random.set_state(saved_numpy)
