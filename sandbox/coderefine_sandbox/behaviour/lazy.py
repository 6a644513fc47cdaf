"""Lazy calls: results that are iterators (generators, `map`, `filter`, `zip`...) and iterator arguments.

A generator's behaviour is the sequence it yields, then how it ends (its return value or exception), and
an iterator argument's is the items it gave and how many of them the target took. Neither survives
pickling, and consuming either to record it would take its items from the test. So:

* Recording (recording/capture.py) hands the test a relay (`Relay`) in place of a lazy result: the test
  consumes it lazily exactly as before, and each item is kept (pickled) as the test takes it. The call is
  complete if the test reached the end; otherwise the prefix the test took is what is judged.
* An iterator argument is handed to the target through a pulling relay too (a list or tuple iterator is
  passed as it is and read back through its own pickling state), so the test's iterator is advanced by
  exactly what the target took; the call's pickled arguments then hold an `IteratorArgument`: the items
  taken, whether the target asked past the last one, and the iterator's kind.
* Replay and timing supply every `IteratorArgument` afresh, as the same kind of iterator (`supply`), and
  consume a lazy result the way the test did (`consume`), inside the compared or timed region.

An async generator passed as an argument (`await all(agen())`) is kept the same way: the target gets an async
generator relay pulling from the test's one (`AsyncArgumentTap`), the recording holds the items it took, and replay
and timing supply a fresh async generator over them. Only async generators are materialised: an instance of a
class with `__aiter__` is pickled with its state as any object is (kept when its state can be), since what its
iteration yields is its class's code working on that state. Function arguments: behaviour/functions.py.

What a consumer `send`s into a generator or `throw`s at it is not replayed: such a call is unusable, with
that reason. Standard library only: this runs inside the sandbox.
"""

from __future__ import annotations

import functools
import inspect
import io
import pickle
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from coderefine_sandbox import keeping
from coderefine_sandbox.behaviour import functions
from coderefine_sandbox.behaviour.unusable import Unusable as Unusable  # re-exported: recording catches lazy.Unusable

MAX_ITEMS = 10_000  # items kept per lazy result or iterator argument; over it the call is unusable
PROTOCOL = 4

# Iterators rebuilt as themselves: their items and their position are their pickling state.
_SEQUENCE_KINDS = {type(iter([])): list, type(iter(())): tuple}


def is_lazy(value: object) -> bool:
    """An iterator whose items are its behaviour: a generator or a builtin/itertools iterator (`map`, `filter`,
    `zip`, `iter(list)`, `itertools.count`...). Files and user classes are left to pickling."""
    kind = type(value)
    if isinstance(value, types.GeneratorType):
        return True
    if isinstance(value, io.IOBase) or not hasattr(kind, "__next__"):
        return False
    return getattr(kind, "__module__", "") in ("builtins", "itertools")


def is_async_iterator(value: object) -> bool:
    """An async generator: materialised when passed as an argument (AsyncArgumentTap)."""
    return inspect.isasyncgen(value)


ASYNC_GENERATOR = "async generator"  # an IteratorArgument's kind when the argument was an async generator


def kind_name(value: object) -> str:
    return "generator" if isinstance(value, types.GeneratorType) else type(value).__name__


# ----------------------------------------------------------------------------- what the calls file holds


@dataclass
class IteratorArgument:
    """An iterator argument as recorded: the items the target took (each pickled when taken), whether it asked
    past the last one (`exhausted`: it saw the end), and the kind to rebuild (`list_iterator`, `generator`,
    `map`...)."""

    kind: str
    items: list[bytes]
    exhausted: bool
    raised: bytes | None = None  # the exception (pickled) it raised when asked past its last item, if it did

    def __repr__(self) -> str:
        return f"<{self.kind} of {len(self.items)} items>"


@dataclass
class LazyResult:
    """A lazy result as the test consumed it: the items it yielded (pickled when yielded), and its end if the
    test reached it: ("return", pickled value) or ("exception", "module.Type", message); None when the test
    stopped after `len(items)` items, which is then all that is compared."""

    kind: str
    items: list[bytes]
    end: tuple[str, Any, Any] | None

    def __repr__(self) -> str:
        return f"<{self.kind} of {len(self.items)} items>"


@dataclass
class LazyResults:
    """A tuple or list of lazy results (`partition`: two iterators over one source) as the test consumed them:
    each element as a LazyResult, and the order of the test's steps (the element each `next` went to, the one
    that met an element's end included). Elements sharing a source (`itertools.tee`) may yield according to
    that order, so replay and timing take the same steps in the same order."""

    kind: str  # "tuple" or "list"
    elements: list[LazyResult]
    order: list[int]

    def __repr__(self) -> str:
        return f"<{self.kind} of {len(self.elements)} iterators>"


# ----------------------------------------------------------------------------- recording: results


class Relay:
    """What recording hands the test instead of a lazy result: iterating it iterates the result, keeping each
    item as it passes. `resume` wraps every step of the result (recording's depth guard, stdout copy)."""

    def __init__(self, result: Iterator[Any], resume: Callable[[Callable[[], Any]], Any]) -> None:
        self.kind = kind_name(result)
        self.result = result
        self.resume = resume
        self.items: list[bytes] = []
        self.end: tuple[str, Any, Any] | None = None
        self.problem: str | None = None
        self.on_end: Callable[[], None] | None = None  # told when the result ends (recording's snapshot)
        self.on_step: Callable[[], None] | None = None  # told before each step the test takes (Relays' order)

    def wrapper(self) -> Any:
        """A generator over the result (a `map`/`filter` object over it for those kinds, so the test sees the
        kind it had); send and throw still reach the result, and make the call unusable."""
        relay = self._relay()
        if self.kind == "map":
            return map(_same, relay)
        if self.kind == "filter":
            return filter(_keep, relay)
        return relay

    def _relay(self) -> Any:
        result = self.result
        sent: Any = None
        thrown: BaseException | None = None
        try:
            while True:
                if self.on_step is not None:
                    self.on_step()
                try:
                    if thrown is not None:
                        item = self.resume(lambda t=thrown: result.throw(t))  # type: ignore[attr-defined]
                    elif sent is not None:
                        item = self.resume(lambda s=sent: result.send(s))  # type: ignore[attr-defined]
                    else:
                        item = self.resume(lambda: next(result))
                except StopIteration as stop:
                    self._finish(("return", stop.value, None))
                    return stop.value
                except Exception as exc:
                    self._finish(("exception", f"{type(exc).__module__}.{type(exc).__qualname__}", str(exc)))
                    raise
                self._keep(item)
                sent, thrown = None, None
                try:
                    sent = yield item
                except GeneratorExit:
                    raise
                except BaseException as exc:  # thrown in by the consumer: forwarded, not replayed
                    thrown = exc
                    self.problem = self.problem or f"the tests threw into the {self.kind} result"
                if sent is not None:
                    self.problem = self.problem or f"the tests sent values into the {self.kind} result"
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()

    def _keep(self, item: Any) -> None:
        if self.problem is not None:
            return
        if len(self.items) >= MAX_ITEMS:
            self.problem = f"result is an iterator of over {MAX_ITEMS} items"
            self.items = []
            return
        try:
            self.items.append(keeping.dumps(item, PROTOCOL))
        except Exception:
            self.problem = f"result yields a {type(item).__name__} (cannot be kept)"
            self.items = []

    def _finish(self, end: tuple[str, Any, Any]) -> None:
        if end[0] == "return":
            try:
                end = ("return", keeping.dumps(end[1], PROTOCOL), None)
            except Exception:
                self.problem = self.problem or f"result returns a {type(end[1]).__name__} (cannot be kept)"
        self.end = end
        if self.on_end is not None:
            self.on_end()

    def recorded(self) -> LazyResult:
        """What the test consumed so far; raises Unusable with the reason if it cannot be judged."""
        if self.problem is not None:
            raise Unusable(self.problem)
        if not self.items and self.end is None:  # only "returns an iterator" could be checked
            raise Unusable(f"result is a {self.kind} the tests never consumed")
        return LazyResult(self.kind, list(self.items), self.end)


def _same(item: Any) -> Any:
    return item


def _keep(item: Any) -> bool:
    return True


MAX_ELEMENTS = 16  # lazy elements of a tuple or list result relayed one by one (`distribute(n, ...)`: n of them)


def is_lazy_each(value: object) -> bool:
    """A tuple or list of lazy results (`partition`, `unzip`, `distribute`), each relayed on its own."""
    return type(value) in (tuple, list) and 0 < len(value) <= MAX_ELEMENTS and all(is_lazy(v) for v in value)


class Relays:
    """What recording hands the test instead of a tuple or list of lazy results: the same kind of container of
    relays, one per element, noting which element each of the test's steps went to. `on_end` is told when every
    element has ended; one the test leaves unfinished is kept at the session's end, as a prefix is."""

    def __init__(self, result: tuple[Any, ...] | list[Any], resume: Callable[[Callable[[], Any]], Any]) -> None:
        self.kind = type(result).__name__
        self.order: list[int] = []
        self.relays = [Relay(element, resume) for element in result]
        self.ended = 0
        self.on_end: Callable[[], None] | None = None
        for index, relay in enumerate(self.relays):
            relay.on_step = functools.partial(self._step, index)
            relay.on_end = self._ended

    def _step(self, index: int) -> None:
        if len(self.order) <= MAX_ITEMS * len(self.relays):  # past it an element is over MAX_ITEMS anyway
            self.order.append(index)

    def _ended(self) -> None:
        self.ended += 1
        if self.ended == len(self.relays) and self.on_end is not None:
            self.on_end()

    def wrapper(self) -> Any:
        wrappers = [relay.wrapper() for relay in self.relays]
        return tuple(wrappers) if self.kind == "tuple" else wrappers

    def recorded(self) -> LazyResults:
        """What the test took from each element, and in what order; raises Unusable with the reason if it cannot
        be judged. An element the test never took from is compared as taken: not at all."""
        for relay in self.relays:
            if relay.problem is not None:
                raise Unusable(relay.problem)
        if not self.order:
            raise Unusable(f"result is a {self.kind} of iterators the tests never consumed")
        elements = [LazyResult(relay.kind, list(relay.items), relay.end) for relay in self.relays]
        return LazyResults(self.kind, elements, list(self.order))


# ----------------------------------------------------------------------------- recording: arguments


class ArgumentTap:
    """An iterator argument on its way into the recorded call: `live` is what the target gets (the test's own
    list/tuple iterator, or a relay pulling from the test's iterator one item at a time), `recorded()` what it
    took, after the call."""

    def __init__(self, value: Iterator[Any], name: str) -> None:
        self.kind = kind_name(value)
        self.name = name
        self.source = value
        self.items: list[bytes] = []
        self.exhausted = False
        self.raised: bytes | None = None
        self.problem: str | None = None
        self.start: list[Any] | None = None
        if type(value) in _SEQUENCE_KINDS:
            state = value.__reduce__()
            sequence, index = state[1][0], (state[2] if len(state) > 2 else 0)
            self.start = list(sequence[index:])
            self.live: Any = value
        else:
            self.live = self._wrap(self._pull())

    def _wrap(self, relay: Any) -> Any:
        if self.kind == "map":
            return map(_same, relay)
        if self.kind == "filter":
            return filter(_keep, relay)
        return relay

    def _pull(self) -> Any:
        source = self.source
        while True:
            try:
                item = next(source)
            except StopIteration as stop:
                self.exhausted = True
                return stop.value
            except Exception as exc:  # part of the argument: raised again at the same place on replay
                self._ended_raising(exc)
                raise
            self._take(item)
            yield item

    def _ended_raising(self, exc: Exception) -> None:
        """The source raised: the argument ends there, with that exception kept to raise again on replay."""
        self.exhausted = True
        try:
            self.raised = keeping.dumps(exc, PROTOCOL)
        except Exception:
            self.problem = self.problem or f"{self.name} raised a {type(exc).__name__} that cannot be kept"

    def _take(self, item: Any) -> None:
        if self.problem is not None:
            return
        if len(self.items) >= MAX_ITEMS:
            self.problem = f"{self.name} is an iterator of which the target took over {MAX_ITEMS} items"
            return
        try:
            self.items.append(keeping.dumps(item, PROTOCOL))
        except Exception:
            self.problem = f"{self.name} yields a {type(item).__name__} (cannot be kept)"

    def recorded(self) -> IteratorArgument:
        if self.start is not None:  # a list/tuple iterator: how far it moved is in its own state
            taken, self.exhausted = sequence_position(self.source, len(self.start))
            self.items = []
            for item in self.start[:taken]:
                self._take(item)
        if self.problem is not None:
            raise Unusable(self.problem)
        return IteratorArgument(self.kind, list(self.items), self.exhausted, self.raised)


class AsyncArgumentTap(ArgumentTap):
    """An async generator argument on its way into the recorded call: `live` is an async generator pulling from
    the test's one item by item (each `__anext__` awaited on the test's loop, so whatever it awaits still works),
    keeping what the target took. Closing the relay does not close the test's generator (as a sync relay does
    not): the test's generator is left where the target stopped taking."""

    def __init__(self, value: Any, name: str) -> None:
        self.kind = ASYNC_GENERATOR
        self.name = name
        self.source = value
        self.items = []
        self.exhausted = False
        self.raised = None
        self.problem = None
        self.start = None
        self.live = self._pull_async()

    async def _pull_async(self) -> Any:
        source = self.source
        while True:
            try:
                item = await source.__anext__()
            except StopAsyncIteration:
                self.exhausted = True
                return
            except Exception as exc:  # part of the argument: raised again at the same place on replay
                self._ended_raising(exc)
                raise
            self._take(item)
            yield item


def sequence_position(iterator: Any, length: int) -> tuple[int, bool]:
    """How many of `length` items a list/tuple iterator gave, and whether it was asked past its end."""
    state = iterator.__reduce__()
    if len(state) < 3:  # asked past the end: the iterator let go of its sequence
        return length, True
    sequence, index = state[1][0], state[2]
    return index - (len(sequence) - length), False


Tap = ArgumentTap | functions.FunctionTap


def tapped(value: object) -> bool:
    """Whether an argument reaches the target through a tap rather than being pickled as it is."""
    return is_lazy(value) or is_async_iterator(value) or functions.is_function(value)


def _tap(value: Any, name: str) -> Tap | None:
    if is_lazy(value):
        return ArgumentTap(value, name)
    if is_async_iterator(value):
        return AsyncArgumentTap(value, name)
    if functions.is_function(value):
        return functions.FunctionTap(value, name)
    return None


def tap_arguments(args: tuple, kwargs: dict[str, Any]) -> tuple[tuple, dict[str, Any], dict[Any, Tap]]:
    """The arguments with each iterator, async generator and Python function among them (top level only)
    replaced by its tap's live one, and the taps by position (int, 1-based as users count) or keyword (str)."""
    taps: dict[Any, Tap] = {}
    live_args = list(args)
    for position, value in enumerate(args):
        tap = _tap(value, f"argument {position + 1}")
        if tap is not None:
            taps[position] = tap
            live_args[position] = tap.live
    live_kwargs = dict(kwargs)
    for name, value in kwargs.items():
        tap = _tap(value, f"argument {name!r}")
        if tap is not None:
            taps[name] = tap
            live_kwargs[name] = tap.live
    return tuple(live_args), live_kwargs, taps


def with_recorded(args: tuple, kwargs: dict[str, Any], recorded: dict[Any, Any]) -> tuple[tuple, dict[str, Any]]:
    """The arguments with the iterators at `recorded`'s positions/keywords replaced by the given values."""
    new_args = tuple(recorded.get(i, value) for i, value in enumerate(args))
    new_kwargs = {name: recorded.get(name, value) for name, value in kwargs.items()}
    return new_args, new_kwargs


# ----------------------------------------------------------------------------- replay and timing


@dataclass
class Feed:
    """An iterator argument supplied afresh: `live` is the iterator the target gets; `taken()` says how many
    items it took and whether it asked past the last one."""

    recorded: IteratorArgument
    live: Any = None
    count: list[int] = field(default_factory=lambda: [0, 0])  # items given, asked past the end

    def taken(self) -> tuple[int, bool]:
        sequence = _SEQUENCE_KINDS.get(type(self.live))
        if sequence is not None:
            return sequence_position(self.live, len(self.recorded.items))
        return self.count[0], bool(self.count[1])


def _feed_items(items: list[Any], count: list[int], raised: bytes | None) -> Any:
    for item in items:
        count[0] += 1
        yield item
    count[1] = 1  # asked past the last recorded item: past the end if the original was, else one too many
    if raised is not None:
        raise pickle.loads(raised)


async def _feed_items_async(items: list[Any], count: list[int], raised: bytes | None) -> Any:
    for item in items:
        count[0] += 1
        yield item
    count[1] = 1  # as _feed_items
    if raised is not None:
        raise pickle.loads(raised)


def supply(
    args: tuple, kwargs: dict[str, Any], log: bool = True
) -> tuple[tuple, dict[str, Any], dict[Any, Feed | functions.Supplied]]:
    """The recorded arguments with every IteratorArgument replaced by a fresh iterator of its kind over the
    same items, and every FunctionArgument by the function recreated (behind a log of its calls with `log`,
    as replay wants; timing's has none); the feeds by position/keyword."""
    feeds: dict[Any, Feed | functions.Supplied] = {}
    for key, value in [*enumerate(args), *kwargs.items()]:
        if isinstance(value, functions.FunctionArgument):
            feeds[key] = functions.supply(value, log)
        elif isinstance(value, IteratorArgument) and value.kind == ASYNC_GENERATOR:
            feed = Feed(value)
            items = [pickle.loads(blob) for blob in value.items]
            feed.live = _feed_items_async(items, feed.count, value.raised)
            feeds[key] = feed
        elif isinstance(value, IteratorArgument):
            feed = Feed(value)
            items = [pickle.loads(blob) for blob in value.items]
            for kind, rebuild in _SEQUENCE_KINDS.items():
                if kind.__name__ == value.kind:
                    feed.live = iter(rebuild(items))
                    break
            else:
                relay = _feed_items(items, feed.count, value.raised)
                feed.live = {"map": map(_same, relay), "filter": filter(_keep, relay)}.get(value.kind, relay)
            feeds[key] = feed
    if not feeds:
        return args, kwargs, feeds
    live = {key: feed.live for key, feed in feeds.items()}
    live_args, live_kwargs = with_recorded(args, kwargs, live)
    return live_args, live_kwargs, feeds


def as_recorded(
    feeds: dict[Any, Feed | functions.Supplied],
) -> dict[Any, IteratorArgument | functions.FunctionArgument]:
    """The supplied arguments as recording would have kept them from this call: the items the target took (and
    whether it asked past the last one), the calls it made to each function. A call the original makes on
    arguments other than the recorded ones (a boundary variant) is then recorded with what it did, not what the
    recorded call did."""
    recorded: dict[Any, IteratorArgument | functions.FunctionArgument] = {}
    for key, feed in feeds.items():
        if isinstance(feed, functions.Supplied):
            recorded[key] = functions.as_recorded(feed)
            continue
        taken, past_end = feed.taken()
        kept = feed.recorded
        recorded[key] = IteratorArgument(kept.kind, kept.items[:taken], past_end, kept.raised if past_end else None)
    return recorded


def has_iterator_arguments(args: tuple, kwargs: dict[str, Any]) -> bool:
    """Whether a call has arguments to supply afresh: iterators, async generators or functions."""
    supplied = (IteratorArgument, functions.FunctionArgument)
    return any(isinstance(v, supplied) for v in args) or any(isinstance(v, supplied) for v in kwargs.values())


def consumption_difference(feeds: dict[Any, Feed | functions.Supplied]) -> tuple[str, str] | None:
    """How the target's taking from its iterator arguments (or calling its function arguments) differs from the
    recording's, if it does: what the original did and what this call did ("argument 1: took 2 items",
    "argument 1: took 3 items"; "argument 1: called 4 times", "argument 1: called 8 times")."""
    for key, feed in feeds.items():
        name = f"argument {key + 1}" if isinstance(key, int) else f"argument {key!r}"
        if isinstance(feed, functions.Supplied):
            difference = functions.calls_difference(feed, name)
            if difference is not None:
                return difference
            continue
        expected = (len(feed.recorded.items), feed.recorded.exhausted)
        got = feed.taken()
        if got != expected:
            return f"{name}: {_taking(*expected)}", f"{name}: {_taking(*got)}"
    return None


def _taking(count: int, past_end: bool) -> str:
    return f"took {count} item{'s' if count != 1 else ''}" + (" and asked for more" if past_end else "")


@dataclass
class Consumed:
    """A result consumed as the test consumed the recorded one: the items, and the end if reached."""

    items: list[Any]
    end: tuple[str, Any, Any] | None  # ("return", value, None) or ("exception", exception, None)


@dataclass
class ConsumedEach:
    """A tuple or list of lazy results consumed as the test consumed the recorded ones, element by element."""

    elements: list[Consumed]


def consumable(value: Any, recorded: LazyResult | LazyResults) -> bool:
    """Whether a call's result can be consumed as the recorded one was: an iterator, or a container of the
    recorded kind holding as many iterators. Anything else is compared as it is (a difference)."""
    if isinstance(recorded, LazyResults):
        return (
            type(value).__name__ == recorded.kind
            and type(value) in (tuple, list)
            and len(value) == len(recorded.elements)
            and all(hasattr(type(element), "__next__") for element in value)
        )
    return hasattr(type(value), "__next__")


def consume_each(results: Any, recorded: LazyResults) -> ConsumedEach:
    """The recorded steps taken again in their order, each from its element: an element that ends earlier than
    recorded takes no more steps, and one that yields where the recording met the end shows an extra item."""
    items: list[list[Any]] = [[] for _ in recorded.elements]
    ends: list[tuple[str, Any, Any] | None] = [None for _ in recorded.elements]
    for index in recorded.order:
        if ends[index] is not None:
            continue
        try:
            items[index].append(next(results[index]))
        except StopIteration as stop:
            ends[index] = ("return", stop.value, None)
        except Exception as exc:
            ends[index] = ("exception", exc, None)
    return ConsumedEach([Consumed(taken, end) for taken, end in zip(items, ends, strict=True)])


def consume(result: Any, recorded: LazyResult | LazyResults) -> Consumed | ConsumedEach:
    """Take from `result` what the test took from the recorded one: all of it (at most one item more than was
    recorded, to see an extra one), or the recorded prefix; from a tuple or list of them, the recorded steps."""
    if isinstance(recorded, LazyResults):
        return consume_each(result, recorded)
    iterator = result
    items: list[Any] = []
    limit = len(recorded.items) + (1 if recorded.end is not None else 0)
    while len(items) < limit:
        try:
            items.append(next(iterator))
        except StopIteration as stop:
            return Consumed(items, ("return", stop.value, None))
        except Exception as exc:
            return Consumed(items, ("exception", exc, None))
    return Consumed(items, None)  # the recorded prefix, or one item past a recorded end


def taken_whole(result: Any) -> LazyResult | LazyResults:
    """A lazy result (or a tuple or list of them, one after the other) consumed to its end, as a test reaching
    the end would have recorded it: what the boundary step keeps of a variant. The result's own exception
    propagates; one over MAX_ITEMS items raises Unusable."""
    if not is_lazy(result):
        elements = [_taken_to_end(element) for element in result]
        order = [index for index, element in enumerate(elements) for _ in range(len(element.items) + 1)]
        return LazyResults(type(result).__name__, elements, order)
    return _taken_to_end(result)


def _taken_to_end(result: Iterator[Any]) -> LazyResult:
    kind = kind_name(result)
    items: list[bytes] = []
    while True:
        try:
            item = next(result)
        except StopIteration as stop:
            return LazyResult(kind, items, ("return", pickle.dumps(stop.value, protocol=PROTOCOL), None))
        if len(items) >= MAX_ITEMS:
            raise Unusable(f"result is an iterator of over {MAX_ITEMS} items")
        items.append(pickle.dumps(item, protocol=PROTOCOL))


def drain(result: Any, recorded: LazyResult | LazyResults) -> None:
    """Timing's consumption: what `consume` takes, without keeping it (exceptions propagate)."""
    if isinstance(recorded, LazyResults):
        ended: set[int] = set()
        for index in recorded.order:
            if index not in ended:
                try:
                    next(result[index])
                except StopIteration:
                    ended.add(index)
        return
    if recorded.end is None:
        count = len(recorded.items)
        for _ in zip(range(count), result, strict=False):
            pass
        return
    for _ in result:
        pass
