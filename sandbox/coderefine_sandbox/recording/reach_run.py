"""The runner's `reach` mode: one pytest run over a share of the project's tests with the reach tracer
(reach.py, through reach_plugin.py), summed up as a protocol.ReachReport. With `record`, the same run records
the target's calls (the shared plugin's recorder) into the io folder's calls.pkl, for a first run's baseline."""

from __future__ import annotations

import os
import time

from coderefine_sandbox.process import SANDBOX_DIR, StepTimeout, remove_stale, run_step
from coderefine_sandbox.protocol import ReachReport, ReachRequest, ReachSpec, ReachTable, read_json, to_json, write_json
from coderefine_sandbox.recording.plugins import pytest_command
from coderefine_sandbox.recording.testrun import test_run_from_results


def reach(request: ReachRequest) -> ReachReport:
    report = ReachReport()
    out = os.path.join(request.io_dir, "reach.json")
    results = os.path.join(request.io_dir, "pytest-results.json")
    spec_path = os.path.join(request.io_dir, "reach-spec.json")
    remove_stale(out, results)
    tracer = os.environ.get("CODEREFINE_REACH_TRACER", "")  # "settrace": the slower way, for measuring it
    spec = ReachSpec(
        request.workspace,
        request.test_files,
        request.node_ids,
        request.universe,
        request.others,
        request.test_patterns,
        tracer,
        request.deadline,
        out,
    )
    write_json(spec_path, spec)
    env = dict(os.environ)
    roots = [os.path.normpath(os.path.join(request.workspace, root)) for root in request.import_roots]
    env["PYTHONPATH"] = os.pathsep.join([SANDBOX_DIR, *roots])
    env["PYTHONHASHSEED"] = str(request.hash_seed)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["CODEREFINE_RESULTS"] = results
    env["CODEREFINE_REACH"] = spec_path
    if request.record is not None:  # the shared plugin's recorder, in the same run (recording/merged.py)
        env["CODEREFINE_CAPTURE"] = to_json(request.record)
        env["CODEREFINE_CALLS_OUT"] = os.path.join(request.io_dir, "calls.pkl")
        env["CODEREFINE_MODULE"] = request.record.module
        remove_stale(env["CODEREFINE_CALLS_OUT"])
    argv = pytest_command(request.workspace, ("coderefine_sandbox.recording.reach_plugin",))
    started = time.perf_counter()
    try:
        proc = run_step(argv, cwd=request.workspace, env=env, timeout=request.timeout)
    except StepTimeout as exc:
        report.runner_error = f"the traced run {exc}"
        return report
    report.tests = test_run_from_results(results, proc.returncode, proc.stdout, time.perf_counter() - started)
    if os.path.exists(out):
        report.table = read_json(ReachTable, out)
    return report
