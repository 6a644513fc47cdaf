"""Markdown code fences that the fenced text cannot close early.

Code often holds a run of backticks itself (docstrings written for mkdocs or Sphinx hold ```pycon
examples), and a ``` fence around it would end at the first such line. CommonMark lets a fence be longer
than any run of backticks inside: the block then ends only at a fence of the same length.
"""

from __future__ import annotations

import re

_BACKTICK_RUN = re.compile(r"`+")

# A fenced block: an opening fence of 3+ backticks or tildes with an optional language, and the body up to
# a line holding only the same fence (or the end of the text: a model cut off mid-block never closed it).
FENCED_BLOCK = re.compile(
    r"(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[\w+#.-]*)[^\n]*\n(?P<body>.*?)(?:\n[ \t]*(?P=fence)[ \t]*(?=\n|\Z)|\Z)",
    re.DOTALL,
)


def fence_for(text: str) -> str:
    """Backticks enough to fence `text`: three, or one more than its longest run."""
    longest = max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)
    return "`" * max(3, longest + 1)


def fenced(text: str, info: str = "") -> str:
    """`text` in a fenced block with `info` (the language) after the opening fence; no trailing newline."""
    fence = fence_for(text)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{fence}{info}\n{body}{fence}"
