"""The timing worker is tamper-evident: the clock it reads is bound before the module under judgement is
imported, and replacing a clock, pyperf's runner or the worker's own functions is seen."""

from __future__ import annotations

import pickle
import time

import pyperf._runner
from coderefine_sandbox import timing_worker


def test_replacing_a_clock_or_pyperf_or_the_worker_is_seen(monkeypatch):
    guarded = timing_worker._guarded()
    assert timing_worker.tampering(guarded) == []
    monkeypatch.setattr(time, "perf_counter", lambda: 0.0)
    monkeypatch.setattr(pyperf._runner.Runner, "bench_time_func", lambda *args: None)
    monkeypatch.setattr(timing_worker, "time_workload", lambda *args: 0.0)
    assert timing_worker.tampering(guarded) == [
        "time.perf_counter",
        "pyperf.Runner.bench_time_func",
        "timing_worker.time_workload",
    ]


def test_the_workload_is_timed_with_the_clock_bound_before_the_import(monkeypatch):
    monkeypatch.setattr(time, "perf_counter", lambda: 0.0)  # what a timer-patching candidate does at import
    workload = [(time.sleep, pickle.dumps(((0.002,), {})), None, True)]
    assert timing_worker.time_workload(2, workload, True) >= 0.004
    assert timing_worker.TALLY["held_out"] >= 0.004 and timing_worker.TALLY["passes"] >= 2
