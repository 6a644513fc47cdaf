"""`coderefine refine FILES...`: one verified run per file (the pre-commit hook coderefine-refine).

A file that cannot be refined is told in one line and the others still run; the exit code is the first
failure's. With --write each verified improvement is written atomically; a file with none is left as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coderefine.commands.runs import Output, run_once, settings_start, write_sarif
from coderefine.errors import ExitCode, UsageError
from coderefine.records import Result, RunError
from coderefine.refine.run import RunOptions
from coderefine.settings import resolve_settings

TASKS = ("readability", "optimize")


@dataclass(frozen=True)
class RefineFilesArgs:
    files: Sequence[Path]
    task: str
    flags: Mapping[str, Any]  # the setting options as given (None: not given)
    tests: Path | None = None
    root: Path | None = None
    script: Path | None = None
    write: bool = False
    sarif: Path | None = None
    pass_env: tuple[str, ...] = ()


def refine_files(args: RefineFilesArgs, output: Output, report_error: Callable[[str], None]) -> int:
    """Each file's run, rendered under its name; `report_error` tells a failed file's error and goes on."""
    if args.task not in TASKS:
        raise UsageError(f"--task must be readability or optimize, not {args.task!r}")
    runs: list[Result] = []
    first_error: RunError | None = None
    for file in args.files:

        def options(file: Path = file) -> RunOptions:
            return RunOptions(
                task=args.task,
                file=file,
                settings=resolve_settings(args.flags, settings_start(file)),
                tests=args.tests,
                root=args.root,
                script=args.script,
                write=args.write,
                pass_env=args.pass_env,
            )

        output.stdout.print(f"== {file}", markup=False, highlight=False)
        result = run_once(args.task, str(file), options, output)
        runs.append(result)
        if result.interrupted:
            output.notice("interrupted: nothing more was written")
            return int(ExitCode.INTERRUPTED)
        if result.error is not None:
            report_error(result.error.message)
            first_error = first_error or result.error
    if args.sarif is not None:
        write_sarif(args.sarif, runs, "refine")
    return first_error.code if first_error is not None else 0
