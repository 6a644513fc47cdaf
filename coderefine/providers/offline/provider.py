"""The `offline` provider: deterministic, no network, no model.

- generate: every rewrite rule of the task (tasks/<task>/task.toml, [offline] rules) that applies, at once.
- feedback: built from the execution facts (tests, behaviour, measured speedup, profile hot spots,
  radon metrics), with the rewrite to try next, or `VERDICT: STOP` when none is left.
- refine: if the bundle was rejected, the rules one at a time, each on top of the best verified version,
  so that one unsafe or slow rewrite does not sink the others.

The gate decides as for any model: a rule that changes behaviour or does not pay off is rejected.
"""

from __future__ import annotations

from coderefine.fences import fenced
from coderefine.providers.base import ModelReply, ModelRequest, RunContext
from coderefine.providers.offline.rewrites import all_rules, applicable_rules, apply_rules
from coderefine.quality.metrics import block_complexities
from coderefine.records import Iteration, Role
from coderefine.reports.facts import iteration_facts
from coderefine.source import ast_key


def _fenced(code: str) -> str:
    return fenced(code.rstrip(), "python") + "\n"


class OfflineProvider:
    name = "offline"

    def __init__(self) -> None:
        self.bundle: tuple[str, ...] = ()  # the rules the first candidate applied together
        self.singles_tried: set[str] = set()
        self.applied: dict[int, tuple[str, ...]] = {}  # iteration index -> rules in that candidate

    # ----------------------------------------------------------------- helpers

    @staticmethod
    def _rules(context: RunContext) -> list[str]:
        known = all_rules()
        return [rule for rule in context.offline_rules if rule in known]

    @staticmethod
    def _scope(context: RunContext) -> list[str] | None:
        return list(context.allowed) if context.allowed is not None else None

    def _changes_program(self, base: str, rules: list[str], context: RunContext) -> bool:
        """Layout-only rewrites (e.g. ruff format) give the same program, which the loop does not
        evaluate again; trying them alone would waste an iteration."""
        return ast_key(apply_rules(base, rules, self._scope(context)).code) != ast_key(base)

    def _bundle_accepted(self, context: RunContext) -> bool:
        return bool(context.history) and context.history[0].verdict.accepted

    def _next_rule(self, context: RunContext) -> str | None:
        """The next single rule that still changes the best verified version, if any."""
        if self._bundle_accepted(context):
            return None
        base = context.best_code()
        for rule in self._rules(context):
            if rule in self.singles_tried:
                continue
            if len(self.bundle) <= 1 and rule in self.bundle:
                continue  # a one-rule bundle was that rule alone: already tried
            if applicable_rules(base, [rule], self._scope(context)) and self._changes_program(base, [rule], context):
                return rule
        return None

    # ----------------------------------------------------------------- roles

    def complete(self, request: ModelRequest) -> ModelReply:
        context = request.context
        if request.role is Role.GENERATE:
            return ModelReply(self._generate(context))
        if request.role is Role.REFINE:
            return ModelReply(self._refine(context))
        return ModelReply(self._feedback(context, context.history[-1]))

    def _generate(self, context: RunContext) -> str:
        rules = applicable_rules(context.original_code, self._rules(context), self._scope(context))
        if not rules or not self._changes_program(context.original_code, rules, context):
            return "No offline rewrite rule applies to this code.\n\n" + _fenced(context.original_code)
        rewritten = apply_rules(context.original_code, rules, self._scope(context))
        self.bundle = rewritten.applied
        self.applied[0] = rewritten.applied
        described = "\n".join(f"- `{rule}`: {all_rules()[rule].description}" for rule in rewritten.applied)
        return f"Applied these rewrites together:\n{described}\n\n" + _fenced(rewritten.code)

    def _refine(self, context: RunContext) -> str:
        rule = self._next_rule(context)
        base = context.best_code()
        if rule is None:
            return "No rewrite left to try.\n\n" + _fenced(base)
        self.singles_tried.add(rule)
        rewritten = apply_rules(base, [rule], self._scope(context))
        self.applied[len(context.history)] = rewritten.applied
        on_top = "the best verified version" if context.best is not None else "the original"
        return f"Applied `{rule}` alone, on top of {on_top}: {all_rules()[rule].description}\n\n" + _fenced(
            rewritten.code
        )

    def _feedback(self, context: RunContext, current: Iteration) -> str:
        lines = ["Execution facts:", iteration_facts(current, context.baseline), ""]
        rules = self.applied.get(current.index, ())
        if rules:
            lines.append(f"Rewrites in this attempt: {', '.join(f'`{r}`' for r in rules)}.")
        if not current.verdict.accepted and current.evaluation is not None and len(rules) > 1:
            lines.append("At least one of them is unsafe or does not pay off here: try them one at a time.")
        lines += self._where(current, context)
        rule = self._next_rule(context)
        if rule is None:
            lines += ["", "No rewrite rule left that changes the best verified version.", "VERDICT: STOP"]
        else:
            lines += [
                "",
                f"What to do next: apply `{rule}` ({all_rules()[rule].description}).",
                "VERDICT: CONTINUE",
            ]
        return "\n".join(lines)

    @staticmethod
    def _where(current: Iteration, context: RunContext) -> list[str]:
        """Point at the code that matters: the profile's hottest function and its complexity."""
        evaluation = current.evaluation or (context.baseline.evaluation if context.baseline else None)
        if evaluation is None or not evaluation.hot_spots:
            return []
        spot = evaluation.hot_spots[0]
        code = current.candidate.code if current.candidate else context.original_code
        complexity = {name: cc for name, _, cc in block_complexities(code)}.get(spot.function)
        detail = f", cyclomatic complexity {complexity}" if complexity is not None else ""
        return [
            f"Where the time goes: `{spot.function}` (line {spot.line}) takes {spot.share:.0%} of the profiled "
            f"workload in {spot.calls} calls{detail}."
        ]
