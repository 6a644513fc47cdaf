"""The reach tracer: which of the project's functions run while each test runs, directly or through any chain.

Cheap enough for a whole suite, because it never follows lines and decides about each code object once:
- Python 3.12+: `sys.monitoring`'s PY_START event, answered with DISABLE every time: code outside the project
  is never reported again, project code not again in the same test; `restart_events()` at the start of the
  next test turns the project's code back on (and the rest once, for one more lookup each).
- Python < 3.12: the project's own modules are compiled, as they are imported, with one statement first in
  each function body, `__coderefine_reach__(N)` (`set.add` of the one set the current test fills, a builtin:
  tens of nanoseconds per call of a project function, nothing elsewhere). A global `sys.settrace` function
  that looks each frame's code object up in a dict and returns None (no line events) was the first way:
  it costs every call of every function (pytest's, the standard library's) a Python call, 3.4x the
  more-itertools suite's time, and turns the 3.11 interpreter's specialisation off while set; it stays as
  `CODEREFINE_REACH_TRACER=settrace`, for measuring. Test files and conftest.py are left to pytest (its
  assertion rewriting compiles them); their own functions are not in the map, and a test file's change
  re-traces its tests anyway.

Standard library only: this runs inside the sandbox, in the user's test process.
"""

from __future__ import annotations

import ast
import builtins
import fnmatch
import importlib.machinery
import os
import sys
import threading
from collections.abc import Sequence
from types import CodeType, FrameType, ModuleType
from typing import Any

_SKIP_PARTS = {"site-packages", "dist-packages", ".venv", "venv", ".tox", ".nox", "__pycache__"}


class ProjectCode:
    """Decides, once per code object, whether it is the project's: defined in a file under the workspace that
    is not an installed package's; a project code object gets an index into `keys` ("FILE::QUALNAME")."""

    def __init__(self, workspace: str) -> None:
        self.workspace = os.path.realpath(workspace)
        self.keys: list[str] = []
        self._key_index: dict[str, int] = {}
        self._files: dict[str, str | None] = {}
        self.index: dict[CodeType, int] = {}  # -1: not the project's

    def relative(self, filename: str) -> str | None:
        found = self._files.get(filename, "")
        if found != "":
            return found
        found = None
        if filename and not filename.startswith("<"):
            real = os.path.realpath(filename)
            if real.startswith(self.workspace + os.sep):
                rel = os.path.relpath(real, self.workspace)
                if not _SKIP_PARTS.intersection(rel.split(os.sep)):
                    found = rel.replace(os.sep, "/")
        self._files[filename] = found
        return found

    def number(self, key: str) -> int:
        found = self._key_index.get(key, -1)
        if found < 0:
            found = self._key_index[key] = len(self.keys)
            self.keys.append(key)
        return found

    def classify(self, code: CodeType) -> int:
        rel = self.relative(code.co_filename)
        number = -1 if rel is None else self.number(f"{rel}::{getattr(code, 'co_qualname', code.co_name)}")
        self.index[code] = number
        return number


class ReachTracer:
    """Per test: the indices (into `project.keys`) of the project functions that ran between `start(test)`
    and `stop()`."""

    def __init__(self, workspace: str, kind: str | None = None, test_patterns: Sequence[str] = ()) -> None:
        self.project = ProjectCode(workspace)
        self.per_test: dict[str, set[int]] = {}
        self.kind = kind or ("sys.monitoring" if hasattr(sys, "monitoring") else "instrument")
        self._tool: int | None = None
        self._seen: set[int] = set()
        self._hits: set[int] = set()  # what the instrumented functions add to, during a test
        self._finder: _Instrumenting | None = None
        if self.kind == "instrument":
            self._finder = _Instrumenting(self.project, list(test_patterns) or ["test_*.py", "*_test.py"])
            builtins.__coderefine_reach__ = self._ignore  # type: ignore[attr-defined]
            sys.meta_path.insert(0, self._finder)

    @staticmethod
    def _ignore(number: int) -> None:
        """Between tests (collection, module-level code): an instrumented call counts for no test."""

    def start(self, test: str) -> None:
        seen = self.per_test.setdefault(test, set())  # a rerun (a plugin's) adds to the same test
        if self.kind == "sys.monitoring":
            self._seen = seen
            self._start_monitoring()
        elif self.kind == "instrument":
            self._seen = seen
            self._hits = set()
            builtins.__coderefine_reach__ = self._hits.add  # type: ignore[attr-defined]
        else:
            trace = _trace_function(self.project, seen)
            threading.settrace(trace)
            sys.settrace(trace)

    def stop(self) -> None:
        if self.kind == "sys.monitoring":
            if self._tool is not None:
                sys.monitoring.set_events(self._tool, 0)
            self._seen = set()  # a thread the test left running adds to no test
        elif self.kind == "instrument":
            builtins.__coderefine_reach__ = self._ignore  # type: ignore[attr-defined]
            self._seen |= self._hits
            self._seen, self._hits = set(), set()
        else:
            sys.settrace(None)
            threading.settrace(None)  # type: ignore[arg-type]

    def close(self) -> None:
        self.stop()
        if self._finder is not None and self._finder in sys.meta_path:
            sys.meta_path.remove(self._finder)
        if self._tool is not None:
            sys.monitoring.register_callback(self._tool, sys.monitoring.events.PY_START, None)
            sys.monitoring.free_tool_id(self._tool)
            self._tool = None

    def _start_monitoring(self) -> None:  # pragma: no cover - Python 3.12+ only
        monitoring: Any = sys.monitoring
        if self._tool is None:
            for tool in (3, 4, monitoring.PROFILER_ID):  # unassigned ids first: leave the profiler's to cProfile
                try:
                    monitoring.use_tool_id(tool, "coderefine-reach")
                except ValueError:
                    continue
                self._tool = tool
                break
            else:
                raise RuntimeError("no sys.monitoring tool id is free")
            monitoring.register_callback(self._tool, monitoring.events.PY_START, self._on_start)
        monitoring.set_events(self._tool, monitoring.events.PY_START)
        monitoring.restart_events()

    def _on_start(self, code: CodeType, offset: int) -> Any:  # pragma: no cover - Python 3.12+ only
        number = self.project.index.get(code)
        if number is None:
            number = self.project.classify(code)
        if number >= 0:
            self._seen.add(number)
        return sys.monitoring.DISABLE

    def table(self) -> tuple[tuple[str, ...], dict[str, tuple[int, ...]]]:
        return tuple(self.project.keys), {test: tuple(sorted(seen)) for test, seen in self.per_test.items()}


def _trace_function(project: ProjectCode, seen: set[int]) -> Any:
    """The global trace function of one test: its locals are bound once, since it runs on every call."""
    index = project.index
    classify = project.classify
    add = seen.add

    def trace(frame: FrameType, event: str, arg: Any) -> None:
        code = frame.f_code
        number = index.get(code)
        if number is None:
            number = classify(code)
        if number >= 0:
            add(number)
        return None  # no local trace function: no line events for this frame

    return trace


# ----------------------------------------------------------------------------- Python < 3.12: instrumented code


class _Instrumenting:
    """A meta path finder that hands the project's own modules (not its test files or conftest.py, which
    pytest compiles) to a loader that instruments them."""

    def __init__(self, project: ProjectCode, test_patterns: list[str]) -> None:
        self.project = project
        self.test_patterns = test_patterns

    def find_spec(self, fullname: str, path: Any, target: ModuleType | None = None) -> Any:
        """The project's modules, with the instrumenting loader; None for every other module, which the
        finders after this one (frozen, built-in, the path, a package's own) then find as they always do."""
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not spec.origin or not spec.origin.endswith(".py") or not spec.has_location:
            return None
        name = os.path.basename(spec.origin)
        if name == "conftest.py" or any(fnmatch.fnmatch(name, pattern) for pattern in self.test_patterns):
            return None
        rel = self.project.relative(spec.origin)
        if rel is None:
            return None
        spec.loader = _InstrumentingLoader(fullname, spec.origin, self.project, rel)
        return spec


class _InstrumentingLoader(importlib.machinery.SourceFileLoader):
    def __init__(self, fullname: str, path: str, project: ProjectCode, rel: str) -> None:
        super().__init__(fullname, path)
        self.project = project
        self.rel = rel

    def get_code(self, fullname: str) -> CodeType:
        # Always from the source: a cached .pyc would be the code without the marks.
        source = self.get_data(self.path)
        return self.source_to_code(source, self.path)

    def source_to_code(self, data: Any, path: Any, *, _optimize: int = -1) -> CodeType:  # type: ignore[override]
        try:
            tree = ast.parse(data, filename=path)
        except (SyntaxError, ValueError):
            return super().source_to_code(data, path)  # let the import report it as it would
        _Marker(self.project, self.rel).visit(tree)
        return compile(tree, path, "exec", dont_inherit=True, optimize=_optimize)


class _Marker(ast.NodeVisitor):
    """Puts `__coderefine_reach__(N)` first in each function body (after its docstring), N the number of
    "FILE::QUALNAME", with the qualified name the compiler will give the code object."""

    def __init__(self, project: ProjectCode, rel: str) -> None:
        self.project = project
        self.rel = rel
        self.scope: list[str] = []

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        qualname = ".".join([*self.scope, node.name])
        number = self.project.number(f"{self.rel}::{qualname}")
        first = node.body[0]
        at = 1 if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) else 0
        call = ast.Expr(ast.Call(ast.Name("__coderefine_reach__", ast.Load()), [ast.Constant(number)], []))
        ast.copy_location(call, node.body[min(at, len(node.body) - 1)])  # the line of the body's first statement
        node.body.insert(at, ast.fix_missing_locations(call))
        self.scope.extend((node.name, "<locals>"))
        self.generic_visit(node)
        del self.scope[-2:]

    visit_AsyncFunctionDef = visit_FunctionDef
