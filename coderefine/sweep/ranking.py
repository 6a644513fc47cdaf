"""From the profiler's rows to the ranked functions of `coderefine scan`: names as `--function` takes them,
exclusive time and share, and whether each can be judged (and why not).

Pure functions of the profile and the project's sources: no sandbox, no clock.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from coderefine.evaluation.protocol import ProfiledFunction
from coderefine.source import function_names, is_script

TEST_DIRS = frozenset({"tests", "test", "testing"})


@dataclass(frozen=True)
class ScanEntry:
    rank: int
    target: str  # `name` or `Class.method` (what --function takes); a nested function: `outer.<locals>.inner`
    file: str  # relative to the project root
    line: int
    own_seconds: float  # exclusive time, comprehensions and lambdas inside it included
    share: float  # of the profiled run's total own time
    cumulative_seconds: float
    calls: int  # outermost calls (not made from within itself; a generator's resumptions are not calls)
    test_count: int
    tests: tuple[str, ...]
    coverage: float | None  # share of its lines the run executed (None: not measured)
    judgeable: bool  # an estimate under optimize's gate; its baseline measures the figures exactly
    why_not: str | None
    usable_calls: int | None = None  # calls whose arguments optimize could keep to replay (estimate)
    unusable: dict[str, int] = field(default_factory=dict)  # why the others could not, over the calls looked at

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "tests": list(self.tests)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScanEntry:
        return cls(**{**data, "tests": tuple(data["tests"])})


@dataclass(frozen=True)
class _Def:
    qualname: str
    first: int  # the code object's first line: the first decorator's, else the def's
    last: int


def is_test_file(path: str) -> bool:
    parts = Path(path).parts
    name = parts[-1]
    return (
        name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py" or bool(TEST_DIRS & set(parts))
    )


def definitions(code: str) -> list[_Def]:
    """Every function in a module with its qualified name and its lines, outermost first."""
    found: list[_Def] = []

    def walk(nodes: Iterable[ast.AST], prefix: str) -> None:
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                qualname = f"{prefix}{node.name}"
                found.append(_Def(qualname, first, node.end_lineno or node.lineno))
                walk(node.body, f"{qualname}.<locals>.")
            elif isinstance(node, ast.ClassDef):
                walk(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
                walk(ast.iter_child_nodes(node), prefix)

    walk(ast.parse(code).body, "")
    return found


@dataclass
class _Row:
    definition: _Def
    own: float = 0.0
    cumulative: float = 0.0
    calls: int = 0
    test_count: int = 0
    tests: tuple[str, ...] = ()
    lines: int = 0
    covered: int = 0
    usable: int | None = None
    unusable: dict[str, int] = field(default_factory=dict)


def _fold(functions: Iterable[ProfiledFunction], read: Callable[[str], str | None]) -> dict[tuple[str, str], _Row]:
    """Rows per (file, qualified name); a comprehension's, generator expression's or lambda's own time goes to
    the function it is written in (it is that function's code, however Python compiles it)."""
    rows: dict[tuple[str, str], _Row] = {}
    parsed: dict[str, list[_Def] | None] = {}
    for fn in functions:
        if is_test_file(fn.file) or fn.name == "<module>":
            continue
        if fn.file not in parsed:
            text = read(fn.file)
            try:
                parsed[fn.file] = definitions(text) if text is not None else None
            except SyntaxError:
                parsed[fn.file] = None
        defs = parsed[fn.file]
        if not defs:
            continue
        if fn.name.startswith("<"):  # innermost function around it
            around = [d for d in defs if d.first <= fn.line <= d.last]
            if not around:
                continue
            definition = max(around, key=lambda d: d.first)
        else:
            definition = next((d for d in defs if d.first == fn.line and d.qualname.endswith(fn.name)), None)
            if definition is None:
                continue
        row = rows.setdefault((fn.file, definition.qualname), _Row(definition))
        row.own += fn.own_seconds
        if fn.name.startswith("<"):
            continue  # its calls, tests and lines are the enclosing function's
        row.cumulative += fn.cumulative_seconds
        row.calls += fn.starts if fn.starts is not None else fn.primitive_calls
        if fn.usable_calls is not None:
            row.usable = (row.usable or 0) + fn.usable_calls
            for reason, count in fn.unusable.items():
                row.unusable[reason] = row.unusable.get(reason, 0) + count
        row.test_count, row.tests = fn.test_count, fn.tests
        row.lines, row.covered = fn.lines, fn.covered
    return rows


def rank(
    functions: Iterable[ProfiledFunction],
    total_seconds: float,
    read: Callable[[str], str | None],
    *,
    min_calls: int,
    min_coverage: float,
) -> tuple[ScanEntry, ...]:
    """The project's functions by exclusive time, most first; `read(file)` gives a project file's source."""
    rows = _fold(functions, read)
    targets: dict[str, tuple[set[str], bool]] = {}
    for file in {file for file, _ in rows}:
        text = read(file) or ""
        targets[file] = (set(function_names(text)), is_script(text))
    ordered = sorted(rows.items(), key=lambda item: (-item[1].own, item[0]))
    entries = []
    for rank_, ((file, qualname), row) in enumerate(ordered, start=1):
        coverage = row.covered / row.lines if row.lines else None
        names, script = targets[file]
        why_not = _why_not(qualname, row, coverage, names, script, min_calls, min_coverage)
        entries.append(
            ScanEntry(
                rank=rank_,
                target=qualname,
                file=file,
                line=row.definition.first,
                own_seconds=round(row.own, 6),
                share=round(row.own / total_seconds, 4) if total_seconds > 0 else 0.0,
                cumulative_seconds=round(row.cumulative, 6),
                calls=row.calls,
                test_count=row.test_count,
                tests=row.tests,
                coverage=round(coverage, 3) if coverage is not None else None,
                judgeable=why_not is None,
                why_not=why_not,
                usable_calls=row.usable,
                unusable=dict(row.unusable),
            )
        )
    return tuple(entries)


def _why_not(
    qualname: str,
    row: _Row,
    coverage: float | None,
    names: set[str],
    script: bool,
    min_calls: int,
    min_coverage: float,
) -> str | None:
    if qualname not in names:
        return "nested function" if "<locals>" in qualname else "not a target"
    if script:
        return "script module"
    if row.calls < min_calls:
        return f"{row.calls} call{'s' if row.calls != 1 else ''} < min_calls {min_calls}"
    if row.usable is not None and row.usable < min_calls:  # the gate counts the calls it can replay
        why = max(row.unusable.items(), key=lambda item: item[1])[0] if row.unusable else "not usable"
        return f"about {row.usable} usable of {row.calls} calls < min_calls {min_calls} ({why})"
    if coverage is None:
        return "no coverage"
    if coverage < min_coverage:
        return f"coverage < {min_coverage:.0%}"
    return None


def choose(entries: Iterable[ScanEntry], top: int | None, min_share: float | None) -> tuple[ScanEntry, ...]:
    """The judgeable functions a sweep refines: the `top` first by time, or those with `min_share` or more."""
    chosen = [e for e in entries if e.judgeable and (min_share is None or e.share >= min_share)]
    return tuple(chosen[:top] if top is not None else chosen)
