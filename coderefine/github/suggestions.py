"""From a verified run to a GitHub suggestion: the head lines it replaces and the text replacing them.

A suggestion replaces one contiguous range of lines, so it covers exactly the lines from the first to
the last one the verified version changes. When the verified version also changed something outside
the function (an import or a helper the merge added), one suggestion could not reproduce it, so there
is none: the change is shown as a diff in the summary instead.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from coderefine.fences import fenced
from coderefine.github.diff import Definition


@dataclass(frozen=True)
class LineChange:
    first: int  # 1-based, inclusive, in the head's file
    last: int
    replacement: str  # the verified lines replacing first..last, each with its line ending


def line_change(original: str, verified: str, definition: Definition) -> LineChange | None:
    """The smallest range of the definition's lines whose replacement turns `original` into `verified`.

    None when nothing changed, or when a change lies outside the definition."""
    before, after = original.splitlines(keepends=True), verified.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    opcodes = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if not opcodes or not all(_inside(op, after, definition) for op in opcodes):
        return None
    low, high = min(op[1] for op in opcodes), max(op[2] for op in opcodes)  # 0-based, high exclusive
    if low == high:  # only an insertion inside the body: a suggestion replaces at least one line, its neighbour
        low -= 1
    replacement = "".join(after[low : len(after) - (len(before) - high)])
    if before[high - 1 : high] and not before[high - 1].endswith(("\n", "\r")) and replacement.endswith("\n"):
        replacement = replacement[:-1]  # the file's last line has no newline; neither does its replacement
    return LineChange(low + 1, high, replacement)


def _inside(opcode: tuple[str, int, int, int, int], after: list[str], definition: Definition) -> bool:
    """Whether one difference lies within the definition's lines (0-based `i1..i2` of the original)."""
    _tag, i1, i2, j1, j2 = opcode
    if i1 < i2:  # replaced or deleted lines
        return definition.first - 1 <= i1 and i2 <= definition.last
    if definition.first - 1 < i1 < definition.last:  # inserted between two of its lines
        return True
    # Inserted right after its last line: still its body only when indented (else a new definition).
    return i1 == definition.last and all(not line.strip() or line[0] in " \t" for line in after[j1:j2])


def apply_change(original: str, change: LineChange) -> str:
    """What GitHub's "Commit suggestion" does: the lines first..last replaced by the suggestion."""
    lines = original.splitlines(keepends=True)
    return "".join(lines[: change.first - 1]) + change.replacement + "".join(lines[change.last :])


def suggestion_block(replacement: str) -> str:
    """A ```suggestion block; the fence outgrows any run of backticks inside the code."""
    return fenced(replacement, "suggestion")
