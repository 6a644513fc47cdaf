"""The loop's rules end to end, on a tiny real project: the CLI, the scripted provider and the sandbox.

The readability task is used because it needs no timing, so each candidate costs one sandboxed test
run and one replay (about a second). The rules themselves (stop rules, budgets, best selection, dedup,
history) are tested in milliseconds with a fake evaluator in test_loop.py; these two check that a real
run applies them to what the sandbox measured.
"""

from __future__ import annotations

import pytest

from tests.refine.examples import BETTER, BROKEN_BEST, CONTINUE, GOOD, ORIGINAL, SLIGHT, TESTS

pytestmark = pytest.mark.slow


@pytest.fixture
def run(scripted, make_project):
    def go(generate, feedback=(), refine=(), *options):
        root = make_project({"mod.py": ORIGINAL, "test_mod.py": TESTS})
        return scripted("readability", root / "mod.py", generate, feedback, refine, *options)

    return go


def test_feedback_stop_signal_ends_the_run(run):
    data = run([GOOD], ["Clear names now.\nVERDICT: STOP"], [BETTER])
    assert data["stop_reason"] == "feedback: nothing left to improve"
    assert data["llm"]["calls"] == 2 and len(data["iterations"]) == 1
    assert data["status"] == "improved" and data["best"]["score"] > data["baseline"]["score"] + 20
    assert data["iterations"][0]["feedback"].endswith("VERDICT: STOP")


def test_best_is_never_an_unverified_candidate(run):
    data = run([SLIGHT], [CONTINUE, CONTINUE], [BROKEN_BEST], "--patience", "5")
    broken = data["iterations"][1]
    assert broken["verdict"] == "rejected" and broken["tests"]["failed"] == 1
    assert broken["score"] > data["iterations"][0]["score"]  # it would have scored higher
    assert data["best"]["iteration"] == 0 and data["best"]["code"] == SLIGHT
