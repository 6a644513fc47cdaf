"""Tests for sandbox/coderefine_sandbox/behaviour/asynchronous.py and its use by recording and replay: coroutines
judged by what awaiting them gives, async generators by what `async for` takes, each on a fresh event loop, and
the calls that wait on the loop or leave tasks behind named as such."""

from __future__ import annotations

import asyncio
import inspect
import pickle
import sys
import time
import types

import pytest
from coderefine_sandbox.behaviour import asynchronous
from coderefine_sandbox.behaviour.replay import compare_call
from coderefine_sandbox.modes import not_deterministic
from coderefine_sandbox.protocol import read_calls
from coderefine_sandbox.recording.capture import Recorder
from coderefine_sandbox.workload import resolve

ORIGINAL = """
import asyncio
import time


async def _square(v):
    return v * v


async def squares(values):
    found = []
    for v in values:
        found.append(await _square(v))
    values.append(len(found))
    return found


async def checked(n):
    if n < 0:
        raise ValueError(f"negative: {n}")
    return n


async def gathered(values):
    return list(await asyncio.gather(*(_square(v) for v in values)))


async def countdown(n):
    while n > 0:
        yield n
        n -= 1


async def sleepy(n):
    await asyncio.sleep(0.01)
    return n


async def spawning(n):
    asyncio.get_running_loop().create_task(asyncio.sleep(10))
    return n


async def stamped(n):
    await asyncio.sleep(0)  # a step of its own: the clock is read after the call returned its coroutine
    return time.time(), n


async def stalled(n):
    await asyncio.sleep(10)
    return n


async def offloaded(n):
    await asyncio.get_running_loop().run_in_executor(None, time.sleep, 0.01)
    return abs(n)
"""
# Wrong in the ways that matter: the items in another order, the last item dropped, a plain value where a
# coroutine was awaited; `checked`, `gathered` and `stamped` are right.
WRONG = """
import asyncio
import time


async def squares(values):
    found = sorted((v * v for v in values), reverse=True)
    values.append(len(found))
    return found


async def checked(n):
    if n < 0:
        raise ValueError(f"negative: {n}")
    return n


async def gathered(values):
    return [v * v for v in values]


async def countdown(n):
    while n > 1:
        yield n
        n -= 1


def sleepy(n):
    return n


async def spawning(n):
    return n


async def stamped(n):
    await asyncio.sleep(0)  # a step of its own: the clock is read after the call returned its coroutine
    return time.time(), n
"""


def _module(name: str, source: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


async def _take(agen, count):
    return [item async for item in agen][:count]


async def _first(agen):
    return await agen.__anext__()


@pytest.fixture
def recorded(tmp_path, monkeypatch):
    """The tests' calls to ORIGINAL's functions through asyncio.run, recorded as the pytest plugin records them,
    and what the test saw of each."""
    module = _module("async_sample", ORIGINAL)
    monkeypatch.setitem(sys.modules, "async_sample", module)
    targets = ["squares", "checked", "gathered", "countdown", "sleepy", "spawning", "stamped", "stalled", "offloaded"]
    recorder = Recorder("async_sample", targets, 100, 10**7)
    recorder.install()
    seen = {}
    seen["marked"] = (inspect.iscoroutinefunction(module.squares), asyncio.iscoroutinefunction(module.squares))
    values = [3, 1, 2]
    seen["squares"] = (asyncio.run(module.squares(values)), values)
    with pytest.raises(ValueError, match="negative: -1"):
        asyncio.run(module.checked(-1))
    seen["gathered"] = asyncio.run(module.gathered([1, 2]))
    seen["countdown"] = asyncio.run(_take(module.countdown(3), 5))
    seen["prefix"] = asyncio.run(_first(module.countdown(4)))
    seen["sleepy"] = asyncio.run(module.sleepy(7))
    seen["spawning"] = asyncio.run(module.spawning(8))
    seen["stamped"] = asyncio.run(module.stamped(9))
    seen["offloaded"] = asyncio.run(module.offloaded(-4))
    with pytest.raises(asyncio.TimeoutError):  # cancelled by the test's own time limit: unusable
        asyncio.run(asyncio.wait_for(module.stalled(1), 0.01))
    module.checked(5)  # never awaited: unusable
    module.countdown(2)  # never iterated: unusable
    # The target's own coroutine behind it, closed after so that it does not warn in a later test.
    unawaited = [call.relay.result for _, call in recorder.pending if not getattr(call.relay, "started", True)]
    recorder.dump(str(tmp_path / "calls"))
    for coroutine in unawaited:
        coroutine.close()
    header, records = read_calls(str(tmp_path / "calls"))
    return header.recording, records, seen


def test_recording_leaves_what_the_test_sees_unchanged_and_keeps_each_awaited_call(recorded):
    summary, records, seen = recorded
    assert seen["squares"] == ([9, 1, 4], [3, 1, 2, 3]) and seen["gathered"] == [1, 4]
    assert seen["countdown"] == [3, 2, 1] and seen["prefix"] == 4
    assert (seen["sleepy"], seen["spawning"]) == (7, 8)
    assert seen["marked"][1] is True  # asyncio still sees a coroutine function behind the trampoline
    targets = [r["target"] for r in records]
    expected = ["squares", "checked", "gathered", "countdown", "countdown", "sleepy", "spawning", "stamped"]
    assert targets == [*expected, "offloaded"] and seen["offloaded"] == 4
    assert len(records[7]["entropy"]["clock"]) == 1  # read in a later step of the call: noted with it
    squares, checked = records[0], records[1]
    assert squares["asynchronous"] == "coroutine" and pickle.loads(squares["value"]) == [9, 1, 4]
    assert pickle.loads(squares["args_after"]) == (([3, 1, 2, 3],), {})  # mutation while awaited is kept
    assert (checked["outcome"], checked["exc_type"], checked["exc_message"]) == (
        "exception",
        "builtins.ValueError",
        "negative: -1",
    )
    complete, prefix = (pickle.loads(r["value"]) for r in records[3:5])
    assert records[3]["asynchronous"] == "async_generator" and records[3]["lazy"]
    assert [pickle.loads(b) for b in complete.items] == [3, 2, 1] and complete.end[0] == "return"
    assert [pickle.loads(b) for b in prefix.items] == [4] and prefix.end is None
    assert summary.reasons == {
        "checked": {"result is a coroutine the tests never awaited": 1},
        "countdown": {"result is an async generator the tests never consumed": 1},
        "stalled": {"result is a coroutine that was cancelled or never finished": 1},
    }
    assert summary.counts["checked"] == 2 and summary.unreplayable["countdown"] == 1


def test_replay_runs_each_call_on_a_fresh_loop_and_names_what_cannot_be_judged(recorded):
    _, records, _ = recorded
    original = _module("o", ORIGINAL)
    found = [compare_call(resolve(original, r["target"]), r, 1e-9, 0.0) for r in records]
    assert found[:5] == [None] * 5
    assert found[5]["kind"] == asynchronous.WAITED  # asyncio.sleep(0.01): the loop had to wait
    assert found[6]["kind"] == asynchronous.TASK_LEFT and found[6]["got"] == "left 1 task running on the event loop"
    assert found[7] is None  # the clock it read while awaited is replayed to it
    assert found[8]["kind"] == asynchronous.WAITED  # waited for an executor's thread
    assert not_deterministic(asynchronous.WAITED).startswith("the coroutine waits on the event loop")
    later = not_deterministic("repeat " + asynchronous.TASK_LEFT)
    assert later == "the coroutine leaves a task running on the event loop"


def test_replay_refuses_each_kind_of_wrong_async_rewrite(recorded):
    _, records, _ = recorded
    wrong = _module("w", WRONG)
    found = [compare_call(resolve(wrong, r["target"]), r, 1e-9, 0.0) for r in records[:-1]]
    assert (found[0]["kind"], found[0]["expected"], found[0]["got"]) == ("return", "[9, 1, 4]", "[9, 4, 1]")
    assert found[1] is None and found[2] is None
    assert (found[3]["kind"], found[3]["expected"], found[3]["got"]) == (
        "yield",
        "3 items, then the end",
        "2 items, then the end",
    )
    assert found[4] is None  # the test took one item: the dropped last one is not part of that call
    assert (found[5]["expected"], found[5]["got"]) == ("a coroutine", "returned 7")
    assert found[6] is None  # leaves no task: right


def test_a_timing_pass_subtracts_the_idle_coroutine_and_keeps_errors():
    async def work(n):
        return sum(range(n))

    async def failing():
        raise KeyError("x")

    loop = asynchronous.TimingLoop(time.perf_counter)
    try:
        small = min(loop.time(lambda: work(10), None)[0] for _ in range(50))
        large = min(loop.time(lambda: work(20000), None)[0] for _ in range(5))
        seconds, error = loop.time(failing, None)
        assert isinstance(error, KeyError) and seconds >= 0
        assert 0 <= small < large  # the call's own work, not the loop's: a larger call takes longer
        first = loop.loop
        loop.time(lambda: work(1), None)
        assert loop.loop is first  # one loop for the whole pass
    finally:
        loop.close()
    assert first.is_closed() and loop.loop is None


def test_no_inputs_are_generated_for_async_targets():
    pytest.importorskip("hypothesis")
    from coderefine_sandbox.behaviour.generate import _strategy

    module = _module("hinted", "async def f(x: int) -> int:\n    return x\n\n\nasync def g(x: int):\n    yield x\n")
    assert _strategy(module.f) == (None, "it is async (only the calls the tests await are judged)")
    assert _strategy(module.g)[0] is None
