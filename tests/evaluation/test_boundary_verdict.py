"""How a difference on a boundary variant (an input the tests never tried) is told: the verdict's reason, the
next feedback's lines, the console's baseline line and the JSON report. Pure functions, no sandbox."""

from __future__ import annotations

from coderefine import records
from coderefine.evaluation.verdicts import boundary_counterexample, correctness_problem
from coderefine.records import BehaviorReport, BoundaryInputs, Evaluation, Mismatch
from coderefine.reports.console import boundary_text
from coderefine.reports.facts import behavior_lines
from coderefine.reports.json_report import _behavior, _boundary

PASSED = records.TestReport(collected=3, passed=3, failed=0, skipped=0, duration=0.1, exit_code=0)


def evaluation(*examples: Mismatch, boundary_mismatches: int = 1) -> Evaluation:
    behavior = BehaviorReport(
        calls_compared=5,
        mismatches=0,
        examples=examples,
        boundary_compared=7,
        boundary_mismatches=boundary_mismatches,
        boundary_seconds=0.01,
    )
    return Evaluation(tests=PASSED, behavior=behavior, timing=None, metrics={})


RAISED = Mismatch(
    "polynomial_from_roots", "exception", "(([],), {})", "returned [1]", "raised IndexError: 'x'", boundary=True
)


def test_the_reason_is_the_concrete_input_and_both_outcomes():
    assert correctness_problem(evaluation(RAISED)) == (
        "on an input the tests never tried, polynomial_from_roots([]) returned [1] on the original but raised "
        "IndexError: 'x' on the candidate"
    )
    other = Mismatch("f", "return", "(('', 'ab'), {})", "''", "'a'", boundary=True)
    assert boundary_counterexample(other) == (
        "on an input the tests never tried, f('', 'ab') returned '' on the original but 'a' on the candidate"
    )
    mutated = Mismatch("g", "mutation", "(([2, 1],), {})", "(([2, 1],), {})", "(([1, 2],), {})", boundary=True)
    assert "left its arguments as (([2, 1],), {}) on the original but as (([1, 2],), {})" in (
        boundary_counterexample(mutated)
    )


def test_no_boundary_difference_no_reason_and_identical_variants_are_said_in_the_feedback():
    same = evaluation(boundary_mismatches=0)
    assert correctness_problem(same) is None
    assert behavior_lines(same)[-1] == (
        "- Inputs the tests never tried (boundary variants of the recorded calls): 7 compared, all identical."
    )
    lines = behavior_lines(evaluation(RAISED))
    assert "1 of 7 differ from the original" in lines[-2]
    assert lines[-1] == f"  - {boundary_counterexample(RAISED)}"


def test_the_json_report_marks_boundary_examples_only_and_counts_them():
    recorded = Mismatch("f", "return", "((1,), {})", "1", "2")
    found = _behavior(evaluation(RAISED, recorded))
    assert found is not None
    assert found["boundary_compared"] == 7 and found["boundary_mismatches"] == 1
    assert found["examples"][0]["boundary"] is True and "boundary" not in found["examples"][1]


def test_the_baseline_line_and_report_say_what_was_kept_and_left_out():
    kept = BoundaryInputs(
        per_target={"f": 20, "g": 17},
        derived=44,
        raised=5,
        slow=2,
        not_deterministic=0,
        unpicklable=0,
        unstable=1,
        seconds=0.4,
    )
    assert kept.calls == 36
    assert boundary_text(kept) == (
        "36 (f 20, g 17) of 44 derived, in 0.4 s; left out: 5 the original raises on, 2 slow, 1 not deterministic"
    )
    assert _boundary(kept)["calls"] == 36
    failed = BoundaryInputs({}, 0, 0, 0, 0, 0, 0, 0.0, error="deriving boundary inputs timed out after 38s")
    assert failed.calls == 0 and boundary_text(failed) == "none: deriving boundary inputs timed out after 38s"
