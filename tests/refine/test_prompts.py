"""The chat messages each role sends, from the real task templates and a run's context."""

from __future__ import annotations

from dataclasses import replace

import pytest

from coderefine.providers.base import RunContext
from coderefine.records import Baseline, BehaviorReport, Evaluation, Iteration, Role, Verdict
from coderefine.refine.candidate import build_candidate
from coderefine.refine.prompts import build_prompt, estimate_tokens, render_history
from coderefine.refine.tasks import load_task

ORIGINAL = "def f(a, b):\n    c = {'sum': a + b}\n    return c['sum'] * 2  # costs $5\n"


@pytest.fixture
def readability():
    return load_task("readability")


def context(**changes: object) -> RunContext:
    evaluation = Evaluation(tests=None, behavior=BehaviorReport(3, 0), timing=None, metrics={"sloc": 3.0})
    baseline = Baseline(evaluation=evaluation, calls_recorded=3, loops=None, workload_seconds=None, score=70.0)
    base = RunContext("readability", "pkg/mod.py", ORIGINAL, ("f", "g"), None, False, (), baseline)
    return replace(base, **changes)


def attempt(index: int, code: str, feedback: str | None = None, accepted: bool = True) -> Iteration:
    role = Role.GENERATE if index == 0 else Role.REFINE
    candidate = build_candidate(f"```python\n{code}```", ORIGINAL, None, whole_module=False, origin=role.value)
    verdict = Verdict(accepted, f"verdict {index}", 70.0 + index if accepted else None)
    return Iteration(index, role, candidate, None, verdict, feedback=feedback)


def test_generate_has_the_system_prompt_the_code_verbatim_and_the_baseline_facts(readability):
    system, user = build_prompt(readability, Role.GENERATE, context()).messages
    assert system == {"role": "system", "content": readability.prompts["system"].strip()}
    assert user["role"] == "user"
    # Braces and dollars in code need no escaping: only the template's own $placeholders are replaced.
    assert ORIGINAL.rstrip() in user["content"]
    assert "$" not in user["content"].replace("costs $5", "")  # and no placeholder is left unfilled
    assert "pkg/mod.py" in user["content"]
    assert "- 3 calls to the target were recorded while the tests ran" in user["content"]
    assert "Attempt" not in user["content"]  # no history before the first attempt


@pytest.mark.parametrize(
    ("changes", "targets"),
    [
        ({}, "`f`, `g`"),
        ({"allowed": ("f",)}, "only `f`"),
        ({"whole_module": True}, "the whole program"),
        ({"targets": ()}, "the module"),
    ],
)
def test_the_targets_are_named_as_the_run_allows(readability, changes, targets):
    user = build_prompt(readability, Role.GENERATE, context(**changes)).messages[1]["content"]
    assert targets in user


def test_feedback_shows_the_attempt_and_what_executing_it_showed(readability):
    current = attempt(0, "def f(first, second):\n    return (first + second) * 2\n")
    user = build_prompt(readability, Role.FEEDBACK, context(history=(current,)), current).messages[1]["content"]
    assert "return (first + second) * 2" in user and "- Verdict: ACCEPTED: verdict 0." in user


def test_refine_carries_the_whole_history_with_feedback(readability):
    history = [
        attempt(0, "def f(x, y):\n    return (x + y) * 2\n", "Rename x and y.\nVERDICT: CONTINUE"),
        attempt(1, "def f(first, second):\n    return (first + second) * 2\n"),
    ]
    user = build_prompt(readability, Role.REFINE, context(history=history)).messages[1]["content"]
    assert "### Attempt 0 (generate)" in user and "Rename x and y." in user
    assert "### Attempt 1 (refine)" in user and "Feedback:\n(no feedback)" in user
    assert user.index("### Attempt 0") < user.index("### Attempt 1")
    assert render_history(context()) == "(no attempts yet)"


def test_an_answer_without_code_is_shown_trimmed():
    long_answer = "I refuse. " * 300
    rejected = Iteration(0, Role.GENERATE, None, None, Verdict(False, "no usable code", None), message=long_answer)
    shown = render_history(context(history=(rejected,)))
    assert "```python\nI refuse." in shown and "\n... [trimmed]\n```" in shown
    empty = replace(rejected, message="  ")
    assert "```python\n(empty answer)\n```" in render_history(context(history=(empty,)))


def test_a_context_budget_leaves_out_the_oldest_attempts_but_keeps_the_best_and_the_latest(readability):
    padding = "\n".join(f"    # {'comment ' * 20}{i}" for i in range(30))
    history = [attempt(i, f"def f(a, b):\n{padding}\n    return (a + b) * {i + 2} // {i + 1}\n") for i in range(4)]
    whole = build_prompt(readability, Role.REFINE, context(history=history, best=history[1]))
    assert whole.omitted_attempts == ()
    budget = whole.estimated_tokens - 100
    cut = build_prompt(readability, Role.REFINE, context(history=history, best=history[1]), budget_tokens=budget)
    assert cut.omitted_attempts == (0,) and cut.estimated_tokens <= budget
    text = cut.messages[1]["content"]
    assert "(Attempt 0 left out to fit the context budget; shown are the best verified attempt" in text
    assert "### Attempt 0" not in text and all(f"### Attempt {i}" in text for i in (1, 2, 3))

    tiny = build_prompt(readability, Role.REFINE, context(history=history, best=history[1]), budget_tokens=10)
    assert tiny.omitted_attempts == (0, 2)  # over budget still: the best (1) and the latest (3) always stay
    assert "(Attempts 0, 2 left out" in tiny.messages[1]["content"]


def test_the_budget_applies_to_refine_only(readability):
    history = [attempt(0, "def f(x, y):\n    return (x + y) * 2\n")]
    prompt = build_prompt(readability, Role.FEEDBACK, context(history=history), history[0], budget_tokens=1)
    assert prompt.omitted_attempts == ()


def test_token_estimate():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abc") == 1
    assert estimate_tokens("x" * 35) == 10 and estimate_tokens("x" * 36) == 11
