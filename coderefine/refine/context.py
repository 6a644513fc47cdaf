"""What a provider is told about the run: the structured context behind every prompt."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from coderefine.records import Baseline, Iteration, Role


@dataclass
class RunContext:
    task: str
    file: str  # as the user named it, for prompts and reports
    original_code: str
    targets: tuple[str, ...]  # the functions the run works on
    allowed: tuple[str, ...] | None  # None: any definition may change; else only these (--function)
    whole_module: bool  # the module is a script: a candidate replaces it whole
    offline_rules: tuple[str, ...]
    baseline: Baseline | None = None
    history: list[Iteration] = field(default_factory=list)
    best: Iteration | None = None  # the best verified candidate so far, kept up to date by the loop

    def best_code(self) -> str:
        best = self.best
        return best.candidate.code if best and best.candidate else self.original_code


@dataclass(frozen=True)
class ModelRequest:
    role: Role
    messages: list[dict[str, str]]  # OpenAI chat format, for model providers
    context: RunContext  # the same facts, structured, for rule-based providers
    omitted_attempts: tuple[int, ...] = ()  # history left out of the prompt to fit the context budget


@dataclass(frozen=True)
class ModelReply:
    content: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    cached: bool = False  # served from the on-disk cache: cost nothing
    usage_estimated: bool = False  # the endpoint reported no usage; tokens are estimated from the text
    parameters: dict[str, Any] = field(default_factory=dict)  # what was sent besides the messages
