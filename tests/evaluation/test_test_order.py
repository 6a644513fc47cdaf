"""A candidate's tests, most likely to fail first (coderefine/evaluation/test_order.py), and the rejection of a
fail-fast run that stopped at its first failure (verdicts.py)."""

from __future__ import annotations

from pathlib import Path

from coderefine import records
from coderefine.evaluation import verdicts
from coderefine.evaluation.protocol import PytestResults, TimedTests, read_json, write_json
from coderefine.evaluation.test_order import FailureHistory, fail_fast_order, own_test_files, write_test_seconds
from coderefine.records import BehaviorReport, Evaluation


def failed(*nodes: str) -> records.TestReport:
    return records.TestReport(
        collected=10,
        passed=0,
        failed=len(nodes),
        skipped=0,
        duration=0.1,
        exit_code=1,
        failures=tuple(records.TestFailure(node, "assert False") for node in nodes),
    )


CALLS = {
    "tests/test_api.py::test_one": 1,
    "tests/test_utils.py::test_split": 3,
    "tests/test_format.py::test_many": 40,
    "tests/test_format.py::test_few": 3,
}


def test_without_failures_the_tests_making_most_calls_run_first_the_own_module_first_among_equals():
    order = fail_fast_order("pkg.utils", CALLS, FailureHistory())
    assert order.first == (
        "tests/test_format.py::test_many",
        "tests/test_utils.py::test_split",  # 3 calls, as test_few: its own module goes first
        "tests/test_format.py::test_few",
        "tests/test_api.py::test_one",
    )
    assert order.files == ("tests/test_utils.py",)


def test_tests_that_failed_for_earlier_candidates_run_first_most_often_then_most_recently():
    history = FailureHistory()
    history.note(failed("tests/test_api.py::test_one"))
    history.note(None)  # a candidate whose tests did not run
    history.note(failed("tests/test_format.py::test_few", "tests/test_api.py::test_one", "tests/test_api.py"))
    history.note(failed("tests/test_utils.py::test_split"))
    order = fail_fast_order("pkg.utils", CALLS, history)
    assert order.first == (
        "tests/test_api.py::test_one",  # failed twice
        "tests/test_utils.py::test_split",  # failed once, for the latest candidate
        "tests/test_format.py::test_few",
        "tests/test_format.py::test_many",  # never failed: by calls
    )
    assert "tests/test_api.py" not in order.first  # a collection error is no test to run first


def test_the_own_test_module_is_found_by_file_name_wherever_it_lives():
    nodes = ["tests/test_text.py::a", "text_test.py::b", "tests/test_texts.py::c", "tests/test_context.py::d"]
    assert own_test_files("pkg.text", nodes) == ("tests/test_text.py", "tests/test_texts.py", "text_test.py")


def test_a_run_stopped_at_its_first_failure_says_which_test_and_how_many_ran():
    stopped = records.TestReport(
        collected=117,
        passed=2,
        failed=1,
        skipped=0,
        duration=0.4,
        exit_code=1,
        failures=(records.TestFailure("tests/test_format.py::test_strip", "assert ..."),),
        stopped_early=True,
    )
    evaluation = Evaluation(tests=stopped, behavior=BehaviorReport(5, 0), timing=None, metrics={})
    assert verdicts.correctness_problem(evaluation) == (
        "test tests/test_format.py::test_strip failed (3 of 117 tests run; stopped at the first failure)"
    )
    ran_all = Evaluation(tests=failed("t::a"), behavior=BehaviorReport(5, 0), timing=None, metrics={})
    assert verdicts.correctness_problem(ran_all) == "1 test failed: t::a"  # as before when nothing was left


def test_the_originals_test_seconds_are_gathered_from_its_run_and_the_first_traces_workers(tmp_path):
    def results(path: Path, durations: dict[str, float]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        outcomes = dict.fromkeys(durations, "passed")
        write_json(str(path), PytestResults(len(durations), 0, outcomes, {}, None, None, durations=durations))

    assert write_test_seconds(tmp_path) is None  # no run timed anything: the split goes by counts
    results(tmp_path / "recorded-0" / "pytest-results.json", {"t/test_a.py::a": 2.5, "t/test_b.py::b": 0.1})
    results(tmp_path / "recorded-1" / "pytest-results.json", {"t/test_c.py::c": 0.3, "t/test_b.py::b": 0.2})
    (tmp_path / "recorded-2").mkdir()
    (tmp_path / "recorded-2" / "pytest-results.json").write_text("{")  # a worker stopped while writing
    written = write_test_seconds(tmp_path)
    assert written is not None and written.parent == tmp_path
    seconds = read_json(TimedTests, str(written)).seconds
    assert seconds == {"t/test_a.py::a": 2.5, "t/test_b.py::b": 0.2, "t/test_c.py::c": 0.3}
