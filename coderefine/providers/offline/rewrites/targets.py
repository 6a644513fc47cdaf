"""Where a rewrite may act (the target definitions) and the check that nothing else changed.

A target is a top-level function (`f`) or a method of a top-level class (`Cls.meth`), the same naming as
`coderefine.source.function_names`. Line numbers come from `ast`, which splits lines on `\\r\\n`, `\\r`
and `\\n`; every helper here splits the same way so that offsets agree with ruff and ast.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


@dataclass(frozen=True)
class Span:
    name: str  # qualified name of the definition
    first_line: int  # 1-based; the first decorator's line when decorated
    last_line: int  # 1-based, inclusive


def split_lines(code: str) -> list[str]:
    """Lines with their line endings kept, split exactly where ast and ruff split them."""
    return _LINE.findall(code)


def line_starts(code: str) -> list[int]:
    """Offset of the start of every line; the last entry is `len(code)` (the start of an empty last line)."""
    starts = [0]
    for line in split_lines(code):
        starts.append(starts[-1] + len(line))
    return starts


def definition_spans(code: str, targets: Sequence[str]) -> list[Span]:
    """Spans of the target definitions present in `code`, in source order (duplicated names included)."""
    wanted = set(targets)
    spans: list[Span] = []
    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in wanted:
            spans.append(_span(node.name, node))
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                qualname = f"{node.name}.{item.name}" if isinstance(item, _DEFS) else ""
                if qualname in wanted:
                    spans.append(_span(qualname, item))
    return spans


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _span(name: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Span:
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return Span(name, first, node.end_lineno or node.lineno)


def span_offsets(code: str, span: Span) -> tuple[int, int]:
    """[start, end) character offsets of a span: whole lines, without the final line ending."""
    lines = split_lines(code)
    start = sum(len(line) for line in lines[: span.first_line - 1])
    end = start + sum(len(line) for line in lines[span.first_line - 1 : span.last_line])
    last = lines[span.last_line - 1] if span.last_line - 1 < len(lines) else ""
    return start, end - (len(last) - len(last.rstrip("\r\n")))


def outside_unchanged(before: str, after: str, targets: Sequence[str]) -> bool:
    """True when `after` differs from `before` only inside the target definitions.

    Outside the targets, existing lines must stay byte for byte; the only lines that may appear are new
    top-level imports (a rewrite inside a target may need `functools` or `math`, and a decorator can
    only get it from the module) and blank lines around them.
    """
    try:
        old = [text for text, _ in _outside(before, targets)]
        new = _outside(after, targets)
        imports = _top_level_import_lines(after)
    except SyntaxError:
        return False
    matcher = difflib.SequenceMatcher(a=old, b=[text for text, _ in new], autojunk=False)
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag != "insert":
            return False
        for text, line_index in new[j1:j2]:
            if text.strip() and line_index not in imports:
                return False
    return True


def _outside(code: str, targets: Sequence[str]) -> list[tuple[str, int]]:
    """(text, 0-based line index) of the lines outside the targets; one marker line per target."""
    lines = split_lines(code)
    inside: dict[int, str] = {}
    for span in definition_spans(code, targets):
        for index in range(span.first_line - 1, span.last_line):
            inside[index] = ""
        inside[span.first_line - 1] = f"\0{span.name}\0"
    return [
        (inside.get(index, line), index) for index, line in enumerate(lines) if index not in inside or inside[index]
    ]


def _top_level_import_lines(code: str) -> set[int]:
    """0-based indexes of the lines holding single-line top-level import statements."""
    return {
        node.lineno - 1
        for node in ast.parse(code).body
        if isinstance(node, (ast.Import, ast.ImportFrom)) and node.lineno == node.end_lineno
    }
