"""The loop's stop rules, deduplication and choice of the best candidate, on a tiny real project.

The readability task is used because it needs no timing, so each candidate costs one sandboxed test
run and one replay (about a second).
"""

from __future__ import annotations

import pytest

ORIGINAL = "def f(a, b):\n    c = a + b\n    d = c * 2\n    return d\n"
TESTS = (
    "from mod import f\n\n\ndef test_f():\n    assert f(1, 2) == 6\n    assert f(-1, 1) == 0\n"
    "    assert f(2, 3) == 10\n"
)
GOOD = "def f(first, second):\n    total = first + second\n    doubled = total * 2\n    return doubled\n"  # +24 points
# Same score as GOOD:
TIE = "def f(first, second):\n    summed = first + second\n    twice = summed * 2\n    return twice\n"
BETTER = "def f(first, second):\n    total = first + second\n    return total * 2\n"  # GOOD + ~1.1, 7 changed lines
# BETTER's score with 10 changed lines:
BETTER_WIDE = "def f(first, second):\n    summed = (\n        first\n        + second\n    )\n    return summed * 2\n"
BROKEN_BEST = 'def f(first, second):\n    """Twice the sum."""\n    return (first + second) * 3\n'
SLIGHT = "def f(first, b):\n    c = first + b\n    d = c * 2\n    return d\n"  # +6 points
CONTINUE = "Rename further.\nVERDICT: CONTINUE"


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


def test_patience_stops_when_a_refinement_does_not_improve(run):
    data = run([GOOD], [CONTINUE, CONTINUE], [TIE, BETTER])
    assert data["stop_reason"].startswith("converged")
    assert [it["verdict"] for it in data["iterations"]] == ["accepted", "accepted"]
    assert data["llm"]["calls"] == 3  # no feedback asked for the round that ended the run


def test_patience_two_allows_one_stale_round(run):
    data = run([GOOD], [CONTINUE, CONTINUE], [TIE, BETTER], "--patience", "2")
    assert len(data["iterations"]) == 3 and data["best"]["iteration"] == 2


def test_max_iterations(run):
    data = run([GOOD], [CONTINUE, CONTINUE], [BETTER, TIE], "--max-iterations", "2", "--patience", "5")
    assert data["stop_reason"] == "max iterations reached (2)"
    assert data["best"]["iteration"] == 1


def test_call_budget(run):
    data = run([GOOD], [CONTINUE, CONTINUE], [BETTER, TIE], "--max-calls", "3", "--patience", "5")
    assert data["stop_reason"] == "call budget exhausted (3 calls)"
    assert data["llm"]["calls"] == 3 and len(data["iterations"]) == 2


def test_identical_candidate_is_not_evaluated_twice(run):
    data = run([GOOD], [CONTINUE, CONTINUE], ["# same program, new comment\n" + GOOD, BETTER], "--patience", "5")
    second = data["iterations"][1]
    assert second["verdict"] == "rejected" and second["reason"] == "identical to attempt 0; not evaluated again"
    assert not second["evaluated"] and second["tests"] is None
    assert data["iterations"][2]["verdict"] == "accepted"


def test_best_is_never_an_unverified_candidate(run):
    data = run([SLIGHT], [CONTINUE, CONTINUE], [BROKEN_BEST], "--patience", "5")
    broken = data["iterations"][1]
    assert broken["verdict"] == "rejected" and broken["tests"]["failed"] == 1
    assert broken["score"] > data["iterations"][0]["score"]  # it would have scored higher
    assert data["best"]["iteration"] == 0 and data["best"]["code"] == SLIGHT


def test_ties_go_to_the_smaller_diff(run):
    data = run([BETTER_WIDE], [CONTINUE], [BETTER], "--patience", "5")
    scores = [it["score"] for it in data["iterations"]]
    assert abs(scores[0] - scores[1]) < 1.0
    assert data["best"]["iteration"] == 1 and data["best"]["code"] == BETTER


def test_unusable_answers_are_rejected_with_a_reason_and_the_loop_goes_on(run):
    data = run(["I cannot help with that."], ["Please answer with code.\nVERDICT: CONTINUE"], [GOOD])
    first, second = data["iterations"]
    assert first["verdict"] == "rejected" and first["reason"].startswith("no usable code: ")
    assert second["verdict"] == "accepted"


def test_not_more_readable_is_rejected(run):
    data = run(["def f(a, b):\n    c = b + a\n    d = c * 2\n    return d\n"])  # same score, new program
    (only,) = data["iterations"]
    assert only["verdict"] == "rejected" and "not more readable" in only["reason"]
    assert data["status"] == "unchanged" and data["best"] is None
