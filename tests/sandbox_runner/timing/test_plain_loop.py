"""The plain-loop passes: the workload's calls made again in plain loops beside the calls timed one by one, and
the per-call figures scaled to them (timing/worker.py PLAIN, timing/steps.py as_plain_loop)."""

from __future__ import annotations

import pickle
import random
import time

import pytest
from coderefine_sandbox.protocol.timing import HarnessCost
from coderefine_sandbox.timing import steps, worker


def _entry(func, *args, entropy=None, shape=None, **kwargs):
    return (func, pickle.dumps((args, kwargs)), entropy, False, shape)


def _squares(values):
    return sum(v * v for v in values)


def test_plain_calls_get_plain_loop_passes_from_the_second_pass_on(fresh_worker, monkeypatch):
    monkeypatch.setattr(worker, "PLAIN_SHARE", 1e9)  # a measurement after every pass it may follow
    workload = [_entry(_squares, list(range(n, n + 8))) for n in range(10)]
    worker.time_workload(5, workload, True)
    # Watched on the second pass, measured after the third, fourth and fifth: each beside its per-call pass.
    assert worker.PLAIN_REPEATS[0] >= 1
    assert len(worker.PLAIN) == len(worker.ALONE) == 3
    assert all(seconds > 0 for seconds in worker.ALONE)
    cost = worker.harness_cost(workload, ["_squares"] * len(workload))
    assert cost.plain_loop > 0 and cost.timed_alone > 0 and cost.distinct_calls == 10


def _draws(values):
    return sum(values) + random.random()


def _reads_the_clock(values):
    return sum(values) + time.time()


def test_the_plain_loop_takes_at_most_its_share_of_the_process(fresh_worker, monkeypatch):
    # Measurements of 2 ms after passes of a few microseconds: most passes are followed by none, so the per-call
    # passes (each function's figures, the first pass) keep their time.
    def slow_measurement(*args):
        time.sleep(0.002)
        return 1e-6

    monkeypatch.setattr(worker, "plain_loop_pass", slow_measurement)
    worker.time_workload(200, [_entry(_squares, [1, 2, 3])] * 5, True)
    assert 1 <= len(worker.PLAIN) <= 20, len(worker.PLAIN)  # one after every pass would be 198
    spent, per_call = worker.PLAIN_WALL[1], worker.PLAIN_WALL[0]
    assert spent - 0.0021 * 2 <= worker.PLAIN_SHARE * per_call  # at most one measurement over the share


@pytest.mark.parametrize("func", [_draws, _reads_the_clock])
def test_calls_that_draw_on_the_pinned_random_states_or_clock_get_no_plain_loop(fresh_worker, func):
    # The plain loop cannot reset them before each call: the calls would draw other numbers than when timed.
    note = {"random_state": random.getstate(), "clock": [1_700_000_000_000_000_000]}
    workload = [_entry(_squares, [1, 2], entropy=note), _entry(func, [3, 4], entropy=note)]
    worker.time_workload(5, workload, True)
    assert worker.PLAIN_REPEATS == [0]
    assert worker.PLAIN == [] and worker.harness_cost(workload, ["a", "b"]).plain_loop == 0.0


def test_a_bench_function_gets_no_plain_loop(fresh_worker):
    worker.time_workload(5, [_entry(_squares, [1, 2])], False)  # the user's own benchmark: no recorded calls
    assert worker.PLAIN_REPEATS == [] and worker.PLAIN == []


def test_lazy_async_long_or_huge_workloads_get_no_plain_loop():
    plain = [_entry(_squares, [1, 2])]
    assert worker._plain_repeats(plain, True, 1e-6) >= 1
    assert worker._plain_repeats(plain, False, 1e-6) == 0  # drew on the pinned inputs, or started a thread
    assert worker._plain_repeats([_entry(_squares, [1], shape=(False, None, "coroutine"))], True, 1e-6) == 0
    assert worker._plain_repeats(plain, True, worker.PLAIN_CALL_LIMIT * 2) == 0  # calls too long to gain anything
    huge = [_entry(_squares, list(range(1_000_000)))]  # ~5 MB of arguments: not two more copies in 16 MiB
    assert worker._plain_repeats(huge, True, 1e-6) <= 2
    # As many passes as make PLAIN_SECONDS, at least one, at most PLAIN_REPEATS_MOST.
    many = plain * 1000
    assert worker._plain_repeats(many, True, worker.PLAIN_SECONDS / 3) == 3
    assert worker._plain_repeats(many, True, worker.PLAIN_SECONDS * 2) == 1
    assert worker._plain_repeats(many, True, 1e-9) == worker.PLAIN_REPEATS_MOST


def test_each_plain_pass_gets_arguments_of_its_own_and_a_raising_call_does_not_end_it(fresh_worker):
    seen = []

    def grows(values):
        seen.append(len(values))
        values.append(0)  # a call that mutates its argument must not hand the change to the next pass

    def fails(values):
        raise ValueError("part of the workload")

    worker.plain_loop_pass([_entry(fails, []), _entry(grows, [])], worker.Pin().reset, 3)
    assert seen == [0] * 4  # the untimed pass and the 3 timed ones, each on a fresh list


def test_calls_of_every_form_get_their_arguments_in_the_plain_loop():
    seen = []

    def record(*args, **kwargs):
        seen.append((args, kwargs))

    workload = [_entry(record), _entry(record, 1), _entry(record, 1, 2), _entry(record, 1, 2, 3)]
    workload += [_entry(record, 1, 2, 3, 4), _entry(record, 1, key=2)]
    worker.plain_loop_pass(workload, worker.Pin().reset, 1)
    expected = [((), {}), ((1,), {}), ((1, 2), {}), ((1, 2, 3), {}), ((1, 2, 3, 4), {}), ((1,), {"key": 2})]
    assert seen == expected * 2
    # All of one form: the loop calls them as a user's loop does, and still passes each its own.
    seen.clear()
    worker.plain_loop_pass([_entry(record, 1, 2), _entry(record, 3, 4)], worker.Pin().reset, 2)
    assert seen == [((1, 2), {}), ((3, 4), {})] * 3


def test_replacing_the_plain_loop_is_seen(monkeypatch):
    guarded = worker._guarded()
    monkeypatch.setattr(worker, "plain_loop_pass", lambda *args: 0.0)
    monkeypatch.setattr(worker, "PLAIN", [1.0])
    assert worker.tampering(guarded) == ["timing_worker.PLAIN", "timing_worker.plain_loop_pass"]


def test_a_plain_loop_measurement_another_process_ran_inside_is_left_out_of_both_means(monkeypatch):
    monkeypatch.setattr(worker, "PLAIN", [1.0, 5.0, 1.2])
    monkeypatch.setattr(worker, "ALONE", [2.0, 2.1, 2.2])
    monkeypatch.setattr(worker, "PLAIN_PREEMPTED", [False, True, False])
    assert worker.plain_figures() == pytest.approx({"plain_loop": 1.1, "timed_alone": 2.1})
    # Every one preempted: the medians, rather than no figure for this process (and none for the series).
    monkeypatch.setattr(worker, "PLAIN_PREEMPTED", [True] * 3)
    assert worker.plain_figures() == pytest.approx({"plain_loop": 1.2, "timed_alone": 2.1})
    monkeypatch.setattr(worker, "PLAIN", [])
    assert worker.plain_figures() == {"plain_loop": 0.0, "timed_alone": 0.0}


def test_the_worker_flags_a_plain_loop_measurement_it_was_switched_out_of(fresh_worker, monkeypatch):
    # The scheduler switches the thread out involuntarily during each plain-loop measurement, never during a call.
    switches = [0]

    class Usage:
        def __init__(self):
            self.ru_nivcsw, self.ru_nvcsw = switches[0], 0

    monkeypatch.setattr(worker, "getrusage", lambda who: Usage())
    real = worker.plain_loop_pass

    def switched_out(*args):
        switches[0] += 1
        return real(*args)

    monkeypatch.setattr(worker, "plain_loop_pass", switched_out)
    monkeypatch.setattr(worker, "PLAIN_SHARE", 1e9)
    worker.time_workload(4, [_entry(_squares, [1, 2, 3])], True)
    assert worker.PLAIN_PREEMPTED == [True, True]  # passes 3 and 4


def _run(alone: float, plain: float, harness: float = 1e-7, calls: int = 10) -> steps.WorkerRun:
    """A process whose per-call passes took `alone` seconds (so much of it the harness's) and whose plain loop
    took `plain`."""
    return steps.WorkerRun(
        steady=alone,
        first=alone * 2,
        loops=1,
        held_out=alone / 4,
        shown=alone * 3 / 4,
        per_target={"f": alone * 0.6, "g": alone * 0.4},
        per_target_first={"f": alone * 1.2, "g": alone * 0.8},
        harness_per_call=harness,
        calls=calls,
        held_out_calls=calls / 4,
        target_calls={"f": calls * 0.6, "g": calls * 0.4},
        plain_loop=plain,
        timed_alone=alone,
        distinct_calls=calls,
    )


def test_every_per_pass_figure_is_scaled_to_the_process_s_own_plain_loop():
    # 10 calls: per call 1.4 us timed alone (0.1 us harness) against 1.0 us in a loop, and 1.05 us against
    # 0.8 us: a ratio of 1.3/0.95 = 1.37x timed alone, 1.25x in the loops.
    series = {"original": [_run(14e-6, 10e-6)], "candidate": [_run(10.5e-6, 8e-6)]}
    net = steps._net(series)
    original, candidate = net["original"][0], net["candidate"][0]
    assert original.steady == pytest.approx(10e-6) and candidate.steady == pytest.approx(8e-6)
    factor = 10e-6 / 13e-6
    assert original.first == pytest.approx((28e-6 - 1e-6) * factor)  # the first pass keeps its relation
    assert original.per_target["f"] == pytest.approx((8.4e-6 - 0.6e-6) * factor)
    assert original.per_target_first["g"] == pytest.approx((11.2e-6 - 0.4e-6) * factor)
    assert original.held_out == pytest.approx((3.5e-6 - 0.25e-6) * factor)
    assert original.import_seconds == series["original"][0].import_seconds  # not a per-pass figure
    assert original.steady / candidate.steady == pytest.approx(1.25)


def test_unless_every_process_has_a_believable_plain_loop_the_series_keeps_its_per_call_figures():
    both = {"original": [_run(14e-6, 10e-6)] * 2, "candidate": [_run(10.5e-6, 8e-6)] * 2}
    per_call = steps.without_harness(both, 1e-7)
    scaled = steps._net(both)
    assert scaled != per_call
    # One candidate process without one (it drew random numbers, say): neither side is scaled, in any pair.
    one_missing = {"original": both["original"], "candidate": [both["candidate"][0], _run(10.5e-6, 0.0)]}
    assert steps._net(one_missing) == steps.without_harness(one_missing, 1e-7)
    # A plain loop reading far faster than the calls timed alone allow, or slower: distrusted.
    for plain in (1e-6, 20e-6):
        odd = {"original": both["original"], "candidate": [both["candidate"][0], _run(10.5e-6, plain)]}
        assert steps._net(odd) == steps.without_harness(odd, 1e-7)


def test_the_plain_loop_crosses_the_sandbox_boundary_in_the_harness_cost(tmp_path):
    from coderefine_sandbox.protocol import read_json, write_json

    cost = HarnessCost(1e-7, 10.0, 0.0, {"f": 10.0}, plain_loop=1e-5, timed_alone=1.4e-5, distinct_calls=10)
    write_json(str(tmp_path / "cost.json"), cost)
    assert read_json(HarnessCost, str(tmp_path / "cost.json")) == cost
