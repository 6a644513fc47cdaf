"""The response cache's key: what must match for a repeated run to be served from disk, and what may differ.

A repeated run measures again, so every figure it measured differs a little; the key must not change with
them, or the second run's requests miss the cache and reach the model again. The prompts here are built by
the real prompt code from two evaluations of the same candidate that differ only in what was measured.
"""

from __future__ import annotations

from dataclasses import replace

from coderefine import records
from coderefine.providers.base import ModelReply, RunContext
from coderefine.providers.cache import ResponseCache, cache_key, mask_measurements
from coderefine.records import (
    Baseline,
    BaselineFacts,
    BehaviorReport,
    Evaluation,
    HotSpot,
    Iteration,
    Role,
    Timing,
    Verdict,
)
from coderefine.refine.candidate import build_candidate
from coderefine.refine.prompts import build_prompt
from coderefine.refine.tasks import load_task

ORIGINAL = (
    "def f(a):\n    r = []\n    for i in range(len(a)):\n        if a[i] % 2 == 0:\n"
    "            r.append(a[i] * 2)\n    return r\n"
)
CLEAN = "def f(a):\n    return [value * 2 for value in a if value % 2 == 0]\n"


def _evaluation(duration: float, hot_spots: tuple[HotSpot, ...], timing: Timing | None = None) -> Evaluation:
    return Evaluation(
        tests=records.TestReport(collected=1, passed=1, failed=0, skipped=0, duration=duration, exit_code=0),
        behavior=BehaviorReport(calls_compared=3, mismatches=0),
        timing=timing,
        metrics={"readability": 78.8, "mi": 79.4, "cc_max": 3.0, "sloc": 2.0},
        hot_spots=hot_spots,
    )


def _feedback_key(task: str, evaluation: Evaluation, verdict: Verdict) -> str:
    """The cache key of the feedback request on one attempt, as a run would send it."""
    spec = load_task(task)
    baseline = Baseline.scored(BaselineFacts(evaluation, 3, None, None), 71.0)
    candidate = build_candidate(f"```python\n{CLEAN}```", ORIGINAL, None, whole_module=False, origin="generate")
    iteration = Iteration(0, Role.GENERATE, candidate, evaluation, verdict)
    context = RunContext(task, "mod.py", ORIGINAL, ("f",), None, False, (), baseline, (iteration,))
    prompt = build_prompt(spec, Role.FEEDBACK, context, iteration)
    return cache_key("http://127.0.0.1:1/v1", "test-model", prompt.messages, {})


# The profile of the same code on two runs: two functions at about the same share swap places.
LISTCOMP = HotSpot("<listcomp>", 2, 0.021, 3)
F = HotSpot("f", 1, 0.018, 3)


def test_the_feedback_prompt_of_a_repeated_run_has_the_same_key():
    """The flaky test_a_repeated_run_costs_nothing...: under load the profile ranked `f` above `<listcomp>`."""
    verdict = Verdict(True, "readability 71.0 -> 78.8 (+7.7)", 78.8)
    first = _feedback_key("readability", _evaluation(1.1, (LISTCOMP, F)), verdict)
    under_load = _feedback_key(
        "readability", _evaluation(3.0, (replace(F, share=0.024), replace(LISTCOMP, share=0.017))), verdict
    )
    assert first == under_load


def test_the_profiles_functions_are_measured_too():
    # Which functions make the top of a profile is itself a measurement (a fifth one may take a fourth's place).
    verdict = Verdict(True, "readability 71.0 -> 78.8 (+7.7)", 78.8)
    one = _feedback_key("readability", _evaluation(1.1, (LISTCOMP, F)), verdict)
    other = _feedback_key("readability", _evaluation(1.1, (F, HotSpot("helper", 9, 0.01, 12))), verdict)
    assert one == other


def _timing(speedup: float, pairs: int) -> Timing:
    return Timing(speedup, speedup - 0.2, speedup + 0.2, 0.01, 0.01 / speedup, pairs, 100, 0.05)


def test_timing_figures_and_the_number_of_pairs_run_are_masked():
    # Timing stops adding pairs once a candidate cannot turn out faster: how many ran is measured.
    verdict = Verdict(False, "not faster: 1.01x [0.81, 1.21], the lower bound does not clear +5%", 1.01)
    one = _feedback_key("optimize", _evaluation(1.1, (), _timing(1.01, 4)), verdict)
    other = _feedback_key("optimize", _evaluation(1.3, (), _timing(1.03, 6)), replace(verdict, score=1.03))
    assert one == other


def test_what_was_not_measured_must_match():
    verdict = Verdict(True, "readability 71.0 -> 78.8 (+7.7)", 78.8)
    passed = _evaluation(1.1, (LISTCOMP,))
    failed = replace(passed, tests=replace(passed.tests, passed=0, failed=1, exit_code=1))
    assert _feedback_key("readability", passed, verdict) != _feedback_key("readability", failed, verdict)
    rejected = Verdict(False, "not more readable: readability 71.0 -> 71.5 (+0.5), needs +1", 71.5)
    assert _feedback_key("readability", passed, verdict) != _feedback_key("readability", passed, rejected)


def test_the_mask_leaves_code_and_counts_alone():
    text = "- Tests: 3 passed (1.2 s), 40% of the time.\n```python\nx = 1.5\n```\n3 calls"
    assert mask_measurements(text) == "- Tests: 3 passed (# s), #% of the time.\n```python\nx = 1.5\n```\n3 calls"
    assert mask_measurements("- Hot spots in `f`, line 2:\n```python\nHot spots (x)\n```") == (
        "- Hot spots in `f`, line 2:\n```python\nHot spots (x)\n```"
    )


def test_an_entry_round_trips_and_an_unreadable_one_is_a_miss(tmp_path):
    cache = ResponseCache(tmp_path)
    reply = ModelReply("VERDICT: STOP", prompt_tokens=10, completion_tokens=2, finish_reason="stop")
    assert cache.get("ab" * 32) is None
    assert cache.put("ab" * 32, reply)
    assert cache.get("ab" * 32) == replace(reply, cached=True)
    (tmp_path / "ab" / f"{'ab' * 32}.json").write_text("{not json")
    assert cache.get("ab" * 32) is None
