"""Why the original's tests did not pass: a time limit, unimportable test files, or real failures."""

from __future__ import annotations

from coderefine.errors import BaselineFails, BaselineTimeout, ExitCode, TestsNotImportable
from coderefine.evaluation.diagnosis import baseline_failure
from coderefine.records import TestFailure as Failure
from coderefine.records import TestReport as Report

PY = "/venv/bin/python"


def diagnose(*failures: Failure, timed_out: bool = False, duration: float = 3.0):
    tests = Report(0, 0, len(failures), 0, duration, 2, timed_out=timed_out, failures=failures)
    return baseline_failure(tests, timeout=300, python=PY, module_name="humanize.number", what_ran="it ran X")


def test_a_time_out_says_how_long_what_was_running_and_what_to_do():
    running = Failure("tests/test_big.py::test_slow", "timed out after 300s")
    error = diagnose(running, timed_out=True, duration=300.4)
    assert isinstance(error, BaselineTimeout) and error.exit_code == ExitCode.BASELINE_TIMEOUT == 22
    assert "stopped after 300s (--timeout 300)" in error.message and "tests/test_big.py::test_slow" in error.message
    assert "--tests PATH" in error.message and "larger --timeout" in error.message and "it ran X" in error.message
    assert "fails its own tests" not in error.message


def test_missing_own_metadata_and_test_dependency_name_the_install():
    error = diagnose(
        Failure(
            "tests/test_number.py",
            "StopIteration\nimportlib.metadata.PackageNotFoundError: No package metadata was found for humanize",
        ),
        Failure("tests/test_time.py", "ModuleNotFoundError: No module named 'freezegun'\n(tests/test_time.py:8)"),
    )
    assert isinstance(error, TestsNotImportable) and error.exit_code == 23
    assert "2 test files" in error.message and "no package metadata for humanize" in error.message
    assert f"{PY} -m pip install -e ." in error.message and "freezegun" in error.message
    assert "StopIteration" not in error.message and "fails its own tests" not in error.message


def test_a_missing_dependency_alone_names_it():
    error = diagnose(Failure("tests/test_a.py", "ModuleNotFoundError: No module named 'yaml.loader'"))
    assert isinstance(error, TestsNotImportable)
    assert "missing module yaml" in error.message and f"{PY} -m pip install yaml" in error.message


def test_the_projects_own_package_missing_points_at_the_root():
    error = diagnose(Failure("tests/test_a.py", "ModuleNotFoundError: No module named 'humanize'"))
    assert "the project's own package" in error.message and "--root" in error.message


def test_another_import_error_shows_its_exception_line():
    error = diagnose(Failure("tests/test_a.py", "some context\nValueError: bad config\n(tests/test_a.py:3)"))
    assert isinstance(error, TestsNotImportable) and "ValueError: bad config" in error.message


def test_failing_tests_are_still_a_failing_original():
    error = diagnose(Failure("tests/test_a.py::test_x", "assert 1 == 2"), Failure("tests/test_b.py", "E"))
    assert isinstance(error, BaselineFails) and "fails its own tests (2 failing, e.g. tests/test_a.py::test_x" in str(
        error
    )
