"""Verified changes to functions of the same file, merged into one version of the file and verified again
together before anything is written: two changes each verified alone may still break each other."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from coderefine.fences import fenced
from coderefine.records import Result
from coderefine.refine.merge import merge_definitions
from coderefine.refine.options import RunOptions
from coderefine.refine.run import execute
from coderefine.settings import Settings, Value
from coderefine.sweep.jobs import FunctionOutcome

_STOP = "Merged verified changes of this file; nothing is left to improve.\nVERDICT: STOP"


@dataclass(frozen=True)
class FilePlan:
    """What a file becomes: the merged code, which functions it carries, and how that was verified."""

    file: str
    code: str | None  # None: nothing verified to write
    functions: tuple[str, ...]
    verified_by: str  # "its own run" (one change), "merged run" (several, verified together), or why none
    speedup: float | None = None
    dropped: tuple[str, ...] = ()  # verified alone, left out because the merge did not verify


def merge_code(original: str, outcomes: Sequence[FunctionOutcome]) -> str:
    """Each outcome's function (and the helpers and imports it added) merged into the original, in turn."""
    code = original
    for outcome in outcomes:
        assert outcome.best_code is not None
        code = merge_definitions(code, outcome.best_code, (outcome.function,)).code
    return code


def _verify_settings(settings: Settings) -> Settings:
    values = dict(settings.values)
    # One candidate, the merge itself, judged by every recorded call of the file's functions. The gate was
    # met by each function's own run; functions of the file no test calls must not stop this check.
    values["allow_insufficient_tests"] = Value(True, "sweep merge")
    values["max_iterations"] = Value(1, "sweep merge")
    values["provider"] = Value("scripted", "sweep merge")
    return Settings(values, settings.pyproject)


def verify_merged(root: Path, file: str, code: str, settings: Settings, tests: Path | None, task: str) -> Result:
    with tempfile.TemporaryDirectory(prefix="coderefine-merge-") as scratch:
        script = Path(scratch) / "merge.json"
        message = f"The verified changes merged:\n{fenced(code, 'python')}\n"
        script.write_text(json.dumps({"generate": [message], "feedback": [_STOP]}), encoding="utf-8")
        options = RunOptions(
            task=task, file=root / file, settings=_verify_settings(settings), tests=tests, root=root, script=script
        )
        return execute(options)


def plan_file(
    root: Path,
    file: str,
    original: str,
    outcomes: Sequence[FunctionOutcome],
    settings: Settings,
    tests: Path | None,
    task: str,
) -> FilePlan:
    verified = sorted((o for o in outcomes if o.verified), key=lambda o: -(o.speedup or 0.0))
    if not verified:
        return FilePlan(file, None, (), "nothing verified")
    if len(verified) == 1:
        only = verified[0]
        return FilePlan(file, only.best_code, (only.function,), "its own run", only.speedup)
    merged = merge_code(original, verified)
    result = verify_merged(root, file, merged, settings, tests, task)
    best = result.best
    if result.status == "improved" and best is not None and best.candidate is not None and result.error is None:
        timing = best.evaluation.timing if best.evaluation is not None else None
        names = tuple(o.function for o in verified)
        return FilePlan(file, best.candidate.code, names, "merged run", timing.speedup if timing else None)
    # The changes do not verify together: keep the fastest one, verified by its own run.
    first = verified[0]
    why = result.error.message if result.error is not None else result.stop_reason
    return FilePlan(
        file,
        first.best_code,
        (first.function,),
        f"its own run (the merge did not verify: {why})",
        first.speedup,
        tuple(o.function for o in verified[1:]),
    )
