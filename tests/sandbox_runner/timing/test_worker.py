"""The timing worker is tamper-evident: the clock it reads is bound before the module under judgement is
imported, and replacing a clock, pyperf's runner or the worker's own functions is seen."""

from __future__ import annotations

import asyncio
import pickle
import threading
import time

import pyperf._runner
import pytest
from coderefine_sandbox.behaviour import asynchronous
from coderefine_sandbox.protocol import CallsHeader, UnstableCalls, write_calls, write_json
from coderefine_sandbox.timing import worker


def test_replacing_a_clock_or_pyperf_or_the_worker_is_seen(monkeypatch):
    guarded = worker._guarded()
    assert worker.tampering(guarded) == []
    monkeypatch.setattr(time, "perf_counter", lambda: 0.0)
    monkeypatch.setattr(pyperf._runner.Runner, "bench_time_func", lambda *args: None)
    monkeypatch.setattr(worker, "time_workload", lambda *args: 0.0)
    # The processor clock a preempted import is read by (timed_import), bound like the wall clock.
    monkeypatch.setattr(worker, "_processor_clock", lambda: 0.0)
    assert worker.tampering(guarded) == [
        "time.perf_counter",
        "pyperf.Runner.bench_time_func",
        "timing_worker.time_workload",
        "timing_worker._processor_clock",
    ]


def test_the_workload_is_timed_with_the_clock_bound_before_the_import(monkeypatch):
    monkeypatch.setattr(time, "perf_counter", lambda: 0.0)  # what a timer-patching candidate does at import
    workload = [(time.sleep, pickle.dumps(((0.002,), {})), None, True, None)]
    assert worker.time_workload(2, workload, True) >= 0.004
    assert worker.TALLY.held_out >= 0.004 and worker.TALLY.passes >= 2


def _leaves_a_sleeping_thread(seconds: float) -> None:
    threading.Thread(target=time.sleep, args=(seconds,)).start()  # returns at once, the work goes on


def test_a_thread_a_call_leaves_running_is_charged_to_that_call():
    workload = [(_leaves_a_sleeping_thread, pickle.dumps(((0.05,), {})), None, False, None)]
    before = worker.TALLY.thread_seconds
    assert worker.time_workload(2, workload, True) >= 0.1  # 2 loops: each call waits for its thread
    # Of each 0.05 s, the part left after the call returned is waited for: a little less than 0.05 when the
    # thread started sleeping before the call returned (much less on a loaded machine), never nothing.
    assert worker.TALLY.thread_seconds - before > 0.02
    # A call that starts no thread pays nothing: nothing is waited for.
    before = worker.TALLY.thread_seconds
    assert worker.time_workload(3, [(abs, pickle.dumps(((-1,), {})), None, False, None)], True) < 0.01
    assert worker.TALLY.thread_seconds == before


def test_a_thread_started_at_import_is_charged_to_the_import(tmp_path, monkeypatch):
    (tmp_path / "precomputes.py").write_text(
        "import threading, time\n\nANSWERS = {}\n\n\n"
        "def _fill():\n    time.sleep(0.2)\n    ANSWERS[1] = 2\n\n\n"
        "threading.Thread(target=_fill).start()\n\n\ndef f(x):\n    return ANSWERS.get(x)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    module = worker.timed_import("precomputes")
    assert module.ANSWERS == {1: 2}  # waited for: the thread's work is done before any call is timed
    assert worker.TALLY.import_seconds >= 0.2


def test_the_first_pass_of_the_process_is_kept_alone(monkeypatch):
    # A pyperf value averages `loops` passes; the warm-gain rule needs the very first one, before a cache filled.
    monkeypatch.setattr(worker.TALLY, "first_pass", -1.0)
    seen: set[float] = set()

    def slow_once(seconds: float) -> None:
        if seconds not in seen:
            seen.add(seconds)
            time.sleep(seconds)

    workload = [(slow_once, pickle.dumps(((0.05,), {})), None, False, None)]
    worker.time_workload(10, workload, True)
    assert worker.TALLY.first_pass >= 0.05  # the cold pass alone, not its tenth
    worker.time_workload(10, workload, True)
    assert worker.TALLY.first_pass >= 0.05  # later values do not overwrite it


def test_the_warm_up_value_is_short_and_the_values_keep_their_budget(monkeypatch):
    # With fixed loops the warm-up stops at its own budget (its first pass is the process's first pass all the
    # same); the values after it stop at the whole budget, as before.
    monkeypatch.setattr(worker, "WARMUPS_LEFT", [1])
    monkeypatch.setattr(worker, "WARMUP_BUDGET", 0.05)
    monkeypatch.setattr(worker, "WALL_BUDGET", 0.3)
    monkeypatch.setattr(worker.TALLY, "first_pass", -1.0)
    workload = [(time.sleep, pickle.dumps(((0.02,), {})), None, False, None)]
    passes = worker.TALLY.passes
    worker.time_workload(1000, workload, True)
    warm_up = worker.TALLY.passes - passes
    assert 1 <= warm_up <= 4
    assert worker.TALLY.first_pass >= 0.02
    worker.time_workload(1000, workload, True)
    assert worker.TALLY.passes - passes - warm_up >= 10  # a value: the whole budget


def test_numpy_states_are_restored_from_a_list_of_their_words_to_the_very_same_state(monkeypatch):
    numpy = pytest.importorskip("numpy")
    monkeypatch.setattr(worker, "LIST_KEYS_RESTORE", [])
    saved = numpy.random.get_state()
    try:
        numpy.random.seed(7)
        numpy.random.random(11)
        numpy.random.standard_normal()  # a cached Gaussian is part of the state too
        note = {"random_state": None, "clock": [], "numpy_state": numpy.random.get_state()}
        expected = numpy.random.random(5)
        quick = worker.settable(note)
        assert isinstance(quick["numpy_state"][1], list) and worker.LIST_KEYS_RESTORE == [True]
        assert note["numpy_state"][1] is not quick["numpy_state"][1]  # the recorded note is left as it was
        numpy.random.seed(0)
        numpy.random.set_state(quick["numpy_state"])
        assert list(numpy.random.random(5)) == list(expected)
    finally:
        numpy.random.set_state(saved)
    # Where numpy did not restore the list form exactly, the recorded form is kept.
    monkeypatch.setattr(worker, "LIST_KEYS_RESTORE", [False])
    assert worker.settable(note) is note
    assert worker.settable(None) is None and worker.settable({"clock": []}) == {"clock": []}


def test_each_distinct_call_is_timed_once_standing_for_its_repeats(tmp_path):
    from coderefine_sandbox.workload import timed_calls

    def record(target: str, *args: object) -> dict:
        return {"target": target, "args": pickle.dumps((args, {}))}

    records = [record("f", "cow"), record("f", "cat"), record("f", "cow"), record("g", "cow"), record("f", "cow")]
    calls = tmp_path / "calls.pkl"
    write_calls(str(calls), CallsHeader(module="mod", recording=None), records)
    excluded = tmp_path / "unstable.json"
    write_json(str(excluded), UnstableCalls(indices=(1,)))  # an unstable call is neither replayed nor timed
    distinct = [(call.index, call.target, count) for call, count in timed_calls(str(calls), str(excluded))]
    assert distinct == [(0, "f", 3), (3, "g", 1)]


async def _nothing() -> None:
    return None


async def _counting(n: int) -> int:
    total = 0
    for value in range(n):
        total += value
    return total


def test_async_calls_are_timed_in_one_fresh_loop_per_pass_without_the_loop_s_own_cost(monkeypatch):
    """Each pass awaits its async calls on one loop, made fresh for it; what turning the loop costs per call
    (~18 us: a task and a loop iteration) is in neither side's figure, the call's own work is."""
    made: list[object] = []
    real = asyncio.new_event_loop
    monkeypatch.setattr(asyncio, "new_event_loop", lambda: made.append(real()) or made[-1])
    async_call = (False, None, "coroutine")
    nothing = [(_nothing, pickle.dumps(((), {})), None, False, async_call)] * 20
    per_pass = worker.time_workload(5, nothing, True) / 5  # pyperf divides by the loops
    assert len(made) == 5 and all(loop.is_closed() for loop in made)  # a fresh loop per pass, closed after
    assert per_pass < 20 * 5e-6  # 20 do-nothing calls: far less than 20 turns of the loop
    counting = [(_counting, pickle.dumps(((20000,), {})), None, False, async_call)]
    assert worker.time_workload(3, counting, True) / 3 > 20 * per_pass  # the call's own work is timed


def test_replacing_the_async_timing_is_seen(monkeypatch):
    guarded = worker._guarded()
    monkeypatch.setattr(asynchronous, "idle", _counting)  # a slow "do-nothing" would hide a candidate's cost
    monkeypatch.setattr(asynchronous.TimingLoop, "_driver", lambda *args: None)
    assert worker.tampering(guarded) == ["asynchronous.idle", "asynchronous.TimingLoop._driver"]


def test_a_value_stops_at_its_wall_budget(monkeypatch):
    # 1,000 passes asked for, 10 ms each: the value ends after the budget's worth and reports their mean.
    monkeypatch.setattr(worker, "WALL_BUDGET", 0.05)
    passes = worker.TALLY.passes
    mean = worker.time_workload(1000, [(time.sleep, pickle.dumps(((0.01,), {})), None, False, None)], True)
    assert 2 <= worker.TALLY.passes - passes <= 20
    assert mean >= 1000 * 0.01  # pyperf divides by the loops it asked for: the mean pass, scaled back up


def test_each_target_keeps_its_own_first_pass_and_held_out_calls(monkeypatch):
    # A cache on one function of a file run: its own first pass holds the cold calls, its later passes hits.
    monkeypatch.setattr(worker.TALLY, "first_pass", -1.0)
    for name, value in (("PER_CALL", []), ("FIRST_CALL", []), ("WEIGHTS", []), ("PASSES", [0])):
        monkeypatch.setattr(worker, name, value)
    seen: set[float] = set()

    def cached(seconds: float) -> None:
        if seconds not in seen:
            seen.add(seconds)
            time.sleep(seconds)

    def plain(seconds: float) -> None:
        time.sleep(seconds)

    def entry(func, seconds, held):
        return (func, pickle.dumps(((seconds,), {})), None, held, None)

    workload = [
        entry(cached, 0.02, False),
        entry(cached, 0.03, True),
        entry(plain, 0.001, True),
        entry(plain, 0.002, False),
    ]
    names = ["cached", "cached", "plain", "plain"]
    worker.time_workload(4, workload, True)
    first, every = worker.per_target_first(names), worker.per_target(names)
    # (Sleeps overrun on a loaded machine, never underrun: every bound below is one a sleep cannot break.)
    assert first["cached"] >= 0.05 and every["cached"] < first["cached"] / 3  # cold once, hits on 3 passes more
    assert first["plain"] >= 0.003 and every["plain"] >= 0.003  # no state kept: both calls on every pass
    held = worker.per_target_held_out(names, workload)
    assert held["cached"] >= 0.03 / 4 and every["cached"] - held["cached"] < 0.02  # the 30 ms call is held out
    assert held["plain"] >= 0.001 and every["plain"] - held["plain"] >= 0.002  # the 1 ms one held out, 2 ms shown
    assert worker.harness_cost(workload, names).per_target_held_out_calls == {"cached": 1.0, "plain": 1.0}
