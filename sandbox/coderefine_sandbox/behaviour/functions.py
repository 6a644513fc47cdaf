"""Function arguments: a predicate, key or callback the tests pass to the target (`partition(pred, items)`,
`sorted(items, key=lambda x: ...)`).

A function argument's behaviour, as the target sees it, is what it returns for what the target asks; what the
target's caller sees is also which calls the target made to it (a callback that logs, counts or appends). So:

* Recording (recording/capture.py) hands the target a logging wrapper in place of each top-level argument that
  is a lambda, a nested function or a function defined in a test module (`FunctionTap`); the call's pickled
  arguments then hold a `FunctionArgument`: the function kept by its code (keeping.dumps with `functions`:
  marshalled code, the globals it reads, its closure's values kept the same way), and the arguments of every call
  the target made to it, in order. A function pickle can name (a module-level function of the project or a
  library) is passed and pickled by reference as before, and its calls are not logged.
* Replay recreates the function and wraps it in the same log (`Supplied`); a candidate whose calls to it differ
  from the recording's (one more call per item, another order, other arguments) is a difference, as taking
  more or fewer items from an iterator argument is. Timing recreates the function without the log.

Not kept, with the reason as the call's unusable reason: a closure over a value that cannot be kept, a cell
not yet assigned, a function whose state changed during the call (its closure, defaults, attributes or the
globals it reads: a replay would start it from the recorded state and could not show what the tests saw), and
a function called more than MAX_CALLS times or with arguments that cannot be kept. Builtins, bound methods,
`functools.partial` objects and callable instances are pickled as before (by reference or by their state).

Standard library only: this runs inside the sandbox.
"""

from __future__ import annotations

import functools
import inspect
import pickle
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from coderefine_sandbox import keeping
from coderefine_sandbox.behaviour.compare import deep_equal
from coderefine_sandbox.behaviour.describe import describe
from coderefine_sandbox.behaviour.unusable import Unusable

MAX_CALLS = 10_000  # calls logged per function argument; over it the call is unusable
PROTOCOL = 4


def is_function(value: object) -> bool:
    """A Python function (def or lambda) that pickle cannot keep by name: the function arguments tapped. One kept
    by reference is passed as it is, as before (a target may return it, register it or compare it by identity,
    which a wrapper would change); builtins, methods and partials are pickled as before too."""
    return isinstance(value, types.FunctionType) and not keeping.by_reference(value)


@dataclass
class FunctionArgument:
    """A function argument as recorded: the function (pickled by its code) and the arguments of each call the
    target made to it (pickled (args, kwargs), in order)."""

    name: str
    function: bytes
    calls: list[bytes]

    def __repr__(self) -> str:
        return f"<function {self.name}>"


def _wrap(func: Any, log: Callable[[tuple, dict[str, Any]], None]) -> Any:
    """`func` behind a wrapper that logs each call before making it; a coroutine function stays one."""
    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def logged_async(*args: Any, **kwargs: Any) -> Any:
            log(args, kwargs)
            return await func(*args, **kwargs)

        return logged_async

    @functools.wraps(func)
    def logged(*args: Any, **kwargs: Any) -> Any:
        log(args, kwargs)
        return func(*args, **kwargs)

    return logged


def unkept_function(func: types.FunctionType, name: str) -> str | None:
    """Why a function argument cannot be kept by its code, or None when it can (`scan`'s estimate asks this)."""
    try:
        keeping.dumps(func, PROTOCOL, functions=True)
    except Exception:
        return _unkept_part(func, name)
    return None


def _unkept_part(func: types.FunctionType, name: str) -> str:
    """Which part of a function kept by code cannot be kept, in users' words."""
    try:
        globals_used, cells = keeping.function_parts(func)
    except ValueError:
        return f"{name} is a function whose closure has a variable not yet assigned (cannot be kept)"
    for label, values in (("closure holds", cells), ("globals hold", list(globals_used.values()))):
        for value in values:
            try:
                keeping.dumps(value, PROTOCOL, functions=True)
            except Exception:
                return f"{name} is a function whose {label} a {type(value).__name__} (cannot be kept)"
    return f"{name} is a function that cannot be kept"


class FunctionTap:
    """A function argument on its way into the recorded call: `live` is the logging wrapper the target gets,
    `recorded()` the FunctionArgument after the call."""

    def __init__(self, func: types.FunctionType, name: str) -> None:
        self.func = func
        self.name = name
        self.problem: str | None = None
        self.calls: list[bytes] = []
        self.settled = False
        self.blob = b""
        try:
            self.blob = keeping.dumps(func, PROTOCOL, functions=True)
        except Exception:
            self.problem = _unkept_part(func, name)
        self.live = _wrap(func, self._log)

    def _log(self, args: tuple, kwargs: dict[str, Any]) -> None:
        if self.problem is not None:
            return
        if len(self.calls) >= MAX_CALLS:
            self.problem = f"{self.name} is a function the target called over {MAX_CALLS} times"
            self.calls = []
            return
        try:
            self.calls.append(keeping.dumps((args, kwargs), PROTOCOL, functions=True))
        except Exception:
            kinds = ", ".join(type(value).__name__ for value in [*args, *kwargs.values()])
            self.problem = f"{self.name} is a function called with a {kinds} (cannot be kept)"
            self.calls = []

    def settle(self) -> None:
        """The state check, made when the call's work has ended: right after a plain call, when a lazy or async
        result ends (recording's snapshot), so that a test's loop rebinding the closure's variable afterwards
        (`for limit in ...: f(lambda x: x > limit, ...)`) is not taken for the function's own state."""
        if self.settled:
            return
        self.settled = True
        if self.problem is None and self.blob:
            try:
                after = keeping.dumps(self.func, PROTOCOL, functions=True)
            except Exception:
                after = b""
            if after != self.blob:
                self.problem = (
                    f"{self.name} is a function with state: its closure, defaults, attributes or the globals it "
                    "reads changed during the call"
                )

    def recorded(self) -> FunctionArgument:
        self.settle()
        if self.problem is not None:
            raise Unusable(self.problem)
        return FunctionArgument(self.func.__qualname__, self.blob, list(self.calls))


# ----------------------------------------------------------------------------- replay and timing


@dataclass
class Supplied:
    """A function argument recreated for one replayed call: `live` is what the target gets; `calls` the
    arguments of each call it made (logged only on replay)."""

    recorded: FunctionArgument
    live: Any = None
    calls: list[tuple[tuple, dict[str, Any]]] = field(default_factory=list)


def supply(recorded: FunctionArgument, log: bool) -> Supplied:
    supplied = Supplied(recorded)
    func = pickle.loads(recorded.function)
    if log:
        calls = supplied.calls

        def note(args: tuple, kwargs: dict[str, Any]) -> None:
            # Pickled as recording pickles them, then loaded: what the call was given at the time it was made. A
            # candidate passing what cannot be kept (the original never did) is logged as such: a difference, not
            # an exception raised inside the candidate.
            try:
                calls.append(pickle.loads(keeping.dumps((args, kwargs), PROTOCOL, functions=True)))
            except Exception:
                kinds = ", ".join(type(value).__name__ for value in [*args, *kwargs.values()])
                calls.append(((_Unkept(kinds),), {}))

        supplied.live = _wrap(func, note)
    else:
        supplied.live = func
    return supplied


def as_recorded(supplied: Supplied) -> FunctionArgument:
    """The supplied function with the calls this call made to it, as recording keeps them (raises when a call's
    arguments cannot be kept)."""
    if any(isinstance(value, _Unkept) for args, kwargs in supplied.calls for value in [*args, *kwargs.values()]):
        raise ValueError(f"{supplied.recorded.name} was called with arguments that cannot be kept")
    calls = [keeping.dumps(call, PROTOCOL, functions=True) for call in supplied.calls]
    return FunctionArgument(supplied.recorded.name, supplied.recorded.function, calls)


class _Unkept:
    """A logged call's arguments that could not be kept: equal to nothing recorded."""

    def __init__(self, kinds: str) -> None:
        self.kinds = kinds

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<a {self.kinds} (cannot be kept)>"


def calls_difference(supplied: Supplied, name: str) -> tuple[str, str] | None:
    """How the calls the target made to a function argument differ from the recording's, in users' words."""
    expected = supplied.recorded.calls
    got = supplied.calls
    for index, (blob, call) in enumerate(zip(expected, got, strict=False)):
        wanted = pickle.loads(blob)
        if not deep_equal(wanted, call, rel_tol=0.0, abs_tol=0.0):
            return (
                f"{name}: call {index + 1} with {_arguments(wanted)}",
                f"{name}: call {index + 1} with {_arguments(call)}",
            )
    if len(expected) != len(got):
        return f"{name}: called {_times(len(expected))}", f"{name}: called {_times(len(got))}"
    return None


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def _arguments(call: tuple[tuple, dict[str, Any]]) -> str:
    args, kwargs = call
    parts = [describe(value, 60) for value in args] + [f"{key}={describe(value, 60)}" for key, value in kwargs.items()]
    return "(" + ", ".join(parts) + ")"
