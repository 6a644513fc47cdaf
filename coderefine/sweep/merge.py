"""Verified changes to functions of the same file, merged into one version of the file and verified again
together before anything is written: two changes each verified alone may still break each other."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from coderefine.errors import CoderefineError
from coderefine.evaluation.evaluator import SandboxEvaluator
from coderefine.evaluation.project import resolve_project
from coderefine.evaluation.settings import EvaluationSettings
from coderefine.refine.candidate import original_candidate
from coderefine.refine.merge import merge_definitions
from coderefine.sandboxes.registry import make_sandbox
from coderefine.settings import Settings
from coderefine.source import resolve_targets
from coderefine.sweep.jobs import FunctionOutcome


@dataclass(frozen=True)
class FilePlan:
    """What a file becomes: the merged code, which functions it carries, and how that was verified."""

    file: str
    code: str | None  # None: nothing verified to write
    functions: tuple[str, ...]
    verified_by: str  # "its own run" (one change), "merged run" (several, verified together), or why none
    speedup: float | None = None
    dropped: tuple[str, ...] = ()  # verified alone, left out because the merge did not verify

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FilePlan:
        return cls(**{**data, "functions": tuple(data["functions"]), "dropped": tuple(data["dropped"])})


def plan_key(file: str, original_sha256: str, outcomes: Sequence[FunctionOutcome]) -> str:
    """What a file's plan depends on: the file as it was, and the verified code of each of its functions."""
    parts = [file, original_sha256, *sorted(f"{o.function}\0{o.best_code}" for o in outcomes if o.verified)]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def merge_code(original: str, outcomes: Sequence[FunctionOutcome]) -> str:
    """Each outcome's function (and the helpers and imports it added) merged into the original, in turn."""
    code = original
    for outcome in outcomes:
        assert outcome.best_code is not None
        code = merge_definitions(code, outcome.best_code, (outcome.function,)).code
    return code


def verify_merged(
    root: Path, file: str, original: str, code: str, settings: Settings, tests: Path | None, pass_env: tuple[str, ...]
) -> tuple[bool, str]:
    """The merged file judged as a candidate for every function of the file: its tests pass and every
    recorded call replays identically. Each change's speed was proven by its own run; what only the merge
    can break is behaviour, so no timing here (timing a sum of proven speedups again would only add cost)."""
    path = root / file
    project = resolve_project(path, tests, root)
    targets = resolve_targets(original, None, path)
    # Each function's own run passed the sufficiency gate already; the merge is judged on whatever it records.
    evaluation_settings = EvaluationSettings.from_settings(
        settings, measure_speed=False, targets=targets, pass_env=pass_env
    )
    evaluation_settings = replace(evaluation_settings, min_calls=0, min_coverage=0.0, allow_insufficient_tests=True)
    evaluator = SandboxEvaluator(project, targets, make_sandbox(settings.sandbox, settings.image), evaluation_settings)
    try:
        evaluator.baseline(original)
        evaluation = evaluator.evaluate(replace(original_candidate(code), origin="merge"))
    finally:
        evaluator.close()
    if evaluation.error is not None:
        return False, evaluation.error
    tests_report, behavior = evaluation.tests, evaluation.behavior
    if tests_report is None or not tests_report.all_passed:
        failed = tests_report.failed if tests_report is not None else "?"
        return False, f"the merged file fails {failed} test(s)"
    if behavior is not None and not behavior.equivalent:
        return False, f"the merged file changes {behavior.mismatches} recorded call(s)"
    compared = behavior.calls_compared if behavior is not None else 0
    return True, f"{tests_report.passed} tests passed, {compared} recorded calls replayed identically"


def plan_file(
    root: Path,
    file: str,
    original: str,
    outcomes: Sequence[FunctionOutcome],
    settings: Settings,
    tests: Path | None,
    pass_env: tuple[str, ...] = (),
) -> FilePlan:
    verified = sorted((o for o in outcomes if o.verified), key=lambda o: -(o.speedup or 0.0))
    if not verified:
        return FilePlan(file, None, (), "nothing verified")
    if len(verified) == 1:
        only = verified[0]
        return FilePlan(file, only.best_code, (only.function,), "its own run", only.speedup)
    merged = merge_code(original, verified)
    try:
        ok, why = verify_merged(root, file, original, merged, settings, tests, pass_env)
    except CoderefineError as exc:
        ok, why = False, exc.message
    if ok:
        return FilePlan(file, merged, tuple(o.function for o in verified), f"merged run ({why})")
    # The changes do not verify together: keep the fastest one, verified by its own run.
    first = verified[0]
    return FilePlan(
        file,
        first.best_code,
        (first.function,),
        f"its own run (the merge did not verify: {why})",
        first.speedup,
        tuple(o.function for o in verified[1:]),
    )
