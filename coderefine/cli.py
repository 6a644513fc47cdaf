"""The `coderefine` command line. Thin: parse options, run, render, map errors to exit codes."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from coderefine import __version__
from coderefine.errors import CoderefineError, ExitCode
from coderefine.records import Result
from coderefine.reports.console import ConsoleView, render_result
from coderefine.reports.json_report import render_json
from coderefine.run import RunOptions, execute, prepare_result
from coderefine.writeback import write_text_atomically

app = typer.Typer(
    name="coderefine",
    help="Make Python code faster or more readable; every change is proven by running it.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

stdout = Console(highlight=False)
stderr = Console(stderr=True, highlight=False)


def _version(value: bool) -> None:
    if value:
        stdout.print(f"coderefine {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool | None,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit."),
    ] = None,
) -> None:
    """coderefine: Self-Refine for Python, grounded in execution."""


def refine_command(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="The Python file to refine.", show_default=False)],
    function: Annotated[
        str | None, typer.Option("--function", "-f", help="Only this function (or Class.method).")
    ] = None,
    tests: Annotated[Path | None, typer.Option(help="Test file or folder (default: the project's tests).")] = None,
    root: Annotated[
        Path | None,
        typer.Option(
            help="Project root (default: nearest folder with pyproject.toml, setup.cfg, pytest.ini, tox.ini or .git)."
        ),
    ] = None,
    provider: Annotated[str, typer.Option(help="offline (default, no model) or scripted.")] = "offline",
    script: Annotated[Path | None, typer.Option(help="JSON messages for --provider scripted.")] = None,
    max_iterations: Annotated[
        int | None, typer.Option(help="Most candidates to make (default from the task: 4).")
    ] = None,
    patience: Annotated[
        int | None, typer.Option(help="Refinement rounds without improvement before stopping (default 1).")
    ] = None,
    max_calls: Annotated[int | None, typer.Option(help="Most model calls in the run.")] = None,
    min_speedup: Annotated[
        float, typer.Option(help="Speedup the interval's lower bound must clear (0.05 = 5%).")
    ] = 0.05,
    write: Annotated[
        bool, typer.Option("--write", help="Apply the best verified candidate to FILE (atomically).")
    ] = False,
    report: Annotated[Path | None, typer.Option(help="Write the JSON report to this file.")] = None,
    trace: Annotated[Path | None, typer.Option(help="Save every prompt and answer (and a replay script) here.")] = None,
    sandbox: Annotated[str, typer.Option(help="auto, process (bubblewrap if present) or subprocess.")] = "auto",
    timeout: Annotated[
        float, typer.Option(help="Time limit in seconds for the original's test run; candidates get less.")
    ] = 300.0,
    memory_mb: Annotated[int, typer.Option(help="Memory limit per sandboxed process, in MiB.")] = 2048,
    pass_env: Annotated[
        list[str] | None, typer.Option("--pass-env", help="Environment variable the tests need (repeatable).")
    ] = None,
    timing_pairs: Annotated[int, typer.Option(help="Interleaved original/candidate process pairs per timing.")] = 6,
    keep_workspaces: Annotated[bool, typer.Option(hidden=True)] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only the final summary.")] = False,
    debug: Annotated[bool, typer.Option(hidden=True, help="Show tracebacks of internal errors.")] = False,
) -> None:
    options = RunOptions(
        task=ctx.info_name or "optimize",
        file=file,
        function=function,
        tests=tests,
        root=root,
        provider=provider,
        script=script,
        max_iterations=max_iterations,
        patience=patience,
        max_calls=max_calls,
        min_speedup=min_speedup,
        write=write,
        trace=trace,
        sandbox=sandbox,
        timeout=timeout,
        memory_mb=memory_mb,
        pass_env=tuple(pass_env or ()),
        timing_pairs=timing_pairs,
        keep_workspaces=keep_workspaces,
    )
    view = ConsoleView(stdout, quiet=quiet)
    result = prepare_result(options)
    error: CoderefineError | None = None
    interrupted = False
    try:
        execute(options, result, view)
    except CoderefineError as exc:
        error = exc
    except KeyboardInterrupt:
        interrupted = True
    except Exception as exc:  # a bug: one line for the user, the traceback only on request
        if debug:
            traceback.print_exc()
        error = CoderefineError(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)")
    finally:
        view.close()

    if error is None and not interrupted:
        render_result(stdout, result)
    elif interrupted:
        result.stop_reason = "interrupted"
        if result.iterations:
            render_result(stdout, result, show_diff=False)
    if report is not None:
        _write_report(report, result, error, interrupted)
    if interrupted:
        stderr.print("interrupted: nothing was written")
        raise typer.Exit(ExitCode.INTERRUPTED)
    if error is not None:
        stderr.print(f"error: {error.message}", markup=False, highlight=False)
        raise typer.Exit(int(error.exit_code))


def _write_report(path: Path, result: Result, error: CoderefineError | None, interrupted: bool) -> None:
    details = None
    if error is not None:
        result.status = "failed"
        details = {
            "code": int(error.exit_code),
            "kind": error.exit_code.name.lower(),
            "message": error.message,
        }
    elif interrupted:
        result.status = "failed"
        details = {"code": int(ExitCode.INTERRUPTED), "kind": "interrupted", "message": "interrupted"}
    try:
        write_text_atomically(path, render_json(result, details))
    except OSError as exc:
        stderr.print(f"error: cannot write the report to {path}: {exc.strerror}", markup=False)
        raise typer.Exit(int(ExitCode.WRITE_CONFLICT)) from None


app.command("optimize", help="Make FILE faster; only verified, measurably faster versions are kept.")(refine_command)
app.command("readability", help="Make FILE more readable; only verified, higher-scoring versions are kept.")(
    refine_command
)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(int(ExitCode.INTERRUPTED))


if __name__ == "__main__":
    main()
