"""A candidate's selected tests split across pytest processes by test file (recording/split.py)."""

from __future__ import annotations

import os
import time
from dataclasses import replace

import pytest
from coderefine_sandbox.process import SANDBOX_DIR
from coderefine_sandbox.protocol import FailFast, PytestResults, TestSelection, TimedTests, read_json, write_json
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


def test_with_the_originals_seconds_the_longest_files_are_dealt_first_to_the_process_with_the_least_time():
    # networkx: test_kcomponents.py, 10 tests, took 10.6 s; test_simple_paths.py, 79 tests, 0.3 s
    nodes = [f"t/test_k.py::k{i}" for i in range(10)] + [f"t/test_p.py::p{i}" for i in range(79)]
    nodes += [f"t/test_c.py::c{i}" for i in range(34)] + ["t/test_new.py::n"]
    seconds = {node: 1.06 for node in nodes[:10]} | {node: 0.004 for node in nodes[10:89]}
    seconds |= {node: 0.29 for node in nodes[89:123]}  # test_c.py: 9.8 s; test_new.py was never timed
    first, second = shares(nodes, None, 2, seconds)
    assert {node.split("::")[0] for node in first} == {"t/test_k.py"}
    assert {node.split("::")[0] for node in second} == {"t/test_c.py", "t/test_p.py", "t/test_new.py"}
    # by their counts alone the two slow files share a process (the test_kcomponents/test_connectivity case)
    by_count = shares(nodes, None, 2)
    assert {"t/test_k.py", "t/test_c.py"} <= {node.split("::")[0] for node in by_count[1]}
    assert shares(nodes, None, 2, {}) == by_count  # nothing timed: by their counts, as before
    # every test ranked by its calls to the target (the fail-fast order names them all): the two likeliest files
    # lead the processes, the rest go longest first, so the slow file ranked last does not run on alone
    ranked = FailFast(first=(nodes[123], *nodes[10:123], *nodes[:10]), files=())
    first, second = shares(nodes, ranked, 2, seconds)
    assert first[0] == "t/test_new.py::n" and second[0] == "t/test_p.py::p0"
    assert {node.split("::")[0] for node in first} == {"t/test_new.py", "t/test_k.py"}


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


_PORT_TEST = """import socket
import time
from dataclasses import replace


def test_{name}():
    # Holds a fixed port for a while, as a test starting a local server does: beside the other file, one fails.
    with socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 0)
        server.bind(("127.0.0.1", {port}))
        time.sleep(1.5)
"""


@pytest.mark.slow  # real pytest processes
def test_a_failure_that_only_comes_from_running_side_by_side_is_not_the_candidates(tmp_path):
    import socket

    from coderefine_sandbox.recording.testrun import run_tests

    from tests.sandbox_runner import samples

    with socket.socket() as probe:  # a port free now, for both files
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    for name in ("a", "b"):
        (tmp_path / f"test_{name}.py").write_text(_PORT_TEST.format(name=name, port=port))
    (tmp_path / "test_c.py").write_text("def test_c():\n    assert 1 == 2\n")
    io_dir = tmp_path / "io"
    io_dir.mkdir()
    nodes = ("test_a.py::test_a", "test_b.py::test_b")
    selection = TestSelection(names=(), node_ids=nodes, data_names=(), import_names=(), budget_seconds=0.0)
    request = samples.request(
        workspace=str(tmp_path), io_dir=str(io_dir), import_root=".", tests=(), selection=selection, test_workers=2,
        fail_fast=None, test_timeout=60.0,
    )  # fmt: skip
    run = run_tests(request, str(tmp_path), capture=False)
    # side by side one of them cannot bind; alone each passes, so the whole selection ran again in one process
    assert (run.collected, run.passed, run.failed) == (2, 2, 0), run
    # the plugin timed each test (setup, call and teardown): what a later split deals the files by
    timed = read_json(PytestResults, str(io_dir / "pytest-results.json")).durations
    assert timed["test_a.py::test_a"] >= 1.5 and timed["test_b.py::test_b"] >= 1.5
    write_json(str(io_dir / "seconds.json"), TimedTests(timed))
    # a test that fails alone as well is the candidate's failure
    nodes = ("test_a.py::test_a", "test_c.py::test_c")
    selection = TestSelection(names=(), node_ids=nodes, data_names=(), import_names=(), budget_seconds=0.0)
    timed_request = replace(request, selection=selection, test_seconds=str(io_dir / "seconds.json"))
    run = run_tests(timed_request, str(tmp_path), capture=False)
    assert [failure.nodeid for failure in run.failures] == ["test_c.py::test_c"]
