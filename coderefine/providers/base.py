"""The provider extension point: one method, `complete`, for the generate, feedback and refine roles, and
what it is given and gives back.

A provider is handed a frozen `ModelRequest`: the messages for a model, and the same facts structured
(`RunContext`, the run as it stands when the request is made) for rule-based providers. Nothing a
provider holds can change the loop's state; the loop makes a new context for every request.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from coderefine.providers.thinking import Split, split_thinking
from coderefine.records import Baseline, Iteration, Role


@dataclass(frozen=True)
class RunContext:
    """What a provider is told about the run: the structured context behind every prompt."""

    task: str
    file: str  # as the user named it, for prompts and reports
    original_code: str
    targets: tuple[str, ...]  # the functions the run works on
    allowed: tuple[str, ...] | None  # None: any definition may change; else only these (--function)
    whole_module: bool  # the module is a script: a candidate replaces it whole
    offline_rules: tuple[str, ...]
    baseline: Baseline | None = None
    history: tuple[Iteration, ...] = ()
    best: Iteration | None = None  # the best verified candidate so far

    def best_code(self) -> str:
        best = self.best
        return best.candidate.code if best and best.candidate else self.original_code


@dataclass(frozen=True)
class ModelRequest:
    role: Role
    messages: list[dict[str, str]]  # OpenAI chat format, for model providers
    context: RunContext  # the same facts, structured, for rule-based providers
    omitted_attempts: tuple[int, ...] = ()  # history left out of the prompt to fit the context budget
    drafts: int = 1  # answers wanted for this prompt (--drafts); see `complete_drafts`
    # Told the completion tokens received so far while a streamed answer arrives (a live view's progress).
    on_progress: Callable[[int], None] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ModelReply:
    content: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    cached: bool = False  # served from the on-disk cache: cost nothing
    usage_estimated: bool = False  # the endpoint reported no usage; tokens are estimated from the text
    parameters: dict[str, Any] = field(default_factory=dict)  # what was sent besides the messages
    # A reasoning model's thinking when the server sends it apart from `content` (`reasoning_content` or
    # `reasoning`); thinking inside `content` (`<think>...</think>`) is set apart by `split()`.
    reasoning: str = ""
    reasoning_tokens: int = 0  # of completion_tokens, those spent thinking (reported, or estimated)
    seconds: float = 0.0  # how long the answer took to arrive (0: not measured, e.g. cached or scripted)

    def split(self) -> Split:
        """The answer the model gave after its thinking, and the thinking, wherever the server put it."""
        inline = split_thinking(self.content)
        thinking = "\n".join(part.strip("\n") for part in (self.reasoning, inline.thinking) if part.strip())
        # Cut at the length limit with thinking sent apart and no answer yet: still thinking.
        cut = self.finish_reason == "length"
        still = inline.open or (cut and bool(self.reasoning.strip()) and not inline.answer.strip())
        return Split(inline.answer, thinking, still)


# Without a tokenizer for every model an endpoint may serve, estimate: code and English run at roughly
# 3-4 characters per token, and 3.5 errs on the side of leaving room.
_CHARS_PER_TOKEN = 3.5


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / _CHARS_PER_TOKEN)


class Provider(Protocol):
    name: str

    def complete(self, request: ModelRequest) -> ModelReply: ...


class DraftProvider(Provider, Protocol):
    """A provider that answers `request.drafts` times at once (the API's `n`, a script's next messages)."""

    def complete_drafts(self, request: ModelRequest) -> list[ModelReply]: ...


def complete_drafts(provider: Provider, request: ModelRequest) -> list[ModelReply]:
    """`request.drafts` answers (at least one): from the provider's own `complete_drafts` when it has one,
    else one `complete` per draft. A scripted provider running out after the first keeps what it gave."""
    many = getattr(provider, "complete_drafts", None)
    if request.drafts > 1 and callable(many):
        replies: list[ModelReply] = many(request)
        return replies
    replies = []
    single = replace(request, drafts=1)
    for _ in range(max(1, request.drafts)):
        try:
            replies.append(provider.complete(single))
        except ScriptExhausted:
            if not replies:
                raise
            break
    return replies


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
