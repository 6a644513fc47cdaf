"""A unified diff from a model, applied to the module it was written against.

Agents and many models answer with a patch. Models get a hunk's line numbers wrong far more often than
its lines, so a hunk is placed by its lines: where its header says if they are there, else at the nearest
place after the previous hunk where they are (exactly, then ignoring trailing blanks). Blank lines a model
left without their leading space count as blank context. A hunk whose lines are nowhere in the module does
not apply: the answer is rejected, and the reason names the hunk and its first line that is missing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HUNK = re.compile(r"^@@\s*-(?P<start>\d+)(?:,\d+)?\s+\+\d+(?:,\d+)?\s*@@.*$|^@@+\s*$|^@@ .*@@.*$")
_FILE_HEADERS = ("diff --git ", "index ", "--- ", "+++ ", "new file mode", "deleted file mode", "similarity index")


class PatchFailed(Exception):
    """The diff does not apply to the module; the text says which hunk and why."""


@dataclass(frozen=True)
class Hunk:
    header: str
    start: int | None  # 1-based line of the old text, as the header claims (None: a bare @@)
    old: tuple[str, ...]  # context and removed lines, in order
    new: tuple[str, ...]  # context and added lines, in order


def looks_like_diff(text: str) -> bool:
    """A unified diff: a hunk header with at least one changed line, and file headers or more hunks."""
    lines = text.splitlines()
    has_hunk = any(_HUNK.match(line) for line in lines)
    changed = sum(1 for line in lines if line[:1] in "+-" and not line.startswith(("+++", "---")))
    headers = any(line.startswith(("--- ", "+++ ", "diff --git ")) for line in lines)
    return has_hunk and changed > 0 and (headers or sum(1 for line in lines if _HUNK.match(line)) >= 1)


def _file_sections(text: str) -> list[tuple[str | None, list[str]]]:
    """The diff split per file: (the new file's path, its lines)."""
    sections: list[tuple[str | None, list[str]]] = []
    current: list[str] = []
    name: str | None = None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        starts_file = line.startswith("diff --git ") or (
            line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")
        )
        if starts_file and any(_HUNK.match(existing) for existing in current):
            sections.append((name, current))
            current, name = [], None
        if line.startswith("+++ "):
            name = line[4:].split("\t")[0].strip()
        current.append(line)
    sections.append((name, current))
    return sections


def parse_hunks(lines: list[str]) -> list[Hunk]:
    hunks: list[Hunk] = []
    header: str | None = None
    start: int | None = None
    old: list[str] = []
    new: list[str] = []

    def close() -> None:
        if header is not None and (old or new):
            hunks.append(Hunk(header, start, tuple(old), tuple(new)))

    for line in lines:
        match = _HUNK.match(line)
        if match:
            close()
            header, old, new = line.strip(), [], []
            start = int(match.group("start")) if match.group("start") else None
            continue
        if header is None:
            continue  # file headers and prose before the first hunk
        if line.startswith(_FILE_HEADERS[:2]) or (line.startswith(("--- ", "+++ ")) and not old and not new):
            continue
        if line.startswith("\\"):  # "\ No newline at end of file"
            continue
        tag, body = (line[:1], line[1:]) if line[:1] in (" ", "+", "-") else (" ", line)
        if tag in (" ", "-"):
            old.append(body)
        if tag in (" ", "+"):
            new.append(body)
    close()
    return hunks


def _find(lines: list[str], needle: tuple[str, ...], hint: int, floor: int) -> int | None:
    """Where `needle` starts in `lines` at or after `floor`: at `hint` if it is there, else the nearest."""
    if not needle:
        return max(floor, min(hint, len(lines)))
    for same in (lambda a, b: a == b, lambda a, b: a.rstrip() == b.rstrip()):
        places = [
            i
            for i in range(floor, len(lines) - len(needle) + 1)
            if all(same(lines[i + k], needle[k]) for k in range(len(needle)))
        ]
        if places:
            return min(places, key=lambda i: abs(i - hint))
    return None


def _why_not(lines: list[str], hunk: Hunk) -> str:
    stripped = {line.rstrip() for line in lines}
    missing = next((line for line in hunk.old if line.rstrip() not in stripped), None)
    if missing is not None:
        shown = missing.strip()[:60]
        return f"its line `{shown}` is not in the module"
    return "its lines are in the module, but not together in this order"


def apply_diff(diff: str, base: str, filename: str | None = None) -> str:
    """The module `base` with the diff applied; PatchFailed when it does not apply."""
    sections = [(name, lines) for name, lines in _file_sections(diff) if parse_hunks(lines)]
    if not sections:
        raise PatchFailed("the diff has no hunk (no line starting with @@)")
    chosen = sections[0][1]
    if len(sections) > 1 and filename is not None:
        named = [lines for name, lines in sections if name and name.rstrip("/").endswith(filename)]
        if not named:
            listed = ", ".join(name or "?" for name, _ in sections)
            raise PatchFailed(f"the diff changes {listed}, not {filename}")
        chosen = named[0]
    hunks = parse_hunks(chosen)
    lines = base.splitlines()
    result: list[str] = []
    position = 0
    for number, hunk in enumerate(hunks, 1):
        if not hunk.old and position == 0 and not lines:
            result.extend(hunk.new)
            continue
        hint = (hunk.start - 1) if hunk.start else position
        at = _find(lines, hunk.old, hint, position)
        if at is None:
            place = f" ({hunk.header})" if hunk.header.strip("@ ") else ""
            raise PatchFailed(f"hunk {number}{place} does not apply: {_why_not(lines, hunk)}")
        result.extend(lines[position:at])
        result.extend(hunk.new)
        position = at + len(hunk.old)
    result.extend(lines[position:])
    return "\n".join(result) + "\n"
