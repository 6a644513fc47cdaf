"""Tests for sandbox/coderefine_sandbox/behaviour/functions.py and the async generator arguments of lazy.py: function
arguments kept by reference or by their code with the calls the target made to them, async generators passed as
arguments materialised and supplied afresh; both judged on replay by what the target did with them."""

from __future__ import annotations

import asyncio
import pickle
import socket
import sys
import threading
import types

import pytest
from coderefine_sandbox import keeping
from coderefine_sandbox.behaviour import functions, lazy
from coderefine_sandbox.behaviour.replay import compare_call
from coderefine_sandbox.protocol import read_calls
from coderefine_sandbox.recording.capture import Recorder, unkept_argument
from coderefine_sandbox.workload import resolve

ORIGINAL = """
def partition(pred, items):
    yes, no = [], []
    for item in items:
        (yes if pred(item) else no).append(item)
    return yes, no


def apply_all(func, items):
    return [func(item) for item in items]


async def total(numbers, start=0):
    async for number in numbers:
        start += number
    return start


async def first_over(numbers, limit):
    async for number in numbers:
        if number > limit:
            return number
    return None

def kind(value):
    return type(value).__name__


def locked_kind(func):
    import threading

    return func(threading.Lock())


def kept(pred, items):
    for item in items:
        if pred(item):
            yield item
"""
# Each wrong in one way only: the predicate called twice per item, the items taken in another order,
# one item too many taken from the async generator.
WRONG = """
def partition(pred, items):
    yes = [item for item in items if pred(item)]
    no = [item for item in items if not pred(item)]
    return yes, no


def apply_all(func, items):
    return [func(item) for item in reversed(items)][::-1]


async def total(numbers, start=0):
    async for number in numbers:
        start += number
    return start


async def first_over(numbers, limit):
    found = None
    async for number in numbers:
        if found is None and number > limit:
            found = number
        elif found is not None:
            break
    return found

def kind(value):
    return type(value).__name__


def locked_kind(func):
    import threading

    return func(threading.Lock())


def kept(pred, items):
    for item in items:
        if pred(item):
            yield item
"""
FASTER = """
def partition(pred, items):
    yes, no = [], []
    add_yes, add_no = yes.append, no.append
    for item in items:
        if pred(item):
            add_yes(item)
        else:
            add_no(item)
    return yes, no


def apply_all(func, items):
    return list(map(func, items))


async def total(numbers, start=0):
    return start + sum([number async for number in numbers])


async def first_over(numbers, limit):
    async for number in numbers:
        if number > limit:
            return number
    return None

def kind(value):
    return type(value).__name__


def locked_kind(func):
    import threading

    return func(threading.Lock())


def kept(pred, items):
    for item in items:
        if pred(item):
            yield item
"""


def _module(name: str, source: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


def is_odd(n):  # a test module's own function: kept by its code (the replay process cannot import test modules)
    return n % 2 == 1


class Countdown:
    """An async iterable that is not an async generator: kept by pickling its state, as any object."""

    def __init__(self, n):
        self.n = n

    def __aiter__(self):
        return self

    async def __anext__(self):
        if self.n <= 0:
            raise StopAsyncIteration
        self.n -= 1
        return self.n + 1


async def _numbers(values):
    for value in values:
        yield value


@pytest.fixture
def recorded(tmp_path, monkeypatch):
    module = _module("functions_sample", ORIGINAL)
    monkeypatch.setitem(sys.modules, "functions_sample", module)
    targets = ["partition", "apply_all", "total", "first_over", "locked_kind", "kept"]
    recorder = Recorder("functions_sample", targets, 100, 10**7)
    recorder.install()
    seen = {}
    threshold = 2
    seen["lambda"] = module.partition(lambda n: n > threshold, [1, 2, 3, 4])
    seen["test function"] = module.partition(is_odd, [1, 2, 3])
    seen["builtin"] = module.apply_all(abs, [-1, 2])
    seen["pure"] = module.apply_all(lambda n: n * threshold, [1, 2])
    calls = []  # appended to by the lambda: a function with state, as the counting one below
    seen["logging"] = (module.apply_all(lambda n: calls.append(n) or n * 10, [1, 2]), list(calls))
    with socket.socket() as held:
        module.apply_all(lambda n: (held, n)[1], [1])  # closes over a socket: cannot be kept
    counter = [0]

    def counting(n):
        counter[0] += 1
        return n

    module.apply_all(counting, [5, 6])  # changes its closure's list: a function with state
    numbers = _numbers([1, 2, 3])
    seen["total"] = asyncio.run(module.total(numbers, start=10))

    async def first_then_next():
        rest = _numbers([1, 5, 7, 9])
        found = await module.first_over(rest, 4)
        return found, await rest.__anext__()  # the test's generator moved exactly as far as the target took

    seen["first_over"], seen["left"] = asyncio.run(first_then_next())
    seen["locked"] = module.locked_kind(module.kind)  # by reference: passed as it is, its calls not logged
    seen["countdown"] = asyncio.run(module.total(Countdown(3)))
    for limit in (1, 2):  # the loop rebinds the lambda's variable after each generator ended: not its own state
        seen[f"kept {limit}"] = list(module.kept(lambda n: n > limit, [1, 2, 3]))  # noqa: B023 (the point)
    recorder.dump(str(tmp_path / "calls"))
    header, records = read_calls(str(tmp_path / "calls"))
    return header.recording, records, seen


def test_recording_keeps_functions_and_async_generator_arguments_and_names_what_cannot_be_kept(recorded):
    summary, records, seen = recorded
    assert seen["lambda"] == ([3, 4], [1, 2]) and seen["test function"] == ([1, 3], [2])
    assert seen["logging"] == ([10, 20], [1, 2]) and seen["builtin"] == [1, 2] and seen["pure"] == [2, 4]
    assert seen["total"] == 16 and (seen["first_over"], seen["left"]) == (5, 7)
    assert [r["target"] for r in records] == [
        "partition",
        "partition",
        "apply_all",
        "apply_all",
        "total",
        "first_over",
        "locked_kind",
        "total",
        "kept",
        "kept",
    ]
    (pred, _), _ = pickle.loads(records[0]["args"])
    assert isinstance(pred, functions.FunctionArgument)
    assert [pickle.loads(blob) for blob in pred.calls] == [((n,), {}) for n in (1, 2, 3, 4)]
    assert pickle.loads(pred.function)(3) is True  # recreated from its code, with its closure's value
    (pred, _), _ = pickle.loads(records[1]["args"])
    assert pickle.loads(pred.function)(5) is True
    (builtin, _), _ = pickle.loads(records[2]["args"])
    assert builtin is abs  # builtins are pickled by reference as before; their calls are not logged
    (numbers,), kwargs = pickle.loads(records[4]["args"])
    assert (numbers.kind, [pickle.loads(b) for b in numbers.items], numbers.exhausted) == (
        "async generator",
        [1, 2, 3],
        True,
    )
    assert kwargs == {"start": 10}
    (taken, _), _ = pickle.loads(records[5]["args"])
    assert ([pickle.loads(b) for b in taken.items], taken.exhausted) == ([1, 5], False)
    (kept,), _ = pickle.loads(records[6]["args"])
    assert seen["locked"] == "lock" and kept.__qualname__ == "kind"  # by reference, passed and kept as before
    (counted,), _ = pickle.loads(records[7]["args"])
    (after,), _ = pickle.loads(records[7]["args_after"])  # its state after the call is compared as any object's
    assert seen["countdown"] == 6 and (type(counted).__name__, counted.n, after.n) == ("Countdown", 3, 0)
    assert summary.reasons["apply_all"] == {
        "argument 1 is a function whose closure holds a socket (cannot be kept)": 1,
        "argument 1 is a function with state: its closure, defaults, attributes or the globals it reads changed "
        "during the call": 2,
    }


def test_replay_accepts_a_faster_rewrite_and_refuses_other_calls_orders_and_one_item_too_many(recorded):
    _, records, _ = recorded
    original, faster, wrong = (_module(n, s) for n, s in [("o", ORIGINAL), ("f", FASTER), ("w", WRONG)])
    for module in (original, faster):
        assert [compare_call(resolve(module, r["target"]), r, 1e-9, 0.0) for r in records] == [None] * len(records)
    found = [compare_call(resolve(wrong, r["target"]), r, 1e-9, 0.0) for r in records]
    assert found[0]["kind"] == "consumption"
    assert (found[0]["expected"], found[0]["got"]) == ("argument 1: called 4 times", "argument 1: called 8 times")
    assert (found[1]["expected"], found[1]["got"]) == ("argument 1: called 3 times", "argument 1: called 6 times")
    assert found[2] is None and found[4] is None  # abs's calls are not logged; total takes the same items
    assert (found[3]["expected"], found[3]["got"]) == ("argument 1: call 1 with (1)", "argument 1: call 1 with (2)")
    assert (found[5]["kind"], found[5]["expected"], found[5]["got"]) == (
        "consumption",
        "argument 1: took 2 items",
        "argument 1: took 2 items and asked for more",
    )


def test_timing_supplies_the_function_without_its_log_and_a_fresh_async_generator_each_time():
    blob = keeping.dumps(lambda n: n + 1, 4, functions=True)
    recorded = functions.FunctionArgument("<lambda>", blob, [])
    items = [pickle.dumps(n) for n in (1, 2)]
    args = (recorded, lazy.IteratorArgument(lazy.ASYNC_GENERATOR, items, True))
    assert lazy.has_iterator_arguments(args, {})
    for _ in range(2):
        (func, numbers), _, feeds = lazy.supply(args, {}, log=False)
        assert isinstance(func, types.FunctionType) and func(1) == 2 and feeds[0].calls == []

        async def drain(numbers=numbers):
            return [n async for n in numbers]

        assert asyncio.run(drain()) == [1, 2]
        assert lazy.consumption_difference(feeds) is None


def test_a_returned_lambda_is_still_not_kept():
    with pytest.raises((pickle.PicklingError, AttributeError)):
        keeping.dumps(lambda: 1, 4)  # results: another lambda with the same name would compare equal


def test_a_candidate_passing_what_cannot_be_kept_to_the_function_is_a_difference_not_an_error():
    recorded = functions.FunctionArgument(
        "<lambda>", keeping.dumps(lambda v: 1, 4, functions=True), [pickle.dumps(((1,), {}))]
    )
    supplied = functions.supply(recorded, log=True)
    assert supplied.live(threading.Lock()) == 1  # the candidate's call goes through
    assert functions.calls_difference(supplied, "argument 1") == (
        "argument 1: call 1 with (1)",
        "argument 1: call 1 with (<a lock (cannot be kept)>)",
    )


def test_scan_estimate_names_a_function_argument_that_cannot_be_kept():
    with socket.socket() as held:
        assert unkept_argument((lambda: held, 1), {}) == (
            "argument 1 is a function whose closure holds a socket (cannot be kept)"
        )
    assert unkept_argument((lambda: 1,), {"items": [1]}) is None
