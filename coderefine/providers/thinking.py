"""A reasoning model's thinking, told apart from its answer, wherever the server put it.

Reasoning models served locally (Qwen3, DeepSeek-R1 distills, gpt-oss through Ollama, vLLM or llama.cpp)
think before they answer, and the thinking often holds drafts of the very code asked for. Servers put it
in one of three places:

- a separate field of the message: `reasoning_content` (DeepSeek's API, llama.cpp's
  `--reasoning-format deepseek`, vLLM's reasoning parsers) or `reasoning` (Ollama, OpenRouter, newer vLLM);
  the provider reads it into `ModelReply.reasoning`, and `content` is then the answer alone;
- inside `content`, between tags: `<think>...</think>` (Qwen3, R1 distills served raw), also `<thinking>`
  and `<reasoning>`; R1 distills whose chat template opens the tag in the prompt send only the closing
  `</think>`;
- inside `content` in gpt-oss's harmony format served raw: `<|channel|>analysis<|message|>...<|end|>`
  before `<|channel|>final<|message|>...`.

`split_thinking` returns the answer (what follows the thinking) and the thinking; a thinking block left open
means the model never got to its answer (`open`), which matters when the answer was cut at the length limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TAGS = ("think", "thinking", "reasoning", "thought")
# An opening tag at the start of the text or of a line (models also mention "<think>" in prose, rarely).
_OPEN = re.compile(rf"<(?P<tag>{'|'.join(_TAGS)})>", re.IGNORECASE)
_HARMONY_FINAL = re.compile(r"<\|channel\|>\s*final\s*(?:<\|constrain\|>\w+\s*)?<\|message\|>", re.IGNORECASE)
_HARMONY_ANALYSIS = re.compile(r"<\|channel\|>\s*(?:analysis|commentary)\b", re.IGNORECASE)
_HARMONY_TOKENS = re.compile(r"<\|(?:start|end|return|call|channel|message|constrain)\|>(?:assistant)?")


@dataclass(frozen=True)
class Split:
    answer: str  # the text after the thinking: what the model answers
    thinking: str  # the thinking, every block of it joined (empty: none)
    open: bool = False  # a thinking block was never closed: the model was still thinking when it stopped


def split_thinking(text: str) -> Split:
    """The answer and the thinking of a message's `content` (an answer without thinking comes back as it is)."""
    lowered = text.lower()
    if not any(f"{tag}>" in lowered for tag in _TAGS) and "<|channel|>" not in lowered:
        return Split(text, "")
    if _HARMONY_ANALYSIS.search(text) or _HARMONY_FINAL.search(text):
        return _split_harmony(text)
    thoughts: list[str] = []
    answer: list[str] = []
    position = 0
    # A closing tag before any opening one: the chat template opened the block in the prompt (R1 distills).
    first_close = min((i for tag in _TAGS if (i := lowered.find(f"</{tag}>")) >= 0), default=-1)
    first_open = _OPEN.search(text)
    if first_close >= 0 and (first_open is None or first_close < first_open.start()):
        tag = next(tag for tag in _TAGS if lowered.startswith(f"</{tag}>", first_close))
        thoughts.append(text[:first_close])
        position = first_close + len(tag) + 3
    while True:
        opening = _OPEN.search(text, position)
        if opening is None:
            answer.append(text[position:])
            break
        answer.append(text[position : opening.start()])
        tag = opening.group("tag").lower()
        closing = lowered.find(f"</{tag}>", opening.end())
        if closing < 0:  # never closed: everything after it is thinking, and no answer came
            thoughts.append(text[opening.end() :])
            return Split(_joined(answer), _joined(thoughts), open=True)
        thoughts.append(text[opening.end() : closing])
        position = closing + len(tag) + 3
    return Split(_joined(answer), _joined(thoughts))


def _split_harmony(text: str) -> Split:
    finals = list(_HARMONY_FINAL.finditer(text))
    final = finals[-1] if finals else None  # the last final channel is the answer
    if final is None:  # analysis only: the model stopped before its final channel
        return Split("", _HARMONY_TOKENS.sub("\n", text).strip(), open=True)
    thinking = _HARMONY_TOKENS.sub("\n", text[: final.start()]).replace("analysis", "", 1).strip()
    answer = _HARMONY_TOKENS.sub("", text[final.end() :])
    return Split(answer.strip("\n") + ("\n" if answer.strip() else ""), thinking)


def _joined(parts: list[str]) -> str:
    return "\n".join(part.strip("\n") for part in parts if part.strip()).strip("\n") + (
        "\n" if any(part.strip() for part in parts) else ""
    )
