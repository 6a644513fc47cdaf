"""The runner's two modes, each a sequence of steps that stops at the first one that settles the matter.

- baseline: run the original's tests while recording the calls to the targets (or take the run a first run's
  trace made of them, recording/merged.py); replay the original on
  its own recording to find non-deterministic calls (excluded later); derive boundary variants of the
  recorded calls; profile; calibrate timing loops.
- candidate: run the candidate's tests; replay the recording (and the generated and boundary inputs) on the
  candidate; if it behaves the same,
  time original and candidate on the recorded calls, interleaved, in separate processes.
"""

from __future__ import annotations

import os
from typing import Any

from coderefine_sandbox.audit import gained
from coderefine_sandbox.behaviour import asynchronous
from coderefine_sandbox.behaviour.steps import boundary, generate, replay, write_unstable
from coderefine_sandbox.process import StepTimeout
from coderefine_sandbox.protocol import (
    BaselineReport,
    CandidateReport,
    CaptureSummary,
    ProtocolError,
    RecordingSummary,
    RunnerRequest,
    TargetEvidence,
    TargetLines,
    read_calls,
)
from coderefine_sandbox.recording.merged import merge_calls, merged_run
from coderefine_sandbox.recording.testrun import run_tests
from coderefine_sandbox.timing.lock import timing_slot
from coderefine_sandbox.timing.steps import calibrate, measure


def baseline(request: RunnerRequest) -> BaselineReport:
    workspace = request.workspace
    hook = None
    if request.program is not None:
        # Imported for programs only: every evaluation starts a runner here, and most judge functions.
        import coderefine_sandbox.programs.steps as program_steps

        hook = program_steps.record_env(request, workspace)
    traced = merged_run(request.recorded, workspace) if request.recorded is not None and hook is None else None
    if traced is not None and traced.passed and not traced.failed:
        # A first run's trace ran and recorded the tests already: their outcomes and calls, not a second run.
        report = BaselineReport(tests=traced)
        merge_calls(request.recorded, request.calls_path, workspace, request.capture)
    else:
        # A reaching test that failed in the trace may fail only there (its order, another test's state): the
        # reaching tests run again on their own, as without a trace, and decide.
        report = BaselineReport(tests=run_tests(request, workspace, capture=True, extra_env=hook))
    if report.tests is None or report.tests.stops_the_run:
        return report
    if not os.path.exists(request.calls_path):
        report.capture_error = "the test run did not save the recorded calls"
        return report
    header, records = read_calls(request.calls_path)
    if request.program is not None and not records:
        # No call could be recorded: the tests run the target as a program. Judge it by its runs.
        return program_steps.baseline(request, report)
    recording = header.recording
    if recording is None:  # a calls file of generated inputs where the tests' recording belongs
        raise ProtocolError(f"{request.calls_path}: the calls file says nothing of a recording")
    report.capture = CaptureSummary(
        recorded=len(records),
        counts=recording.counts,
        unreplayable=recording.unreplayable,
        truncated=recording.truncated,
        patched=recording.patched,
        module_file=recording.module_file,
        reached=recording.reached,
        calls_per_test=recording.calls_per_test,
    )
    report.pinned = recording.pinned
    report.not_pinned = recording.not_pinned
    report.coverage_method = recording.coverage_method
    report.evidence = evidence(recording, records, ())
    stable = 0
    if records:
        # The original against its own recording: whatever differs is not deterministic, so it cannot be
        # used to judge a candidate.
        self_check = replay(request, workspace, profile=True)
        report.self_check = self_check
        if self_check.error is not None or self_check.import_error is not None:
            return report
        unstable = self_check.mismatch_indices
        write_unstable(request.unstable_path, unstable)
        report.evidence = evidence(recording, records, unstable, self_check.mismatch_kinds)
        if request.generate is not None:
            report.generated = generate(request, workspace)
        if request.boundary is not None:
            report.boundary = boundary(request, workspace)
        stable = len(records) - len(unstable)
    # The workload is the stable recorded calls, or the user's own benchmark.
    if request.timing is not None and (stable or request.bench is not None):
        try:
            with timing_slot(request, report):
                report.calibration = calibrate(request)
        except (StepTimeout, RuntimeError) as exc:
            report.calibration_error = f"timing the original failed: {exc}"
    return report


def evidence(
    recording: RecordingSummary,
    records: list[dict[str, Any]],
    unstable: tuple[int, ...],
    unstable_kinds: tuple[str, ...] = (),
) -> dict[str, TargetEvidence]:
    """Per target, what the tests give to judge candidates by: outermost calls made, calls recorded, calls
    usable (recorded, replayable and deterministic), the target's lines the tests ran, and why the others
    are not usable (recording's reasons, and what differed on the original's second run)."""
    excluded = dict(zip(unstable, unstable_kinds or ("",) * len(unstable), strict=True))
    recorded = dict.fromkeys(recording.counts, 0)
    usable = dict.fromkeys(recording.counts, 0)
    reasons = {target: dict(recording.reasons.get(target, {})) for target in recording.counts}
    for index, record in enumerate(records):
        target = record["target"]
        if target in recorded:
            recorded[target] += 1
            usable[target] += index not in excluded
            if index in excluded:
                reason = not_deterministic(excluded[index])
                reasons[target][reason] = reasons[target].get(reason, 0) + 1
    found = {}
    for target, calls in recording.counts.items():
        lines = recording.coverage.get(target, TargetLines(lines=(), covered=()))
        found[target] = TargetEvidence(
            calls=calls,
            recorded=recorded[target],
            usable=usable[target],
            lines=len(lines.lines),
            covered=len(lines.covered),
            missed_lines=tuple(sorted(set(lines.lines) - set(lines.covered))),
            unusable=reasons[target],
        )
    return found


# What makes an async call of the original judge nothing, by the replay's mismatch kind (behaviour/asynchronous.py).
ASYNC_REASONS = {
    asynchronous.WAITED: "the coroutine waits on the event loop (a timer such as asyncio.sleep, I/O or a thread): "
    "its time and result depend on more than its arguments",
    asynchronous.TASK_LEFT: "the coroutine leaves a task running on the event loop",
}


def not_deterministic(kind: str) -> str:
    """Why an unstable call is unusable, from what differed when the original replayed its own recording."""
    later = kind.startswith("repeat ")
    if kind.removeprefix("repeat ") in ASYNC_REASONS:
        return ASYNC_REASONS[kind.removeprefix("repeat ")]
    what = {
        "return": "returned a different value",
        "exception": "raised differently",
        "mutation": "changed its arguments differently",
        "stdout": "printed differently",
        "yield": "yielded differently",
        "consumption": "took from an iterator argument or called a function argument differently",
    }.get(kind.removeprefix("repeat "), "behaved differently")
    runs = "on a later run of the original (state kept between calls)" if later else "on two runs of the original"
    return f"not deterministic: {what} {runs}"


def candidate(request: RunnerRequest) -> CandidateReport:
    workspace = request.workspace
    report = CandidateReport(tests=run_tests(request, workspace, capture=False))
    if report.tests is None or report.tests.stops_the_run:
        return report
    if request.program is not None:  # the baseline judged by recorded program runs
        import coderefine_sandbox.programs.steps as program_steps

        return program_steps.candidate(request, report)
    if request.replay:
        behavior = replay(request, workspace, profile=True)
        report.behavior = behavior
        # A power the original never used is refused before anything is timed (a candidate that opens a
        # socket or starts a process is not run again and again in the timing workers).
        report.refused = gained(behavior.capabilities, request.original_capabilities, request.allow)
        if behavior.differs or report.refused:
            return report
        spec = request.generated
        if spec is not None:
            generated = replay(request, workspace, False, spec.calls_path, spec.unstable_path, "generated")
            report.generated_behavior = generated
            report.refused = gained(generated.capabilities, request.original_capabilities, request.allow)
            if generated.differs or report.refused:
                return report
        if request.boundary is not None:
            edges = request.boundary
            boundary_behavior = replay(
                request, workspace, False, edges.calls_path, edges.unstable_path, "boundary", hold_out=False
            )
            report.boundary_behavior = boundary_behavior
            report.refused = gained(boundary_behavior.capabilities, request.original_capabilities, request.allow)
            if boundary_behavior.differs or report.refused:
                return report
        measurable = bool(behavior.calls_compared)
    else:
        # Nothing was recorded (importing a script here would run it with no input): only the user's own
        # benchmark can time it, and the tests alone judge its behaviour.
        measurable = False
    if request.timing is not None and (measurable or request.bench is not None):
        try:
            with timing_slot(request, report):
                report.timing = measure(request)
        except (StepTimeout, RuntimeError) as exc:
            report.timing_error = f"timing failed: {exc}"
    return report
