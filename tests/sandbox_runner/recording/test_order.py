"""The sandbox's fail-fast order (recording/order.py), directly and through the pytest plugin."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import coderefine_sandbox
import pytest
from coderefine_sandbox.protocol import FailFast, PytestResults, TestSelection, read_json, write_json
from coderefine_sandbox.recording.order import ranked

PLUGIN = "coderefine_sandbox.recording.pytest_plugin"
NODES = [
    "tests/test_api.py::test_a",
    "tests/test_utils.py::test_x",
    "tests/test_api.py::test_b",
    "tests/test_other.py::test_z",
    "tests/test_utils.py::test_y",
]


def test_named_tests_run_first_in_their_order_then_the_preferred_files_then_the_rest_in_pytests_order():
    first = ["tests/test_api.py::test_b", "tests/test_gone.py::test_q", "tests/test_other.py::test_z"]
    order = [NODES[index] for index in ranked(NODES, first, ["tests/test_utils.py"])]
    assert order == [
        "tests/test_api.py::test_b",
        "tests/test_other.py::test_z",
        "tests/test_utils.py::test_x",
        "tests/test_utils.py::test_y",
        "tests/test_api.py::test_a",
    ]


def test_no_preference_keeps_pytests_order():
    assert ranked(NODES, [], []) == list(range(len(NODES)))


def run_plugin(tmp_path: Path, fail_fast: FailFast | None, selection: TestSelection | None) -> PytestResults:
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(coderefine_sandbox.__file__).parent.parent),
        "CODEREFINE_RESULTS": str(tmp_path / "results.json"),
    }
    if fail_fast is not None:
        write_json(str(tmp_path / "order.json"), fail_fast)
        env["CODEREFINE_ORDER"] = str(tmp_path / "order.json")
    if selection is not None:
        write_json(str(tmp_path / "select.json"), selection)
        env["CODEREFINE_SELECT"] = str(tmp_path / "select.json")
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", PLUGIN, "--rootdir", str(tmp_path)]
    subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    return read_json(PytestResults, str(tmp_path / "results.json"))


@pytest.mark.slow  # real pytest processes, 9-12 s: not for the unit pass
def test_the_plugin_runs_the_named_test_first_and_stops_at_the_first_failure_within_the_selection(tmp_path):
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_ok.py").write_text("".join(f"def test_{n}():\n    pass\n\n\n" for n in "abcd"))
    (tests / "test_zlate.py").write_text("def test_pass():\n    pass\n\n\ndef test_fails():\n    assert False\n")
    fails = "tests/test_zlate.py::test_fails"
    selection = TestSelection((), ("tests/test_ok.py::test_a", "tests/test_ok.py::test_b", fails), (), (), 0.0)
    # no order asked for: every selected test runs, the failing one last
    plain = run_plugin(tmp_path, None, selection)
    assert list(plain.outcomes) == ["tests/test_ok.py::test_a", "tests/test_ok.py::test_b", fails]
    assert not plain.stopped_early and plain.collected == 3
    # the failing test named first: it alone runs, of the three the selection keeps
    stopped = run_plugin(tmp_path, FailFast((fails,), ()), selection)
    assert stopped.outcomes == {fails: "failed"}
    assert stopped.stopped_early and stopped.collected == 3 and stopped.exit_code == 1
    # the whole suite, the late file preferred: its passing test runs, then the failure stops the rest
    late = run_plugin(tmp_path, FailFast((), ("tests/test_zlate.py",)), None)
    assert late.outcomes == {"tests/test_zlate.py::test_pass": "passed", fails: "failed"}
    assert late.stopped_early and late.collected == 6
    # the failure last in the order: every test ran, nothing was left, so the run did not stop early
    last = run_plugin(tmp_path, FailFast(("tests/test_zlate.py::test_pass",), ()), None)
    order = list(last.outcomes)
    assert order[0] == "tests/test_zlate.py::test_pass" and order[-1] == fails
    assert len(last.outcomes) == 6 and not last.stopped_early
