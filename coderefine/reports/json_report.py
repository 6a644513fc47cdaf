"""The JSON report: the machine contract (see README, "JSON report").

Required keys are exactly those of the contract; extra keys (evidence such as intervals, calls compared,
hot spots, warnings) are additions a consumer may ignore.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from coderefine import __version__
from coderefine.evaluation.verdicts import faster, memory_grew
from coderefine.records import (
    BoundaryInputs,
    Evaluation,
    GeneratedInputs,
    Iteration,
    Mismatch,
    Result,
    Sufficiency,
    Timing,
)
from coderefine.reports.selection import selection_dict

SCHEMA_VERSION = 1


def _tests(evaluation: Evaluation | None) -> dict[str, Any] | None:
    if evaluation is None or evaluation.tests is None:
        return None
    tests = evaluation.tests
    counts: dict[str, Any] = {"passed": tests.passed, "failed": tests.failed}
    if tests.stopped_early:  # a candidate's fail-fast run: how many of the selected tests ran before it stopped
        counts["stopped_at_first_failure"] = {"ran": tests.ran, "of": tests.collected}
    return counts


def _behavior(evaluation: Evaluation | None) -> dict[str, Any] | None:
    if evaluation is None or evaluation.behavior is None:
        return None
    behavior = evaluation.behavior
    return {
        "calls_compared": behavior.calls_compared,
        "mismatches": behavior.mismatches,
        "skipped": behavior.skipped,
        "examples": [_example(m) for m in behavior.examples],
        "generated_compared": behavior.generated_compared,
        "generated_mismatches": behavior.generated_mismatches,
        "boundary_compared": behavior.boundary_compared,
        "boundary_mismatches": behavior.boundary_mismatches,
        "boundary_seconds": round(behavior.boundary_seconds, 3),
    }


def _example(mismatch: Mismatch) -> dict[str, Any]:
    """A mismatch as the report has always shown it; "boundary" only on a boundary variant's."""
    found = dict(vars(mismatch))
    if not found.pop("boundary"):
        return found
    return {**found, "boundary": True}


def _speedup(evaluation: Evaluation | None) -> tuple[float | None, list[float] | None]:
    if evaluation is None or evaluation.timing is None:
        return None, None
    timing = evaluation.timing
    return round(timing.speedup, 4), [round(timing.ci_low, 4), round(timing.ci_high, 4)]


def _timing(evaluation: Evaluation | None) -> dict[str, Any] | None:
    if evaluation is None or evaluation.timing is None:
        return None
    t = evaluation.timing
    return {
        "original_seconds": t.original_seconds,
        "candidate_seconds": t.candidate_seconds,
        "pairs": t.pairs,
        "loops": t.loops,
        "min_speedup": t.min_speedup,
        "faster": faster(t),
        "basis": t.basis,
        "workload": t.workload,
        "confirmation_speedup_ci": list(t.confirmation) if t.confirmation else None,
        # issue 13: the held-out and shown calls apart, import charged, and the import time before/after
        "held_out_speedup_ci": list(t.held_out) if t.held_out else None,
        "held_out_cost": t.held_out_cost,  # the original's seconds on held-out calls / on shown ones
        "shown_speedup_ci": list(t.shown) if t.shown else None,
        "charged_speedup_ci": list(t.charged) if t.charged else None,
        "import_seconds": {"original": t.import_seconds[0], "candidate": t.import_seconds[1]}
        if t.import_seconds
        else None,
        # the candidate's extra import seconds over the paired processes: [mean, low, high] (95%)
        "import_extra_seconds": list(t.import_extra) if t.import_extra else None,
        # each target's own [speedup, low, high]; the figures above are the workload-weighted total
        "per_function": {name: list(figure) for name, figure in t.per_function.items()},
        # issue 24: the harness's own per-call cost, taken out of both sides' seconds before the ratios
        "harness_seconds_per_call": t.harness_seconds_per_call,
        # whether the seconds and ratios are plain loops' (the calls timed one by one scaled to plain-loop passes)
        "plain_loop": t.plain_loop,
        **({"after_startup_speedup_ci": list(t.after_startup)} if t.after_startup is not None else {}),
        **({"steady_speedup_ci": list(t.steady)} if t.steady is not None else {}),
        **_per_function_trust(t),
    }


def _per_function_trust(t: Timing) -> dict[str, Any]:
    """Each function's own trust figures, where it has them: its [speedup, low, high] on later passes when its
    first pass decided it (its "per_function" figure is then its first pass's), on its held-out and shown
    calls apart, and with the harness's per-call cost left in (what "no target slower" reads)."""
    found: dict[str, Any] = {}
    for key, figures in (
        ("per_function_steady_speedup_ci", t.per_function_steady),
        ("per_function_held_out_speedup_ci", t.per_function_held_out),
        ("per_function_shown_speedup_ci", t.per_function_shown),
        ("per_function_with_harness", t.per_function_with_harness),
    ):
        if figures:
            found[key] = {name: list(figure) for name, figure in figures.items()}
    return found


def _memory(evaluation: Evaluation | None) -> dict[str, Any] | None:
    """Peak memory per call before and after (bytes), the calls read, the limit, and whether it was exceeded."""
    if evaluation is None or evaluation.memory is None:
        return None
    memory = evaluation.memory
    return {
        "original_peak_bytes": memory.original,
        "candidate_peak_bytes": memory.candidate,
        "calls": memory.calls,
        "max_ratio": memory.max_ratio,
        "min_growth_bytes": memory.min_growth,
        "exceeded": memory_grew(memory),
        "allowed": memory.allowed,
    }


def _refused(evaluation: Evaluation | None) -> list[dict[str, str]]:
    if evaluation is None:
        return []
    return [{"kind": r.kind, "detail": r.detail, "call": r.call} for r in evaluation.refused]


def _generated(generated: GeneratedInputs | None) -> dict[str, Any] | None:
    if generated is None:
        return None
    return {
        "calls": generated.calls,
        "per_target": generated.per_target,
        "unstable": generated.unstable,
        "skipped": generated.skipped,
        "error": generated.error,
    }


def _boundary(boundary: BoundaryInputs | None) -> dict[str, Any] | None:
    if boundary is None:
        return None
    return {
        "calls": boundary.calls,
        "per_target": boundary.per_target,
        "derived": boundary.derived,
        "raised": boundary.raised,
        "slow": boundary.slow,
        "not_deterministic": boundary.not_deterministic + boundary.unstable,
        "unpicklable": boundary.unpicklable,
        "seconds": boundary.seconds,
        "error": boundary.error,
    }


def _sufficiency(gate: Sufficiency | None) -> dict[str, Any] | None:
    if gate is None:
        return None
    return {
        "applies": gate.applies,
        "sufficient": gate.sufficient,
        "calls": gate.calls,
        "lines": gate.lines,
        "covered": gate.covered,
        "coverage": round(gate.coverage, 4) if gate.coverage is not None else None,
        "min_calls": gate.min_calls,
        "min_coverage": gate.min_coverage,
        "allowed": gate.allowed,
        "reason": gate.reason,
    }


def _iteration(iteration: Iteration) -> dict[str, Any]:
    speedup, interval = _speedup(iteration.evaluation)
    candidate = iteration.candidate
    return {
        "index": iteration.index,
        "role": iteration.role.value,
        "code_sha256": candidate.sha256 if candidate else None,
        "verdict": "accepted" if iteration.verdict.accepted else "rejected",
        "reason": iteration.verdict.reason,
        "tests": _tests(iteration.evaluation),
        "speedup": speedup,
        "speedup_ci": interval,
        "score": iteration.verdict.score,
        "feedback": iteration.feedback,
        "behavior": _behavior(iteration.evaluation),
        "timing": _timing(iteration.evaluation),
        "refused": _refused(iteration.evaluation),
        "memory": _memory(iteration.evaluation),
        "changed": list(candidate.changed) if candidate else [],
        "notes": list(candidate.notes) if candidate else [],
        "evaluated": iteration.evaluation is not None,
        "seconds": round(iteration.evaluation.wall_seconds, 3) if iteration.evaluation else 0.0,
        "cpu_seconds": iteration.evaluation.cpu_seconds if iteration.evaluation else 0.0,
        "setup_seconds": iteration.evaluation.setup_seconds if iteration.evaluation else 0.0,
        "functions": [asdict(verdict) for verdict in iteration.functions],
        "round": iteration.round,
        "draft": iteration.draft,
        "carried": iteration.carried,
        "thinking_chars": iteration.thinking_chars,
    }


def _rounds(result: Result) -> list[dict[str, Any]]:
    """Per generate/refine step: each draft's verdict and figure, the one carried forward, and the best
    verified speedup (or score) of the run after the step: the "by round and by draft" view."""
    by_index = {iteration.index: iteration for iteration in result.iterations}
    rounds = []
    for step in result.rounds:
        best = by_index.get(step.best) if step.best is not None else None
        speedup, _ = _speedup(best.evaluation) if best is not None else (None, None)
        drafts = []
        for index in step.attempts:
            iteration = by_index[index]
            figure, _ = _speedup(iteration.evaluation)
            drafts.append(
                {
                    "index": index,
                    "draft": iteration.draft,
                    "verdict": "accepted" if iteration.verdict.accepted else "rejected",
                    "speedup": figure,
                    "score": iteration.verdict.score,
                    "reason": iteration.verdict.reason,
                    "seconds": round(iteration.evaluation.wall_seconds, 3) if iteration.evaluation else 0.0,
                }
            )
        rounds.append(
            {
                "round": step.number,
                "role": step.role.value,
                "drafts": drafts,
                "carried": step.carried,
                "best": step.best,
                "best_speedup": speedup,
                "best_score": best.verdict.score if best is not None else None,
            }
        )
    return rounds


def report_dict(result: Result) -> dict[str, Any]:
    baseline = None
    if result.baseline is not None:
        evaluation = result.baseline.evaluation
        baseline = {
            "tests": _tests(evaluation),
            "metrics": evaluation.metrics,
            "score": result.baseline.score,
            "calls_recorded": result.baseline.calls_recorded,
            "workload_seconds": result.baseline.workload_seconds,
            "untimed": result.baseline.untimed,
            "timed_calls": result.baseline.timed_calls,
            "hot_spots": [vars(s) for s in evaluation.hot_spots],
            "evidence": {
                e.target: {
                    "calls": e.calls,
                    "recorded": e.recorded,
                    "usable": e.usable,
                    "lines": e.lines,
                    "covered": e.covered,
                    "missed_lines": list(e.missed_lines),
                    "unusable": dict(e.unusable),
                }
                for e in result.baseline.evidence
            },
            "sufficiency": _sufficiency(result.baseline.sufficiency),
            "pinned": list(result.baseline.pinned),
            "not_pinned": list(result.baseline.not_pinned),
            "generated": _generated(result.baseline.generated),
            "boundary": _boundary(result.baseline.boundary),
            "selection": selection_dict(result.baseline.tests_selected),
            "seconds": round(evaluation.wall_seconds, 3),
            "test_seconds": round(evaluation.tests.duration, 3) if evaluation.tests is not None else None,
        }
        if result.baseline.program is not None:  # only for programs, so function runs' reports are unchanged
            program = result.baseline.program
            baseline["program"] = {**vars(program), "startup_share": program.startup_share}
    best = None
    if result.best is not None and result.best.candidate is not None:
        evaluation = result.best.evaluation
        speedup, interval = _speedup(evaluation)
        best = {
            "iteration": result.best.index,
            "code": result.best.candidate.code,
            "code_sha256": result.best.candidate.sha256,
            "score": result.best.verdict.score,
            "speedup": speedup,
            "speedup_ci": interval,
            "tests": _tests(evaluation),
            "behavior": _behavior(evaluation),
            "metrics": evaluation.metrics if evaluation else {},
            "reason": result.best.verdict.reason,
        }
    return {
        "schema": SCHEMA_VERSION,
        "coderefine": __version__,
        "task": result.task,
        "file": result.file,
        "status": result.final_status,
        "stop_reason": result.stop_reason,
        "baseline": baseline,
        "best": best,
        "iterations": [_iteration(it) for it in result.iterations],
        "rounds": _rounds(result),
        "llm": {
            "calls": result.usage.calls,
            "prompt_tokens": result.usage.prompt_tokens,
            "completion_tokens": result.usage.completion_tokens,
            "total_tokens": result.usage.total_tokens,
            "cached_calls": result.usage.cached_calls,
            "billed_tokens": result.usage.billed_tokens,
            "tokens_estimated": result.usage.estimated,
            "reasoning_tokens": result.usage.reasoning_tokens,
            "model_seconds": round(result.usage.model_seconds, 3),
            "model": result.model,
        },
        "provider": result.provider,
        "provider_reason": result.provider_reason,
        "sandbox": result.sandbox,
        "sandbox_reason": result.sandbox_reason,
        "warnings": result.warnings,
        "written": result.written,
        "error": _error(result),
    }


def _error(result: Result) -> dict[str, Any] | None:
    error = result.error
    return None if error is None else {"code": error.code, "kind": error.kind, "message": error.message}


def render_json(result: Result) -> str:
    return json.dumps(report_dict(result), indent=2, allow_nan=False, default=str) + "\n"
