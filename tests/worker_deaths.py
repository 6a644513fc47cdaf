"""Test files that kill the worker process running them (a pool's or Ray's): for the tests of what
`sweep` and `bench --jobs` do when a worker dies. A plain subprocess sandbox is needed, so that the test
can reach its worker (bubblewrap hides it, rightly)."""

from __future__ import annotations

KILL_MY_WORKER = """
import os
from pathlib import Path


def _kill_my_worker(marker):
    # SIGKILL the nearest ancestor whose command line holds `marker`: up from the sandbox runner (a plain
    # subprocess) to the worker running the job.
    pid = os.getppid()
    while pid > 1:
        if marker in Path(f"/proc/{pid}/cmdline").read_bytes():
            os.kill(pid, 9)
            return
        pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
"""


def dying_test(
    marker: bytes, module: str, function: str, times: int, expected: str, deaths: str, package: str = "pkg"
) -> str:
    """A test of `function` (`package`.`module`, called on `list(range(n))`, must return `expected`) that kills
    its worker the first `times` times it runs; `deaths`, a file outside the project, counts them."""
    return (
        KILL_MY_WORKER
        + f"""
from {package}.{module} import {function}

DEATHS = Path({deaths!r})


def test_{function}():
    count = int(DEATHS.read_text()) if DEATHS.exists() else 0
    if count < {times}:
        DEATHS.write_text(str(count + 1))
        _kill_my_worker({marker!r})
    for n in range(5):
        assert {function}(list(range(n))) == {expected}
"""
    )
