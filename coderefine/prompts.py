"""Turn a task's templates and the run's context into chat messages for each role.

Templates use `$name` placeholders (string.Template), so code with braces needs no escaping. The refine
prompt carries the whole history — every earlier attempt, its execution facts and the feedback on it —
as Self-Refine prescribes.
"""

from __future__ import annotations

from string import Template

from coderefine.context import RunContext
from coderefine.facts import baseline_facts, iteration_facts
from coderefine.records import Iteration, Role
from coderefine.tasks import TaskSpec


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


def render_history(context: RunContext) -> str:
    parts = []
    for iteration in context.history:
        parts.append(_render_iteration(iteration, context))
    return "\n\n".join(parts) if parts else "(no attempts yet)"


def _shown_code(iteration: Iteration) -> str:
    if iteration.candidate is not None:
        return iteration.candidate.extracted.rstrip()
    message = iteration.message.strip()
    return message[:2000] + ("\n... [trimmed]" if len(message) > 2000 else "") if message else "(empty answer)"


def _render_iteration(iteration: Iteration, context: RunContext) -> str:
    code = _shown_code(iteration)
    feedback = (iteration.feedback or "(no feedback)").strip()
    return (
        f"### Attempt {iteration.index} ({iteration.role.value})\n\n"
        f"```python\n{code}\n```\n\n"
        f"Execution facts:\n{iteration_facts(iteration, context.baseline)}\n\n"
        f"Feedback:\n{feedback}"
    )


def build_messages(
    task: TaskSpec, role: Role, context: RunContext, current: Iteration | None = None
) -> list[dict[str, str]]:
    values = {
        "file": context.file,
        "targets": _targets_text(context),
        "answer_scope": _answer_scope(context),
        "original_code": context.original_code.rstrip(),
        "facts": baseline_facts(context.baseline) if context.baseline else "(not measured)",
        "history": render_history(context) if role is Role.REFINE else "",
        "candidate_code": "",
        "candidate_facts": "",
    }
    if current is not None:
        values["candidate_code"] = _shown_code(current)
        values["candidate_facts"] = iteration_facts(current, context.baseline)
    user = Template(task.prompts[role.value]).safe_substitute(values)
    return [
        {"role": "system", "content": task.prompts["system"].strip()},
        {"role": "user", "content": user.strip()},
    ]
