"""The runner's typed reports (`coderefine_sandbox.protocol`) turned into `coderefine.records`."""

from __future__ import annotations

from typing import Any

from coderefine.evaluation import protocol
from coderefine.records import (
    BehaviorReport,
    BoundaryInputs,
    Evaluation,
    GeneratedInputs,
    HotSpot,
    Mismatch,
    Refusal,
    TargetEvidence,
    TestFailure,
    TestReport,
    Timing,
)


def tests_report(run: protocol.TestRun) -> TestReport:
    return TestReport(
        collected=run.collected,
        passed=run.passed,
        failed=run.failed,
        skipped=run.skipped,
        duration=run.duration,
        exit_code=run.exit_code,
        timed_out=run.timed_out,
        failures=tuple(TestFailure(f.nodeid, f.message) for f in run.failures),
        output_tail=run.output_tail,
        stopped_early=run.stopped_early,
    )


def hot_spots(profile: tuple[protocol.HotSpot, ...]) -> tuple[HotSpot, ...]:
    return tuple(HotSpot(s.function, s.line, round(s.share, 4), s.calls) for s in profile)


def behavior_report(
    replay: protocol.ReplayReport,
    generated: protocol.ReplayReport | None,
    boundary: protocol.ReplayReport | None = None,
) -> BehaviorReport:
    """The candidate replayed on the tests' recorded calls, and on the generated inputs and the boundary
    variants if any."""
    generated_examples = generated.examples if generated is not None else ()
    boundary_examples = boundary.examples if boundary is not None else ()
    mismatched = set(replay.mismatched_targets)
    for extra in (generated, boundary):
        mismatched |= set(extra.mismatched_targets if extra is not None else ())
    return BehaviorReport(
        calls_compared=replay.calls_compared,
        mismatches=replay.mismatches,
        examples=tuple(_mismatch(example) for example in replay.examples)
        + tuple(_mismatch(example, generated=True) for example in generated_examples)
        + tuple(_mismatch(example, boundary=True) for example in boundary_examples),
        generated_compared=generated.calls_compared if generated is not None else 0,
        generated_mismatches=generated.mismatches if generated is not None else 0,
        held_out_mismatches=replay.held_out_mismatches,
        mismatched_functions=tuple(sorted(mismatched)),
        boundary_compared=boundary.calls_compared if boundary is not None else 0,
        boundary_mismatches=boundary.mismatches if boundary is not None else 0,
        boundary_seconds=(boundary.seconds or 0.0) if boundary is not None else 0.0,
    )


def _mismatch(example: protocol.MismatchExample, generated: bool = False, boundary: bool = False) -> Mismatch:
    return Mismatch(
        example.function,
        example.kind,
        example.args,
        example.expected,
        example.got,
        generated,
        example.held_out,
        boundary,
    )


def _relative_cost(held_out: protocol.Estimate | None, shown: protocol.Estimate | None) -> float | None:
    if held_out is None or shown is None or shown.original_seconds <= 0:
        return None
    return held_out.original_seconds / shown.original_seconds


def _triple(estimate: protocol.Estimate | None) -> tuple[float, float, float] | None:
    return None if estimate is None else (estimate.speedup, *estimate.ci)


def refusals(found: tuple[protocol.Capability, ...]) -> tuple[Refusal, ...]:
    return tuple(Refusal(c.kind, c.detail, c.call) for c in found)


def timing(report: protocol.TimingReport, workload: str) -> Timing:
    confirmation = report.confirmation
    return Timing(
        speedup=report.speedup,
        ci_low=report.ci[0],
        ci_high=report.ci[1],
        original_seconds=report.original_seconds,
        candidate_seconds=report.candidate_seconds,
        pairs=report.pairs,
        loops=report.loops,
        min_speedup=report.floor,  # the floor the runner's early stop used too
        basis=report.basis,
        workload=workload,
        confirmation=None if confirmation is None else (confirmation.speedup, *confirmation.ci),
        held_out=_triple(report.held_out),
        held_out_cost=_relative_cost(report.held_out, report.shown),
        shown=_triple(report.shown),
        charged=_triple(report.charged),
        import_seconds=report.import_seconds,
        import_extra=report.import_extra,
        **_per_function(report),
        after_startup=_after_startup(report),
        steady=_triple(report.estimates.get("steady")) if report.basis == "first" else None,
        harness_seconds_per_call=report.harness_seconds_per_call,
        plain_loop=report.plain_loop,
        per_function_with_harness={name: _figure(e) for name, e in report.per_target_with_harness.items()},
    )


def _per_function(report: protocol.TimingReport) -> dict[str, Any]:
    """Each target's own figures, on its own basis: a target decided on its first pass reads its first-pass
    figure (in both series), with its figure over every pass kept as its steady one."""
    confirmation = report.confirmation
    first = {name for name, basis in report.per_target_basis.items() if basis == "first"}

    def on_basis(estimates: dict[str, protocol.Estimate], firsts: dict[str, protocol.Estimate]) -> dict:
        # A target decided on its first pass has no figure where its first pass was not read.
        return {
            name: _figure(firsts[name] if name in first else estimate)
            for name, estimate in estimates.items()
            if name not in first or name in firsts
        }

    held, shown = report.per_target_held_out, report.per_target_shown
    both = sorted(set(held) & set(shown))
    costs = {name: _relative_cost(held[name], shown[name]) for name in both}
    return {
        "per_function": on_basis(report.per_target, report.per_target_first),
        "per_function_confirmation": {}
        if confirmation is None
        else on_basis(confirmation.per_target, confirmation.per_target_first),
        "per_function_steady": {name: _figure(e) for name, e in report.per_target.items() if name in first},
        "per_function_held_out": {name: _figure(held[name]) for name in both},
        "per_function_shown": {name: _figure(shown[name]) for name in both},
        "per_function_held_out_cost": {name: cost for name, cost in costs.items() if cost is not None},
    }


def _figure(estimate: protocol.Estimate) -> tuple[float, float, float]:
    return (estimate.speedup, *estimate.ci)


def _after_startup(report: protocol.TimingReport) -> tuple[float, float, float] | None:
    found = report.estimates.get("after_startup") if report.basis == "process" else None
    return None if found is None else (found.speedup, *found.ci)


def evidence(per_target: dict[str, protocol.TargetEvidence]) -> tuple[TargetEvidence, ...]:
    return tuple(
        TargetEvidence(
            target=target,
            calls=entry.calls,
            recorded=entry.recorded,
            usable=entry.usable,
            lines=entry.lines,
            covered=entry.covered,
            missed_lines=entry.missed_lines,
            unusable=tuple(sorted(entry.unusable.items(), key=lambda pair: (-pair[1], pair[0]))),
        )
        for target, entry in per_target.items()
    )


def generated_inputs(report: protocol.GeneratedReport | None) -> GeneratedInputs | None:
    if report is None:
        return None
    return GeneratedInputs(
        per_target=dict(report.generated),
        skipped=dict(report.skipped),
        unstable=report.unstable,
        error=report.error,
    )


def boundary_inputs(report: protocol.BoundaryReport | None) -> BoundaryInputs | None:
    if report is None:
        return None
    return BoundaryInputs(
        per_target=dict(report.kept),
        derived=report.derived,
        raised=report.raised,
        slow=report.slow,
        not_deterministic=report.not_deterministic,
        unpicklable=report.unpicklable,
        unstable=report.unstable,
        seconds=round(report.seconds, 3),
        error=report.error,
    )


def candidate_evaluation(
    report: protocol.CandidateReport, metrics: dict[str, float], workload: str, seconds: float
) -> Evaluation:
    """A candidate's Evaluation; `error` says why it could not be judged (the first problem met)."""
    errors: list[str | None] = [report.runner_error]
    behavior = None
    spots: tuple[HotSpot, ...] = ()
    if report.behavior is not None:
        errors.append(report.behavior.problem)
        if report.generated_behavior is not None:
            errors.append(report.generated_behavior.problem)
        if report.boundary_behavior is not None:
            errors.append(report.boundary_behavior.problem)
        behavior = behavior_report(report.behavior, report.generated_behavior, report.boundary_behavior)
        spots = hot_spots(report.behavior.profile)
    errors.append(report.timing_error)
    return Evaluation(
        tests=tests_report(report.tests) if report.tests is not None else None,
        behavior=behavior,
        timing=timing(report.timing, workload) if report.timing is not None else None,
        metrics=metrics,
        hot_spots=spots,
        error=next((error for error in errors if error is not None), None),
        wall_seconds=seconds,
        cpu_seconds=report.cpu_seconds,
        refused=refusals(report.refused),
    )
