"""coderefine/evaluation/reports.py: the runner's typed reports become records, field by field."""

from __future__ import annotations

import dataclasses

from coderefine_sandbox.protocol import CandidateReport, ReplayReport

from coderefine import records
from coderefine.evaluation import reports
from coderefine.records import HotSpot, Mismatch, TargetEvidence
from tests.sandbox_runner import samples

METRICS = {"readability": 80.0}


def test_tests_report_keeps_every_count_and_failure():
    report = reports.tests_report(samples.test_run())
    assert (report.collected, report.passed, report.failed, report.skipped) == (3, 2, 1, 0)
    assert report.duration == 1.25
    assert report.exit_code == 1
    assert not report.timed_out
    assert report.failures == (records.TestFailure("tests/test_mod.py::test_f", "assert 1 == 2"),)
    assert report.output_tail == "1 failed, 2 passed"
    assert not report.all_passed


def test_hot_spot_shares_are_rounded_for_the_report():
    assert reports.hot_spots(samples.replay_report().profile) == (HotSpot("f", 3, 0.1235, 40),)


def test_behaviour_counts_generated_inputs_apart_and_marks_their_examples():
    generated = dataclasses.replace(samples.replay_report(), calls_compared=10, mismatches=2)
    behavior = reports.behavior_report(samples.replay_report(), generated)
    assert (behavior.calls_compared, behavior.mismatches) == (40, 1)
    assert (behavior.generated_compared, behavior.generated_mismatches) == (10, 2)
    assert behavior.examples == (
        Mismatch("f", "return", "(1, 2)", "3", "4", held_out=True),
        Mismatch("f", "return", "(1, 2)", "3", "4", generated=True, held_out=True),
    )
    assert behavior.held_out_mismatches == 1
    alone = reports.behavior_report(samples.replay_report(), None)
    assert (alone.generated_compared, alone.generated_mismatches, len(alone.examples)) == (0, 0, 1)


def test_timing_takes_the_reported_basis_floor_and_confirmation():
    timing = reports.timing(dataclasses.replace(samples.timing_report(), basis="first"), "bench bench.py")
    assert (timing.speedup, timing.ci_low, timing.ci_high) == (1.5, 1.3, 1.7)
    assert (timing.original_seconds, timing.candidate_seconds) == (0.3, 0.2)
    assert (timing.pairs, timing.loops, timing.min_speedup) == (12, 128, 0.05)
    assert timing.basis == "first"
    assert timing.workload == "bench bench.py"
    assert timing.confirmation == (1.45, 1.2, 1.7)
    unconfirmed = reports.timing(dataclasses.replace(samples.timing_report(), confirmation=None), "recorded calls")
    assert unconfirmed.confirmation is None


def test_evidence_and_generated_inputs():
    baseline = samples.baseline_report()
    assert reports.evidence(baseline.evidence) == (
        TargetEvidence("f", calls=41, recorded=40, usable=39, lines=5, covered=4, missed_lines=(9,)),
    )
    generated = reports.generated_inputs(baseline.generated)
    assert generated is not None
    assert generated.per_target == {"f": 10}
    assert generated.skipped == {"C.g": "a method"}
    assert generated.calls == 9  # 10 generated, 1 the original does not repeat
    assert reports.generated_inputs(None) is None


def test_a_candidate_that_ran_everything_becomes_a_full_evaluation():
    report = dataclasses.replace(samples.candidate_report(), generated_behavior=None)
    evaluation = reports.candidate_evaluation(report, METRICS, "recorded calls", 2.5)
    assert evaluation.error is None
    assert evaluation.tests is not None and evaluation.tests.collected == 3
    assert evaluation.behavior is not None and evaluation.behavior.calls_compared == 40
    assert evaluation.timing is not None and evaluation.timing.speedup == 1.5
    assert evaluation.hot_spots == (HotSpot("f", 3, 0.1235, 40),)
    assert evaluation.metrics == METRICS
    assert (evaluation.wall_seconds, evaluation.cpu_seconds) == (2.5, 7.25)


def test_the_first_problem_met_is_the_candidates_error():
    # the sample's generated replay timed out: that is the error when nothing came before it
    evaluation = reports.candidate_evaluation(samples.candidate_report(), METRICS, "recorded calls", 1.0)
    assert evaluation.error == "replaying the recorded calls timed out after 60s"
    unimportable = ReplayReport(0, 3, (), (), None, (), "SyntaxError: bad", None)
    report = dataclasses.replace(samples.candidate_report(), behavior=unimportable, timing=None, timing_error="late")
    evaluation = reports.candidate_evaluation(report, METRICS, "recorded calls", 1.0)
    assert evaluation.error == "the module cannot be imported: SyntaxError: bad"
    assert evaluation.behavior is not None and evaluation.behavior.mismatches == 3
    report = CandidateReport(tests=samples.test_run(), timing_error="timing failed: worker died")
    evaluation = reports.candidate_evaluation(report, METRICS, "recorded calls", 1.0)
    assert evaluation.error == "timing failed: worker died"
    assert evaluation.behavior is None and evaluation.timing is None


def test_a_runner_failure_comes_first_and_leaves_no_tests():
    evaluation = reports.candidate_evaluation(CandidateReport(runner_error="boom"), METRICS, "recorded calls", 1.0)
    assert evaluation.error == "boom"
    assert evaluation.tests is None
