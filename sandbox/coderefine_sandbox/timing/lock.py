"""The machine's timing slot inside the sandbox: an exclusive lock on the request's lock file around each
timing step, so that jobs running side by side (`coderefine sweep`) never time at the same moment. The
kernel releases a flock when its holder dies, so a killed step never leaves the others waiting."""

from __future__ import annotations

import fcntl
import time
from collections.abc import Iterator
from contextlib import contextmanager

from coderefine_sandbox.protocol import BaselineReport, CandidateReport, RunnerRequest


@contextmanager
def timing_slot(request: RunnerRequest, report: BaselineReport | CandidateReport) -> Iterator[None]:
    if request.timing_lock is None:
        yield
        return
    with open(request.timing_lock, "rb") as handle:  # read-only: the file may sit on a read-only mount
        fcntl.flock(handle, fcntl.LOCK_EX)
        held = time.time()
        try:
            yield
        finally:
            released = time.time()  # read before unlocking: the next holder's start is after it
            fcntl.flock(handle, fcntl.LOCK_UN)
            report.timing_holds = (*report.timing_holds, (held, released))
