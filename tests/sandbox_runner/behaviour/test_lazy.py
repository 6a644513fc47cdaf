"""Tests for sandbox/coderefine_sandbox/behaviour/lazy.py and its use by recording and replay: generators and
other lazy results judged by what they yield, iterator arguments supplied afresh and judged by what is taken."""

from __future__ import annotations

import pickle
import sys
import threading
import types

import pytest
from coderefine_sandbox.behaviour import lazy
from coderefine_sandbox.behaviour.replay import compare_call, yielded_difference
from coderefine_sandbox.modes import not_deterministic
from coderefine_sandbox.protocol import read_calls
from coderefine_sandbox.recording.capture import Recorder
from coderefine_sandbox.workload import resolve

ORIGINAL = """
def running(values):
    total = 0
    for value in values:
        total += value
        yield (value, total)
    return total


def doubled(values):
    return map(lambda v: (v, v * 2), values)


def take_two(iterator):
    return [next(iterator), next(iterator)]


def locked(lock, n):
    with lock:
        return n


class Box:
    def __init__(self, n):
        self.n = n

    def count(self):
        yield from range(self.n)
"""
# One wrong rewrite of each kind: drops the last item, yields lists for tuples, takes one item too many,
# returns a list where the original returned a generator.
WRONG = """
def running(values):
    total = 0
    values = list(values)
    for value in values[:-1]:
        total += value
        yield (value, total)
    return total


def doubled(values):
    return map(lambda v: [v, v * 2], values)


def take_two(iterator):
    first, second = next(iterator), next(iterator)
    next(iterator, None)
    return [first, second]


def locked(lock, n):
    return n


class Box:
    def __init__(self, n):
        self.n = n

    def count(self):
        return list(range(self.n))
"""
FASTER = """
def running(values):
    total = 0
    for value in values:
        total += value
        yield value, total
    return total


def doubled(values):
    return map(lambda v: (v, v + v), values)


def take_two(iterator):
    return [next(iterator), next(iterator)]


def locked(lock, n):
    return n


class Box:
    def __init__(self, n):
        self.n = n

    def count(self):
        return iter(range(self.n))
"""


def _module(name: str, source: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


@pytest.fixture
def recorded(tmp_path, monkeypatch):
    """The tests' calls to ORIGINAL's functions, recorded as the pytest plugin records them, and what the
    test saw of each lazy value while they were recorded."""
    module = _module("lazy_sample", ORIGINAL)
    monkeypatch.setitem(sys.modules, "lazy_sample", module)
    recorder = Recorder("lazy_sample", ["running", "doubled", "take_two", "locked", "Box.count"], 100, 10**7)
    recorder.install()
    seen = {}
    generator = module.running([1, 2, 3])
    seen["running"] = (type(generator).__name__, list(generator))
    partly = module.running([5, 6, 7])
    seen["prefix"] = next(partly)  # the rest is never consumed: the prefix is what is judged
    seen["untouched"] = type(module.doubled([1])).__name__  # never consumed: unusable
    mapped = module.doubled([1, 2])
    seen["doubled"] = (type(mapped).__name__, list(mapped))
    numbers = iter([1, 2, 3, 4])
    seen["list_iterator"] = (module.take_two(numbers), next(numbers))
    letters = (c for c in "abcd")
    seen["generator"] = (module.take_two(letters), next(letters))
    seen["count"] = list(module.Box(3).count())
    module.locked(threading.Lock(), 1)
    recorder.dump(str(tmp_path / "calls"))
    header, records = read_calls(str(tmp_path / "calls"))
    return module, header.recording, records, seen


def test_recording_leaves_what_the_test_sees_unchanged_and_keeps_each_lazy_call(recorded):
    _, summary, records, seen = recorded
    assert seen["running"] == ("generator", [(1, 1), (2, 3), (3, 6)])
    assert seen["prefix"] == (5, 5)
    assert seen["untouched"] == "map" and seen["doubled"] == ("map", [(1, 2), (2, 4)])
    assert seen["list_iterator"] == ([1, 2], 3) and seen["generator"] == (["a", "b"], "c")
    assert seen["count"] == [0, 1, 2]
    # In the order the calls were made, the lazy ones among them kept when the session ended.
    assert [r["target"] for r in records] == ["running", "running", "doubled", "take_two", "take_two", "Box.count"]
    complete, prefix = (pickle.loads(r["value"]) for r in records[:2])
    assert [pickle.loads(b) for b in complete.items] == [(1, 1), (2, 3), (3, 6)]
    assert complete.end == ("return", pickle.dumps(6, protocol=4), None)
    assert [pickle.loads(b) for b in prefix.items] == [(5, 5)] and prefix.end is None
    (argument,), _ = pickle.loads(records[3]["args"])
    assert (argument.kind, [pickle.loads(b) for b in argument.items], argument.exhausted) == (
        "list_iterator",
        [1, 2],
        False,
    )
    (argument,), _ = pickle.loads(records[4]["args"])
    assert (argument.kind, [pickle.loads(b) for b in argument.items]) == ("generator", ["a", "b"])
    assert summary.reasons == {
        "doubled": {"result is a map the tests never consumed": 1},
        "locked": {"argument 1 is a lock (cannot be kept)": 1},
    }
    assert summary.unreplayable["locked"] == 1


def test_replay_accepts_the_same_sequences_and_names_each_kind_of_wrong_one(recorded):
    _, _, records, _ = recorded
    original, faster, wrong = (_module(name, source) for name, source in [("o", ORIGINAL), ("f", FASTER), ("w", WRONG)])
    for module in (original, faster):
        assert [compare_call(resolve(module, r["target"]), r, 1e-9, 0.0) for r in records] == [None] * len(records)
    found = [compare_call(resolve(wrong, r["target"]), r, 1e-9, 0.0) for r in records]
    assert (found[0]["kind"], found[0]["expected"], found[0]["got"]) == (
        "yield",
        "3 items, then the end",
        "2 items, then the end",
    )
    assert found[1] is None  # the test took one item: the dropped last one is not part of that call
    assert (found[2]["expected"], found[2]["got"]) == ("item 0: (1, 2)", "item 0: [1, 2]")  # a list for a tuple
    for taking in found[3:5]:
        assert taking["kind"] == "consumption" and taking["expected"] == "argument 1: took 2 items"
        assert taking["got"] == "argument 1: took 2 items and asked for more"
    assert found[5]["expected"] == "a generator (an iterator)" and found[5]["got"] == "returned [0, 1, 2]"


def test_iterator_arguments_are_supplied_afresh_as_the_same_kind():
    items = [pickle.dumps(n) for n in (1, 2)]
    args = (lazy.IteratorArgument("list_iterator", items, False), 5)
    kwargs = {"rest": lazy.IteratorArgument("generator", items, True)}
    for _ in range(2):  # every pass gets iterators of its own
        live_args, live_kwargs, feeds = lazy.supply(args, kwargs)
        assert type(live_args[0]) is type(iter([])) and live_args[1] == 5
        assert isinstance(live_kwargs["rest"], types.GeneratorType)
        assert (next(live_args[0]), next(live_args[0])) == (1, 2)
        assert lazy.consumption_difference(feeds) == (
            "argument 'rest': took 2 items and asked for more",
            "argument 'rest': took 0 items",
        )
        assert list(live_kwargs["rest"]) == [1, 2]
        assert lazy.consumption_difference(feeds) is None
        assert next(live_args[0], None) is None  # one item too many
        assert lazy.consumption_difference(feeds) == (
            "argument 1: took 2 items",
            "argument 1: took 2 items and asked for more",
        )


def test_an_iterator_argument_that_raises_raises_again_where_it_did():
    def failing():
        yield 1
        raise KeyError("source gone")

    tap = lazy.ArgumentTap(failing(), "argument 1")
    with pytest.raises(KeyError):
        list(tap.live)
    recorded = tap.recorded()
    assert recorded.exhausted and [pickle.loads(b) for b in recorded.items] == [1]
    _, live, feeds = lazy.supply((), {"source": recorded})
    assert next(live["source"]) == 1
    with pytest.raises(KeyError, match="source gone"):
        next(live["source"])
    assert lazy.consumption_difference(feeds) is None


def test_a_result_over_the_cap_or_one_the_test_sends_into_is_unusable_with_its_reason(monkeypatch):
    monkeypatch.setattr(lazy, "MAX_ITEMS", 5)
    relay = lazy.Relay(iter(range(10)), lambda step: step())
    assert list(relay.wrapper()) == list(range(10))  # the test still gets every item
    with pytest.raises(lazy.Unusable, match="result is an iterator of over 5 items"):
        relay.recorded()

    def echo():
        received = yield 1
        yield received

    relay = lazy.Relay(echo(), lambda step: step())
    wrapper = relay.wrapper()
    assert next(wrapper) == 1 and wrapper.send("sent") == "sent"  # send still reaches the generator
    with pytest.raises(lazy.Unusable, match="the tests sent values into the generator result"):
        relay.recorded()


def test_a_lazy_result_is_compared_item_by_item_and_then_by_its_end():
    recorded = lazy.LazyResult("generator", [pickle.dumps((1, 2))], ("exception", "builtins.ValueError", "late"))
    same = lazy.consume(_raising_after([(1, 2)], ValueError("late")), recorded)
    assert same.items == [(1, 2)] and same.end is not None and same.end[0] == "exception"
    assert yielded_difference(recorded, same, 1e-9, 0.0) is None
    other = lazy.consume(_raising_after([(1, 2)], KeyError("late")), recorded)
    assert yielded_difference(recorded, other, 1e-9, 0.0) == {
        "expected": "then raised ValueError: 'late'",
        "got": """then raised KeyError: "'late'\"""",
    }
    extra = lazy.consume(iter([(1, 2), (3, 4), (5, 6)]), recorded)
    assert len(extra.items) == 2 and extra.end is None  # one past the recorded count is enough to tell
    assert yielded_difference(recorded, extra, 1e-9, 0.0) == {
        "expected": "1 items, then raised ValueError: 'late'",
        "got": "2 items, then more",
    }


def _raising_after(items, error):
    yield from items
    raise error


def test_an_unstable_call_is_named_by_what_differed():
    assert not_deterministic("return") == "not deterministic: returned a different value on two runs of the original"
    assert not_deterministic("repeat yield").startswith("not deterministic: yielded differently on a later run")


def test_arguments_a_generator_changes_are_compared_as_they_were_when_it_ended(tmp_path, monkeypatch):
    source = "def fill(sink, values):\n    for value in values:\n        sink.append(value)\n        yield value\n"
    module = _module("lazy_fill", source)
    monkeypatch.setitem(sys.modules, "lazy_fill", module)
    recorder = Recorder("lazy_fill", ["fill"], 100, 10**7)
    recorder.install()
    sink: list[int] = []
    assert list(module.fill(sink, [1, 2])) == [1, 2] and sink == [1, 2]
    sink.clear()  # the test's own change, after the generator ended: not part of the call
    recorder.dump(str(tmp_path / "calls"))
    _, (record,) = read_calls(str(tmp_path / "calls"))
    assert pickle.loads(record["args_after"]) == (([1, 2], [1, 2]), {})
    assert compare_call(resolve(_module("again", source), "fill"), record, 1e-9, 0.0) is None
    wrong = _module("wrong", source.replace("sink.append(value)", "sink.append(value) if value < 2 else None"))
    assert compare_call(resolve(wrong, "fill"), record, 1e-9, 0.0)["kind"] == "mutation"


# A tuple of lazy results (more-itertools 11's `partition`: two `compress` iterators over one tee'd source).
PARTITION = """
import itertools
import operator


def partition(pred, iterable):
    t1, t2, p = itertools.tee(iterable, 3)
    p1, p2 = itertools.tee(map(pred, p))
    return (itertools.compress(t1, map(operator.not_, p1)), itertools.compress(t2, p2))
"""
PARTITIONS = {
    # eager, the predicate called once per item in order as the tee'd one: the same behaviour
    "faster": "def partition(pred, iterable):\n"
    "    no, yes = [], []\n"
    "    for item in iterable:\n"
    "        (yes if pred(item) else no).append(item)\n"
    "    return iter(no), iter(yes)\n",
    "one more": "def partition(pred, iterable):\n"
    "    items = list(iterable)\n"
    "    flags = [pred(item) for item in items]\n"
    "    return iter([i for i, f in zip(items, flags) if not f] + [0]), iter([i for i, f in zip(items, flags) if f])\n",
    "one less": "def partition(pred, iterable):\n"
    "    items = list(iterable)\n"
    "    flags = [pred(item) for item in items]\n"
    "    return iter([i for i, f in zip(items, flags) if not f]), iter([i for i, f in zip(items, flags) if f][:-1])\n",
    "swapped": "def partition(pred, iterable):\n"
    "    items = list(iterable)\n"
    "    flags = [pred(item) for item in items]\n"
    "    return iter([i for i, f in zip(items, flags) if f]), iter([i for i, f in zip(items, flags) if not f])\n",
    "a list": "def partition(pred, iterable):\n"
    "    items = list(iterable)\n"
    "    flags = [pred(item) for item in items]\n"
    "    return [iter([i for i, f in zip(items, flags) if not f]), iter([i for i, f in zip(items, flags) if f])]\n",
}


def test_a_tuple_of_lazy_results_is_judged_element_by_element_in_the_order_the_test_took_from_them(
    tmp_path, monkeypatch
):
    module = _module("partition_sample", PARTITION)
    monkeypatch.setitem(sys.modules, "partition_sample", module)
    recorder = Recorder("partition_sample", ["partition"], 100, 10**7)
    recorder.install()
    evens, odds = module.partition(lambda n: n % 2, [1, 2, 3, 4, 5])
    seen = [next(odds), list(evens), list(odds)]  # interleaved, as a test may
    # The second element never taken from: nothing of it is compared. (With a lambda or an iterator argument, an
    # eager rewrite would differ in what it called or took beyond the first item: `bool` and a list do not show.)
    head, _ = module.partition(bool, [0, 1, 2])
    seen.append(next(head))
    module.partition(lambda n: n, [1])  # never consumed: unusable, with the reason
    recorder.dump(str(tmp_path / "calls"))
    header, records = read_calls(str(tmp_path / "calls"))

    assert seen == [1, [2, 4], [3, 5], 0]  # the test saw what it sees without recording
    assert header.recording.reasons == {"partition": {"result is a tuple of iterators the tests never consumed": 1}}
    both, first = (pickle.loads(record["value"]) for record in records)
    assert (both.kind, len(both.elements), both.order) == ("tuple", 2, [1, 0, 0, 0, 1, 1, 1])
    assert [[pickle.loads(b) for b in element.items] for element in both.elements] == [[2, 4], [1, 3, 5]]
    assert all(element.end is not None for element in both.elements)
    assert (first.order, first.elements[1].items, first.elements[1].end) == ([0], [], None)

    def verdicts(source: str) -> list[dict[str, str] | None]:
        candidate = _module("partition_candidate", source)
        return [compare_call(candidate.partition, record, 1e-9, 0.0) for record in records]

    assert verdicts(PARTITION) == [None, None]
    assert verdicts(PARTITIONS["faster"]) == [None, None]
    one_more = verdicts(PARTITIONS["one more"])[0]
    assert (one_more["kind"], one_more["expected"], one_more["got"]) == (
        "yield",
        "[0] 2 items, then the end",
        "[0] 3 items, then more",
    )
    one_less = verdicts(PARTITIONS["one less"])
    assert (one_less[0]["expected"], one_less[0]["got"]) == ("[1] 3 items, then the end", "[1] 2 items, then the end")
    assert one_less[1] is None  # the test took one item of the first element only
    swapped = verdicts(PARTITIONS["swapped"])
    assert swapped[0]["kind"] == "yield" and swapped[0]["expected"] == "[0] item 0: 2"
    assert swapped[1]["expected"] == "[0] item 0: 0"  # the first element's one item taken, not the second's
    as_list = verdicts(PARTITIONS["a list"])[0]
    assert as_list["expected"] == "a tuple of 2 iterators" and as_list["got"].startswith("returned [")

    # timing takes the same steps, in the same order, keeping nothing
    taken: list[int] = []
    counted = (map(lambda n, i=i: taken.append(i) or n, items) for i, items in enumerate(([2, 4], [1])))
    lazy.drain(tuple(counted), both)
    assert taken == [1, 0, 0]  # element 1 ended after one item here: no more steps go to it


# more-itertools 11.2.1's own `partition`: a tuple of two generators of a nested function sharing queues.
QUEUES = """
from collections import deque


def partition(pred, iterable):
    if pred is None:
        pred = bool
    iterator = iter(iterable)
    false_queue = deque()
    true_queue = deque()

    def gen(queue):
        append_false = false_queue.append
        append_true = true_queue.append
        while True:
            while queue:
                yield queue.popleft()
            for value in iterator:
                (append_true if pred(value) else append_false)(value)
                break
            else:
                return

    return gen(false_queue), gen(true_queue)
"""


def test_the_lines_of_a_tuple_of_the_targets_own_generators_count_as_run_and_it_replays_alike(tmp_path, monkeypatch):
    module = _module("queues_sample", QUEUES)
    monkeypatch.setitem(sys.modules, "queues_sample", module)
    recorder = Recorder("queues_sample", ["partition"], 100, 10**7)
    recorder.install()
    falses, trues = module.partition(None, range(4))
    assert (next(trues), list(falses), list(trues)) == (1, [0], [2, 3])
    recorder.dump(str(tmp_path / "calls"))
    header, records = read_calls(str(tmp_path / "calls"))
    lines = header.recording.coverage["partition"]
    # all of them, those of the nested generator included (pred was None: `pred = bool` ran too)
    assert set(lines.covered) == set(lines.lines)
    assert compare_call(module.partition, records[0], 1e-9, 0.0) is None
    swapped = QUEUES.replace("return gen(false_queue), gen(true_queue)", "return gen(true_queue), gen(false_queue)")
    assert compare_call(_module("queues_swapped", swapped).partition, records[0], 1e-9, 0.0)["kind"] == "yield"
