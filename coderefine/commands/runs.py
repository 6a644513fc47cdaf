"""What every command that makes refine runs shares: one run rendered, and its reports written.

A run never raises for what ends it early (`refine.run.execute` puts that in `Result.error`, with its exit
code); the commands here write the reports also for a failed run, then hand the error on as `RunFailed`
for the error boundary to tell.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from coderefine.errors import CoderefineError, RunFailed, WriteConflict
from coderefine.records import INSUFFICIENT_TESTS, Result
from coderefine.refine.run import RunOptions, execute, unstarted
from coderefine.reports.console import ConsoleView, render_result
from coderefine.writeback import write_text_atomically


@dataclass(frozen=True)
class Output:
    """Where a command renders: the run's progress and results on stdout, notices on stderr."""

    stdout: Console
    stderr: Console
    quiet: bool = False
    debug: bool = False

    def notice(self, text: str) -> None:
        self.stderr.print(text, markup=False, highlight=False, soft_wrap=True)


def run_once(task: str, file: str, make_options: Callable[[], RunOptions], output: Output) -> Result:
    """One run, rendered: the whole result when it ran to its end, what it verified when it did not."""
    view = ConsoleView(output.stdout, quiet=output.quiet)
    try:
        result = execute(make_options(), view)
    except CoderefineError as exc:  # the options themselves are wrong (a flag, pyproject.toml, a trace)
        result = unstarted(task, file, exc)
    finally:
        view.close()
    if result.error is None or result.status == INSUFFICIENT_TESTS:
        render_result(output.stdout, result)
    elif result.iterations:  # what was verified before the failure is shown, not lost
        render_result(output.stdout, result, show_diff=False)
    return result


def run_and_report(
    task: str,
    file: str,
    make_options: Callable[[], RunOptions],
    output: Output,
    report: Path | None = None,
    sarif: Path | None = None,
) -> int:
    """Run, render, write the reports (also on failure); the exit code, or the run's error raised."""
    result = run_once(task, file, make_options, output)
    if report is not None:
        write_report(report, result)
    if sarif is not None:
        write_sarif(sarif, [result], task)
    return exit_code(result, output, "interrupted: nothing was written")


def exit_code(result: Result, output: Output, interrupted: str) -> int:
    """0 for a run that ended by itself; an interrupted run says so; a failed one raises its error."""
    if result.interrupted:
        output.notice(interrupted)
        return result.error.code if result.error else 0
    if result.error is not None:
        raise RunFailed(result.error)
    return 0


def settings_start(file: Path) -> Path:
    """Where a run's settings are looked up: the file's folder (the nearest pyproject.toml above it)."""
    return file.parent if file.parent.is_dir() else Path.cwd()


def write_report(path: Path, result: Result) -> None:
    from coderefine.reports.json_report import render_json

    try:
        write_text_atomically(path, render_json(result))
    except OSError as exc:
        raise WriteConflict(f"cannot write the report to {path}: {exc.strerror}") from None


def write_sarif(path: Path, runs: Sequence[Result], category: str) -> None:
    from coderefine.reports.sarif import refine_log, render_sarif, repository_root

    start = Path(runs[0].file) if runs else Path.cwd()
    try:
        write_text_atomically(path, render_sarif(refine_log(list(runs), repository_root(start), category)))
    except OSError as exc:
        raise WriteConflict(f"cannot write the SARIF log to {path}: {exc.strerror}") from None
