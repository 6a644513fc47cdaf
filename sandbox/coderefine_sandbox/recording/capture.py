"""Record the calls the tests make to the target functions, while the ORIGINAL's tests run.

Each outermost call to a target is stored with its arguments (pickled before the call, which is also
the deep copy), its outcome (return value or exception type and message), its arguments after the call
(only when they changed: in-place mutation is behaviour too) and what it printed. Candidates are later
replayed on exactly these calls (behaviour/replay.py), and the same calls are the timing workload.

Standard library only: this runs inside the sandbox, in the user's test process.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import inspect
import io
import os
import pickle
import sys
import threading
import types
from dataclasses import dataclass, field
from typing import Any

from coderefine_sandbox import keeping
from coderefine_sandbox.behaviour import asynchronous, functions, lazy
from coderefine_sandbox.pinning import NOT_PINNED, noted_clock, observed_call, pinned_names
from coderefine_sandbox.protocol import CALLS_PICKLE, CallsHeader, RecordingSummary, TargetLines, write_calls
from coderefine_sandbox.recording.linecov import LineCoverage

PROTOCOL = CALLS_PICKLE  # each call's arguments and outcome, pickled inside the calls file


class _Tee(io.TextIOBase):
    """Pass output through to the real stream while keeping a copy of it."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.copy = io.StringIO()

    def write(self, text: str) -> int:
        self.copy.write(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()


class Recorder:
    def __init__(self, module_name: str, targets: list[str], max_calls: int, max_bytes: int) -> None:
        self.module_name = module_name
        self.targets = targets
        self.max_calls = max_calls
        self.max_bytes = max_bytes
        self.records: list[dict[str, Any]] = []
        self.counts: dict[str, int] = {t: 0 for t in targets}  # every outermost call, recorded or not
        self.unreplayable: dict[str, int] = {t: 0 for t in targets}
        self.bytes = 0
        self.truncated = False
        self.current_test = ""
        self.reached: set[str] = set()  # tests that made an outermost call to a target
        self.calls_per_test: dict[str, int] = {}  # how many: the tests most likely to catch a wrong candidate
        self.module_file: str | None = None
        self.patched: list[str] = []
        self.coverage = LineCoverage()
        self._local = threading.local()
        # Why calls were not usable, per target: reason -> calls (the host names them when evidence is short).
        self.reasons: dict[str, dict[str, int]] = {}
        self.pending: list[tuple[int, _Pending]] = []  # calls whose lazy results the tests are consuming
        self.placed: list[tuple[int, dict[str, Any]]] = []
        # The tests run from the workspace: its paths in the recorded values are relocated on replay elsewhere.
        self.folder = os.getcwd()

    # -- patching

    def install(self) -> None:
        module = sys.modules.get(self.module_name)
        if module is not None:
            self.patch(module)
        else:
            sys.meta_path.insert(0, _PatchOnImport(self))

    def patch(self, module: types.ModuleType) -> None:
        self.module_file = getattr(module, "__file__", None)
        for target in self.targets:
            owner_name, _, attr = target.rpartition(".")
            owner: Any = module
            if owner_name:
                owner = getattr(module, owner_name, None)
                if not isinstance(owner, type):
                    continue
            raw = owner.__dict__.get(attr) if isinstance(owner, type) else getattr(owner, attr, None)
            func = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
            is_async = inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func)
            self.coverage.add(target, func)  # before the swap: coverage watches the real code object
            if isinstance(func, types.FunctionType) and _swap_code(func, lambda real, t=target: self._wrap(t, real)):
                if is_async:  # the trampoline returns the relay coroutine: still a coroutine function
                    asynchronous.mark_async(func)
                self.patched.append(target)
                continue
            wrapped = self._wrap_attribute(target, raw)
            if wrapped is not None:
                setattr(owner, attr, wrapped)
                self.patched.append(target)
        self.coverage.start()

    def _wrap_attribute(self, target: str, raw: Any) -> Any:
        """A callable that is not a plain function (a builtin, a callable object): only the module's
        attribute can be wrapped, so calls through references taken before are not seen."""
        if isinstance(raw, staticmethod):
            return staticmethod(self._wrap(target, raw.__func__))
        if isinstance(raw, classmethod):
            return classmethod(self._wrap(target, raw.__func__))
        if callable(raw):
            return self._wrap(target, raw)
        return None

    def _wrap(self, target: str, func: Any) -> Any:
        recorder = self

        @functools.wraps(func)
        def recording(*args: Any, **kwargs: Any) -> Any:
            if getattr(recorder._local, "depth", 0) > 0:
                return func(*args, **kwargs)  # only outermost calls: inner ones are part of the work
            recorder._local.depth = 1
            try:
                return recorder._record(target, func, args, kwargs)
            finally:
                recorder._local.depth = 0

        return recording

    # -- recording

    def _unusable(self, target: str, reason: str) -> None:
        """A call that cannot judge candidates, and why (the reasons travel to the host per target)."""
        self.unreplayable[target] += 1
        self._reason(target, reason)

    def _reason(self, target: str, reason: str) -> None:
        per_target = self.reasons.setdefault(target, {})
        per_target[reason] = per_target.get(reason, 0) + 1

    def _record(self, target: str, func: Any, args: tuple, kwargs: dict) -> Any:
        self.counts[target] += 1
        if self.current_test:
            self.reached.add(self.current_test)
            self.calls_per_test[self.current_test] = self.calls_per_test.get(self.current_test, 0) + 1
        if self.truncated or self.counts[target] > self.max_calls:
            limit = "the recording's size limit" if self.truncated else f"the limit of {self.max_calls} calls"
            self._reason(target, f"not recorded: over {limit}")
            return self.coverage.traced_call(func, args, kwargs)
        # Iterator and async generator arguments reach the target through taps that keep what it takes
        # (behaviour/lazy.py), function arguments through taps that log the calls it makes (functions.py).
        live_args, live_kwargs, taps = lazy.tap_arguments(args, kwargs)
        try:
            blob = keeping.dumps(lazy.with_recorded(args, kwargs, dict.fromkeys(taps)), PROTOCOL)
        except Exception:
            self._unusable(target, unkept_arguments(args, kwargs))
            return self.coverage.traced_call(func, live_args, live_kwargs)

        tee = _Tee(sys.stdout)
        saved = sys.stdout
        sys.stdout = tee
        # The random states and clock readings the call saw become inputs of it, like its arguments.
        with observed_call() as entropy:
            try:
                result = self.coverage.traced_call(func, live_args, live_kwargs)
            except Exception as exc:
                sys.stdout = saved
                call = _Pending(target, blob, args, kwargs, taps, tee, entropy, self.current_test)
                self._store(call, outcome="exception", exc=exc)
                raise
            finally:
                sys.stdout = saved
        call = _Pending(target, blob, args, kwargs, taps, tee, entropy, self.current_test)
        kind = asynchronous.kind_of(result)
        if kind is not None:
            # The test awaits (or iterates) it on its own loop; the call is kept at the session's end with how
            # it ended by then (behaviour/asynchronous.py).
            resume = functools.partial(self._resume, call.printed, traced=True, entropy=entropy)
            if kind == asynchronous.COROUTINE:
                call.relay = asynchronous.CoroutineRelay(result, resume)
            else:
                call.relay = asynchronous.AsyncGeneratorRelay(result, resume)
            call.relay.on_end = functools.partial(_snapshot_after, call)
            call.async_kind = kind
            self.pending.append((len(self.records), call))
            return call.relay.wrapper()
        if lazy.is_lazy(result) or lazy.is_lazy_each(result):
            # The test consumes the result lazily, as without coderefine; the call is kept at the end of the
            # session with what the test took by then (all of it, or a prefix). A tuple or list of lazy results
            # (`partition`) is relayed element by element, in the order the test took from them.
            relay = lazy.Relay if lazy.is_lazy(result) else lazy.Relays
            call.relay = relay(result, functools.partial(self._resume, call.printed))
            call.relay.on_end = functools.partial(_snapshot_after, call)
            self.pending.append((len(self.records), call))
            return call.relay.wrapper()
        self._store(call, outcome="return", value=result)
        return result

    def _resume(
        self, printed: io.StringIO, step: Any, traced: bool = False, entropy: dict[str, Any] | None = None
    ) -> Any:
        """One step of a lazy result the test consumes, or of an async call's work on the test's loop: part of
        the recorded call, so calls it makes to other targets are not outermost calls, and what it prints is
        the call's output (for an async call, with its line coverage and clock readings taken too)."""
        depth = getattr(self._local, "depth", 0)
        self._local.depth = 1
        tee = _Tee(sys.stdout)
        saved = sys.stdout
        sys.stdout = tee
        try:
            # An async call's body runs only in these steps: line coverage is taken here (a generator's is
            # taken by the coverage's own wrapper).
            if entropy is None:
                return self.coverage.traced_step(step) if traced else step()
            # An async call's clock readings happen in its steps: noted with the call's own, in order.
            with noted_clock(entropy["clock"]):
                return self.coverage.traced_step(step) if traced else step()
        finally:
            sys.stdout = saved
            self._local.depth = depth
            printed.write(tee.copy.getvalue())

    def _store(
        self, call: _Pending, outcome: str, value: Any = None, exc: BaseException | None = None, at: int | None = None
    ) -> None:
        target = call.target
        try:
            taken = {key: tap.recorded() for key, tap in call.taps.items()}
        except lazy.Unusable as problem:
            self._unusable(target, str(problem))
            return
        blob = call.blob
        if taken:  # the arguments as recorded before the call, with what the target took from each iterator
            before, before_kwargs = pickle.loads(blob)
            blob = keeping.dumps(lazy.with_recorded(before, before_kwargs, taken), PROTOCOL)
        record: dict[str, Any] = {
            "target": target,
            "args": blob,
            "outcome": outcome,
            "stdout": call.tee.copy.getvalue() + call.printed.getvalue(),
            "test": call.test,
            "entropy": call.entropy,
        }
        try:
            if call.after is not None:  # a lazy result's arguments as they were when it ended
                after_args, after_kwargs = pickle.loads(call.after)
                after = keeping.dumps(lazy.with_recorded(after_args, after_kwargs, taken), PROTOCOL)
            else:
                after = keeping.dumps(lazy.with_recorded(call.args, call.kwargs, taken), PROTOCOL)
        except Exception:
            after_call = unkept_arguments(call.args, call.kwargs)
            self._unusable(target, f"an argument cannot be kept after the call: {after_call}")
            return
        record["args_after"] = after if after != blob else None
        if call.async_kind is not None:
            record["asynchronous"] = call.async_kind
        if isinstance(call.relay, asynchronous.CoroutineRelay):
            try:
                awaited = call.relay.recorded()
            except lazy.Unusable as problem:
                self._unusable(target, str(problem))
                return
            try:
                record.update(asynchronous.recorded_awaited(awaited))
            except Exception:
                kind = describe_kind(awaited.value)
                self._unusable(target, f"result is a coroutine returning a {kind} (cannot be kept)")
                return
        elif call.relay is not None:
            try:
                record["value"] = keeping.dumps(call.relay.recorded(), PROTOCOL)
            except lazy.Unusable as problem:
                self._unusable(target, str(problem))
                return
            record["lazy"] = True
        elif outcome == "return":
            try:
                record["value"] = keeping.dumps(value, PROTOCOL)
            except Exception:
                self._unusable(target, f"result is a {describe_kind(value)} (cannot be kept)")
                return
        else:
            assert exc is not None
            record["exc_type"] = f"{type(exc).__module__}.{type(exc).__qualname__}"
            record["exc_message"] = str(exc)
        size = len(blob) + len(record.get("value") or b"") + len(after)
        if self.bytes + size > self.max_bytes:
            self.truncated = True
            self._reason(target, "not recorded: over the recording's size limit")
            return
        self.bytes += size
        if at is None:
            self.records.append(record)
        else:
            self.placed.append((at, record))

    def finish_lazy(self) -> None:
        """Keep the calls whose lazy results the tests consumed, in the order the calls were made."""
        pending, self.pending = self.pending, []
        for at, call in pending:
            self._store(call, outcome="return", at=at)
        placed, self.placed = self.placed, []
        for offset, (at, record) in enumerate(sorted(placed, key=lambda pair: pair[0])):
            self.records.insert(at + offset, record)

    def dump(self, path: str) -> None:
        """The calls file: what recording gave as its header, then the recorded calls."""
        self.finish_lazy()
        coverage = {
            target: TargetLines(tuple(lines["lines"]), tuple(lines["covered"]))
            for target, lines in self.coverage.report().items()
        }
        summary = RecordingSummary(
            module_file=self.module_file,
            counts=self.counts,
            unreplayable=self.unreplayable,
            truncated=self.truncated,
            patched=tuple(self.patched),
            reached=tuple(sorted(self.reached)),
            coverage=coverage,
            coverage_method=self.coverage.method,
            pinned=tuple(pinned_names()),
            not_pinned=NOT_PINNED,
            reasons=self.reasons,
            calls_per_test=self.calls_per_test,
        )
        write_calls(path, CallsHeader(module=self.module_name, recording=summary, folder=self.folder), self.records)


@dataclass
class _Pending:
    """A call on its way to the record: its arguments as pickled before it and as they are, its iterator
    arguments' taps, its output, and for a lazy result the relay the test consumes."""

    target: str
    blob: bytes
    args: tuple
    kwargs: dict[str, Any]
    taps: dict[Any, lazy.Tap]
    tee: _Tee
    entropy: dict[str, Any] | None
    test: str
    relay: lazy.Relay | lazy.Relays | asynchronous.CoroutineRelay | None = None
    async_kind: str | None = None  # a coroutine or async generator (asynchronous.COROUTINE...)
    printed: io.StringIO = field(default_factory=io.StringIO)
    after: bytes | None = None  # the arguments when a lazy result ended (before the test could change them)


def _snapshot_after(call: _Pending) -> None:
    """The arguments of a call whose lazy result just ended: the state to compare after the call, rather than
    whatever the test made of them by the session's end (iterator arguments stand as placeholders). A function
    argument's state is checked now too (behaviour/functions.py)."""
    for tap in call.taps.values():
        if isinstance(tap, functions.FunctionTap):
            tap.settle()
    try:
        call.after = keeping.dumps(lazy.with_recorded(call.args, call.kwargs, dict.fromkeys(call.taps)), PROTOCOL)
    except Exception:
        call.after = None  # kept at the session's end, or named unusable then


def describe_kind(value: object) -> str:
    """What users call a value's kind: `generator`, `socket`, `TextIOWrapper` (an open file)..."""
    if lazy.is_lazy(value) or isinstance(value, types.GeneratorType):
        return lazy.kind_name(value)
    if isinstance(value, io.IOBase):
        return f"{type(value).__name__} (an open file or stream)"
    return type(value).__name__


def unkept_argument(args: tuple, kwargs: dict[str, Any]) -> str | None:
    """Which argument cannot be pickled (kept for replay), and of what kind: "argument 1 is a socket"; None
    when each can be kept (`scan` asks this of the calls it sees, to estimate which ones optimize could use)."""
    for key, value in [*enumerate(args), *kwargs.items()]:
        name = f"argument {key + 1}" if isinstance(key, int) else f"argument {key!r}"
        if functions.is_function(value):
            unkept = functions.unkept_function(value, name)  # kept by its code (behaviour/functions.py), if it can be
            if unkept is not None:
                return unkept
            continue
        if lazy.tapped(value):
            continue  # an iterator or async generator: taken through a tap, not pickled (behaviour/lazy.py)
        try:
            keeping.dumps(value, PROTOCOL)
        except Exception:
            return f"{name} is a {describe_kind(value)} (cannot be kept)"
    return None


def unkept_arguments(args: tuple, kwargs: dict[str, Any]) -> str:
    return unkept_argument(args, kwargs) or "the arguments cannot be kept"


_CALL = "__coderefine_call__"  # the trampoline's keyword-only parameter holding the recording wrapper
_TRAMPOLINES: dict[int, types.CodeType] = {}


def _trampoline_code(free: int) -> types.CodeType:
    """Code that hands every call to the recording wrapper, with `free` free variables (unused) so it fits a
    function with a closure of that size (`__code__` may only be swapped for code with as many)."""
    if free not in _TRAMPOLINES:
        names = [f"_v{index}" for index in range(free)]
        touch = ("\n        " + "; ".join(names)) if names else ""
        source = (
            f"def _outer():\n    {' = '.join([*names, 'None']) if names else 'pass'}\n"
            f"    def trampoline(*args, {_CALL}=None, **kwargs):{touch}\n"
            f"        return {_CALL}(*args, **kwargs)\n"
            "    return trampoline\n"
        )
        scope: dict[str, Any] = {}
        exec(compile(source, "<coderefine recording>", "exec"), scope)
        _TRAMPOLINES[free] = scope["_outer"]().__code__
    return _TRAMPOLINES[free]


def _swap_code(func: types.FunctionType, make_wrapper: Any) -> bool:
    """Record the function wherever it is called: a copy keeps the real code, and the function object itself
    (the one every module, table or decorator took a reference to at import) now runs a trampoline into
    the recording wrapper around that copy. Only the module attribute would miss `from .utils import f`
    done in a sibling module imported before recording started."""
    if _CALL in func.__code__.co_varnames:
        return False  # already swapped
    real = types.FunctionType(func.__code__, func.__globals__, func.__name__, func.__defaults__, func.__closure__)
    real.__kwdefaults__ = func.__kwdefaults__
    real.__dict__.update(func.__dict__)
    real.__qualname__ = func.__qualname__
    real.__module__ = func.__module__
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        signature = None
    code = _trampoline_code(len(func.__code__.co_freevars))
    names = {"co_name": func.__code__.co_name}
    if hasattr(code, "co_qualname"):  # 3.11+: tracebacks name the function, not the trampoline
        names["co_qualname"] = func.__code__.co_qualname
    code = code.replace(**names)
    try:
        func.__code__ = code
    except (TypeError, ValueError):
        return False
    func.__kwdefaults__ = {_CALL: make_wrapper(real)}
    if signature is not None:
        func.__signature__ = signature  # inspect.signature still shows the real parameters
    return True


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Patch the target module right after it is first imported, whoever imports it.

    Patching at import time (rather than importing it ourselves up front) keeps the project's own import
    order: conftest set-up runs before the module is loaded, exactly as without coderefine.
    """

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self.recorder.module_name:
            return None
        spec = self._found_by_the_others(fullname, path, target)
        if spec is None or spec.loader is None:
            return None
        loader = spec.loader
        exec_module = loader.exec_module
        recorder = self.recorder

        def exec_and_patch(module: types.ModuleType) -> None:
            exec_module(module)
            recorder.patch(module)

        loader.exec_module = exec_and_patch  # type: ignore[method-assign]
        sys.meta_path.remove(self)
        return spec

    def _found_by_the_others(self, fullname: str, path: Any, target: Any) -> Any:
        """The spec the finders after this one give, as the import would have without it: the reach tracer's
        instrumenting finder (a first run's trace records in the same run) or a project's own finder."""
        later = sys.meta_path[sys.meta_path.index(self) + 1 :] if self in sys.meta_path else []
        for finder in later:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                return spec
        return importlib.machinery.PathFinder.find_spec(fullname, path)
