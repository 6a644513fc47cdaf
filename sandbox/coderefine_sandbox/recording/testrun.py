"""The tests step: the project's tests under pytest in a workspace, with the calls to the targets recorded
(baseline) or not (candidates), summed up as a `TestRun`."""

from __future__ import annotations

import os
import time
from dataclasses import replace

from coderefine_sandbox.process import StepTimeout, base_env, read_text, remove_stale, run_step
from coderefine_sandbox.protocol import (
    CaptureSpec,
    PytestResults,
    RunnerRequest,
    TestFailure,
    TestRun,
    TimedTests,
    read_json,
    to_json,
    write_json,
)
from coderefine_sandbox.recording.plugins import pytest_command
from coderefine_sandbox.recording.split import SplitTimeout, run_split, shares


def run_tests(
    request: RunnerRequest, workspace: str, capture: bool, extra_env: dict[str, str] | None = None
) -> TestRun:
    results_path = os.path.join(request.io_dir, "pytest-results.json")
    progress_path = os.path.join(request.io_dir, "pytest-progress.txt")
    remove_stale(results_path, progress_path)
    env = base_env(request, workspace)
    env["CODEREFINE_RESULTS"] = results_path
    env["CODEREFINE_PROGRESS"] = progress_path
    if capture:
        limits = request.capture
        spec = CaptureSpec(request.module_name, request.targets, limits.max_calls_per_target, limits.max_bytes)
        env["CODEREFINE_CAPTURE"] = to_json(spec)
        env["CODEREFINE_CALLS_OUT"] = os.path.join(request.io_dir, "calls.pkl")
    tests = list(request.tests)
    if request.selection is not None:
        # A file, not a variable: thousands of node ids would pass the kernel's limit on one variable (128 KiB).
        selection_path = os.path.join(request.io_dir, "selection.json")
        write_json(selection_path, request.selection)
        env["CODEREFINE_SELECT"] = selection_path
        # Selected node ids: pytest's discovery, with only their files collected (selection.py), so the rest of
        # the suite is never imported and a Python data file is collected as its conftest collects it.
    if request.fail_fast is not None:
        # A file too: the order may name every selected test.
        order_path = os.path.join(request.io_dir, "order.json")
        write_json(order_path, request.fail_fast)
        env["CODEREFINE_ORDER"] = order_path
    if extra_env:  # e.g. the start-up hook recording program runs (programs/steps.py)
        env.update(extra_env)
        hook = extra_env.get("CODEREFINE_HOOK_PATH")
        if hook:
            env["PYTHONPATH"] = os.pathsep.join((hook, env["PYTHONPATH"]))
    argv = [*pytest_command(workspace), *tests]
    started = time.perf_counter()
    split = _split(request, capture)
    if len(split) > 1:
        assert request.selection is not None
        try:
            run = run_split(
                argv, workspace, env, request.io_dir, request.selection, split, request.test_timeout,
                fail_fast=request.fail_fast is not None,
            )  # fmt: skip
        except SplitTimeout as exc:
            where = f" while running {exc.args[0]}" if exc.args and exc.args[0] else ""
            failure = TestFailure(exc.args[0] or "<session>", f"timed out after {request.test_timeout:g}s{where}")
            return _unfinished(time.perf_counter() - started, -1, "", timed_out=True, failure=failure)
        duration = time.perf_counter() - started
        if run is None:
            failure = TestFailure("<session>", "pytest ended without a result in one of the split test runs")
            return _unfinished(duration, -1, "", timed_out=False, failure=failure, session_error=failure.message)
        if not run.failed or _fail_alone(argv, workspace, env, request, run):
            return replace(run, duration=time.perf_counter() - started)
        # A test that failed beside another process passes alone: the processes got in each other's way (a port,
        # a file outside the tree), which says nothing of the candidate. The whole selection runs in one process.
    try:
        proc = run_step(argv, cwd=workspace, env=env, timeout=request.test_timeout)
    except StepTimeout:
        running = read_text(progress_path)
        where = f" while running {running}" if running else ""
        message = f"timed out after {request.test_timeout:g}s{where}"
        failure = TestFailure(running or "<session>", message)
        return _unfinished(time.perf_counter() - started, -1, "", timed_out=True, failure=failure)
    duration = time.perf_counter() - started
    output = proc.stdout
    if not os.path.exists(results_path):
        # pytest never reached the end of a session: it could not start (not importable, a broken
        # conftest or plugin) or it was killed. Kept apart from test failures so the host can tell.
        return _unfinished(
            duration,
            proc.returncode,
            output,
            timed_out=False,
            failure=TestFailure("<session>", "pytest ended without a result:\n" + output[-1500:]),
            session_error=output.strip().splitlines()[-1] if output.strip() else f"exit code {proc.returncode}",
        )
    results = read_json(PytestResults, results_path)
    return TestRun.from_outcomes(
        results.outcomes,
        results.messages,
        duration=duration,
        exit_code=results.exit_code,
        output_tail=output[-3000:],
        collected=results.collected,
        module_file=results.module_file,
        selected=results.selected,
        stopped_early=results.stopped_early,
    )


def _fail_alone(argv: list[str], workspace: str, env: dict[str, str], request: RunnerRequest, run: TestRun) -> bool:
    """Whether every test that failed in the split run fails again in a process of its own: only then is the
    failure the candidate's. A rejection costs one more short run (the failing tests alone); an acceptance
    nothing."""
    assert request.selection is not None
    failed = tuple(failure.nodeid for failure in run.failures)
    try:
        again = run_split(
            argv, workspace, env, request.io_dir, request.selection, [failed], request.test_timeout, fail_fast=False
        )
    except SplitTimeout:
        return True  # it did not pass alone either
    return again is None or again.failed == len(failed)


def _split(request: RunnerRequest, capture: bool) -> list[tuple[str, ...]]:
    """A candidate's selected tests per pytest process (one share: a single run, as always)."""
    selection = request.selection
    if capture or request.test_workers < 2 or selection is None or not selection.node_ids or request.tests:
        return [()]
    seconds = read_json(TimedTests, request.test_seconds).seconds if request.test_seconds else None
    return shares(selection.node_ids, request.fail_fast, request.test_workers, seconds)


def _unfinished(
    duration: float,
    exit_code: int,
    output: str,
    *,
    timed_out: bool,
    failure: TestFailure,
    session_error: str | None = None,
) -> TestRun:
    """A test run that ended without pytest's results (timed out, or the session never finished)."""
    return TestRun(
        timed_out=timed_out,
        duration=duration,
        exit_code=exit_code,
        output_tail=output[-3000:],
        collected=0,
        passed=0,
        failed=1,
        skipped=0,
        failures=(failure,),
        session_error=session_error,
        module_file=None,
        selected=None,
    )


def test_run_from_results(results_path: str, code: int, output: str, duration: float) -> TestRun:
    """A run of pytest that was given its tests (no selection), from the shared plugin's results file."""
    if not os.path.exists(results_path):
        last = output.strip().splitlines()[-1] if output.strip() else f"exit code {code}"
        failure = TestFailure("<session>", "pytest ended without a result:\n" + output[-1500:])
        return TestRun(False, duration, code, output[-3000:], 0, 0, 1, 0, (failure,), last, None, None)
    results = read_json(PytestResults, results_path)
    return TestRun.from_outcomes(
        results.outcomes,
        results.messages,
        duration=duration,
        exit_code=results.exit_code,
        output_tail=output[-3000:],
        collected=results.collected,
        module_file=None,
        selected=None,  # scan and the reach map run the tests they are given: no selection
    )
