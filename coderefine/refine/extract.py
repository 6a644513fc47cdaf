"""From a model message to the code it proposes.

The code is the first fenced Python code block of the message, else the whole message. Models wrap code in
prose, add a usage example in a second block, or answer in the wrong language; what cannot become code is
rejected with a reason the feedback step can pass on.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from coderefine.cst_nodes import parses
from coderefine.fences import FENCED_BLOCK

_PYTHON_TAGS = {"", "python", "py", "python3", "py3", "pycon", "ipython"}


class CandidateRejected(Exception):
    """The message holds no usable Python module; the text says why (for the feedback step)."""


@dataclass(frozen=True)
class Extracted:
    code: str
    truncated: bool  # the fenced block was never closed, e.g. the model ran out of tokens
    notes: tuple[str, ...] = ()  # what the extraction skipped, for the feedback step


def _defines(code: str) -> bool:
    tree = ast.parse(code)
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for node in tree.body)


def extract_code(message: str) -> Extracted:
    """The code of an answer: its Python code block, else the whole answer.

    Models wrap code in prose, add a usage example in a second block, or answer in the wrong language.
    Blocks marked as another language are skipped; among several Python blocks the first one that parses
    and defines something is taken (a usage example after the code is not the code), and the feedback is
    told what was skipped.
    """
    if not message.strip():
        raise CandidateRejected("the message was empty")
    blocks = list(FENCED_BLOCK.finditer(message))
    if not blocks:
        return Extracted(code=message.strip("\n") + "\n", truncated=False)
    python = [block for block in blocks if block.group("lang").lower() in _PYTHON_TAGS]
    if not python:
        languages = sorted({block.group("lang") for block in blocks})
        raise CandidateRejected(
            f"the answer holds code marked {', '.join(repr(lang) for lang in languages)}, not Python; "
            "answer with a ```python block"
        )
    bodies = [block.group("body").rstrip() + "\n" for block in python]
    chosen = next((i for i, body in enumerate(bodies) if parses(body) and _defines(body)), None)
    if chosen is None:
        chosen = next((i for i, body in enumerate(bodies) if parses(body)), 0)
    block = python[chosen]
    truncated = block.end() == len(message) and not message.rstrip().endswith(block.group("fence"))
    notes = []
    if len(python) > 1:
        notes.append(
            f"the answer had {len(python)} Python code blocks; block {chosen + 1} was used, the others ignored"
        )
    others = len(blocks) - len(python)
    if others:
        notes.append(f"{others} code block{'s' if others > 1 else ''} in another language ignored")
    return Extracted(code=bodies[chosen], truncated=truncated, notes=tuple(notes))


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
