"""The two public records of the rewrite engine: what a rule is, and what applying rules produced."""

from __future__ import annotations

from dataclasses import dataclass

TASKS = frozenset({"optimize", "readability"})


@dataclass(frozen=True)
class RewriteRule:
    id: str  # e.g. "ruff:PERF401", "memoize-recursion"
    description: str  # one line, imperative: what the rewrite does (shown to users and in feedback)
    tasks: frozenset[str]  # subset of {"optimize", "readability"}


@dataclass(frozen=True)
class RewriteResult:
    code: str  # the whole module after the rewrites
    applied: tuple[str, ...]  # ids of rules that actually changed something, in the order applied
