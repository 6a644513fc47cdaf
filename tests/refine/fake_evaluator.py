"""An in-process stand-in for the sandboxed evaluator, so that the loop's rules run in milliseconds.

Only the evaluator is replaced; the loop, the scripted provider, the task specs and their scorers are the
real ones. The evaluations it returns are real `records.Evaluation`s: the metrics are computed the way the
sandboxed evaluator computes them (on the host, from the code), and "the tests" are a check function run on
the candidate's namespace in this process instead of pytest in a sandbox.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coderefine.quality.metrics import code_metrics
from coderefine.quality.readability import readability_score
from coderefine.records import (
    BaselineFacts,
    BehaviorReport,
    Candidate,
    Evaluation,
    Sufficiency,
    TestFailure,
    TestReport,
    Timing,
)

Check = Callable[[dict[str, Any]], None]


def confirmed_timing(speedup: float, *, min_speedup: float = 0.05) -> Timing:
    """A speedup measured with a tight interval and confirmed by a second series: what `faster` needs."""
    low, high = speedup * 0.98, speedup * 1.02
    return Timing(
        speedup=speedup,
        ci_low=low,
        ci_high=high,
        original_seconds=0.01,
        candidate_seconds=0.01 / speedup,
        pairs=6,
        loops=100,
        min_speedup=min_speedup,
        confirmation=(speedup, low, high),
    )


class FakeEvaluator:
    """Satisfies `coderefine.refine.evaluator.Evaluator`; records what it was asked to evaluate."""

    def __init__(
        self,
        check: Check,
        *,
        calls: int = 3,
        timing: Callable[[str], Timing | None] = lambda code: None,
        sufficiency: Sufficiency | None = None,
        raise_on: dict[int, BaseException] | None = None,
    ) -> None:
        self.check = check
        self.calls = calls  # recorded calls to the target, replayed on every candidate
        self.timing = timing
        self.sufficiency = sufficiency
        self.raise_on = raise_on or {}  # evaluation number (from 0) -> what that evaluation raises
        self.baselines: list[str] = []
        self.evaluated: list[str] = []
        self.closed = False

    def baseline(self, code: str) -> BaselineFacts:
        self.baselines.append(code)
        if "baseline" in self.raise_on:
            raise self.raise_on["baseline"]
        return BaselineFacts(
            evaluation=self._evaluation(code, None),
            calls_recorded=self.calls,
            loops=None,
            workload_seconds=None,
            sufficiency=self.sufficiency,
        )

    def evaluate(self, candidate: Candidate) -> Evaluation:
        number = len(self.evaluated)
        self.evaluated.append(candidate.code)
        if number in self.raise_on:
            raise self.raise_on[number]
        return self._evaluation(candidate.code, self.timing(candidate.code))

    def close(self) -> None:
        self.closed = True

    def _evaluation(self, code: str, timing: Timing | None) -> Evaluation:
        failures = self._run_tests(code)
        tests = TestReport(
            collected=1,
            passed=0 if failures else 1,
            failed=len(failures),
            skipped=0,
            duration=0.01,
            exit_code=1 if failures else 0,
            failures=failures,
        )
        metrics = code_metrics(code)
        metrics["readability"] = round(readability_score(code), 2)
        return Evaluation(
            tests=tests,
            behavior=BehaviorReport(calls_compared=self.calls, mismatches=0),
            timing=timing,
            metrics=metrics,
        )

    def _run_tests(self, code: str) -> tuple[TestFailure, ...]:
        namespace: dict[str, Any] = {}
        try:
            exec(compile(code, "mod.py", "exec"), namespace)
            self.check(namespace)
        except Exception as exc:
            return (TestFailure("test_mod.py::test_f", f"{type(exc).__name__}: {exc}"),)
        return ()
