"""The pull request's diff: which lines of the head's files changed, which lines GitHub lets a review
comment on, and which functions enclose the changes.

The diff comes from the API (`GET /pulls/{n}/files`), not from `git diff base...head`: its hunks are
the very ones GitHub checks review comments against (a line outside them is a 422), and it needs no
history in the checkout (`fetch-depth: 1` is enough, also for forks).
"""

from __future__ import annotations

import ast
import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError


@dataclass(frozen=True)
class Hunk:
    start: int  # first line of the head's file the hunk shows (1-based)
    end: int  # last line it shows


@dataclass(frozen=True)
class FilePatch:
    path: str  # in the head commit
    status: str  # added, modified, renamed, removed, ...
    hunks: tuple[Hunk, ...]
    touched: frozenset[int]  # head lines added or next to a removal
    patch_missing: bool = False  # GitHub leaves `patch` out for very large or binary diffs

    def hunk_holding(self, first: int, last: int) -> Hunk | None:
        """The hunk that shows every line from `first` to `last`: a multi-line comment must lie in one."""
        return next((h for h in self.hunks if h.start <= first and last <= h.end), None)


def parse_patch(path: str, status: str, patch: str | None) -> FilePatch:
    if patch is None:
        return FilePatch(path, status, (), frozenset(), patch_missing=True)
    try:
        parsed = PatchSet(f"--- a/{path}\n+++ b/{path}\n{patch}\n")
    except UnidiffParseError:
        return FilePatch(path, status, (), frozenset(), patch_missing=True)
    hunks: list[Hunk] = []
    touched: set[int] = set()
    for file in parsed:
        for hunk in file:
            if hunk.target_length:
                hunks.append(Hunk(hunk.target_start, hunk.target_start + hunk.target_length - 1))
            previous = hunk.target_start - 1
            for line in hunk:
                if line.is_added:
                    touched.add(line.target_line_no)
                elif line.is_removed and previous >= 1:
                    touched.add(previous)  # a deletion changes the definition holding the line above it
                if line.target_line_no is not None:
                    previous = line.target_line_no
    return FilePatch(path, status, tuple(hunks), frozenset(touched))


def selected(path: str, globs: Iterable[str]) -> bool:
    """Python files, limited to `globs` when any are given (fnmatch: `*` also matches `/`)."""
    if not path.endswith(".py"):
        return False
    patterns = [g for g in globs if g]
    return not patterns or any(fnmatch.fnmatchcase(path, pattern) for pattern in patterns)


@dataclass(frozen=True)
class Definition:
    name: str  # `f` or `Class.method`, as `--function` takes it
    first: int  # first line, decorators included
    last: int


def definitions(code: str) -> list[Definition]:
    """Top-level functions and methods of top-level classes, the units a run can target."""
    found: list[Definition] = []

    def add(node: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> None:
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        found.append(Definition(name, first, node.end_lineno or node.lineno))

    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            add(node, node.name)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    add(item, f"{node.name}.{item.name}")
    return found


def changed_definitions(code: str, touched: Iterable[int]) -> list[Definition]:
    lines = set(touched)
    return [d for d in definitions(code) if any(d.first <= n <= d.last for n in lines)]
