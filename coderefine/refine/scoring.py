"""A task's scorer: the verdict and the score the loop compares candidates by (the verdicts themselves are
decided in coderefine.evaluation.verdicts)."""

from __future__ import annotations

from typing import Protocol

from coderefine.errors import UsageError
from coderefine.evaluation.verdicts import readability_verdict, speed_verdict
from coderefine.records import Baseline, Evaluation, Verdict
from coderefine.refine.tasks import TaskSpec


class Scorer(Protocol):
    def baseline_score(self, baseline: Evaluation, code: str) -> float: ...

    def judge(self, evaluation: Evaluation, baseline: Baseline, code: str) -> Verdict: ...

    def improvement(self, new: float, old: float) -> float:
        """How much `new` beats `old`, in the unit of the task's `min_improvement`."""
        ...


class SpeedupScorer:
    """Score = measured speedup; accepted only if its interval's lower bound clears the noise floor."""

    def baseline_score(self, baseline: Evaluation, code: str) -> float:
        return 1.0

    def judge(self, evaluation: Evaluation, baseline: Baseline, code: str) -> Verdict:
        return speed_verdict(evaluation, baseline)

    def improvement(self, new: float, old: float) -> float:
        return new / old - 1.0


class ReadabilityScorer:
    """Score = the readability score of the whole module, accepted with a gain of at least `min_gain` points."""

    def __init__(self, min_gain: float) -> None:
        self.min_gain = min_gain

    def baseline_score(self, baseline: Evaluation, code: str) -> float:
        return baseline.metrics.get("readability", 0.0)

    def judge(self, evaluation: Evaluation, baseline: Baseline, code: str) -> Verdict:
        return readability_verdict(evaluation, baseline, self.min_gain)

    def improvement(self, new: float, old: float) -> float:
        return new - old


def scorer_for(task: TaskSpec) -> Scorer:
    if task.scorer == "speedup":
        return SpeedupScorer()
    if task.scorer == "readability":
        return ReadabilityScorer(task.min_improvement)
    raise UsageError(f"task '{task.name}' names an unknown scorer '{task.scorer}'")
