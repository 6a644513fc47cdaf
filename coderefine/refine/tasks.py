"""Tasks are data: a folder under `tasks/` with `task.toml` and prompt templates.

`task.toml` names a scorer (code: how an Evaluation becomes a verdict and a score), the stop parameters
and the offline provider's rewrite rules; the Markdown templates hold every word the model sees. Adding
a task is adding a folder that reuses a scorer.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from coderefine.errors import UsageError
from coderefine.records import Baseline, Evaluation, Refusal, Timing, Verdict
from coderefine.resources import tasks_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

ROLES = ("system", "generate", "feedback", "refine")


@dataclass(frozen=True)
class TaskSpec:
    name: str
    description: str
    scorer: str
    measure_speed: bool
    min_improvement: float  # progress below this (relative for speedups, points for scores) is a tie
    max_iterations: int
    patience: int
    prompts: dict[str, str]
    offline_rules: tuple[str, ...]
    folder: Path


def available_tasks() -> list[str]:
    return sorted(p.name for p in tasks_dir().iterdir() if (p / "task.toml").is_file())


def load_task(name: str) -> TaskSpec:
    folder = tasks_dir() / name
    if not (folder / "task.toml").is_file():
        raise UsageError(f"unknown task '{name}'; available: {', '.join(available_tasks())}")
    data = tomllib.loads((folder / "task.toml").read_text(encoding="utf-8"))
    prompt_files = data.get("prompts", {})
    prompts = {role: (folder / prompt_files.get(role, f"{role}.md")).read_text(encoding="utf-8") for role in ROLES}
    stop = data.get("stop", {})
    return TaskSpec(
        name=data.get("name", name),
        description=data["description"],
        scorer=data["scorer"],
        measure_speed=bool(data.get("measure_speed", False)),
        min_improvement=float(stop.get("min_improvement", 0.0)),
        max_iterations=int(stop.get("max_iterations", 4)),
        patience=int(stop.get("patience", 1)),
        prompts=prompts,
        offline_rules=tuple(data.get("offline", {}).get("rules", ())),
        folder=folder,
    )


# ----------------------------------------------------------------------------- scorers


class Scorer(Protocol):
    def baseline_score(self, baseline: Evaluation, code: str) -> float: ...

    def judge(self, evaluation: Evaluation, baseline: Baseline, code: str) -> Verdict: ...

    def improvement(self, new: float, old: float) -> float:
        """How much `new` beats `old`, in the unit of the task's `min_improvement`."""
        ...


def correctness_problem(evaluation: Evaluation) -> str | None:
    """Why a candidate cannot be trusted, or None. Shared by every scorer: execution decides."""
    if evaluation.error:
        return evaluation.error
    tests = evaluation.tests
    if tests is None:
        return "the tests did not run"
    if tests.timed_out:
        first = tests.failures[0].message if tests.failures else "the tests timed out"
        return f"tests timed out: {first}"
    if tests.failed:
        failure = tests.failures[0] if tests.failures else None
        detail = f": {failure.nodeid}" if failure else ""
        return f"{tests.failed} test{'s' if tests.failed != 1 else ''} failed{detail}"
    if not tests.all_passed:
        return f"the test run did not pass (pytest exit code {tests.exit_code})"
    if evaluation.refused:
        return refusal_reason(evaluation.refused)
    behavior = evaluation.behavior
    if behavior is not None and behavior.mismatches:
        example = next((e for e in behavior.examples if not e.generated and not e.held_out), None)
        if example is None and behavior.held_out_mismatches:
            return (
                f"behaviour changed on {behavior.mismatches}/{behavior.calls_compared} recorded calls, "
                f"{behavior.held_out_mismatches} of them held out (their inputs are not shown)"
            )
        if example is None:
            return f"behaviour changed on {behavior.mismatches} recorded {behavior.unit}s"
        return (
            f"behaviour changed on {behavior.mismatches}/{behavior.calls_compared} recorded {behavior.unit}s: "
            f"{example.function}{_call_args(example.args)} {example.kind}: "
            f"expected {example.expected}, got {example.got}"
        )
    if behavior is not None and behavior.generated_mismatches:
        example = next((e for e in behavior.examples if e.generated), None)
        detail = ""
        if example is not None:
            call = f"{example.function}{_call_args(example.args)}"
            detail = f": {call} {example.kind}: expected {example.expected}, got {example.got}"
        return (
            f"behaviour changed on {behavior.generated_mismatches}/{behavior.generated_compared} generated inputs"
            f"{detail}"
        )
    return None


def refusal_reason(refused: tuple[Refusal, ...]) -> str:
    """Names the power and the call: the model learns what it may not do, the user how to allow it."""
    first = refused[0]
    more = f" (and {len(refused) - 1} more: {', '.join(sorted({r.kind for r in refused[1:]}))})" if refused[1:] else ""
    where = "at import" if first.call == "import" else f"in {first.call}"
    return (
        f"refused: uses a power the original never used: {first.kind} ({first.detail}) {where}{more}; "
        f"allow it with --allow {first.kind}"
    )


def _call_args(args: str) -> str:
    # Recorded args are shown as "((a, b), {})"; show them as a call.
    if args.startswith("((") and args.endswith(", {})"):
        inner = args[1:-5]
        return inner[:-2] + ")" if inner.endswith(",)") else inner
    return f"[{args}]" if args else ""


class SpeedupScorer:
    """Score = measured speedup; accepted only if its interval's lower bound clears the noise floor."""

    def baseline_score(self, baseline: Evaluation, code: str) -> float:
        return 1.0

    def judge(self, evaluation: Evaluation, baseline: Baseline, code: str) -> Verdict:
        problem = correctness_problem(evaluation)
        if problem:
            return Verdict(False, problem, None)
        timing = evaluation.timing
        if timing is None:
            if not baseline.calls_recorded:
                return Verdict(False, "speed not measurable: the tests make no recordable calls to the target", None)
            if baseline.untimed is not None:
                return Verdict(False, f"speed not measured: {baseline.untimed}", None)
            return Verdict(False, "speed was not measured", None)
        figure = f"{timing.speedup:.2f}x [{timing.ci_low:.2f}, {timing.ci_high:.2f}]"
        # Whenever a series cleared the floor, a gamed speedup is named as such, confirmed or not: the
        # feedback must say why, not that the second series happened to fall short.
        gamed = gamed_speedup(timing, figure) if timing.cleared or timing.confirmation is not None else None
        if gamed is not None:
            return Verdict(False, gamed, timing.speedup)
        if timing.faster:
            return Verdict(True, f"{figure} faster (confirmed)", timing.speedup)
        if timing.flattered_by_repetition and timing.steady is not None:
            steady, low, high = timing.steady
            return Verdict(
                False,
                f"faster only after the first pass (state kept between calls, e.g. a cache): {figure} on the "
                f"first pass of each process, {steady:.2f}x [{low:.2f}, {high:.2f}] on later ones",
                timing.speedup,
            )
        if timing.confirmation is not None and not timing.confirmed:
            speedup, low, high = timing.confirmation
            return Verdict(
                False,
                f"not faster: not confirmed; the first timing series cleared +{timing.min_speedup:.0%} but a "
                f"second one gave {speedup:.2f}x [{low:.2f}, {high:.2f}] ({figure} over both)",
                timing.speedup,
            )
        return Verdict(
            False,
            f"not faster: {figure}, the lower bound does not clear +{timing.min_speedup:.0%}",
            timing.speedup,
        )

    def improvement(self, new: float, old: float) -> float:
        return new / old - 1.0


def gamed_speedup(timing: Timing, figure: str) -> str | None:
    """Why a speedup that cleared the floor is still not one (issue 13), or None: it does not hold on the
    held-out calls, or it comes from work moved to import time."""
    if timing.fast_only_on_shown and timing.held_out is not None and timing.shown is not None:
        held, held_low, held_high = timing.held_out
        shown, shown_low, shown_high = timing.shown
        return (
            f"fast only on the shown inputs: {shown:.2f}x [{shown_low:.2f}, {shown_high:.2f}] on the calls the "
            f"prompts may show, {held:.2f}x [{held_low:.2f}, {held_high:.2f}] on held-out calls ({figure} overall)"
        )
    if timing.import_eats_it and timing.charged is not None and timing.import_seconds is not None:
        charged, low, high = timing.charged
        before, after = timing.import_seconds
        return (
            f"work moved to import time: importing takes {after * 1e3:.2f} ms (original {before * 1e3:.2f} ms); "
            f"with it charged {charged:.2f}x [{low:.2f}, {high:.2f}] ({figure} without)"
        )
    return None


class ReadabilityScorer:
    """Score = the readability score of the whole module (see coderefine.quality.readability).

    Accepted only with a gain of at least `min_gain` points: smaller moves are within what a rename
    of one variable does, and not worth a change to the user's code.
    """

    def __init__(self, min_gain: float) -> None:
        self.min_gain = min_gain

    def baseline_score(self, baseline: Evaluation, code: str) -> float:
        return baseline.metrics.get("readability", 0.0)

    def judge(self, evaluation: Evaluation, baseline: Baseline, code: str) -> Verdict:
        problem = correctness_problem(evaluation)
        score = evaluation.metrics.get("readability")
        if problem:
            return Verdict(False, problem, score)
        assert score is not None
        delta = score - baseline.score
        figure = f"readability {baseline.score:.1f} -> {score:.1f} ({delta:+.1f})"
        if delta >= self.min_gain:
            return Verdict(True, figure, score)
        return Verdict(False, f"not more readable: {figure}, needs +{self.min_gain:g}", score)

    def improvement(self, new: float, old: float) -> float:
        return new - old


def scorer_for(task: TaskSpec) -> Scorer:
    if task.scorer == "speedup":
        return SpeedupScorer()
    if task.scorer == "readability":
        return ReadabilityScorer(task.min_improvement)
    raise UsageError(f"task '{task.name}' names an unknown scorer '{task.scorer}'")
