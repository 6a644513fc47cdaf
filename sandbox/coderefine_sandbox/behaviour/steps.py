"""The behaviour steps: replaying recorded calls on a workspace (replay.py), generating inputs from type
hints on the original (generate.py) and deriving boundary variants of the recorded calls (boundary.py), each
in a process of its own on its typed request, read back as protocol records."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TypeVar

from coderefine_sandbox.process import StepTimeout, base_env, remove_stale, run_step, step_argv
from coderefine_sandbox.protocol import (
    BoundaryReport,
    BoundaryRequest,
    GeneratedReport,
    GenerateRequest,
    ReplayReport,
    ReplayRequest,
    RunnerRequest,
    UnstableCalls,
    from_json,
    write_json,
)

_InputReport = TypeVar("_InputReport", GeneratedReport, BoundaryReport)  # the steps that derive inputs


def replay(
    request: RunnerRequest,
    workspace: str,
    profile: bool,
    calls: str = "",
    unstable: str = "",
    tag: str = "replay",
    hold_out: bool = True,
) -> ReplayReport:
    """Replay recorded calls (the tests', or with `calls`/`unstable` the generated or boundary ones) on
    `workspace`; `hold_out` off shows every differing call's inputs (boundary variants)."""
    out = os.path.join(request.io_dir, f"{tag}.json")
    remove_stale(out)
    step = ReplayRequest(
        workspace=workspace,
        module=request.module_name,
        import_root=request.import_root,
        calls=calls or request.calls_path,
        exclude=unstable or request.unstable_path,
        out=out,
        tolerances=request.behavior,
        profile=profile,
        original_workspace=request.original_workspace,  # a layered candidate workspace links to its files
        audit=True,
        hold_out=hold_out,
    )
    argv = step_argv("behaviour.replay", step, os.path.join(request.io_dir, f"{tag}.request.json"))
    try:
        proc = run_step(argv, cwd=workspace, env=base_env(request, workspace), timeout=request.step_timeout)
    except StepTimeout:
        return ReplayReport.failed(f"replaying the recorded calls timed out after {request.step_timeout:g}s")
    if not os.path.exists(out):
        return ReplayReport.failed("replaying the recorded calls crashed:\n" + proc.stdout[-1500:])
    with open(out, encoding="utf-8") as fh:
        return from_json(ReplayReport, fh.read())


def write_unstable(path: str, indices: tuple[int, ...]) -> None:
    """The calls the original does not repeat identically, left out whenever a candidate is judged."""
    write_json(path, UnstableCalls(indices))


def generate(request: RunnerRequest, workspace: str) -> GeneratedReport:
    """Inputs from the targets' type hints (--gen-inputs), with the original's outcomes on them; the calls
    that do not replay identically on the original itself are left out, as for the tests' calls."""
    spec = request.generate
    assert spec is not None
    step = GenerateRequest(
        workspace=workspace,
        module=request.module_name,
        import_root=request.import_root,
        targets=request.targets,
        count=spec.count,
        out=spec.calls_path,
        report=spec.report_path,
    )
    timeout = request.step_timeout
    report = _input_step(request, workspace, "generate", step, GeneratedReport, "generating inputs", timeout)
    if not sum(report.generated.values()):
        return report
    check = replay(request, workspace, False, spec.calls_path, spec.unstable_path, "generated-check")
    write_unstable(spec.unstable_path, check.mismatch_indices)
    unstable = len(check.mismatch_indices)
    failure = check.error or check.import_error
    return GeneratedReport(
        generated=report.generated,
        skipped=report.skipped,
        unstable=unstable,
        usable=check.calls_compared - unstable,
        error=failure if failure is not None else report.error,
    )


def boundary(request: RunnerRequest, workspace: str) -> BoundaryReport:
    """Boundary variants of the recorded calls with the original's outcomes on them; those that do not replay
    identically on the original itself, in a process of its own, are left out as well."""
    spec = request.boundary
    assert spec is not None
    step = BoundaryRequest(
        workspace=workspace,
        module=request.module_name,
        import_root=request.import_root,
        calls=request.calls_path,
        exclude=request.unstable_path,
        count=spec.count,
        seconds=spec.seconds,
        out=spec.calls_path,
        report=spec.report_path,
    )
    # This step is worth a few seconds, not the run's whole step limit (a variant stuck in C code is killed
    # inside the step, boundary.py; this bounds anything else).
    timeout = min(request.step_timeout, 30.0 + 4 * spec.seconds)
    report = _input_step(request, workspace, "boundary", step, BoundaryReport, "deriving boundary inputs", timeout)
    if not sum(report.kept.values()):
        return report
    check = replay(request, workspace, False, spec.calls_path, spec.unstable_path, "boundary-check", hold_out=False)
    write_unstable(spec.unstable_path, check.mismatch_indices)
    failure = check.error or check.import_error
    if failure is not None:
        return BoundaryReport.failed(f"replaying boundary inputs on the original failed: {failure}")
    return replace(report, unstable=len(check.mismatch_indices), seconds=report.seconds + (check.seconds or 0.0))


def _input_step(
    request: RunnerRequest,
    workspace: str,
    name: str,
    step: GenerateRequest | BoundaryRequest,
    report_type: type[_InputReport],
    doing: str,
    timeout: float,
) -> _InputReport:
    """Run `behaviour.NAME` on its typed request and read back its report; a time-out or a crash is a failed
    report saying so, never an exception (the run goes on without these inputs)."""
    argv = step_argv(f"behaviour.{name}", step, os.path.join(request.io_dir, f"{name}.request.json"))
    remove_stale(step.report)
    try:
        proc = run_step(argv, cwd=workspace, env=base_env(request, workspace), timeout=timeout)
    except StepTimeout:
        return report_type.failed(f"{doing} timed out after {timeout:g}s")
    if not os.path.exists(step.report):
        last_line = (proc.stdout.strip().splitlines() or ["no output"])[-1]
        return report_type.failed(f"{doing} crashed: {last_line}")
    with open(step.report, encoding="utf-8") as fh:
        return from_json(report_type, fh.read())
