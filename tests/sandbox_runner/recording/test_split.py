"""A candidate's selected tests split across pytest processes by test file (recording/split.py)."""

from __future__ import annotations

import os
import time

import pytest
from coderefine_sandbox.process import SANDBOX_DIR
from coderefine_sandbox.protocol import FailFast, TestSelection, write_json
from coderefine_sandbox.recording.plugins import pytest_command
from coderefine_sandbox.recording.split import run_split, shares


def test_whole_files_are_dealt_likeliest_to_fail_first_keeping_the_counts_even():
    nodes = [f"t/test_big.py::b{i}" for i in range(4)] + ["t/test_a.py::a", "t/test_c.py::c1", "t/test_c.py::c2"]
    order = FailFast(first=("t/test_c.py::c2", "t/test_a.py::a"), files=())
    first, second = shares(nodes, order, 2)
    # c (likeliest to fail) and a lead the two processes; the big file goes where fewer tests are
    assert first == ("t/test_c.py::c1", "t/test_c.py::c2")
    assert second == ("t/test_a.py::a", *(f"t/test_big.py::b{i}" for i in range(4)))
    assert shares(nodes[:4], order, 2) == [tuple(nodes[:4])]  # one file: one process
    assert shares(nodes, None, 1) == [tuple(nodes)]


@pytest.mark.slow  # real pytest processes
def test_a_failure_in_one_process_stops_the_other_and_the_results_merge(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_fails.py").write_text("def test_wrong():\n    assert 1 == 2\n\n\ndef test_right():\n    pass\n")
    (tmp_path / "test_slow.py").write_text("import time\n\n\ndef test_slow():\n    time.sleep(60)\n")
    io_dir = tmp_path / "io"
    io_dir.mkdir()
    env = {**os.environ, "PYTHONPATH": SANDBOX_DIR, "CODEREFINE_ORDER": str(io_dir / "order.json")}
    write_json(str(io_dir / "order.json"), FailFast(first=("test_fails.py::test_wrong",), files=()))
    nodes = ("test_fails.py::test_wrong", "test_fails.py::test_right", "test_slow.py::test_slow")
    selection = TestSelection(names=(), node_ids=nodes, data_names=(), import_names=(), budget_seconds=0.0)
    split = shares(nodes, FailFast(first=("test_fails.py::test_wrong",), files=()), 2)
    assert len(split) == 2
    started = time.monotonic()
    run = run_split(pytest_command(str(tmp_path)), str(tmp_path), env, str(io_dir), selection, split, 120, True)
    assert time.monotonic() - started < 30  # the sleeping test's process was stopped, not waited for
    assert run is not None and run.stopped_early
    assert [failure.nodeid for failure in run.failures] == ["test_fails.py::test_wrong"]
    assert "assert 1 == 2" in run.failures[0].message
    # every selected test counts as collected, as in one process; test_wrong stopped its own process
    assert run.collected == 3 and run.passed == 0

    # without fail-fast both processes run to their end and every outcome is merged
    (tmp_path / "test_slow.py").write_text("def test_slow():\n    pass\n")
    env.pop("CODEREFINE_ORDER")
    run = run_split(pytest_command(str(tmp_path)), str(tmp_path), env, str(io_dir), selection, split, 120, False)
    assert run is not None and not run.stopped_early
    assert (run.collected, run.passed, run.failed) == (3, 2, 1)
