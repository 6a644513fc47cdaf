"""`coderefine refine FILES...`: one verified run per file (the pre-commit hook coderefine-refine).

A file that cannot be refined is told in one line and the others still run; the exit code is the first
failure's. With --write each verified improvement is written atomically; a file with none is left as it was.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path

from coderefine.commands.runs import Output, run_once, write_sarif
from coderefine.errors import ExitCode, UsageError
from coderefine.records import Result, RunError
from coderefine.refine.run import RunOptions

TASKS = ("readability", "optimize")


def refine_files(
    task: str,
    files: Sequence[Path],
    options_for: Callable[[Path], RunOptions],
    output: Output,
    report_error: Callable[[RunError], object],
    sarif: Path | None = None,
) -> int:
    """Each file's run, rendered under its name; `report_error` tells a failed file's error and goes on.
    `options_for(file)` makes that file's options inside its run, so that its bad settings fail it alone."""
    if task not in TASKS:
        raise UsageError(f"--task must be readability or optimize, not {task!r}")
    runs: list[Result] = []
    first_error: RunError | None = None
    for file in files:
        output.stdout.print(f"== {file}", markup=False, highlight=False)
        result = run_once(task, str(file), functools.partial(options_for, file), output)
        runs.append(result)
        if result.interrupted:
            output.notice("interrupted: nothing more was written")
            return int(ExitCode.INTERRUPTED)
        if result.error is not None:
            report_error(result.error)
            first_error = first_error or result.error
    if sarif is not None:
        write_sarif(sarif, runs, "refine")
    return first_error.code if first_error is not None else 0
