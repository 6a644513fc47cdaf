"""Ruff's own fixes and formatter as rewrite rules.

Ruff runs as a subprocess on the source given on stdin (`--isolated`, so the user's configuration never
changes what a rule does). Fixes are not applied with `--fix`: we read them from `--output-format json`
and apply them ourselves, because only then can a fix be limited to the target definitions and checked
against the comments it would delete. Like `ruff --fix`, we re-run until nothing is left to fix.
"""

from __future__ import annotations

import ast
import functools
import io
import json
import subprocess
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ruff.__main__ import find_ruff_bin

from coderefine.cst_nodes import parses
from coderefine.providers.offline.rewrites.targets import definition_spans, line_starts, span_offsets, split_lines

# coderefine itself needs Python >= 3.10, so the code it rewrites runs on 3.10 or later. Pinning the
# version (instead of ruff's default) keeps the output the same whatever ruff version is installed.
TARGET_VERSION = "py310"
_TIMEOUT_S = 60
_MAX_PASSES = 8  # ruff itself stops after 100; our fixes converge in two or three


@dataclass(frozen=True)
class RuffFix:
    """One `ruff:<CODE>` rule: the selector passed to `--select` and which fixes to trust."""

    select: str  # a code ("PERF401") or a prefix ("SIM")
    unsafe: bool = True  # apply fixes ruff marks "unsafe" (most C4 fixes are, for the comments they may drop)
    ignore: tuple[str, ...] = ()  # codes under the selector that are never applied


@dataclass(frozen=True)
class _Edit:
    start: int  # character offsets into the source
    end: int
    content: str


@dataclass(frozen=True)
class _Fix:
    code: str
    applicability: str  # "safe", "unsafe" or "display-only"
    edits: tuple[_Edit, ...]


# Codes that are never applied, whatever rule selects them: their fixes change what the code computes.
NEVER = (
    "FURB116",  # bin(x)[2:] -> f"{x:b}" differs for negative numbers
    "FURB152",  # 3.14 -> math.pi changes the value
    "FURB163",  # math.log(x, 2) -> math.log2(x) differs in the last bits
    "FURB171",  # x in (y,) -> x == y loses the identity check (NaN)
    "FURB187",  # x = x[::-1] -> x.reverse() mutates a list other names may share
    "FURB189",  # subclassing dict -> UserDict changes the type
    "SIM112",  # renames environment variables
)


def _reject_reversed_sorted(old: str, new: str) -> bool:
    """C413/C414: `reversed(sorted(x))` and `sorted(reversed(x))` order equal elements differently."""
    del new
    try:
        expr = ast.parse(old.strip(), mode="eval").body
    except SyntaxError:
        return False
    if not isinstance(expr, ast.Call) or not isinstance(expr.func, ast.Name):
        return False
    inner = expr.args[0] if expr.args else None
    inner_name = inner.func.id if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) else ""
    return (expr.func.id, inner_name) not in {("reversed", "sorted"), ("sorted", "reversed")}


def _only_first_of_sorted(old: str, new: str) -> bool:
    """FURB192: sorted(x)[0] -> min(x) keeps the first of equal minima; sorted(x)[-1] -> max(x) does not."""
    del new
    return old.rstrip().endswith("[0]")


def _constant_set(old: str, new: str) -> bool:
    """PLR1714/PLR6201: only a set of constants is faster (CPython folds it into a frozenset constant).

    With names inside, `x in {a, b}` builds a set at every test and `x in (a, b)` (what ruff writes for
    non-constants) is slower than the `==` chain it replaces.
    """
    del old
    try:
        tree = ast.parse(new.strip(), mode="eval")
    except SyntaxError:
        return False
    sets = [n for n in ast.walk(tree) if isinstance(n, ast.Set)]
    return bool(sets) and all(
        isinstance(e, ast.Constant) or (isinstance(e, ast.UnaryOp) and isinstance(e.operand, ast.Constant))
        for s in sets
        for e in s.elts
    )


# Per-code checks on each edit (replaced text, new text) of a fix; the fix is kept only if all pass.
_GUARDS: dict[str, Callable[[str, str], bool]] = {
    "C413": _reject_reversed_sorted,
    "C414": _reject_reversed_sorted,
    "FURB192": _only_first_of_sorted,
    "PLR1714": _constant_set,
    "PLR6201": _constant_set,
}


@functools.lru_cache(maxsize=1)
def _ruff_bin() -> str:
    return str(find_ruff_bin())


def _run(args: Sequence[str], source: str) -> str | None:
    """Ruff's stdout for `source` on stdin, or None when ruff cannot run or fails."""
    try:
        done = subprocess.run(
            [_ruff_bin(), *args],
            input=source.encode("utf-8"),  # bytes both ways: text mode would translate CRLF
            capture_output=True,
            timeout=_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode not in (0, 1):
        return None
    return done.stdout.decode("utf-8")


@functools.lru_cache(maxsize=512)
def _fixes(source: str, select: str, ignore: tuple[str, ...]) -> tuple[_Fix, ...]:
    """Fixes ruff offers for `select` on `source` (cached: applicable_rules then apply_rules ask twice)."""
    args = ["check", "--isolated", "--no-cache", "--preview", "--unsafe-fixes", "--exit-zero"]
    args += ["--target-version", TARGET_VERSION, "--output-format", "json", "--select", select]
    if ignore:
        args += ["--ignore", ",".join(ignore)]
    out = _run([*args, "--stdin-filename", "coderefine_input.py", "-"], source)
    if not out:
        return ()
    try:
        diagnostics = json.loads(out)
    except ValueError:
        return ()
    starts = line_starts(source)
    fixes: list[_Fix] = []
    for diagnostic in diagnostics:
        fix = diagnostic.get("fix")
        if not fix or not fix.get("edits"):
            continue
        try:
            edits = tuple(
                _Edit(_offset(starts, e["location"]), _offset(starts, e["end_location"]), e["content"])
                for e in fix["edits"]
            )
        except (KeyError, IndexError, TypeError):
            continue
        fixes.append(_Fix(str(diagnostic.get("code")), str(fix.get("applicability")), edits))
    return tuple(fixes)


def _offset(starts: list[int], location: dict[str, int]) -> int:
    # ruff rows are 1-based lines, columns 1-based characters (code points), as str indexing counts.
    return starts[location["row"] - 1] + location["column"] - 1


def apply_fix_rule(source: str, rule: RuffFix, targets: Sequence[str] | None) -> str:
    code = source
    ignore = tuple(sorted({*NEVER, *rule.ignore}))
    for _ in range(_MAX_PASSES):
        usable = _usable_fixes(code, rule, ignore, targets)
        if not usable:
            break
        new = _apply(code, usable)
        if not parses(new):
            new = _apply(code, usable[:1])  # ruff isolates some fixes; one at a time is always safe
            if not parses(new):
                break
        if new == code:
            break
        code = new
    return code


def _usable_fixes(code: str, rule: RuffFix, ignore: tuple[str, ...], targets: Sequence[str] | None) -> list[_Fix]:
    allowed = {"safe", "unsafe"} if rule.unsafe else {"safe"}
    regions = None if targets is None else [span_offsets(code, s) for s in definition_spans(code, targets)]
    comments = _comments(code)
    starts = set(line_starts(code))
    usable: list[_Fix] = []
    for fix in _fixes(code, rule.select, ignore):
        if fix.applicability not in allowed or fix.code in ignore:
            continue
        if fix.applicability != "safe" and comments is None:
            continue  # cannot tell which comments an unsafe fix would drop
        guard = _GUARDS.get(fix.code)
        if guard and not all(guard(code[e.start : e.end], e.content) for e in fix.edits):
            continue
        if any(_drops_comment(e, comments or []) for e in fix.edits):
            continue
        if regions is not None and not all(_inside(e, regions, starts) for e in fix.edits):
            continue
        usable.append(fix)
    return sorted(usable, key=lambda f: min(e.start for e in f.edits))


def _inside(edit: _Edit, regions: list[tuple[int, int]], starts: set[int]) -> bool:
    if any(lo <= edit.start and edit.end <= hi for lo, hi in regions):
        return True
    return _is_import_insertion(edit, starts)


def _is_import_insertion(edit: _Edit, starts: set[int]) -> bool:
    """A pure insertion of whole import lines at the start of a line (e.g. FURB118's `import operator`)."""
    if edit.start != edit.end or edit.start not in starts or not edit.content.endswith(("\n", "\r")):
        return False
    try:
        body = ast.parse(edit.content).body
    except SyntaxError:
        return False
    return bool(body) and all(isinstance(node, (ast.Import, ast.ImportFrom)) for node in body)


def _comments(code: str) -> list[tuple[int, str]] | None:
    """(offset, text) of every comment, or None when the code cannot be tokenized."""
    starts = line_starts(code)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code, newline="").readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    return [(starts[t.start[0] - 1] + t.start[1], t.string) for t in tokens if t.type == tokenize.COMMENT]


def _drops_comment(edit: _Edit, comments: list[tuple[int, str]]) -> bool:
    return any(edit.start <= at < edit.end and text not in edit.content for at, text in comments)


def _apply(code: str, fixes: list[_Fix]) -> str:
    """Apply whole fixes in order, skipping any fix that touches a range an earlier fix already edits."""
    chosen: list[_Edit] = []
    for fix in fixes:
        if any(_overlap(a, b) for a in fix.edits for b in chosen):
            continue
        chosen.extend(fix.edits)
    for edit in sorted(chosen, key=lambda e: (e.start, e.end), reverse=True):
        code = code[: edit.start] + edit.content + code[edit.end :]
    return code


def _overlap(a: _Edit, b: _Edit) -> bool:
    # Touching edits count as overlapping: two insertions at one point would otherwise both land.
    return a.start <= b.end and b.start <= a.end


def apply_format(source: str, targets: Sequence[str] | None) -> str:
    """`ruff format` the module, or only the target definitions (spliced from the formatted module).

    `ruff format --range` also normalises the blank lines around the range, which are outside the
    targets; formatting everything and taking back only the target definitions avoids that.
    """
    formatted = _run(
        [
            "format",
            "--isolated",
            "--no-cache",
            "--target-version",
            TARGET_VERSION,
            "--stdin-filename",
            "m.py",
            "-",
        ],
        source,
    )
    if formatted is None or not parses(formatted):
        return source
    if targets is None:
        return formatted
    return _splice(source, formatted, targets)


def _splice(source: str, formatted: str, targets: Sequence[str]) -> str:
    old_spans = definition_spans(source, targets)
    new_spans = definition_spans(formatted, targets)
    if [s.name for s in old_spans] != [s.name for s in new_spans]:
        return source
    lines = split_lines(source)
    new_lines = split_lines(formatted)
    for old, new in reversed(list(zip(old_spans, new_spans, strict=True))):
        block = new_lines[new.first_line - 1 : new.last_line]
        first_old = lines[old.first_line - 1]
        # A method keeps its class's indentation; when ruff changed it (e.g. 2 -> 4 spaces) the block
        # cannot be re-indented without touching the contents of multi-line strings, so it stays as is.
        if _indent(block[0]) != _indent(first_old):
            continue
        ending = first_old[len(first_old.rstrip("\r\n")) :]
        if old.last_line == len(lines) and not lines[-1].endswith(("\n", "\r")):
            block[-1] = block[-1].rstrip("\r\n")  # keep a missing final newline missing
        elif ending and not block[-1].endswith(("\n", "\r")):
            block[-1] += ending
        lines[old.first_line - 1 : old.last_line] = block
    return "".join(lines)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def fixable_codes(source: str, selects: tuple[str, ...]) -> frozenset[str] | None:
    """Codes with a fix anywhere in `source`, for all `selects` in one ruff run (None if ruff failed).

    Most rules find nothing in most modules; asking once for all of them and skipping the silent ones
    saves one subprocess per rule.
    """
    return _screen(source, selects) if selects else frozenset()


@functools.lru_cache(maxsize=256)
def _screen(source: str, selects: tuple[str, ...]) -> frozenset[str] | None:
    args = ["check", "--isolated", "--no-cache", "--preview", "--unsafe-fixes", "--exit-zero"]
    args += ["--target-version", TARGET_VERSION, "--output-format", "json", "--select", ",".join(selects)]
    out = _run([*args, "--stdin-filename", "coderefine_input.py", "-"], source)
    if out is None:
        return None
    try:
        return frozenset(str(d.get("code")) for d in json.loads(out) if d.get("fix"))
    except (ValueError, AttributeError):
        return None


def may_fix(rule: RuffFix, codes: frozenset[str] | None) -> bool:
    """False only when the screening run proved that `rule` has nothing to fix."""
    return codes is None or any(code.startswith(rule.select) for code in codes)
