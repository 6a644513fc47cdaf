"""Turn a task's templates and the run's context into chat messages for each role.

Templates use `$name` placeholders (string.Template), so code with braces needs no escaping. The refine
prompt carries the whole history — every earlier attempt, its execution facts and the feedback on it —
as Self-Refine prescribes. When that history outgrows the context budget, the oldest attempts are left
out, except the best verified one; the original and the most recent attempt always stay.
"""

from __future__ import annotations

from dataclasses import dataclass
from string import Template

from coderefine.fences import fenced
from coderefine.providers.base import RunContext, estimate_tokens
from coderefine.records import Iteration, Role
from coderefine.refine.tasks import TaskSpec
from coderefine.reports.facts import baseline_facts, iteration_facts


def _targets_text(context: RunContext) -> str:
    if context.whole_module:
        return "the whole program"
    if context.allowed is not None:
        return "only " + ", ".join(f"`{name}`" for name in context.allowed)
    if not context.targets:
        return "the module"
    return ", ".join(f"`{name}`" for name in context.targets)


def _answer_scope(context: RunContext) -> str:
    if context.whole_module:
        return "the complete new program"
    return (
        "the complete new definitions of the functions you changed, plus any new imports and helpers; "
        "definitions you leave out stay as they are"
    )


@dataclass(frozen=True)
class Prompt:
    messages: list[dict[str, str]]
    omitted_attempts: tuple[int, ...] = ()  # attempts left out of the history to fit the budget

    @property
    def estimated_tokens(self) -> int:
        return sum(estimate_tokens(m["content"]) for m in self.messages)


def render_history(context: RunContext, omit: frozenset[int] = frozenset()) -> str:
    parts = []
    omitted = [iteration.index for iteration in context.history if iteration.index in omit]
    if omitted:
        listed = ", ".join(str(index) for index in omitted)
        parts.append(
            f"(Attempt{'s' if len(omitted) > 1 else ''} {listed} left out to fit the context budget; shown are the "
            "best verified attempt and the most recent ones.)"
        )
    for iteration in context.history:
        if iteration.index not in omit:
            parts.append(_render_iteration(iteration, context))
    return "\n\n".join(parts) if parts else "(no attempts yet)"


def _shown_code(iteration: Iteration) -> str:
    if iteration.candidate is not None:
        return iteration.candidate.extracted.rstrip()
    message = iteration.message.strip()
    return message[:2000] + ("\n... [trimmed]" if len(message) > 2000 else "") if message else "(empty answer)"


def _draft_label(iteration: Iteration) -> str:
    return f", draft {iteration.draft} of round {iteration.round}" if iteration.draft else ""


def _draft_line(iteration: Iteration) -> str:
    """A draft that was not carried forward, in one line: its verdict and what it measured."""
    verdict = "ACCEPTED" if iteration.verdict.accepted else "REJECTED"
    timing = iteration.evaluation.timing if iteration.evaluation is not None else None
    figure = f" ({timing.speedup:.2f}x [{timing.ci_low:.2f}, {timing.ci_high:.2f}])" if timing is not None else ""
    return f"- Attempt {iteration.index}{_draft_label(iteration)}: {verdict}{figure}: {iteration.verdict.reason}"


def render_other_drafts(others: tuple[Iteration, ...]) -> str:
    """What the round's other drafts showed, for the feedback on the one carried forward ("" for none)."""
    if not others:
        return ""
    lines = "\n".join(_draft_line(iteration) for iteration in others)
    return f"\n\nThe other drafts of this round, verified the same way and not carried forward:\n{lines}"


def _render_iteration(iteration: Iteration, context: RunContext) -> str:
    if not iteration.carried:
        label = f"{iteration.role.value}{_draft_label(iteration)}, not carried forward"
        heading = f"### Attempt {iteration.index} ({label})"
        return f"{heading}\n\n{_draft_line(iteration)}"
    code = _shown_code(iteration)
    feedback = (iteration.feedback or "(no feedback)").strip()
    return (
        f"### Attempt {iteration.index} ({iteration.role.value}{_draft_label(iteration)})\n\n"
        f"{fenced(code, 'python')}\n\n"
        f"Execution facts:\n{iteration_facts(iteration, context.baseline)}\n\n"
        f"Feedback:\n{feedback}"
    )


def build_prompt(
    task: TaskSpec,
    role: Role,
    context: RunContext,
    current: Iteration | None = None,
    budget_tokens: int | None = None,
    others: tuple[Iteration, ...] = (),
) -> Prompt:
    """The messages for one call; for refine, as much history as `budget_tokens` allows (None: all).
    `others`: for feedback on a round's carried draft, the round's other drafts."""
    omit: set[int] = set()
    prompt = Prompt(_messages(task, role, context, current, frozenset(), others))
    if role is not Role.REFINE or budget_tokens is None:
        return prompt
    keep = {context.history[-1].index} if context.history else set()
    carried = [iteration.index for iteration in context.history if iteration.carried]
    keep |= set(carried[-1:])  # with several drafts per round, the last round's carried one
    if context.best is not None:
        keep.add(context.best.index)
    droppable = [iteration.index for iteration in context.history if iteration.index not in keep]
    while prompt.estimated_tokens > budget_tokens and droppable:
        omit.add(droppable.pop(0))  # oldest first
        prompt = Prompt(_messages(task, role, context, current, frozenset(omit), others), tuple(sorted(omit)))
    return prompt


def _messages(
    task: TaskSpec,
    role: Role,
    context: RunContext,
    current: Iteration | None,
    omit: frozenset[int],
    others: tuple[Iteration, ...] = (),
) -> list[dict[str, str]]:
    values = {
        "file": context.file,
        "targets": _targets_text(context),
        "answer_scope": _answer_scope(context),
        "original_block": fenced(context.original_code.rstrip(), "python"),
        "facts": baseline_facts(context.baseline) if context.baseline else "(not measured)",
        "history": render_history(context, omit) if role is Role.REFINE else "",
        "candidate_block": "",
        "candidate_facts": "",
        "other_drafts": render_other_drafts(others),
    }
    if current is not None:
        values["candidate_block"] = fenced(_shown_code(current), "python")
        values["candidate_facts"] = iteration_facts(current, context.baseline)
    user = Template(task.prompts[role.value]).safe_substitute(values)
    return [
        {"role": "system", "content": task.prompts["system"].strip()},
        {"role": "user", "content": user.strip()},
    ]
