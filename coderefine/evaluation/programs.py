"""Targets that their tests run as programs (stdin -> stdout): the host's half.

The sandbox records the runs the tests make (an interpreter start-up hook, see
`coderefine_sandbox.programs`), replays them run by run on each candidate, and times both versions as
whole processes. Here: the request's `ProgramSpec`, the user's timing inputs (`--timing-inputs`), the
baseline's figures as records, and the sufficiency gate over runs.
"""

from __future__ import annotations

import ast
import glob
import shutil
import sys
from dataclasses import replace
from pathlib import Path

from coderefine.errors import BadTimingInputs
from coderefine.evaluation.project import Project
from coderefine.evaluation.protocol import ProgramBaseline, ProgramSpec
from coderefine.evaluation.settings import EvaluationSettings
from coderefine.evaluation.verdicts import judge_runs
from coderefine.records import BaselineFacts, BehaviorReport, Evaluation, ProgramFacts, TargetEvidence

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MAX_RUN_BYTES = 16 * 1024 * 1024  # stdin and files read, per recorded run


def resolve_timing_inputs(patterns: tuple[str, ...], root: Path) -> tuple[str, ...]:
    """`--timing-inputs` globs (relative to the current folder, else to the project root) as files relative
    to the project root, and generators `FILE.py::NAME` (a function returning the stdin texts), checked
    before any sandbox starts."""
    found: list[str] = []
    for pattern in patterns:
        if "::" in pattern:  # a generator: FILE.py::NAME, called in the sandbox during the baseline
            found.append(_generator(pattern, root))
            continue
        files = _matches(pattern, Path.cwd()) or _matches(pattern, root)
        if not files:
            raise BadTimingInputs(f"--timing-inputs {pattern}: no file matches it (here or under {root})")
        for file in files:
            if root not in file.parents:
                raise BadTimingInputs(
                    f"--timing-inputs {pattern}: {file} is outside the project root {root}; it must be copied with it"
                )
            relative = file.relative_to(root).as_posix()
            if relative not in found:
                found.append(relative)
    return tuple(found)


def _generator(entry: str, root: Path) -> str:
    text, name = entry.rsplit("::", 1)
    files = _matches(text, Path.cwd()) or _matches(text, root)
    if len(files) != 1 or files[0].suffix != ".py":
        raise BadTimingInputs(f"--timing-inputs {entry}: {text} is not one Python file (here or under {root})")
    if root not in files[0].parents:
        raise BadTimingInputs(f"--timing-inputs {entry}: {files[0]} is outside the project root {root}")
    try:
        tree = ast.parse(files[0].read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError) as exc:
        raise BadTimingInputs(f"--timing-inputs {entry}: {text} cannot be parsed: {exc}") from None
    if not any(isinstance(node, ast.FunctionDef) and node.name == name for node in tree.body):
        raise BadTimingInputs(f"--timing-inputs {entry}: {text} defines no top-level function {name}")
    return f"{files[0].relative_to(root).as_posix()}::{name}"


def _matches(pattern: str, base: Path) -> list[Path]:
    full = pattern if Path(pattern).is_absolute() else str(base / pattern)
    return [Path(match).resolve() for match in sorted(glob.glob(full, recursive=True)) if Path(match).is_file()]


WRAPPER_BYTES = 64 * 1024  # pip's console-script wrappers are a few lines


def console_script_runs(module_name: str, python: str, root: Path) -> bool:
    """Whether a console script runs the module, so that its runs are worth recording though it is no
    script itself: an entry point `pkg.mod:func` of the project's pyproject.toml, or a wrapper in the
    interpreter's bin folder that imports it (pip's `from pkg.mod import main`)."""
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    project = data.get("project", {}) if isinstance(data, dict) else {}
    for table in ("scripts", "gui-scripts"):
        entries = project.get(table, {}) if isinstance(project, dict) else {}
        if any(str(value).split(":")[0].strip() == module_name for value in dict(entries).values()):
            return True
    interpreter = shutil.which(python) or python
    needle = f"from {module_name} import ".encode()
    try:
        files = [path for path in Path(interpreter).parent.iterdir() if path.is_file()]
    except OSError:
        return False
    for path in files:
        try:
            if path.stat().st_size > WRAPPER_BYTES:
                continue
            with path.open("rb") as fh:
                head = fh.read(4096)
        except OSError:
            continue
        if head.startswith(b"#!") and needle in head:
            return True
    return False


def program_spec(settings: EvaluationSettings, project: Project, baseline_io: Path) -> ProgramSpec:
    output = settings.output_match
    assert output in ("exact", "whitespace", "numeric")
    return ProgramSpec(
        file=project.target.as_posix(),
        runs_path=str(baseline_io / "runs.json"),
        output=output,
        compare_stderr=settings.compare_stderr,
        max_runs=settings.max_runs,
        max_bytes=MAX_RUN_BYTES,
        timing_inputs=settings.timing_inputs,
        repeats=settings.program_repeats,
    )


def program_facts(report: ProgramBaseline) -> ProgramFacts:
    return ProgramFacts(
        runs=report.runs,
        replayable=report.replayable,
        usable=report.usable,
        problems=dict(report.problems),
        startup_seconds=report.startup_seconds,
        run_seconds=report.run_seconds,
        timing_runs=report.timing_runs,
        timing_inputs=report.timing_inputs,
    )


def timing_note(facts: ProgramFacts) -> str | None:
    """What the feedback should know when the recorded runs are too short to time honestly."""
    share = facts.startup_share
    if share is None or not facts.too_short or facts.startup_seconds is None or facts.run_seconds is None:
        return None
    per_run = facts.run_seconds / max(1, facts.timing_runs)
    source = "timing inputs" if facts.timing_inputs else "recorded runs"
    return (
        f"The {source} are too short to time honestly: a run takes {per_run * 1000:.1f} ms, "
        f"{share:.0%} of it interpreter start-up ({facts.startup_seconds * 1000:.1f} ms), which no change to "
        "the program can speed up; only the whole process is compared, so a gain in the program's own work "
        "hardly shows. Larger stdin files for timing (--timing-inputs) would show it."
    )


def baseline_facts(
    report: ProgramBaseline,
    evidence: tuple[TargetEvidence, ...],
    run: Evaluation,
    settings: EvaluationSettings,
    pinned: tuple[str, ...],
) -> BaselineFacts:
    """The baseline of a program judged by its recorded runs (`run`: the sandbox run's tests, metrics, times)."""
    facts = program_facts(report)
    behavior = BehaviorReport(calls_compared=facts.usable, mismatches=0, skipped=facts.runs - facts.usable, unit="run")
    evaluation = replace(run, behavior=behavior)
    sufficiency = judge_runs(
        evidence,
        min_runs=settings.min_runs,
        min_coverage=settings.min_coverage,
        allowed=settings.allow_insufficient_tests,
        problems=facts.problems,
    )
    return BaselineFacts(
        evaluation,
        facts.usable,
        1 if facts.run_seconds is not None else None,
        facts.run_seconds,
        evidence=evidence,
        sufficiency=sufficiency,
        pinned=(*pinned, "random seeded with 0 at the start of every program run"),
        not_pinned=("the wall clock, os.urandom and other entropy a program reads itself",),
        program=facts,
    )


def as_runs(evaluation: Evaluation) -> Evaluation:
    """A program's evaluation says "runs" where a module's says "calls"."""
    if evaluation.behavior is None:
        return evaluation
    return replace(evaluation, behavior=replace(evaluation.behavior, unit="run"))
