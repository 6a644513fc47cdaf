"""What `coderefine scan` measures in a run of the project's code: each project function's exclusive time,
calls and the tests it ran in (cProfile, one profiler per test), then, in a second run, the line coverage
of the functions worth judging (a trace function that follows only their frames).

Standard library only. Used by the pytest plugin (plugin.py) and by the workload command wrapper
(command.py); both write a protocol.ProfileTable or CoverageTable that steps.py turns into a ProfileReport.
"""

from __future__ import annotations

import cProfile
import os
import sys
import threading
import types
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

Key = tuple[str, int, str]  # cProfile's: file, first line, code name
# A function never fully covered would be traced line by line for the whole run (the cost of coverage on a
# hot function with one untested branch). Tracing stops for a frame after this many line events without
# a new line, and for the function after this many calls in a row without one: its coverage is then
# taken as settled. An estimate for ranking; each refinement's baseline measures coverage exactly.
QUIET_LINES = 2000
QUIET_CALLS = 50


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


class FunctionCoverage:
    """Line coverage of chosen functions (file relative to the workspace, first line, code name: a module's
    own code starts on line 1 too, so the name tells them apart), until settled (QUIET_*). Only their frames
    (and the code nested in them) get a line tracer; every other frame costs one lookup on its call."""

    def __init__(self, project: ProjectFilter, wanted: list[tuple[str, int, str]]) -> None:
        self.project = project
        self.wanted = {(f, line, name) for f, line, name in wanted}
        self.owner: dict[types.CodeType, Key] = {}
        self.seen: set[types.CodeType] = set()  # code objects looked at once
        self.remaining: dict[types.CodeType, set[int]] = {}  # lines of wanted code not run yet
        self.stale: dict[types.CodeType, int] = {}  # calls in a row that ran no new line
        self.lines: dict[Key, set[int]] = {}
        self.hit: dict[Key, set[int]] = {}

    def _register(self, code: types.CodeType, key: Key) -> None:
        self.owner[code] = key
        own = _own_lines(code) or {code.co_firstlineno}  # `def f(x): return x`: its only line is the def line
        self.lines.setdefault(key, set()).update(own)
        self.remaining[code] = set(own)
        for constant in code.co_consts:
            if isinstance(constant, types.CodeType):
                self._register(constant, key)

    def settled(self, key: Key) -> bool:
        """Every line of the function has run, or no new one showed for a while: nothing left to learn."""
        return key in self.lines and not any(self.owner[code] == key for code in self.remaining)

    def _on_call(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        code = frame.f_code
        remaining = self.remaining.get(code)
        if remaining is None:
            if code in self.seen:
                return None  # not wanted, or every line of it has run: no tracing any more
            self.seen.add(code)
            relative = self.project.relative(code.co_filename)
            key = (relative, code.co_firstlineno, code.co_name) if relative is not None else None
            if key not in self.wanted or code in self.owner:
                return None
            self._register(code, key)  # type: ignore[arg-type]
            remaining = self.remaining[code]
        hit = self.hit.setdefault(self.owner[code], set())
        if not _own_lines(code):
            hit.add(code.co_firstlineno)
            self.remaining.pop(code, None)
            return None
        left, stale = self.remaining, self.stale
        before = len(remaining)
        quiet = 0  # line events in this frame since the last new line

        def on_line(frame: types.FrameType, event: str, arg: Any) -> Any:
            nonlocal quiet
            if event == "line":
                line = frame.f_lineno
                if line in remaining:
                    hit.add(line)
                    remaining.discard(line)
                    quiet = 0
                    if not remaining:  # a hot loop costs tracing only until each of its lines has run once
                        left.pop(code, None)
                        return None
                else:
                    quiet += 1
                    if quiet > QUIET_LINES:  # a loop that shows no new line: stop tracing this frame
                        settle()
                        return None
            elif event == "return":
                settle()
            return on_line

        def settle() -> None:
            if len(remaining) < before:
                stale[code] = 0
                return
            stale[code] = stale.get(code, 0) + 1
            if stale[code] > QUIET_CALLS:  # calls in a row that show no new line: its coverage is settled
                left.pop(code, None)

        return on_line

    def start(self) -> None:
        sys.settrace(self._on_call)
        threading.settrace(self._on_call)

    def stop(self) -> None:
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type]

    def dump(self, path: str) -> None:
        found = tuple(
            CoverageRow(file=f, line=line, name=name, lines=len(lines), covered=len(self.hit.get(key, set()) & lines))
            for key, lines in sorted(self.lines.items())
            for f, line, name in [key]
        )
        write_json(path, CoverageTable(method="sys.settrace", functions=found))


def from_environment() -> tuple[Profiles | None, FunctionCoverage | None, str, dict[str, tuple[Key, ...]]]:
    """The collector the environment asks for (CODEREFINE_PROFILE: a protocol.ProfilePass), where it writes, and
    (coverage pass) which wanted functions each test reaches."""
    spec = read_json(ProfilePass, os.environ["CODEREFINE_PROFILE"])
    project = ProjectFilter(spec.workspace, list(spec.paths))
    if spec.kind == "profile":
        return Profiles(project), None, spec.out, {}
    return None, FunctionCoverage(project, list(spec.wanted)), spec.out, spec.reaches
