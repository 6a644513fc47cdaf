"""`coderefine optimize FILE` and `coderefine readability FILE`: one verified run on one file."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coderefine.commands.runs import Output, run_and_report, settings_start
from coderefine.refine.run import RunOptions
from coderefine.settings import resolve_settings


@dataclass(frozen=True)
class RefineArgs:
    task: str  # "optimize" or "readability": the command's name
    file: Path
    flags: Mapping[str, Any]  # the setting options as given (None: not given)
    function: str | None = None
    tests: Path | None = None
    root: Path | None = None
    script: Path | None = None
    write: bool = False
    report: Path | None = None
    sarif: Path | None = None
    trace: Path | None = None
    bench: str | None = None
    pass_env: tuple[str, ...] = ()
    keep_workspaces: bool = False


def refine_file(args: RefineArgs, output: Output) -> int:
    """Refine one file and report; the exit code (a run that failed raises its error, reports written)."""

    def options() -> RunOptions:
        return RunOptions(
            task=args.task,
            file=args.file,
            settings=resolve_settings(args.flags, settings_start(args.file)),
            function=args.function,
            tests=args.tests,
            root=args.root,
            script=args.script,
            write=args.write,
            trace=args.trace,
            pass_env=args.pass_env,
            keep_workspaces=args.keep_workspaces,
            bench=args.bench,
        )

    return run_and_report(args.task, str(args.file), options, output, args.report, args.sarif)
