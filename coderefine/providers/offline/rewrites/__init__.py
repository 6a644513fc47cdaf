"""Offline, rule-based rewrites: ruff fixes and coderefine's own codemods.

This is the rewrite engine behind the `offline` provider. A rule either applies ruff's fix for one code
(`ruff:<CODE>`), runs `ruff format` (`ruff-format`), or runs one of coderefine's libcst codemods. Rules
are meant to keep behaviour by construction (each one declines when unsure); the evaluation gate
(tests, behaviour replay, timing) still decides what is accepted.

    result = apply_rules(code, [r.id for r in rules_for("optimize")], targets=["slow_function"])
    result.code, result.applied
"""

from __future__ import annotations

import ast
import logging
from collections.abc import Sequence

from coderefine.providers.offline.rewrites.base import TASKS, RewriteResult, RewriteRule
from coderefine.providers.offline.rewrites.registry import DEFAULT_ORDER, ENTRIES, Entry
from coderefine.providers.offline.rewrites.ruff_fixes import fixable_codes, may_fix
from coderefine.providers.offline.rewrites.targets import outside_unchanged

__all__ = ["RewriteResult", "RewriteRule", "all_rules", "applicable_rules", "apply_rules", "rules_for"]

_log = logging.getLogger(__name__)


def all_rules() -> dict[str, RewriteRule]:
    return {rule_id: entry.rule for rule_id, entry in ENTRIES.items()}


def rules_for(task: str) -> list[RewriteRule]:
    """The default rules of a task, in the order to apply them (cheap and safe first)."""
    if task not in TASKS:
        raise KeyError(f"unknown task {task!r}; tasks: {', '.join(sorted(TASKS))}")
    return [ENTRIES[rule_id].rule for rule_id in DEFAULT_ORDER[task]]


def apply_rules(source: str, rule_ids: Sequence[str], targets: Sequence[str] | None = None) -> RewriteResult:
    """Apply the rules in order, each to the result of the previous one.

    `targets` names the definitions that may change (`f`, `Cls.meth`); None lets the whole module change.
    Raises KeyError for an unknown rule id and SyntaxError when `source` does not parse.
    """
    entries = _entries(rule_ids)
    _check_syntax(source)
    targets = None if targets is None else tuple(targets)
    selects = tuple(sorted({e.ruff.select for e in entries if e.ruff is not None}))
    code = source
    applied: list[str] = []
    for entry in entries:
        if entry.ruff is not None and not may_fix(entry.ruff, fixable_codes(code, selects)):
            continue
        new = _apply_one(entry, code, targets)
        if new != code:
            code = new
            applied.append(entry.rule.id)
    return RewriteResult(code=code, applied=tuple(applied))


def applicable_rules(source: str, rule_ids: Sequence[str], targets: Sequence[str] | None = None) -> list[str]:
    """The rules that would change `source` if applied alone (each judged on the unchanged source)."""
    entries = _entries(rule_ids)
    _check_syntax(source)
    targets = None if targets is None else tuple(targets)
    selects = tuple(sorted({e.ruff.select for e in entries if e.ruff is not None}))
    codes = fixable_codes(source, selects)
    return [
        entry.rule.id
        for entry in entries
        if (entry.ruff is None or may_fix(entry.ruff, codes)) and _apply_one(entry, source, targets) != source
    ]


def _entries(rule_ids: Sequence[str]) -> list[Entry]:
    if isinstance(rule_ids, str):
        rule_ids = [rule_ids]  # a lone id is a common slip; treat it as one rule, not as its characters
    unknown = [rule_id for rule_id in rule_ids if rule_id not in ENTRIES]
    if unknown:
        raise KeyError(f"unknown rewrite rule(s): {', '.join(map(repr, unknown))}; see all_rules()")
    return [ENTRIES[rule_id] for rule_id in rule_ids]


def _check_syntax(source: str) -> None:
    try:
        ast.parse(source)
    except ValueError as exc:  # null bytes: Python 3.11 raises ValueError, 3.12 SyntaxError
        raise SyntaxError(str(exc)) from None


def _apply_one(entry: Entry, code: str, targets: tuple[str, ...] | None) -> str:
    """One rule on `code`; the input unchanged when the rule fails, breaks the syntax or strays outside."""
    try:
        new = entry.apply(code, targets)
    except Exception:  # a rule must never take the whole run down on odd input: skip it instead
        _log.debug("rewrite rule %s failed; skipped", entry.rule.id, exc_info=True)
        return code
    if new == code:
        return code
    try:
        ast.parse(new)
    except (SyntaxError, ValueError):
        _log.debug("rewrite rule %s produced code that does not parse; skipped", entry.rule.id)
        return code
    if targets is not None and not outside_unchanged(code, new, targets):
        _log.debug("rewrite rule %s changed code outside the targets; skipped", entry.rule.id)
        return code
    return new
