from __future__ import annotations

from dataclasses import replace

import pytest
from coderefine_sandbox.timing import worker


@pytest.fixture(autouse=True)
def plain_loop_state(monkeypatch):
    """The plain-loop decision and figures are a worker process's, made on its second pass for its one workload:
    each test here starts as a process of its own in that respect (a decision left by another test's workload would
    make plain passes over an async workload, and a first pass made by another test would move the decision)."""
    for name in ("PLAIN", "ALONE", "PLAIN_PREEMPTED", "PLAIN_REPEATS"):
        monkeypatch.setattr(worker, name, [])
    monkeypatch.setattr(worker, "PLAIN_WALL", [0.0, 0.0])
    monkeypatch.setattr(worker, "TALLY", replace(worker.TALLY, first_pass=-1.0))


@pytest.fixture
def fresh_worker(monkeypatch):
    """The worker's per-process tallies (harness probe, per-call seconds, weights, passes, clean readings, first
    pass, warm-ups left) empty, as in a process that has timed nothing yet."""
    for name in ("HARNESS", "PER_CALL", "WEIGHTS", "CLEAN", "FIRST_CALL"):
        monkeypatch.setattr(worker, name, [])
    monkeypatch.setattr(worker, "PASSES", [0])
    monkeypatch.setattr(worker, "WARMUPS_LEFT", [0])
