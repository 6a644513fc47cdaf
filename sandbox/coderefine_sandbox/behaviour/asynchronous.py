"""Async calls: coroutine functions (a call returns a coroutine) and async generators.

A coroutine's behaviour is what awaiting it gives (its value or exception); an async generator's is the
sequence of items `async for` takes, then its end, as for a generator (behaviour/lazy.py). Calling either does
none of the work, and the test awaits the result on its own event loop, so:

* Recording (recording/capture.py) hands the test a relay in place of the result: a real coroutine (or async
  generator) that drives the target's one step at a time, each step inside recording's depth guard and stdout
  copy, and keeps what it gives when it ends. A coroutine the test never awaited judges nothing: unusable.
* Replay runs the call on a fresh event loop of its own (`FreshLoop`), closed after, and compares the awaited
  value or exception (an async generator's items, by lazy.consume's rules) and the arguments' mutation as
  for plain calls. The loop watches whether it ever had to wait (its selector asked to block: a timer such as
  `asyncio.sleep(0.01)`, I/O, a thread) and whether the call left tasks running: such a call's time and result
  depend on more than its arguments, so on the original it is unusable with that reason, and a candidate that
  does so where the original did not is a difference.
* Timing (timing/worker.py) runs each pass's calls in one fresh loop, awaiting each call inside a driver task
  that reads the clock around the `await` alone (so creating the task and turning the loop are outside the
  timed region), and subtracts from each call the same measurement of a do-nothing coroutine (`idle`).

Standard library only: this runs inside the sandbox. asyncio itself is imported where a loop or its types
are used, not here: every recording, replay and timing process imports this module, and asyncio's import
(sockets, ssl) was ~25 ms of each of them on this machine, for the few projects with async targets.
"""

from __future__ import annotations

import contextlib
import inspect
import selectors
from collections.abc import Callable, Coroutine, Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

from coderefine_sandbox import keeping
from coderefine_sandbox.behaviour import lazy

COROUTINE = "coroutine"
ASYNC_GENERATOR = "async_generator"
# What replay names when the loop had to wait, or the call left tasks behind (mismatch kinds; modes.py words
# them as the reason a call of the original is unusable).
WAITED = "waited"
TASK_LEFT = "task left"


def kind_of(value: object) -> str | None:
    """COROUTINE, ASYNC_GENERATOR, or None for any other value."""
    if inspect.iscoroutine(value):
        return COROUTINE
    if inspect.isasyncgen(value):
        return ASYNC_GENERATOR
    return None


def mark_async(func: Any) -> None:
    """Keep a swapped coroutine function known as one (its code is now recording's plain trampoline): asyncio's
    marker, and inspect's on 3.12+. inspect.iscoroutinefunction on 3.10/3.11 reads the code's flags only."""
    import asyncio

    marker = getattr(inspect, "markcoroutinefunction", None)
    if marker is not None:
        marker(func)
    coroutines = getattr(asyncio, "coroutines", None)
    flag = getattr(coroutines, "_is_coroutine", None)
    if flag is not None:
        func._is_coroutine = flag


# ----------------------------------------------------------------------------- recording


def _stepped(awaitable: Any, resume: Callable[[Callable[[], Any]], Any]) -> Generator[Any, Any, Any]:
    """`yield from awaitable.__await__()` one step at a time, each step through `resume`: what the event loop
    sends or throws is passed on, what the awaitable yields (a future it waits on) is passed out."""
    step = awaitable.__await__()
    sent: Any = None
    thrown: BaseException | None = None
    while True:
        try:
            if thrown is not None:
                signal = resume(lambda t=thrown: step.throw(t))
            else:
                signal = resume(lambda s=sent: step.send(s))
        except StopIteration as stop:
            return stop.value
        sent, thrown = None, None
        try:
            sent = yield signal
        except GeneratorExit:
            step.close()
            raise
        except BaseException as exc:  # cancellation included: forwarded as the loop meant it
            thrown = exc


class _Stepped:
    def __init__(self, awaitable: Any, resume: Callable[[Callable[[], Any]], Any]) -> None:
        self.awaitable = awaitable
        self.resume = resume

    def __await__(self) -> Generator[Any, Any, Any]:
        return _stepped(self.awaitable, self.resume)


@dataclass
class Awaited:
    """How a recorded coroutine ended when the test awaited it: ("return", value) or ("exception", exception)."""

    outcome: str
    value: Any = None
    exc: BaseException | None = None


class CoroutineRelay:
    """What recording hands the test instead of a coroutine: `wrapper()` is a coroutine awaiting the real one a
    step at a time (`resume` wraps each step: recording's depth guard, stdout copy), keeping how it ended."""

    def __init__(self, result: Any, resume: Callable[[Callable[[], Any]], Any]) -> None:
        self.result = result
        self.resume = resume
        self.awaited: Awaited | None = None
        self.started = False
        self.on_end: Callable[[], None] | None = None  # told when the coroutine ends (recording's snapshot)
        self.coroutine: Coroutine[Any, Any, Any] | None = None

    def wrapper(self) -> Coroutine[Any, Any, Any]:
        self.coroutine = self._relay()
        return self.coroutine

    async def _relay(self) -> Any:
        self.started = True
        try:
            value = await _Stepped(self.result, self.resume)
        except Exception as exc:
            self._end(Awaited("exception", exc=exc))
            raise
        except BaseException:  # cancelled, or the loop closed it: it never ended on its own
            self._end(None)
            raise
        self._end(Awaited("return", value=value))
        return value

    def _end(self, awaited: Awaited | None) -> None:
        self.awaited = awaited
        if self.on_end is not None:
            self.on_end()

    def recorded(self) -> Awaited:
        """How the coroutine ended; raises lazy.Unusable with the reason if it cannot be judged."""
        if not self.started:
            if self.coroutine is not None:
                self.coroutine.close()  # no second "never awaited" warning: the target's own one stays
            raise lazy.Unusable("result is a coroutine the tests never awaited")
        if self.awaited is None:
            raise lazy.Unusable("result is a coroutine that was cancelled or never finished")
        return self.awaited


class AsyncGeneratorRelay(lazy.Relay):
    """An async generator as the test consumes it (`async for`): kept item by item as lazy.Relay keeps a
    generator's, each `__anext__` driven a step at a time through `resume`."""

    def __init__(self, result: Any, resume: Callable[[Callable[[], Any]], Any]) -> None:
        super().__init__(result, resume)
        self.kind = "async generator"

    def wrapper(self) -> Any:
        return self._relay_async()

    def recorded(self) -> lazy.LazyResult:
        if self.problem is None and not self.items and self.end is None:
            raise lazy.Unusable("result is an async generator the tests never consumed")
        return super().recorded()

    async def _relay_async(self) -> Any:
        import asyncio

        result = self.result
        sent: Any = None
        thrown: BaseException | None = None
        try:
            while True:
                try:
                    if thrown is not None:
                        step = result.athrow(thrown)
                    elif sent is not None:
                        step = result.asend(sent)
                    else:
                        step = result.__anext__()
                    item = await _Stepped(step, self.resume)
                except StopAsyncIteration:
                    self._finish(("return", None, None))
                    return
                except Exception as exc:
                    self._finish(("exception", f"{type(exc).__module__}.{type(exc).__qualname__}", str(exc)))
                    raise
                self._keep(item)
                sent, thrown = None, None
                try:
                    sent = yield item
                except (GeneratorExit, asyncio.CancelledError):  # closed, or its finalizing task cancelled
                    raise
                except BaseException as exc:  # thrown in by the consumer: forwarded, not replayed
                    thrown = exc
                    self.problem = self.problem or f"the tests threw into the {self.kind} result"
                if sent is not None:
                    self.problem = self.problem or f"the tests sent values into the {self.kind} result"
        finally:
            await result.aclose()


# ----------------------------------------------------------------------------- replay


@dataclass
class LoopWatch:
    """What a fresh loop saw while it ran one call: whether it had to wait (its selector was asked to block)
    and how many tasks the call left running."""

    waited: bool = False
    left: int = 0
    active: bool = True

    def difference(self) -> dict[str, str] | None:
        """The call judged nothing if it waited or left tasks: that, as a replay difference."""
        if self.waited:
            return {
                "kind": WAITED,
                "expected": "ran without waiting on the event loop",
                "got": "waited on the event loop (a timer such as asyncio.sleep, I/O or a thread)",
            }
        if self.left:
            return {
                "kind": TASK_LEFT,
                "expected": "left no task running",
                "got": f"left {self.left} task{'s' if self.left != 1 else ''} running on the event loop",
            }
        return None


class _WatchingSelector(selectors.DefaultSelector):  # type: ignore[misc,valid-type]
    """The loop asks its selector to block (a timeout of None or more than 0) only when nothing is ready to
    run: every task waits on a timer, a file descriptor or another thread. A call that only computes, awaits
    coroutines or gathers tasks that compute never makes it block."""

    def __init__(self, watch: LoopWatch) -> None:
        super().__init__()
        self.watch = watch

    def select(self, timeout: float | None = None) -> Any:
        if self.watch.active and (timeout is None or timeout > 0):
            self.watch.waited = True
        return super().select(timeout)


async def _await(awaitable: Any) -> Any:
    return await awaitable


class FreshLoop:
    """An event loop of its own for one replayed call. Made and closed outside the call's audit window (a loop
    opens a socket pair to wake itself: the runner's doing, never the call's power); `run` inside it. Closing
    counts the tasks the call left running in `watch`, then cancels them, as asyncio.run does."""

    def __init__(self) -> None:
        import asyncio

        self.watch = LoopWatch()
        self.loop = asyncio.SelectorEventLoop(_WatchingSelector(self.watch))

    def run(self, make: Callable[[], Any]) -> Any:
        """`make()`'s awaitable run to its end on the loop: its value, or its exception raised."""
        return self.loop.run_until_complete(_await(make()))

    def close(self) -> None:
        self.watch.active = False
        _close(self.loop, self.watch)


def _close(loop: asyncio.AbstractEventLoop, watch: LoopWatch | None = None) -> None:
    """asyncio.run's ending: cancel what is left (counted), finish async generators, join the default
    executor's threads, close."""
    import asyncio

    try:
        pending = asyncio.all_tasks(loop)
        if watch is not None:
            watch.left = len(pending)
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())  # run_in_executor's threads, joined
    finally:
        loop.close()


async def consume(result: Any, recorded: lazy.LazyResult) -> lazy.Consumed:
    """lazy.consume for an async generator: what the test took (at most one item more than was recorded, to see
    an extra one), or the recorded prefix."""
    items: list[Any] = []
    limit = len(recorded.items) + (1 if recorded.end is not None else 0)
    try:
        while len(items) < limit:
            try:
                items.append(await result.__anext__())
            except StopAsyncIteration:
                return lazy.Consumed(items, ("return", None, None))
            except Exception as exc:
                return lazy.Consumed(items, ("exception", exc, None))
        return lazy.Consumed(items, None)
    finally:
        await result.aclose()


async def drain(result: Any, recorded: lazy.LazyResult) -> None:
    """Timing's consumption of an async generator: what `consume` takes, without keeping it."""
    if recorded.end is None:
        for _ in range(len(recorded.items)):
            await result.__anext__()
        return
    async for _ in result:
        pass


def expected_kind(record: dict[str, Any]) -> str | None:
    """The async kind a recorded call returned (None: a plain call)."""
    return record.get("asynchronous")


def recorded_awaited(awaited: Awaited) -> dict[str, Any]:
    """A coroutine's end as a record's outcome fields (raises if the value cannot be kept)."""
    if awaited.outcome == "return":
        return {"outcome": "return", "value": keeping.dumps(awaited.value, lazy.PROTOCOL)}
    exc = awaited.exc
    assert exc is not None
    return {
        "outcome": "exception",
        "exc_type": f"{type(exc).__module__}.{type(exc).__qualname__}",
        "exc_message": str(exc),
    }


# ----------------------------------------------------------------------------- timing


class TimingLoop:
    """One fresh event loop for a timing pass: each async call is awaited inside a driver task that reads the
    clock around the `await` alone, then around a do-nothing coroutine, and gives the difference, so the loop's
    own cost (creating the task, turning the loop) stays out of both sides' figures."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.loop: asyncio.AbstractEventLoop | None = None

    def time(self, call: Callable[[], Any], shape: lazy.LazyResult | None) -> tuple[float, Exception | None]:
        """Seconds of one async call (the idle coroutine's subtracted, at least 0), and the exception it raised
        (timed too: a recorded call that raises is part of the workload)."""
        if self.loop is None:
            import asyncio

            self.loop = asyncio.new_event_loop()
        return self.loop.run_until_complete(self._driver(call, shape))

    async def _driver(self, call: Callable[[], Any], shape: lazy.LazyResult | None) -> tuple[float, Exception | None]:
        clock = self.clock
        error: Exception | None = None
        result: Any = None
        started = clock()
        try:
            if shape is None:
                await call()
            else:
                result = call()
                await drain(result, shape)
        except Exception as exc:
            error = exc
        elapsed = clock() - started
        started = clock()
        await idle()
        elapsed = max(0.0, elapsed - (clock() - started))
        aclose = getattr(result, "aclose", None)
        if aclose is not None:  # a prefix consumed: the generator is finished outside the timed region
            with contextlib.suppress(Exception):
                await aclose()
        return elapsed, error

    def close(self) -> None:
        if self.loop is not None:
            _close(self.loop)
            self.loop = None


async def idle() -> None:
    """The do-nothing coroutine whose await is timed beside each call's."""
