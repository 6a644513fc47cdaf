"""Boundary inputs end to end: the Evaluator as a run uses it (the real process sandbox, real pytest), on a
small project whose tests never pass an empty list. Without timing: boundary variants only add a correctness
condition, and timing would make this test longer for nothing it checks."""

from __future__ import annotations

import pytest

from coderefine.evaluation.evaluator import SandboxEvaluator
from coderefine.evaluation.project import resolve_project
from coderefine.evaluation.settings import EvaluationSettings
from coderefine.evaluation.verdicts import correctness_problem
from coderefine.refine.candidate import original_candidate
from coderefine.reports.facts import behavior_lines
from coderefine.sandboxes.registry import make_sandbox

ORIGINAL = """
def polynomial_from_roots(roots):
    coefficients = [1]
    for root in roots:
        shifted = coefficients + [0]
        for i in range(len(coefficients), 0, -1):
            shifted[i] -= root * coefficients[i - 1]
        coefficients = shifted
    return coefficients


def head(items):
    return items[0] * 2
"""

TESTS = """
from poly import head, polynomial_from_roots


def test_polynomial():
    assert polynomial_from_roots([5, -4, 3]) == [1, -4, -17, 60]
    assert polynomial_from_roots([2]) == [1, -2]
    assert polynomial_from_roots([1, 1]) == [1, -2, 1]


def test_head():
    assert head([3, 4]) == 6
    assert head([1, 2, 3]) == 2
    assert head(["a"]) == "aa"
"""

# The wrong rewrite: right on every list the tests pass, IndexError on [] (the original returns [1]).
WRONG = ORIGINAL.replace(
    "    coefficients = [1]\n    for root in roots:",
    "    coefficients = [1, -roots[0]]\n    for root in roots[1:]:",
)
# Correct: the same coefficients in place, without a copy per root.
RIGHT = ORIGINAL.replace(
    """        shifted = coefficients + [0]
        for i in range(len(coefficients), 0, -1):
            shifted[i] -= root * coefficients[i - 1]
        coefficients = shifted""",
    """        coefficients.append(0)
        for i in range(len(coefficients) - 1, 0, -1):
            coefficients[i] -= root * coefficients[i - 1]""",
)
# Raises StopIteration where the original raises IndexError (the empty list): outside the original's domain.
OTHER_ERROR = ORIGINAL.replace("return items[0] * 2", "return next(iter(items)) * 2")


@pytest.mark.slow
def test_an_input_the_tests_never_tried_refuses_a_wrong_candidate_and_keeps_the_right_ones(make_project):
    root = make_project({"poly.py": ORIGINAL, "test_poly.py": TESTS})
    project = resolve_project(root / "poly.py", None, None)
    targets = ("polynomial_from_roots", "head")
    evaluator = SandboxEvaluator(
        project, targets, make_sandbox("process", None), EvaluationSettings(measure_speed=False)
    )
    try:
        baseline = evaluator.baseline(ORIGINAL)
        found = {
            name: evaluator.evaluate(original_candidate(code))
            for name, code in (("wrong", WRONG), ("right", RIGHT), ("other_error", OTHER_ERROR))
        }
    finally:
        evaluator.close()
    boundary = baseline.boundary
    assert boundary is not None and boundary.error is None, boundary
    assert boundary.per_target["polynomial_from_roots"] > 0 and boundary.per_target["head"] > 0, boundary
    assert boundary.raised >= 1  # head([]) raises on the original: not held against a candidate
    assert boundary.seconds > 0

    wrong = found["wrong"]
    assert wrong.tests is not None and wrong.tests.all_passed  # the tests alone would accept it
    assert wrong.behavior is not None and wrong.behavior.mismatches == 0 and wrong.behavior.boundary_mismatches
    reason = correctness_problem(wrong)
    assert reason is not None
    assert reason.startswith("on an input the tests never tried, polynomial_from_roots([]) returned [1] on the ")
    assert "raised IndexError" in reason and reason.endswith("on the candidate"), reason
    # the counterexample is what the model is told next
    assert any("polynomial_from_roots([]) returned [1]" in line for line in behavior_lines(wrong))

    for name in ("right", "other_error"):
        evaluation = found[name]
        assert correctness_problem(evaluation) is None, (name, correctness_problem(evaluation))
        behavior = evaluation.behavior
        assert behavior is not None and behavior.boundary_compared == boundary.calls
        assert behavior.boundary_seconds > 0
