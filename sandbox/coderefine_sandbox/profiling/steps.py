"""The runner's `profile` mode (`coderefine scan`): which of the project's functions take the time.

Two runs of the project's tests (or of the user's workload command), each a step of its own:
1. profiled: cProfile, one profiler per test, keeping each project function's exclusive time, calls and
   the tests it ran in;
2. coverage: only the functions with calls enough to be judged are traced, for their lines.
Timing under a profiler is inflated, evenly enough to rank by; it is never a verdict's evidence.
"""

from __future__ import annotations

import os
import sys
import time

from coderefine_sandbox.process import SANDBOX_DIR, StepTimeout, remove_stale, run_step
from coderefine_sandbox.protocol import (
    CoverageRow,
    CoverageTable,
    FunctionKey,
    ProfiledFunction,
    ProfilePass,
    ProfileReport,
    ProfileRequest,
    ProfileRow,
    ProfileTable,
    read_json,
    write_json,
)
from coderefine_sandbox.recording.plugins import pytest_command
from coderefine_sandbox.recording.testrun import test_run_from_results


def _env(request: ProfileRequest, spec: ProfilePass) -> dict[str, str]:
    env = dict(os.environ)
    roots = [os.path.normpath(os.path.join(request.workspace, root)) for root in request.import_roots]
    env["PYTHONPATH"] = os.pathsep.join([SANDBOX_DIR, *roots])
    env["PYTHONHASHSEED"] = str(request.hash_seed)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    spec_path = os.path.join(request.io_dir, f"profile-{spec.kind}.json")
    write_json(spec_path, spec)
    env["CODEREFINE_PROFILE"] = spec_path
    return env


MAX_TEST_NAMES = 20  # per function in the report; the count is exact
MAX_SELECTED = 2000  # node ids on the coverage pass's command line; beyond, the whole suite runs again


def _run(
    request: ProfileRequest, spec: ProfilePass, results: str, only: list[str] | None = None
) -> tuple[int, str, float]:
    """One pass over the tests (or only the tests `only` names) or the command: exit code, output, seconds."""
    if request.command is not None:
        argv = [sys.executable, "-m", "coderefine_sandbox.profiling.command", *request.command]
    else:
        # No --no-cov here, as before this command was shared (scan's passes never asked for it).
        plugins = ("coderefine_sandbox.profiling.plugin",)
        tests = only if only is not None else request.tests
        argv = [*pytest_command(request.workspace, plugins, no_cov=False), *tests]
    env = _env(request, spec)
    env["CODEREFINE_RESULTS"] = results
    started = time.perf_counter()
    proc = run_step(argv, cwd=request.workspace, env=env, timeout=request.timeout)
    return proc.returncode, proc.stdout, time.perf_counter() - started


def profile(request: ProfileRequest) -> ProfileReport:
    report = ProfileReport()
    out = os.path.join(request.io_dir, "profile.json")
    results = os.path.join(request.io_dir, "pytest-results.json")
    remove_stale(out, results)
    try:
        spec = ProfilePass("profile", request.workspace, request.paths, out, wanted=(), reaches={})
        code, output, seconds = _run(request, spec, results)
    except StepTimeout as exc:
        report.runner_error = f"the profiled run {exc}"
        return report
    if request.command is None:
        report.tests = test_run_from_results(results, code, output, seconds)
        if report.tests.stops_the_run:
            return report
    else:
        report.command_exit, report.command_output = code, output[-3000:]
        if code != 0:
            return report
    if not os.path.exists(out):
        report.runner_error = "the profiled run wrote no profile: " + (output.strip()[-300:] or f"exit code {code}")
        return report
    profiled = read_json(ProfileTable, out)
    report.total_seconds = profiled.total
    rows = profiled.functions
    chosen = [row for row in rows if row.primitive >= request.min_calls]
    wanted = tuple((row.file, row.line, row.name) for row in chosen)
    # The coverage pass needs only the tests that ran those functions (all of them: tests that reach a
    # function without being among them would only add lines, never remove any).
    reaching = sorted({test for row in chosen for test in row.tests})
    only = reaching if request.command is None and 0 < len(reaching) <= MAX_SELECTED else None
    coverage: dict[FunctionKey, CoverageRow] = {}
    if wanted:
        cov_out = os.path.join(request.io_dir, "coverage.json")
        remove_stale(cov_out, results)
        try:
            reaches: dict[str, list[FunctionKey]] = {}
            for row in chosen:
                for test in row.tests:
                    reaches.setdefault(test, []).append((row.file, row.line, row.name))
            reached = {test: tuple(keys) for test, keys in reaches.items()}
            spec = ProfilePass(
                "coverage", request.workspace, request.paths, cov_out, wanted, reached, request.max_calls
            )
            _run(request, spec, results, only)
            measured = read_json(CoverageTable, cov_out)
            report.coverage_method = measured.method
            coverage = {(m.file, m.line, m.name): m for m in measured.functions}
        except (StepTimeout, OSError, ValueError) as exc:  # ValueError: ProtocolError too
            report.coverage_error = f"the coverage run failed: {exc}"
    report.functions = tuple(_function(row, coverage.get((row.file, row.line, row.name))) for row in rows)
    return report


def _function(row: ProfileRow, measured: CoverageRow | None) -> ProfiledFunction:
    """A profiled function with what its coverage pass estimated: its calls as starts (a generator's
    resumptions are cProfile calls too: the share of starts among the call events the pass saw, applied to
    cProfile's count) and its usable calls (the share of the calls looked at whose arguments could be kept)."""
    if measured is None:
        return ProfiledFunction(
            row.file, row.line, row.name, row.own, row.cumulative, row.calls, row.primitive, row.test_count,
            row.tests[:MAX_TEST_NAMES], lines=0, covered=0,
        )  # fmt: skip
    events = measured.starts + measured.resumes
    starts = round(row.primitive * measured.starts / events) if events else row.primitive
    usable = round(starts * measured.usable / measured.probed) if measured.probed else None
    return ProfiledFunction(
        file=row.file,
        line=row.line,
        name=row.name,
        own_seconds=row.own,
        cumulative_seconds=row.cumulative,
        calls=row.calls,
        primitive_calls=row.primitive,
        test_count=row.test_count,
        tests=row.tests[:MAX_TEST_NAMES],
        lines=measured.lines,
        covered=measured.covered,
        starts=starts,
        usable_calls=usable,
        unusable=dict(measured.unusable),
    )
