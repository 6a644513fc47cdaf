"""The `coderefine` command line: the typer app. Each command parses its options into its command's
arguments and runs it inside the one error boundary; the commands themselves are in `coderefine.commands`.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Annotated

import typer

from coderefine import __version__
from coderefine.cli.boundary import print_error, tell
from coderefine.cli.options import (
    ALL_SETTINGS,
    CHECK_SETTINGS,
    RUN_SETTINGS,
    Group,
    given_settings,
    settings_command,
    settings_in,
)
from coderefine.cli.params import Debug, File, PassEnv, Quiet, Report, Root, Sarif, Script, Tests, Write
from coderefine.cli.running import in_boundary, output, stdout
from coderefine.cli.sandbox import sandbox_app
from coderefine.cli.sweep import SCAN_SETTINGS, scan_command, sweep_command
from coderefine.errors import ExitCode
from coderefine.github import MAX_COMMENTS

# The refinement machinery (libcst, the providers, the sandboxes) is imported inside the commands that
# use it: `coderefine check` runs as a pre-commit hook on every commit and must start in a blink.

app = typer.Typer(
    name="coderefine",
    cls=Group,
    help="Make Python code faster or more readable; every change is proven by running it.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


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


@in_boundary
def refine_command(
    ctx: typer.Context,
    file: File,
    function: Annotated[
        str | None, typer.Option("--function", "-f", metavar="NAME", help="Only this function (or Class.method).")
    ] = None,
    tests: Tests = None,
    root: Root = None,
    write: Write = False,
    report: Report = None,
    bench: Annotated[
        str | None,
        typer.Option(
            metavar="FILE[::NAME]",
            help="Time FILE's bench* functions (or FILE::NAME) instead of the calls the tests make (optimize).",
            rich_help_panel="Loop",
        ),
    ] = None,
    sarif: Sarif = None,
    trace: Annotated[
        Path | None,
        typer.Option(metavar="DIR", help="Save every request and answer here; `coderefine replay DIR` reruns it."),
    ] = None,
    script: Script = None,
    pass_env: PassEnv = None,
    keep_workspaces: Annotated[bool, typer.Option(hidden=True)] = False,
    quiet: Quiet = False,
    debug: Debug = False,
) -> int:
    from coderefine.commands.runs import run_and_report, settings_start
    from coderefine.refine.options import RunOptions
    from coderefine.settings import resolve_settings

    task = ctx.info_name or "optimize"
    flags = given_settings(ctx)

    def options() -> RunOptions:  # made inside the run: bad settings still give a Result and its reports
        return RunOptions(
            task=task,
            file=file,
            settings=resolve_settings(flags, settings_start(file)),
            function=function,
            tests=tests,
            root=root,
            script=script,
            write=write,
            trace=trace,
            pass_env=tuple(pass_env or ()),
            keep_workspaces=keep_workspaces,
            bench=bench,
        )

    return run_and_report(task, str(file), options, output(quiet, debug), report, sarif)


_RunCommand = settings_command(*RUN_SETTINGS)
app.command("optimize", cls=_RunCommand, help="Make FILE faster; only verified, measurably faster versions are kept.")(
    refine_command
)
app.command(
    "readability", cls=_RunCommand, help="Make FILE more readable; only verified, higher-scoring versions are kept."
)(refine_command)


@app.command("refine", cls=_RunCommand)
@in_boundary
def refine_files_command(
    ctx: typer.Context,
    files: Annotated[
        list[Path],
        typer.Argument(metavar="FILES", help="The Python files to refine, one run each.", show_default=False),
    ],
    task: Annotated[str, typer.Option(metavar="NAME", help="readability or optimize.")] = "readability",
    tests: Tests = None,
    root: Root = None,
    write: Write = False,
    sarif: Sarif = None,
    script: Script = None,
    pass_env: PassEnv = None,
    quiet: Quiet = False,
    debug: Debug = False,
) -> int:
    """Refine several FILES, one verified run each (the pre-commit hook coderefine-refine).

    With --write each verified improvement is written atomically; a file with none is left as it was.

    A file that cannot be refined is reported in one line, the others still run, and the exit code is its."""
    from coderefine.commands.refine_files import refine_files
    from coderefine.commands.runs import settings_start
    from coderefine.refine.options import RunOptions
    from coderefine.settings import resolve_settings

    flags = given_settings(ctx)

    def options(file: Path) -> RunOptions:  # each file's own settings (the pyproject.toml nearest to it)
        return RunOptions(
            task=task,
            file=file,
            settings=resolve_settings(flags, settings_start(file)),
            tests=tests,
            root=root,
            script=script,
            write=write,
            pass_env=tuple(pass_env or ()),
        )

    return refine_files(task, files, options, output(quiet, debug), functools.partial(tell, debug=debug), sarif)


@app.command("replay", cls=settings_command("sandbox", "image"))
@in_boundary
def replay_command(
    ctx: typer.Context,
    trace_dir: Annotated[Path, typer.Argument(metavar="DIR", help="A folder written by --trace.", show_default=False)],
    report: Report = None,
    quiet: Quiet = False,
    debug: Debug = False,
) -> int:
    """Rerun a traced run with its recorded answers: no model, no network, no cost."""
    from coderefine.commands.replay import replay

    return replay(trace_dir, given_settings(ctx), output(quiet, debug), report)


@app.command("config", cls=settings_command(*ALL_SETTINGS))
@in_boundary
def config_command(
    ctx: typer.Context,
    path: Annotated[
        Path | None,
        typer.Argument(metavar="PATH", help="File or folder whose pyproject.toml applies (default: here)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    debug: Debug = False,
) -> int:
    """Print the effective settings, where each comes from, and which provider a run would use."""
    from coderefine.commands.config import show_config

    return show_config(path, given_settings(ctx), as_json, stdout)


@app.command("check", cls=settings_command(*CHECK_SETTINGS))
@in_boundary
def check_command(
    ctx: typer.Context,
    files: Annotated[list[Path], typer.Argument(metavar="FILES", help="Python files to check.", show_default=False)],
    output_format: Annotated[
        str, typer.Option("--format", metavar="[text|json|sarif]", help="text, json or sarif (SARIF 2.1.0).")
    ] = "text",
    output: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="Write the findings in --format to this file (text still goes to stdout)."),
    ] = None,
    debug: Debug = False,
) -> int:
    """Deterministic thresholds (complexity, maintainability, readability) on FILES: no model, no network.

    Exits 0 when every file is within them, 16 when there are findings, 3-6 when a file cannot be checked."""
    from coderefine.commands.check import CheckArgs, run_check

    return run_check(CheckArgs(files, given_settings(ctx), output_format, output), print_error)


@app.command("review", cls=settings_command(*ALL_SETTINGS))
@in_boundary
def review_command(
    ctx: typer.Context,
    task: Annotated[str, typer.Option(metavar="NAME", help="optimize or readability.")] = "optimize",
    paths: Annotated[
        list[str] | None,
        typer.Option(
            "--paths",
            metavar="GLOBS",
            help="Globs limiting the files reviewed (repeatable, or separated by commas or newlines; fnmatch: "
            "* also matches /).",
        ),
    ] = None,
    max_comments: Annotated[
        int, typer.Option(min=1, max=MAX_COMMENTS, metavar="N", help="Most suggestions in the review.")
    ] = MAX_COMMENTS,
    tests: Tests = None,
    script: Script = None,
    pass_env: PassEnv = None,
    quiet: Quiet = False,
    debug: Debug = False,
) -> int:
    """Review a pull request in GitHub Actions: verified suggestions on the functions it changed.

    Reads GITHUB_EVENT_PATH, GITHUB_REPOSITORY, GITHUB_API_URL, GITHUB_TOKEN and GITHUB_WORKSPACE."""
    from coderefine.commands.review import path_globs, review
    from coderefine.github.review import ReviewOptions

    options = ReviewOptions(task, path_globs(paths or ()), max_comments, tests, script, tuple(pass_env or ()))
    return review(options, given_settings(ctx), output(quiet, debug))


@app.command("bench", cls=_RunCommand)
@in_boundary
def bench_command(
    ctx: typer.Context,
    suite_dir: Annotated[
        Path, typer.Argument(metavar="SUITE_DIR", help="A folder with one folder per task.", show_default=False)
    ],
    task: Annotated[str | None, typer.Option(metavar="NAME", help="optimize or readability.")] = None,
    script_dir: Annotated[
        Path | None,
        typer.Option(
            metavar="DIR", help="Scripted provider: DIR/<task id>.json is each task's script.", rich_help_panel="Model"
        ),
    ] = None,
    oracle: Annotated[
        bool, typer.Option("--oracle", help="Offer each task's reference.py as the candidate (the ceiling).")
    ] = False,
    jobs: Annotated[int, typer.Option(metavar="N", help="Tasks run at once; timing runs never overlap.")] = 1,
    limit: Annotated[
        int | None, typer.Option(metavar="N", help="Only the first N tasks (in natural order of names).")
    ] = None,
    report: Annotated[
        Path | None, typer.Option(metavar="FILE", help="Write the JSON bench report to this file.")
    ] = None,
    html: Annotated[
        Path | None, typer.Option(metavar="FILE", help="Write the HTML bench report (self-contained) here.")
    ] = None,
    state: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE", help="Finished tasks are saved here (JSON lines); default under .coderefine/bench/."
        ),
    ] = None,
    fresh: Annotated[bool, typer.Option("--fresh", help="Ignore finished tasks saved by an earlier run.")] = False,
    pass_env: PassEnv = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only the summary.")] = False,
    debug: Debug = False,
) -> int:
    """Run every task of SUITE_DIR in its own copy and report % improved, speedups or score gains, and
    the per-iteration curve. Finished tasks are saved as they end: rerun the same command to continue."""
    from coderefine.bench.runner import BenchRequest
    from coderefine.commands.bench import run_bench_command

    request = BenchRequest(
        suite_dir, given_settings(ctx), task, script_dir, oracle, jobs, limit, state, fresh, tuple(pass_env or ())
    )
    return run_bench_command(request, stdout, report, html, quiet)


@app.command("reach", cls=settings_command("sandbox", "image", "memory_mb"))
@in_boundary
def reach_command(
    ctx: typer.Context,
    path: Annotated[
        Path | None,
        typer.Argument(metavar="PATH", help="A file or folder of the project (default: here).", show_default=False),
    ] = None,
    root: Root = None,
    jobs: Annotated[
        int, typer.Option(metavar="N", help="Worker processes, each tracing a share of the test files.")
    ] = 1,
    limit: Annotated[
        float, typer.Option(metavar="S", help="Time limit in seconds for each worker's test run.")
    ] = 3600.0,
    full: Annotated[bool, typer.Option("--full", help="Ignore the cached map: trace every test again.")] = False,
    engine: Annotated[
        str, typer.Option(metavar="NAME", help="Where the workers run: local, or ray (a Ray cluster).")
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(metavar="ADDR", help="--engine ray: the cluster, auto, HOST:PORT or ray://HOST:PORT."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
    pass_env: PassEnv = None,
    debug: Debug = False,
) -> int:
    """Build the project's reach map: which tests execute which of its functions (cached, incremental).

    Later `optimize` runs judge a function with every test that reaches it in the map. A second build
    re-traces only the tests a change can have affected."""
    from coderefine.cli.running import settings_at
    from coderefine.commands.reach import ReachOptions, reach

    settings = settings_at(ctx, path)
    options = ReachOptions(path, root, settings, jobs, limit, full, as_json, engine, tuple(pass_env or ()), ray_address)
    return reach(options, stdout)


# `coderefine scan` and `coderefine sweep` (a whole project): declared in their own module.
app.command("scan", cls=settings_command(*SCAN_SETTINGS))(scan_command)
app.command("sweep", cls=settings_command(*RUN_SETTINGS, *settings_in("Sweep")))(sweep_command)

app.add_typer(sandbox_app, name="sandbox")


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:  # while typer parses, before a command's boundary
        sys.exit(int(ExitCode.INTERRUPTED))


if __name__ == "__main__":
    main()
