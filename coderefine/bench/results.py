"""What a bench keeps of each task's run, and the suite's aggregates.

A `TaskRecord` is a flat projection of a run's `Result` (plus wall and CPU time): it is what the state file
saves line by line, what the JSON report lists under "tasks", and all the aggregates are computed from it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from coderefine.bench.causes import CAUSES, count_causes, rejection_cause
from coderefine.records import Iteration, Result
from coderefine.refine.loop import diff_size


@dataclass
class TaskRecord:
    id: str
    status: str  # "improved", "unchanged" or "failed"
    stop_reason: str
    category: str | None = None
    baseline_score: float | None = None  # readability score of the original (optimize: 1.0)
    baseline_tests: int | None = None  # tests the original passed
    baseline_seconds: float | None = None  # optimize: one pass of the original over the recorded calls
    best_seconds: float | None = None  # optimize: the same pass, best verified candidate (as timed beside it)
    best_score: float | None = None  # of the best verified candidate; None when nothing was verified
    speedup: float | None = None  # optimize: the best's measured speedup
    speedup_ci: list[float] | None = None
    best_iteration: int | None = None
    iterations: int = 0  # candidates made
    evaluated: int = 0  # candidates run in the sandbox
    behavior_rejections: int = 0  # evaluated candidates rejected because tests failed or behaviour changed
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0  # this task's process and every process it waited for (sandbox runs)
    curve: list[float] = field(default_factory=list)  # figure of the best so far after iteration 0, 1, ...
    error: dict[str, Any] | None = None  # {"code", "kind", "message"} when the task failed
    sandbox: str = ""  # the backend the run used
    verdicts: list[str] = field(default_factory=list)  # each iteration's verdict reason, in order
    # optimize: the fastest measured candidate, accepted or not ([speedup, ci low, ci high]): how close an
    # unimproved task came to the noise floor
    top_measured: list[float] | None = None
    rejections: dict[str, int] = field(default_factory=dict)  # evaluated candidates rejected, by cause (causes.py)

    @property
    def improved(self) -> bool:
        return self.status == "improved"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TaskRecord:
        names = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in data.items() if key in names})


def rejected_for_behavior(iteration: Iteration) -> bool:
    """Run, and found wrong: a test failed or timed out, a recorded call differed, or it did not import.
    Not a timing that failed, nor the sandbox: those are counted under their own cause."""
    return rejection_cause(iteration) in ("tests", "behaviour")


def figure(task: str, score: float | None, baseline_score: float | None) -> float:
    """The per-task figure the aggregates use: speedup (1.0 when not improved) or readability gain (0)."""
    if task == "optimize":
        return score if score is not None else 1.0
    if score is None or baseline_score is None:
        return 0.0
    return score - baseline_score


def best_curve(
    task: str, result: Result, min_improvement: float, length: int, improvement_is_ratio: bool
) -> list[float]:
    """The best verified figure after iteration 0, 1, ..., length-1, by the loop's own rule for the best
    (beat it by more than `min_improvement`; within it the smaller diff wins). A run that stopped early
    keeps its last value."""
    baseline = result.baseline.score if result.baseline is not None else None
    best: Iteration | None = None
    curve: list[float] = []
    by_index = {it.index: it for it in result.iterations}
    if any(it.draft for it in result.iterations):  # --drafts N: after each round, the loop's own best then
        for number in range(length):
            steps = result.rounds[: number + 1]
            chosen = by_index.get(steps[-1].best) if steps and steps[-1].best is not None else None
            curve.append(round(figure(task, chosen.verdict.score if chosen else None, baseline), 4))
        return curve
    for index in range(length):
        iteration = by_index.get(index)
        if iteration is not None and iteration.verdict.accepted and iteration.verdict.score is not None:
            if best is None or best.verdict.score is None:
                best = iteration
            else:
                new, old = iteration.verdict.score, best.verdict.score
                gain = new / old - 1.0 if improvement_is_ratio else new - old
                if gain > min_improvement:
                    best = iteration
                elif abs(gain) <= min_improvement and iteration.candidate and best.candidate:
                    original = result.original_code
                    if diff_size(original, iteration.candidate.code) < diff_size(original, best.candidate.code):
                        best = iteration
        curve.append(round(figure(task, best.verdict.score if best else None, baseline), 4))
    return curve


def record_from_result(
    task: str,
    task_id: str,
    category: str | None,
    result: Result,
    *,
    min_improvement: float,
    curve_length: int,
    wall_seconds: float,
    cpu_seconds: float,
    error: dict[str, Any] | None,
) -> TaskRecord:
    best = result.best
    timing = best.evaluation.timing if best is not None and best.evaluation is not None else None
    return TaskRecord(
        id=task_id,
        status="failed" if error is not None else result.status,
        stop_reason=result.stop_reason or (error or {}).get("kind", ""),
        category=category,
        baseline_score=result.baseline.score if result.baseline is not None else None,
        baseline_tests=_baseline_tests(result),
        baseline_seconds=result.baseline.workload_seconds if result.baseline is not None else None,
        best_seconds=timing.candidate_seconds if timing is not None else None,
        best_score=best.verdict.score if best is not None else None,
        speedup=round(timing.speedup, 4) if timing is not None else None,
        speedup_ci=[round(timing.ci_low, 4), round(timing.ci_high, 4)] if timing is not None else None,
        best_iteration=best.index if best is not None else None,
        iterations=len(result.iterations),
        evaluated=sum(1 for it in result.iterations if it.evaluation is not None),
        behavior_rejections=sum(1 for it in result.iterations if rejected_for_behavior(it)),
        rejections=count_causes(result.iterations),
        llm_calls=result.usage.calls,
        prompt_tokens=result.usage.prompt_tokens,
        completion_tokens=result.usage.completion_tokens,
        wall_seconds=round(wall_seconds, 3),
        cpu_seconds=round(cpu_seconds, 3),
        curve=best_curve(task, result, min_improvement, curve_length, task == "optimize"),
        error=error,
        sandbox=result.sandbox,
        verdicts=[it.verdict.reason for it in result.iterations],
        top_measured=_top_measured(result),
    )


def _baseline_tests(result: Result) -> int | None:
    tests = result.baseline.evaluation.tests if result.baseline is not None else None
    return tests.passed if tests is not None else None


def _top_measured(result: Result) -> list[float] | None:
    timings = [it.evaluation.timing for it in result.iterations if it.evaluation and it.evaluation.timing]
    if not timings:
        return None
    top = max(timings, key=lambda t: t.speedup)
    return [round(top.speedup, 4), round(top.ci_low, 4), round(top.ci_high, 4)]


def geometric_mean(values: list[float]) -> float | None:
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _percent(part: int, whole: int) -> float:
    return round(100.0 * part / whole, 1) if whole else 0.0


def summarize(task: str, records: list[TaskRecord]) -> dict[str, Any]:
    """The suite's aggregates. Failed tasks count as unimproved (speedup 1.0, gain 0): a harness that
    cannot run a task has not improved it."""
    n = len(records)
    improved = sum(1 for r in records if r.improved)
    failed = sum(1 for r in records if r.status == "failed")
    with_behavior = sum(1 for r in records if r.behavior_rejections)
    evaluated = sum(r.evaluated for r in records)
    length = max((len(r.curve) for r in records), default=0)
    # A task whose run failed before any iteration has an empty curve: its value is the unimproved one.
    unimproved = 1.0 if task == "optimize" else 0.0
    columns = [
        [(r.curve[i] if i < len(r.curve) else (r.curve[-1] if r.curve else unimproved)) for r in records]
        for i in range(length)
    ]
    summary: dict[str, Any] = {
        "tasks": n,
        "improved": improved,
        "improved_pct": _percent(improved, n),
        "unchanged": sum(1 for r in records if r.status == "unchanged"),
        "failed": failed,
        "behavior_rejected_tasks": with_behavior,
        "behavior_rejected_pct": _percent(with_behavior, n),
        "candidates_evaluated": evaluated,
        "candidates_rejected_for_behavior": sum(r.behavior_rejections for r in records),
        "candidates_rejected_by_cause": {
            cause: total for cause in CAUSES if (total := sum(r.rejections.get(cause, 0) for r in records))
        },
        "llm_calls": sum(r.llm_calls for r in records),
        "tokens": sum(r.prompt_tokens + r.completion_tokens for r in records),
        "task_wall_seconds": round(sum(r.wall_seconds for r in records), 3),
        "cpu_seconds": round(sum(r.cpu_seconds for r in records), 3),
    }
    if task == "optimize":
        speedups = [r.speedup if r.improved and r.speedup is not None else 1.0 for r in records]
        gm = geometric_mean(speedups)
        summary["geomean_speedup"] = round(gm, 4) if gm is not None else None
        summary["geomean_speedup_improved"] = _round(
            geometric_mean([s for r, s in zip(records, speedups, strict=True) if r.improved])
        )
        summary["curve"] = [_round(geometric_mean(column)) for column in columns]
    else:
        gains = [figure(task, r.best_score if r.improved else None, r.baseline_score) for r in records]
        scored = [r for r in records if r.baseline_score is not None]
        summary["mean_gain"] = round(sum(gains) / n, 3) if n else None
        summary["mean_score_before"] = _mean([r.baseline_score for r in scored])
        summary["mean_score_after"] = _mean(
            [r.best_score if r.improved and r.best_score is not None else r.baseline_score for r in scored]
        )
        summary["curve"] = [round(sum(column) / len(column), 3) for column in columns]
    return summary


def _round(value: float | None) -> float | None:
    return round(value, 4) if value is not None else None


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(sum(present) / len(present), 3) if present else None
