"""Line coverage of the target functions while the original's tests run: how much of each target the
tests (and so the recorded calls) exercise. Standard library only, since the sandbox's interpreter may be
a user's image without `coverage`:

- Python 3.12+: `sys.monitoring` LINE events, switched on for the targets' code objects only, each
  location disabled after its first hit, so the cost is one callback per distinct line;
- older: `sys.settrace`, switched on only while a recorded call to a target runs (`traced_call`; the
  recorder wraps every target) and only while some line of the targets has not run yet. Inside, a frame
  running other code costs one dictionary lookup on its call event; the test suite outside the targets'
  calls runs untraced. A generator a target returns runs later, when the test consumes it: it is handed
  back wrapped in a generator that switches the tracer on around each resume of the target's own, so its
  body's lines are seen too (toolz's itertoolz is mostly generators: without this its coverage read 42%);
  a coroutine or async generator is driven a step at a time by recording, each step traced (`traced_step`).

A target's lines are the line starts of its code object and of the code nested in it (comprehensions,
lambdas, inner functions), without the `def` lines themselves: what `coverage` would call statements.
"""

from __future__ import annotations

import inspect
import sys
import types
from typing import Any

from coderefine_sandbox.behaviour.lazy import MAX_ELEMENTS

_FREE_TOOL_IDS = (3, 4, 1, 2)  # 0 debugger, 1 coverage, 2 profiler, 5 optimizer by convention; 3, 4 unused


def _code_objects(code: types.CodeType) -> list[types.CodeType]:
    found = [code]
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            found.extend(_code_objects(constant))
    return found


def _lines(code: types.CodeType) -> set[int]:
    lines = {line for _, _, line in code.co_lines() if line is not None}
    lines.discard(code.co_firstlineno)  # the def (or the comprehension's own line, counted by its parent)
    return lines


class LineCoverage:
    def __init__(self) -> None:
        self.owner: dict[types.CodeType, str] = {}  # code object -> target name
        self.lines: dict[str, set[int]] = {}
        self.hit: dict[str, set[int]] = {}
        self.one_liners: set[types.CodeType] = set()  # `def f(x): return x`: its only line is the def line
        # settrace: each code object's lines not run yet; once none is left the code is not traced any more,
        # so a hot loop in a target costs tracing only until every line of it has run.
        self.remaining: dict[types.CodeType, set[int]] = {}
        self.method = "none"
        self.tool: int | None = None

    def add(self, target: str, func: Any) -> None:
        code = getattr(inspect.unwrap(func), "__code__", None)
        if not isinstance(code, types.CodeType):
            return  # a builtin or a callable object: nothing to measure
        lines = self.lines.setdefault(target, set())
        self.hit.setdefault(target, set())
        outer = _lines(code)
        if not outer:
            outer = {code.co_firstlineno}
            self.one_liners.add(code)
        lines |= outer
        self.remaining[code] = set(outer)
        for nested in _code_objects(code):
            self.owner[nested] = target
            if nested is not code:
                lines |= _lines(nested)
                self.remaining[nested] = _lines(nested)

    def start(self) -> None:
        if not self.owner:
            return
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is not None and self._start_monitoring(monitoring):
            self.method = "sys.monitoring"
            return
        self.method = "sys.settrace"  # switched on per call, by traced_call

    def _start_monitoring(self, monitoring: Any) -> bool:
        tool = next((tool for tool in _FREE_TOOL_IDS if monitoring.get_tool(tool) is None), None)
        if tool is None:
            return False  # every id taken, e.g. by a coverage run of the user's own
        monitoring.use_tool_id(tool, "coderefine")
        self.tool = tool
        owner, hit, one_liners, disable = self.owner, self.hit, self.one_liners, monitoring.DISABLE

        def on_line(code: types.CodeType, line: int) -> Any:
            target = owner.get(code)
            if target is not None:
                hit[target].add(line)
            return disable  # this location is known now: no more events from it

        def on_start(code: types.CodeType, offset: int) -> Any:
            if code in one_liners:
                hit[owner[code]].add(code.co_firstlineno)
            return disable

        monitoring.register_callback(tool, monitoring.events.LINE, on_line)
        monitoring.register_callback(tool, monitoring.events.PY_START, on_start)
        for code in owner:
            events = monitoring.events.LINE | (monitoring.events.PY_START if code in one_liners else 0)
            monitoring.set_local_events(tool, code, events)
        return True

    def stop(self) -> None:
        monitoring = getattr(sys, "monitoring", None)
        if self.method == "sys.monitoring" and monitoring is not None and self.tool is not None:
            for code in self.owner:
                monitoring.set_local_events(self.tool, code, 0)
            monitoring.free_tool_id(self.tool)
        self.method = "none"

    def traced_call(self, func: Any, args: tuple, kwargs: dict) -> Any:
        """Call a target; under sys.settrace, with the line tracer on for this call if a line is still unrun."""
        if self.method != "sys.settrace" or not self.remaining or sys.gettrace() is not None:
            return func(*args, **kwargs)  # nothing left to see, or another tracer (a debugger) owns the hook
        sys.settrace(self._on_call)
        try:
            result = func(*args, **kwargs)
        finally:
            sys.settrace(None)
        if self._unrun_generator(result):
            return self._traced_generator(result)
        if type(result) in (tuple, list) and 0 < len(result) <= MAX_ELEMENTS:
            # a tuple of the target's own generators (more-itertools `partition`): their lines run as each is
            # consumed, as a returned generator's do
            traced = [self._traced_generator(item) if self._unrun_generator(item) else item for item in result]
            if any(new is not old for new, old in zip(traced, result, strict=True)):
                return type(result)(traced)
        return result

    def _unrun_generator(self, value: Any) -> bool:
        return isinstance(value, types.GeneratorType) and value.gi_code in self.remaining

    def traced_step(self, step: Any) -> Any:
        """One step of a target's coroutine or async generator (recording drives them a step at a time: see
        behaviour/asynchronous.py); under sys.settrace, with the line tracer on while its lines are unrun."""
        if self.method != "sys.settrace" or not self.remaining or sys.gettrace() is not None:
            return step()
        sys.settrace(self._on_call)
        try:
            return step()
        finally:
            sys.settrace(None)

    def _traced_generator(self, generator: types.GeneratorType) -> Any:
        """`generator`, resumed with the line tracer on until its lines have all run; send, throw and close
        reach it as they would without the wrapper (the protocol of `yield from`, written out so the tracer
        is on only while the target's own frame runs)."""
        received: Any = None
        thrown: BaseException | None = None
        while True:
            tracing = generator.gi_code in self.remaining and sys.gettrace() is None
            if tracing:
                sys.settrace(self._on_call)
            try:
                item = generator.throw(thrown) if thrown is not None else generator.send(received)
            except StopIteration as stop:
                return stop.value
            finally:
                if tracing:
                    sys.settrace(None)
            received, thrown = None, None
            try:
                received = yield item
            except GeneratorExit:
                generator.close()
                raise
            except BaseException as exc:  # thrown in by the consumer: passed on to the target
                thrown = exc

    def _on_call(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        code = frame.f_code
        remaining = self.remaining.get(code)
        if remaining is None:
            return None  # not a target's code, or every line of it has run already
        hit = self.hit[self.owner[code]]
        if code in self.one_liners:
            hit.add(code.co_firstlineno)
            del self.remaining[code]
            return None
        left = self.remaining

        def on_line(frame: types.FrameType, event: str, arg: Any) -> Any:
            if event == "line":
                line = frame.f_lineno
                hit.add(line)
                remaining.discard(line)
                if not remaining:
                    left.pop(code, None)
                    return None  # this frame needs no more line events either
            return on_line

        return on_line

    def report(self) -> dict[str, dict[str, Any]]:
        """Per target: its lines and the ones the tests ran (sorted line numbers)."""
        return {
            target: {"lines": sorted(lines), "covered": sorted(self.hit[target] & lines)}
            for target, lines in self.lines.items()
        }
