"""The recording stage's protocol: one way to sum up pytest's outcomes as a `TestRun`."""

from __future__ import annotations

from coderefine_sandbox.protocol import TestFailure, TestRun


def test_a_run_from_outcomes_counts_each_outcome_and_keeps_the_failures_messages() -> None:
    outcomes = {"t::a": "passed", "t::b": "failed", "t::c": "skipped", "t::d": "failed", "t::e": "passed"}
    messages = {"t::b": "assert 1 == 2", "t::a": "not a failure: not kept"}

    run = TestRun.from_outcomes(
        outcomes, messages, duration=1.5, exit_code=1, output_tail="tail", collected=7, module_file="m.py",
        selected=None,
    )  # fmt: skip

    assert (run.passed, run.failed, run.skipped, run.collected) == (2, 2, 1, 7)
    # a failure without a message still names its test, in pytest's order
    assert run.failures == (TestFailure("t::b", "assert 1 == 2"), TestFailure("t::d", ""))
    assert (run.timed_out, run.session_error, run.stopped_early) == (False, None, False)
    assert (run.duration, run.exit_code, run.output_tail, run.module_file) == (1.5, 1, "tail", "m.py")
    assert run.stops_the_run


def test_a_run_where_every_test_passed_does_not_stop_the_run() -> None:
    run = TestRun.from_outcomes(
        {"t::a": "passed"}, {}, duration=0.0, exit_code=0, output_tail="", collected=3, module_file=None,
        selected=None, stopped_early=True,
    )  # fmt: skip

    assert (run.passed, run.failed, run.failures, run.stopped_early) == (1, 0, (), True)
    assert not run.stops_the_run
