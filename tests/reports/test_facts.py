"""The execution facts as the model reads them: every line is something that was measured, said plainly."""

from __future__ import annotations

from dataclasses import replace

from coderefine import records
from coderefine.records import (
    Baseline,
    BehaviorReport,
    Evaluation,
    HotSpot,
    Iteration,
    Mismatch,
    Role,
    Sufficiency,
    TargetEvidence,
    Timing,
    Verdict,
)
from coderefine.refine.candidate import original_candidate
from coderefine.reports.facts import (
    baseline_facts,
    behavior_lines,
    hot_spot_lines,
    iteration_facts,
    metric_lines,
    test_lines,
    timing_lines,
)

test_lines.__test__ = False  # a function of the module under test, not a pytest test


def report_of_tests(**changes: object) -> records.TestReport:
    report = records.TestReport(collected=3, passed=3, failed=0, skipped=0, duration=1.23, exit_code=0)
    return replace(report, **changes)


def evaluation(**changes: object) -> Evaluation:
    return replace(Evaluation(tests=report_of_tests(), behavior=None, timing=None, metrics={}), **changes)


def timing(**changes: object) -> Timing:
    base = Timing(1.92, 1.80, 2.05, 0.0021, 0.0011, 6, 100, 0.05, confirmation=(1.9, 1.85, 1.95))
    return replace(base, **changes)


def test_tests_line_counts_and_duration():
    assert test_lines(evaluation()) == ["- Tests: 3 passed, 0 failed, 0 skipped (1.2 s)."]
    assert test_lines(evaluation(tests=None)) == []
    assert test_lines(evaluation(tests=report_of_tests(timed_out=True))) == ["- Tests: TIMED OUT."]


def test_failures_are_shown_three_at_most_and_trimmed():
    failures = tuple(records.TestFailure(f"test_m.py::test_{i}", "x" * 700 if i == 0 else "boom") for i in range(5))
    lines = test_lines(evaluation(tests=report_of_tests(passed=0, failed=5, failures=failures)))
    assert lines[0] == "- Tests: 0 passed, 5 failed, 0 skipped (1.2 s)."
    assert lines[1] == "  - `test_m.py::test_0`:\n    " + "x" * 580 + " ... [trimmed]"  # 600 characters at most
    assert lines[2:4] == ["  - `test_m.py::test_1`:\n    boom", "  - `test_m.py::test_2`:\n    boom"]
    assert lines[4] == "  - ... and 2 more failing tests"


def test_behaviour_lines():
    same = evaluation(behavior=BehaviorReport(calls_compared=12, mismatches=0))
    assert behavior_lines(same) == ["- Behaviour: 12 recorded calls replayed, all identical to the original."]
    differs = Mismatch("f", "return", "((1, 2), {})", "6", "9")
    generated = Mismatch("f", "exception", "((0, 0), {})", "0", "ZeroDivisionError", generated=True)
    report = BehaviorReport(12, 1, (differs, generated), generated_compared=50, generated_mismatches=1)
    assert behavior_lines(evaluation(behavior=report)) == [
        "- Behaviour: 1 of 12 recorded calls differ from the original:",
        "  - `f` called with ((1, 2), {}): return differs; expected 6, got 9",
        "- Generated inputs (from type hints): 1 of 50 differ from the original:",
        "  - `f` called with ((0, 0), {}): exception differs; expected 0, got ZeroDivisionError",
    ]
    quiet = BehaviorReport(12, 0, generated_compared=50)
    assert (
        behavior_lines(evaluation(behavior=quiet))[1]
        == "- Generated inputs (from type hints): 50 compared, all identical."
    )


def test_timing_lines_say_whether_it_is_faster_and_why():
    (faster,) = timing_lines(evaluation(timing=timing()))
    assert faster.startswith("- Speed: 1.92x, 95% interval [1.80, 2.05]: faster, confirmed by a second timing series.")
    assert "original 2.1 ms, this version 1.1 ms (6 interleaved process pairs)." in faster
    (unconfirmed,) = timing_lines(evaluation(timing=timing(confirmation=(1.02, 0.98, 1.06))))
    assert "NOT faster: a second timing series did not confirm it (1.02x [0.98, 1.06])" in unconfirmed
    (slow,) = timing_lines(evaluation(timing=timing(speedup=1.01, ci_low=0.97, confirmation=None)))
    assert "NOT faster (the lower bound must clear +5%)" in slow
    (first,) = timing_lines(evaluation(timing=timing(basis="first", original_seconds=1.5, candidate_seconds=3e-6)))
    assert "original 1.50 s, this version 3.0 us" in first and "; first pass of each process" in first
    assert timing_lines(evaluation()) == []


def test_hot_spots_and_metrics():
    spots = tuple(HotSpot(f"g{i}", i, 0.5 / (i + 1), i + 1) for i in range(6))
    (line,) = hot_spot_lines(evaluation(hot_spots=spots))
    assert line.startswith("- Hot spots (profile of the recorded calls, own time): `g0` (line 0) 50% of the time in 1")
    assert "`g3`" in line and "`g4`" not in line  # the four largest
    metrics = {"readability": 78.84, "mi": 79.4, "cc_max": 3.0, "identifier_quality": 0.667, "sloc": 2.0}
    reference = evaluation(metrics={**metrics, "readability": 71.0, "sloc": 6.0})
    assert metric_lines(evaluation(metrics=metrics), reference) == [
        "- Metrics (radon): readability score 78.8 (was 71.0), maintainability index 79.4, "
        "max cyclomatic complexity 3, identifier quality 0.67, source lines 2 (was 6)."
    ]
    assert metric_lines(evaluation()) == []


def _baseline(**changes: object) -> Baseline:
    base = Baseline(
        evaluation=evaluation(behavior=BehaviorReport(5, 0, skipped=2)),
        calls_recorded=7,
        loops=100,
        workload_seconds=0.25,
        score=1.0,
    )
    return replace(base, **changes)


def test_baseline_facts():
    text = baseline_facts(_baseline())
    assert text.splitlines() == [
        "- Tests: 3 passed, 0 failed, 0 skipped (1.2 s).",
        "- 7 calls to the target were recorded while the tests ran; 2 could not be replayed; every candidate is "
        "replayed on them and must give identical results.",
        "- One pass over the recorded calls takes 250.0 ms (the timing workload).",
    ]
    none = baseline_facts(_baseline(calls_recorded=0, workload_seconds=None))
    assert "- The tests made no recordable calls to the target functions: the tests alone judge behaviour." in none


def test_evidence_lines_tell_what_the_tests_cannot_see():
    evidence = (TargetEvidence("f", 4, 4, 3, 10, 6, tuple(range(20, 30))), TargetEvidence("g", 0, 0, 0, 0, 0))
    gate = Sufficiency(True, False, 3, 10, 6, 5, 0.8, True, "f: 3 usable calls (at least 5 needed)")
    generated = records.GeneratedInputs({"f": 50}, {}, unstable=2)
    text = baseline_facts(_baseline(evidence=evidence, sufficiency=gate, generated=generated, pinned=("random",)))
    assert (
        "- `f`: 3 recorded calls judge it, 6/10 lines run by the tests (never run: lines 20, 21, 22, 23, 24, 25, "
        "26, 27, ...)." in text
    )
    assert "- `g`: 0 recorded calls judge it, no lines measured." in text
    assert "- Warning: f: 3 usable calls (at least 5 needed); changes outside what the tests run" in text
    assert "- 48 inputs were generated from the type hints" in text
    assert "`random` seeded and `time.time` pinned" in text


def test_iteration_facts():
    candidate = replace(original_candidate("x = 1\n"), notes=("did not add helper: no changed code uses it",))
    rejected = Iteration(1, Role.REFINE, candidate, None, Verdict(False, "identical to attempt 0", None))
    assert iteration_facts(rejected) == (
        "- Verdict: REJECTED: identical to attempt 0.\n- Note: did not add helper: no changed code uses it."
    )
    judged = Iteration(0, Role.GENERATE, None, evaluation(metrics={"sloc": 2.0}), Verdict(True, "1.9x", 1.9))
    baseline = _baseline(evaluation=evaluation(metrics={"sloc": 6.0}))
    assert iteration_facts(judged, baseline).splitlines() == [
        "- Verdict: ACCEPTED: 1.9x.",
        "- Tests: 3 passed, 0 failed, 0 skipped (1.2 s).",
        "- Metrics (radon): source lines 2 (was 6).",
    ]
