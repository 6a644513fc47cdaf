"""The provider extension point: one method, `complete`, for the generate, feedback and refine roles."""

from __future__ import annotations

import re
from typing import Protocol

from coderefine.refine.context import ModelReply, ModelRequest


class Provider(Protocol):
    name: str

    def complete(self, request: ModelRequest) -> ModelReply: ...


class ScriptExhausted(Exception):
    """A scripted provider has no message left for a role: the loop stops, it is not an error."""


# The feedback prompts ask for a last line `VERDICT: STOP` or `VERDICT: CONTINUE`. Models decorate it
# (bold, quotes, a trailing period), so match loosely but only on a line of its own.
_VERDICT = re.compile(r"^[\W_]*verdict[\W_]*[:=-]?[\W_]*(stop|continue)\b", re.IGNORECASE | re.MULTILINE)
_JSON_STOP = re.compile(r'"stop"\s*:\s*(true|false)', re.IGNORECASE)
# A stock phrase counts only when it ends the line ("... nothing left to improve."), not when the
# sentence goes on ("nothing left to improve in f, but g ...").
_PHRASES = re.compile(
    r"\b(nothing (?:left|more|else|further) to improve|no further improvements? (?:is |are )?(?:possible|needed)|"
    r"cannot be improved further|(?:is |it's )?already optimal)[\s.!*_`]*$",
    re.IGNORECASE,
)


def feedback_says_stop(text: str) -> bool:
    """True when the feedback signals that there is nothing left to improve.

    An explicit verdict line wins (the last one, if there are several); else a JSON `"stop": true`; else
    a stock phrase on the last non-empty line, so that "nothing left to improve in f, but g ..." in the
    middle of a review does not end the run.
    """
    verdicts = _VERDICT.findall(text)
    if verdicts:
        return verdicts[-1].lower() == "stop"
    json_stop = _JSON_STOP.findall(text)
    if json_stop:
        return json_stop[-1].lower() == "true"
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return bool(lines) and bool(_PHRASES.search(lines[-1]))
