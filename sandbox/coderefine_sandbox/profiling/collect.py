"""What `coderefine scan` measures in a run of the project's code: each project function's exclusive time,
calls and the tests it ran in (cProfile, one profiler per test), then, in a second run, the line coverage
of the functions worth judging (a trace function that follows only their frames).

Standard library only. Used by the pytest plugin (plugin.py) and by the workload command wrapper
(command.py); both write a protocol.ProfileTable or CoverageTable that steps.py turns into a ProfileReport.
"""

from __future__ import annotations

import cProfile
import dis
import inspect
import os
import sys
import threading
import types
from dataclasses import dataclass, field
from typing import Any

from coderefine_sandbox.protocol import (
    CoverageRow,
    CoverageTable,
    ProfilePass,
    ProfileRow,
    ProfileTable,
    read_json,
    write_json,
)
from coderefine_sandbox.recording.capture import unkept_argument

Key = tuple[str, int, str]  # cProfile's: file, first line, code name
# Code that a call event may resume rather than start (cProfile counts each resumption as a call).
_SUSPENDABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE
_RESUME = dis.opmap.get("RESUME")  # 3.11+: its argument is 0 where a function starts, else where it resumes
# A function's calls looked at for whether optimize could keep their arguments, at least (when its lines have
# all run sooner) before its coverage counts as settled.
PROBE_MIN = 20
# The cost bounds of line tracing, for a function never fully covered (the gate traces one module's targets;
# scan traces every hot function of the project at once). Its lines are taken as settled after this many call
# events in a row (calls and resumptions) that ran no new line: a rarely taken branch still shows (tabulate's
# `_format` read 32% where the gate measures 89% when this was 50), a generator resumed millions of times
# stops costing (more-itertools' `sieve`: 52 million resumptions).
QUIET_CALLS = 1000
# A frame stops getting line events after this many without a new line (one long loop), and then only its
# return line is noted (the line after such a loop is usually the return).
QUIET_LINES = 10_000


class ProjectFilter:
    """Keeps the functions defined in files under the project's paths (not dependencies, not the runner)."""

    def __init__(self, workspace: str, paths: list[str]) -> None:
        self.workspace = os.path.realpath(workspace)
        self.roots = [os.path.realpath(os.path.join(self.workspace, p)) for p in paths] or [self.workspace]
        self.cache: dict[str, str | None] = {}

    def relative(self, filename: str) -> str | None:
        """The file relative to the workspace when it is one of the project's, else None."""
        if filename in self.cache:
            return self.cache[filename]
        found = None
        if filename and not filename.startswith("<"):
            real = os.path.realpath(filename)
            inside = any(real == root or real.startswith(root + os.sep) for root in self.roots)
            if inside and "site-packages" not in real.split(os.sep):
                found = os.path.relpath(real, self.workspace)
        self.cache[filename] = found
        return found


class Profiles:
    """Per-test profiles merged into one table of the project's functions."""

    def __init__(self, project: ProjectFilter) -> None:
        self.project = project
        self.total = 0.0
        self.rows: dict[Key, dict[str, Any]] = {}
        self.current: cProfile.Profile | None = None

    def start(self) -> None:
        self.current = cProfile.Profile()
        self.current.enable()

    def stop(self, test: str | None) -> None:
        profiler, self.current = self.current, None
        if profiler is None:
            return
        profiler.disable()
        profiler.create_stats()
        stats: dict[Key, tuple[int, int, float, float, Any]] = profiler.stats  # type: ignore[attr-defined]
        for (filename, line, name), (primitive, calls, own, cumulative, _callers) in stats.items():
            self.total += own
            relative = self.project.relative(filename)
            if relative is None or name == "<module>":  # importing a module is not a function to refine
                continue
            row = self.rows.setdefault(
                (relative, line, name),
                {"own": 0.0, "cumulative": 0.0, "calls": 0, "primitive": 0, "tests": [], "test_count": 0},
            )
            row["own"] += own
            row["cumulative"] += cumulative
            row["calls"] += calls
            row["primitive"] += primitive
            if test is not None:
                row["test_count"] += 1
                row["tests"].append(test)

    def dump(self, path: str) -> None:
        functions = tuple(
            ProfileRow(
                file=f,
                line=line,
                name=name,
                own=row["own"],
                cumulative=row["cumulative"],
                calls=row["calls"],
                primitive=row["primitive"],
                tests=tuple(row["tests"]),
                test_count=row["test_count"],
            )
            for (f, line, name), row in sorted(self.rows.items())
        )
        write_json(path, ProfileTable(total=self.total, functions=functions))


def _own_lines(code: types.CodeType) -> set[int]:
    lines = {line for _, _, line in code.co_lines() if line is not None}
    lines.discard(code.co_firstlineno)
    return lines


def starts_the_call(frame: types.FrameType) -> bool:
    """A call event that starts the function, not one resuming a suspended generator or coroutine."""
    code = frame.f_code
    if not code.co_flags & _SUSPENDABLE:
        return True
    at = frame.f_lasti
    if at < 0 or _RESUME is None:  # before 3.11 a frame that has not run yet is at -1
        return at < 0
    raw = code.co_code
    return raw[at] != _RESUME or raw[at + 1] & 3 == 0


def call_arguments(frame: types.FrameType) -> tuple[tuple, dict[str, Any]]:
    """The arguments a frame's function was called with, read from its locals at the call event."""
    code = frame.f_code
    names, local = code.co_varnames, frame.f_locals
    positional, keyword_only = code.co_argcount, code.co_kwonlyargcount
    args = [local[name] for name in names[:positional] if name in local]
    kwargs = {name: local[name] for name in names[positional : positional + keyword_only] if name in local}
    at = positional + keyword_only
    if code.co_flags & inspect.CO_VARARGS:
        args.extend(local.get(names[at], ()))
        at += 1
    if code.co_flags & inspect.CO_VARKEYWORDS:
        kwargs.update(local.get(names[at], {}))
    return tuple(args), kwargs


@dataclass
class _Calls:
    """One wanted function's call events while traced, and what its calls' arguments showed."""

    starts: int = 0
    resumes: int = 0
    probed: int = 0
    usable: int = 0
    unusable: dict[str, int] = field(default_factory=dict)


class FunctionCoverage:
    """Line coverage of chosen functions (file relative to the workspace, first line, code name: a module's
    own code starts on line 1 too, so the name tells them apart), under the rules optimize's gate applies:
    their lines are traced over every call until each has run (as optimize's baseline does), and the
    arguments of their first `max_calls` calls (optimize records that many) are tried for whether optimize
    could keep them for replay. Only their frames (and the code nested in them) get a line tracer; every other
    frame costs one lookup on its call. A function is settled (its tests then run untraced) once each of its
    lines has run (or QUIET_CALLS showed no new one) and PROBE_MIN of its calls were looked at (or QUIET_CALLS
    call events were seen)."""

    def __init__(self, project: ProjectFilter, wanted: list[tuple[str, int, str]], max_calls: int = 500) -> None:
        self.project = project
        self.wanted = {(f, line, name) for f, line, name in wanted}
        self.max_calls = max_calls
        self.top: dict[types.CodeType, Key] = {}  # a wanted function's own code object
        self.owner: dict[types.CodeType, Key] = {}  # ... and the code nested in it
        self.seen: set[types.CodeType] = set()  # code objects looked at once
        self.remaining: dict[types.CodeType, set[int]] = {}  # lines of wanted code not run yet
        self.lines: dict[Key, set[int]] = {}
        self.hit: dict[Key, set[int]] = {}
        self.calls: dict[Key, _Calls] = {}
        self.quiet: dict[Key, int] = {}  # call events since the function last ran a new line

    def _register(self, code: types.CodeType, key: Key) -> None:
        self.owner[code] = key
        own = _own_lines(code) or {code.co_firstlineno}  # `def f(x): return x`: its only line is the def line
        self.lines.setdefault(key, set()).update(own)
        self.hit.setdefault(key, set())
        self.remaining[code] = set(own)
        for constant in code.co_consts:
            if isinstance(constant, types.CodeType):
                self._register(constant, key)

    def settled(self, key: Key) -> bool:
        """Nothing left to learn: every line has run and enough calls were looked at."""
        calls = self.calls.get(key)
        if key not in self.lines or calls is None:
            return False
        lines_done = not any(self.owner[code] == key for code in self.remaining)
        # A generator started a few times and resumed millions of times has shown all it will after QUIET_CALLS.
        return lines_done and (calls.probed >= PROBE_MIN or calls.starts + calls.resumes >= QUIET_CALLS)

    def _probe(self, calls: _Calls, frame: types.FrameType) -> None:
        try:
            args, kwargs = call_arguments(frame)
            problem = unkept_argument(args, kwargs)
        except Exception as exc:  # a frame whose locals cannot be read: say so rather than guess
            problem = f"its arguments could not be read ({type(exc).__name__})"
        calls.probed += 1
        if problem is None:
            calls.usable += 1
        else:
            calls.unusable[problem] = calls.unusable.get(problem, 0) + 1

    def _on_call(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        code = frame.f_code
        key = self.top.get(code)
        if key is None:
            owner = self.owner.get(code)
            if owner is not None:  # code nested in a wanted function: its lines count for that function
                return self._line_tracer(code, owner) if code in self.remaining else None
            if code in self.seen:
                return None  # not wanted
            self.seen.add(code)
            relative = self.project.relative(code.co_filename)
            found = (relative, code.co_firstlineno, code.co_name) if relative is not None else None
            if found not in self.wanted or found in self.calls:
                return None
            key = found
            self.top[code] = key
            self.calls[key] = _Calls()
            self._register(code, key)
        calls = self.calls[key]
        if starts_the_call(frame):
            calls.starts += 1
            if calls.starts <= self.max_calls:
                self._probe(calls, frame)
        else:
            calls.resumes += 1
        if code not in self.remaining:
            return None  # every line of it has run
        quiet = self.quiet[key] = self.quiet.get(key, 0) + 1
        if quiet > QUIET_CALLS:  # its coverage is settled: no more line tracing for any of its code
            for other in [c for c, owner in self.owner.items() if owner == key]:
                self.remaining.pop(other, None)
            return None
        return self._line_tracer(code, key)

    def _line_tracer(self, code: types.CodeType, key: Key) -> Any:
        remaining, left, hit, quiet = self.remaining[code], self.remaining, self.hit[key], self.quiet
        if not _own_lines(code):
            hit.add(code.co_firstlineno)
            left.pop(code, None)
            return None
        events = 0  # line events in this frame since its last new line

        def on_line(frame: types.FrameType, event: str, arg: Any) -> Any:
            nonlocal events
            if event == "line":
                line = frame.f_lineno
                if line in remaining:
                    hit.add(line)
                    remaining.discard(line)
                    quiet[key] = events = 0
                    if not remaining:  # a hot loop costs tracing only until each of its lines has run once
                        left.pop(code, None)
                        return None
                else:
                    events += 1
                    if events > QUIET_LINES:  # one long loop: only its return line from here on
                        frame.f_trace_lines = False
            elif event == "return" and frame.f_lineno in remaining:
                hit.add(frame.f_lineno)
                remaining.discard(frame.f_lineno)
            return on_line

        return on_line

    def start(self) -> None:
        sys.settrace(self._on_call)
        threading.settrace(self._on_call)

    def stop(self) -> None:
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type]

    def dump(self, path: str) -> None:
        found = []
        for key, lines in sorted(self.lines.items()):
            calls = self.calls.get(key, _Calls())
            found.append(
                CoverageRow(
                    file=key[0],
                    line=key[1],
                    name=key[2],
                    lines=len(lines),
                    covered=len(self.hit.get(key, set()) & lines),
                    starts=calls.starts,
                    resumes=calls.resumes,
                    probed=calls.probed,
                    usable=calls.usable,
                    unusable=dict(calls.unusable),
                )
            )
        write_json(path, CoverageTable(method="sys.settrace", functions=tuple(found)))


def from_environment() -> tuple[Profiles | None, FunctionCoverage | None, str, dict[str, tuple[Key, ...]]]:
    """The collector the environment asks for (CODEREFINE_PROFILE: a protocol.ProfilePass), where it writes, and
    (coverage pass) which wanted functions each test reaches."""
    spec = read_json(ProfilePass, os.environ["CODEREFINE_PROFILE"])
    project = ProjectFilter(spec.workspace, list(spec.paths))
    if spec.kind == "profile":
        return Profiles(project), None, spec.out, {}
    return None, FunctionCoverage(project, list(spec.wanted), spec.max_calls), spec.out, spec.reaches
