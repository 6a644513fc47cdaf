"""Several drafts per round (--drafts N) and answers of reasoning models, through the real loop, the real
scripted provider and the optimize task's scorer; only the evaluator is the in-process stand-in
(tests/refine/fake_evaluator.py). The same end to end, in the sandbox, is tests/e2e/test_drafts.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from coderefine.providers.base import ModelReply, ModelRequest, RunContext
from coderefine.providers.scripted import ScriptedProvider
from coderefine.records import Candidate, Evaluation, Timing
from coderefine.refine.loop import LoopOutcome, LoopSettings, RefinementLoop
from coderefine.refine.scoring import scorer_for
from coderefine.refine.tasks import load_task
from tests.refine.fake_evaluator import FakeEvaluator, confirmed_timing

ORIGINAL = "def total(n):\n    s = 0\n    for i in range(n):\n        s += i\n    return s\n"
WRONG = "def total(n):\n    return n * n\n"
SLOWISH = "def total(n):\n    return sum(range(n))\n"
FAST = "def total(n):\n    return n * (n - 1) // 2 if n > 0 else 0\n"
FASTER = "def total(n):\n    return (n * (n - 1)) >> 1 if n > 0 else 0\n"
CONTINUE = "Go on.\nVERDICT: CONTINUE"


def check(namespace: dict[str, Any]) -> None:
    for n in (0, 1, 5, 100):
        assert namespace["total"](n) == n * (n - 1) // 2


def timing(code: str) -> Timing | None:
    if "sum(range" in code:
        return Timing(1.02, 0.95, 1.09, 0.01, 0.0098, 4, 100, 0.05)  # correct, not faster
    return confirmed_timing(40.0 if ">>" in code else 30.0) if "// 2" in code or ">>" in code else None


def block(code: str) -> str:
    return f"```python\n{code}```"


class Batched(FakeEvaluator):
    """Records how the loop handed it the drafts: all of a round at once, or one by one."""

    def __init__(self) -> None:
        super().__init__(check, timing=timing)
        self.batches: list[int] = []

    def evaluate_many(self, candidates: list[Candidate]) -> list[Evaluation]:
        self.batches.append(len(candidates))
        return [self.evaluate(candidate) for candidate in candidates]


class Recording:
    def __init__(self, inner: ScriptedProvider) -> None:
        self.inner, self.name, self.requests = inner, inner.name, []

    def complete(self, request: ModelRequest) -> ModelReply:
        self.requests.append(request)
        return self.inner.complete(request)

    def complete_drafts(self, request: ModelRequest) -> list[ModelReply]:
        self.requests.append(request)
        return self.inner.complete_drafts(request)


def make(tmp_path: Path, script: dict[str, list[Any]], evaluator: FakeEvaluator | None = None, **settings: Any):
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    spec = load_task("optimize")
    provider = Recording(ScriptedProvider(path))
    context = RunContext("optimize", "mod.py", ORIGINAL, ("total",), None, False, spec.offline_rules)
    loop_settings = LoopSettings(
        max_iterations=settings.pop("max_iterations", 3),
        patience=settings.pop("patience", 1),
        min_improvement=spec.min_improvement,
        **settings,
    )
    evaluator = evaluator or Batched()
    loop = RefinementLoop(spec, scorer_for(spec), provider, evaluator, context, loop_settings)
    return loop, provider, evaluator


def run(tmp_path: Path, script: dict[str, list[Any]], **settings: Any) -> tuple[LoopOutcome, Recording, Batched]:
    loop, provider, evaluator = make(tmp_path, script, **settings)
    return loop.run(), provider, evaluator


def test_three_drafts_are_verified_together_and_the_best_is_carried_forward(tmp_path):
    script = {
        "generate": [block(WRONG), block(SLOWISH), block(FAST)],
        "feedback": [CONTINUE, "Nothing left.\nVERDICT: STOP"],
        "refine": [block(FASTER), block(WRONG.replace("n * n", "n * n + 1")), block(FAST)],
    }
    outcome, provider, evaluator = run(tmp_path, script, drafts=3)
    assert evaluator.batches == [3, 2]  # round 1's third draft repeats attempt 2: not run again
    assert [(it.index, it.round, it.draft) for it in outcome.iterations] == [
        (0, 0, 1),
        (1, 0, 2),
        (2, 0, 3),
        (3, 1, 1),
        (4, 1, 2),
        (5, 1, 3),
    ]
    assert [it.carried for it in outcome.iterations] == [False, False, True, True, False, False]
    assert outcome.best.index == 3 and outcome.best.evaluation.timing.speedup == 40.0
    assert "identical to attempt 2" in outcome.iterations[5].verdict.reason
    assert [(r.number, r.attempts, r.carried, r.best) for r in outcome.rounds] == [
        (0, (0, 1, 2), 2, 2),
        (1, (3, 4, 5), 3, 3),
    ]
    # Each step asked for three drafts; feedback for one.
    assert [(r.role.value, r.drafts) for r in provider.requests] == [
        ("generate", 3),
        ("feedback", 1),
        ("refine", 3),
        ("feedback", 1),
    ]
    feedback = provider.requests[1].messages[-1]["content"]
    assert "other drafts of this round" in feedback and "n * (n - 1) // 2" in feedback  # the carried one, in full
    assert "- Attempt 0, draft 1 of round 0: REJECTED" in feedback and "test_mod.py::test_f" in feedback
    assert "- Attempt 1, draft 2 of round 0: REJECTED (1.02x [0.95, 1.09])" in feedback
    refine = provider.requests[2].messages[-1]["content"]
    assert "### Attempt 2 (generate, draft 3 of round 0)" in refine
    assert "### Attempt 0 (generate, draft 1 of round 0, not carried forward)" in refine
    assert "return n * n" not in refine  # a draft not carried forward is one line, not its code
    assert outcome.iterations[2].feedback == CONTINUE and outcome.iterations[0].feedback is None
    assert outcome.usage.calls == 3 + 1 + 3 + 1


def test_budgets_hold_with_drafts(tmp_path):
    script = {"generate": [block(FAST)] * 3, "feedback": [CONTINUE], "refine": [block(FASTER)] * 3}
    outcome, provider, _ = run(tmp_path, script, drafts=3, max_calls=5)
    assert outcome.usage.calls == 5 and [r.drafts for r in provider.requests] == [3, 1, 1]
    assert outcome.stop_reason == "call budget exhausted (5 calls)"
    # the token budget: each draft's prompt counted as if sent alone
    outcome, provider, _ = run(tmp_path, script, drafts=3, max_tokens=600)
    assert provider.requests[0].drafts < 3 and outcome.usage.total_tokens <= 600


def test_a_script_running_out_mid_round_keeps_the_drafts_it_had(tmp_path):
    outcome, _, evaluator = run(tmp_path, {"generate": [block(FAST), block(FASTER)]}, drafts=3)
    assert len(outcome.iterations) == 2 and evaluator.batches == [2]
    assert outcome.best.index == 1 and outcome.stop_reason == "script exhausted"


def test_one_draft_per_round_is_the_plain_loop(tmp_path):
    outcome, provider, evaluator = run(
        tmp_path, {"generate": [block(FAST)], "feedback": ["VERDICT: STOP"], "refine": []}, drafts=1
    )
    assert evaluator.batches == [] and [it.draft for it in outcome.iterations] == [0]
    assert outcome.iterations[0].carried and outcome.rounds[0].attempts == (0,)
    assert "other drafts" not in provider.requests[1].messages[-1]["content"]


def test_thinking_is_never_taken_and_a_verdict_inside_it_does_not_count(tmp_path):
    thought = "<think>\nMaybe:\n" + block(WRONG) + "\nNo: n * (n - 1) // 2, and 0 for n <= 0.\n</think>\n\n"
    script = {
        "generate": [{"content": thought + block(FAST), "finish_reason": "stop"}],
        "feedback": ["<think>It is optimal. VERDICT: STOP</think>\nThe loop is gone; try a shift.\nVERDICT: CONTINUE"],
        "refine": [
            {
                "content": "",
                "finish_reason": "length",
                "reasoning": "Draft:\n" + block(FASTER),
                "usage": {"prompt_tokens": 10, "completion_tokens": 4000, "reasoning_tokens": 4000},
            },
        ],
    }
    outcome, provider, _ = run(tmp_path, script, max_iterations=2)
    first, second = outcome.iterations
    assert first.verdict.accepted and first.candidate.code == FAST and first.thinking_chars > 20
    assert "VERDICT: STOP" not in first.feedback and outcome.stop_reason.startswith("max iterations")
    assert "while it was still thinking (4000 thinking tokens" in second.verdict.reason
    assert second.candidate is None and outcome.usage.reasoning_tokens == 4000
    assert "return n * n" not in provider.requests[1].messages[-1]["content"]  # the thinking is not shown back


def test_a_diff_answer_is_applied_to_the_best_version(tmp_path):
    diff = (
        "```diff\n--- a/mod.py\n+++ b/mod.py\n@@ -1,2 +1,2 @@\n def total(n):\n"
        "-    return n * (n - 1) // 2 if n > 0 else 0\n+    return (n * (n - 1)) >> 1 if n > 0 else 0\n```"
    )
    outcome, _, _ = run(
        tmp_path, {"generate": [block(FAST)], "feedback": [CONTINUE], "refine": [diff]}, max_iterations=2
    )
    second = outcome.iterations[1]
    assert second.verdict.accepted and ">> 1" in second.candidate.code
    assert any("unified diff, applied to attempt 0 (the best verified)" in note for note in second.candidate.notes)
