"""Jobs for tests/test_pool.py, in a module of their own: spawned workers import them by name."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def square_or_die(value: int | str, deaths: str) -> tuple[int | str, int]:
    """`value` squared; "die" kills its worker every time, "die-once" the first time only (its mark in the
    `deaths` folder says it did)."""
    mark = Path(deaths) / str(value)
    if value == "die" or (value == "die-once" and not mark.exists()):
        mark.touch()
        time.sleep(0.3)  # the other worker's job is running when this one dies
        os.kill(os.getpid(), signal.SIGKILL)
    if isinstance(value, str):
        return value, os.getpid()
    time.sleep(0.5)  # long enough to be running beside a job that kills its worker
    return value * value, os.getpid()
