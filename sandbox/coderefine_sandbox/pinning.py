"""Pin randomness and the wall clock around each call to a target, so that a call drawing random numbers or
reading the time gives the same result in the original and in a candidate.

Used the same way by the capture (the original, while its tests run), the replay (original and candidates)
and the timing workers (outside the timed region), so all three see the same inputs:

    with pinned_call():
        func(*args, **kwargs)

Before each call: `random` is reseeded with SEED (its previous state is restored afterwards, so a test's own
random sequence is not disturbed), numpy's global generator too when numpy is already imported, and
`time.time` / `time.time_ns` read a clock that starts at CLOCK_START and advances 1 ms per reading. The
clock advances rather than stands still so that a loop waiting for a deadline still ends.

What cannot be pinned this way (listed in NOT_PINNED and in the report): `datetime.now()` and
`date.today()` (C code reading the system clock directly), `time.monotonic` / `time.perf_counter`
(left alone on purpose: timeouts and timing depend on them), `os.urandom`, `secrets`, `uuid.uuid4`,
`random.SystemRandom`, and generators created inside the call (`random.Random()`,
`numpy.random.default_rng()`), which seed themselves from the operating system.

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
    def __init__(self) -> None:
        self.readings = 0

    def time_ns(self) -> int:
        self.readings += 1
        return int(CLOCK_START * 1e9) + self.readings * CLOCK_STEP_NS

    def time(self) -> float:
        return self.time_ns() / 1e9


def _numpy_random() -> Any:
    numpy = sys.modules.get("numpy")
    return getattr(numpy, "random", None) if numpy is not None else None


def pinned_names() -> list[str]:
    """What is pinned in this process now (numpy only once something imported it)."""
    names = [f"random (seed {SEED} before each call)"]
    if _numpy_random() is not None:
        names.append(f"numpy.random global generator (seed {SEED})")
    names.append("time.time/time.time_ns (a clock from 2024-01-01 advancing 1 ms per reading, reset per call)")
    return names


class Pin:
    """The clock installed for a while; `reset()` before each call gives every call the same start.

    The timing worker installs it once and resets outside its timed region, so pinning costs nothing in
    the figure; pinned_call() does all of it around one call."""

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

    def reset(self) -> None:
        self.clock.readings = 0
        random.seed(SEED)
        numpy_random = _numpy_random()
        if numpy_random is not None:
            with contextlib.suppress(Exception):  # a broken or stub numpy must not break the call
                numpy_random.seed(SEED)


@contextlib.contextmanager
def pinned_call() -> Iterator[None]:
    """Pin around one call, then put back the random states and the real clock (the test goes on)."""
    saved_random = random.getstate()
    numpy_random = _numpy_random()
    saved_numpy = None
    if numpy_random is not None:
        with contextlib.suppress(Exception):
            saved_numpy = numpy_random.get_state()
    pin = Pin()
    pin.reset()
    pin.install()
    try:
        yield
    finally:
        pin.uninstall()
        random.setstate(saved_random)
        if saved_numpy is not None:
            with contextlib.suppress(Exception):
                numpy_random.set_state(saved_numpy)
