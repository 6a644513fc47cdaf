"""From a model's answer (its thinking already set apart) to the code it proposes.

Real models answer in many shapes (README, "What the model's answers may be"): a Python code block with
prose around it; several blocks (the original quoted back, a usage example, alternatives); the whole file
or one function; a unified diff, fenced or bare; code with no fence at all, or with prose before and after
it. What cannot become code is rejected with a reason the feedback step passes on.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from coderefine.cst_nodes import parses
from coderefine.fences import FENCED_BLOCK
from coderefine.refine.patch import looks_like_diff

_PYTHON_TAGS = {"", "python", "py", "python3", "py3", "pycon", "ipython"}
_DIFF_TAGS = {"diff", "patch", "udiff"}
# Where code starts in an answer without a fence: a line that can only open Python code.
_CODE_STARTS = ("def ", "async def ", "class ", "import ", "from ", "@")
# Prose lines trimmed off the end of unfenced code before giving up on it.
_MAX_TRAILING_PROSE = 30


class CandidateRejected(Exception):
    """The answer holds no usable Python module; the text says why (for the feedback step)."""


class CandidateRefused(CandidateRejected):
    """The answer's code is usable Python but breaks a rule of the run (a target renamed, its signature
    changed, a name nothing defines): refused before it runs, with the reason."""


@dataclass(frozen=True)
class Extracted:
    code: str  # the proposed code, or the diff's text when `diff` is set
    truncated: bool  # the code block was never closed (cut off, or a stop sequence ate the closing fence)
    notes: tuple[str, ...] = ()  # what the extraction skipped, for the feedback step
    diff: bool = False  # `code` is a unified diff, to be applied to the module
    fenced: bool = True  # the code came from a fenced block (else from the answer's plain text)


def defined_names(code: str) -> set[str]:
    """Top-level functions and classes, and methods as `Class.method`."""
    names: set[str] = set()
    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            names |= {
                f"{node.name}.{item.name}"
                for item in node.body
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
            }
    return names


def _definitions(code: str) -> dict[str, str]:
    """Each top-level definition (and method) by name, as a dump of its AST: to compare with the original."""
    found: dict[str, str] = {}
    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[node.name] = ast.dump(node)
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found[f"{node.name}.{item.name}"] = ast.dump(item)
    return found


def _changed_targets(body: str, targets: tuple[str, ...], original: dict[str, str]) -> set[str]:
    """The targets a block defines differently from the original."""
    if not parses(body):
        return set()
    mine = _definitions(body)
    return {
        t
        for t in targets
        if (t in mine or t.split(".")[-1] in mine) and mine.get(t, mine.get(t.split(".")[-1])) != original.get(t)
    }


def _rank(body: str, targets: tuple[str, ...], original: dict[str, str]) -> int:
    """How likely a block is the answer (higher is better): a block that changes a target, then one that
    defines a target (as it was), then one that defines anything, then one that parses."""
    if not parses(body):
        return 0
    mine = _definitions(body)
    if not mine:
        return 1
    bare = {name.split(".")[-1] for name in mine}
    named = [t for t in targets if t in mine or t.split(".")[-1] in bare]
    if any(mine.get(t, mine.get(t.split(".")[-1])) != original.get(t) for t in named):
        return 4
    return 3 if named else 2


def extract_code(message: str, targets: tuple[str, ...] = (), original: str | None = None) -> Extracted:
    """The code of an answer: its best Python code block, a diff, else the Python in its plain text.

    Blocks marked as another language are skipped. Among several Python blocks, the first that changes a
    target is taken, else the first that defines a target, else the first that defines anything (a usage
    example after the code is not the code, nor the original quoted back); the feedback is told what was
    skipped. A ```diff block (or a bare unified diff) is returned as a diff, to be applied to the module.
    """
    if not message.strip():
        raise CandidateRejected("the message was empty")
    blocks = list(FENCED_BLOCK.finditer(message))
    if not blocks:
        return _unfenced(message)
    tags = [block.group("lang").lower() for block in blocks]
    bodies = [block.group("body").rstrip() + "\n" for block in blocks]
    python = [i for i, tag in enumerate(tags) if tag in _PYTHON_TAGS and not looks_like_diff(bodies[i])]
    diffs = [
        i for i, tag in enumerate(tags) if tag in _DIFF_TAGS or (tag in _PYTHON_TAGS and looks_like_diff(bodies[i]))
    ]
    known = _definitions(original) if original is not None and parses(original) else {}
    ranks = {i: _rank(bodies[i], targets, known) for i in python}
    best_rank = max(ranks.values(), default=0)
    if diffs and best_rank < 3:  # a patch, unless a block holds a definition of a target
        chosen = diffs[0]
        notes = [f"{len(diffs)} diff blocks; the first was applied"] if len(diffs) > 1 else []
        return Extracted(bodies[chosen], _unclosed(message, blocks[chosen]), tuple(notes), diff=True)
    if not python:
        languages = sorted({block.group("lang") for block in blocks})
        raise CandidateRejected(
            f"the answer holds code marked {', '.join(repr(lang) for lang in languages)}, not Python; "
            "answer with a ```python block"
        )
    chosen = next(i for i in python if ranks[i] == best_rank)
    # Blocks that change other targets than the chosen one (one block per function) are taken with it;
    # blocks that change the same target again are alternatives, and only the first is taken.
    taken, covered, rivals = [chosen], _changed_targets(bodies[chosen], targets, known), 0
    for i in python:
        if i == chosen or ranks[i] != 4:
            continue
        changes = _changed_targets(bodies[i], targets, known)
        if changes & covered:
            rivals += 1
        elif parses("".join(bodies[j] + "\n\n" for j in (*taken, i))):
            taken.append(i)
            covered |= changes
    notes = []
    if len(python) > 1:
        used = " and ".join(str(python.index(i) + 1) for i in sorted(taken))
        alternatives = f"; {rivals + 1} of them changed the same target, the first was taken" if rivals else ""
        notes.append(
            f"the answer had {len(python)} Python code blocks; block{'s' if len(taken) > 1 else ''} {used} "
            f"{'were' if len(taken) > 1 else 'was'} used, the others ignored{alternatives}"
        )
    others = len(blocks) - len(python) - len(diffs)
    if others:
        notes.append(f"{others} code block{'s' if others > 1 else ''} in another language ignored")
    code = "\n\n".join(bodies[i].rstrip("\n") for i in sorted(taken)) + "\n"
    return Extracted(code, _unclosed(message, blocks[max(taken)]), tuple(notes))


def _unclosed(message: str, block: object) -> bool:
    """A block that runs to the end of the answer without its closing fence."""
    end = block.end()  # type: ignore[attr-defined]
    fence = block.group("fence")  # type: ignore[attr-defined]
    return end == len(message) and not message.rstrip().endswith(fence)


def _unfenced(message: str) -> Extracted:
    """An answer without any code fence: a bare diff, the whole answer if it is Python, else the Python
    that starts at the first line only code can start with, with trailing prose trimmed."""
    if looks_like_diff(message):
        return Extracted(message.strip("\n") + "\n", truncated=False, diff=True, fenced=False)
    whole = message.strip("\n") + "\n"
    if parses(whole):
        return Extracted(whole, truncated=False, fenced=False)
    lines = message.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(_CODE_STARTS)), None)
    if start is not None:
        for end in range(len(lines), max(start, len(lines) - _MAX_TRAILING_PROSE), -1):
            code = "\n".join(lines[start:end]).strip("\n") + "\n"
            if parses(code) and defined_names(code):
                note = "the answer had no code block; the code was taken from its plain text"
                if start or end < len(lines):
                    note += f" (lines {start + 1}-{end}, the prose around it left out)"
                return Extracted(code, truncated=False, notes=(note,), fenced=False)
    return Extracted(whole, truncated=False, fenced=False)


def has_fence(message: str) -> bool:
    """Whether the message holds a fenced code block at all (else the whole message is taken as code)."""
    return FENCED_BLOCK.search(message) is not None


def parse_or_reject(code: str, what: str = "the code") -> None:
    try:
        ast.parse(code)
    except SyntaxError as exc:
        raise CandidateRejected(f"{what} has a syntax error at line {exc.lineno}: {exc.msg}") from None
    except ValueError as exc:
        raise CandidateRejected(f"{what} cannot be parsed: {exc}") from None
