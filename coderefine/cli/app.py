"""The `coderefine` command line. Thin: parse options, run, render, map errors to exit codes."""

from __future__ import annotations

import inspect
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from coderefine import __version__
from coderefine.errors import CoderefineError, ExitCode, InputFileNotFound, UsageError
from coderefine.github import MAX_COMMENTS
from coderefine.records import INSUFFICIENT_TESTS
from coderefine.sandboxes.images import BUILD_TAG
from coderefine.settings import SPEC_BY_NAME, resolve_settings
from coderefine.writeback import write_text_atomically

# The refinement machinery (libcst, the providers, the sandboxes) is imported inside the commands that
# use it: `coderefine check` runs as a pre-commit hook on every commit and must start in a blink.
if TYPE_CHECKING:
    from coderefine.records import Result, RunError
    from coderefine.refine.run import RunOptions

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


# Options shared by the commands that resolve settings (flag > env > pyproject > default). None means
# "not given", so that a lower-precedence source can supply the value.
_MODEL = "Model"
_LOOP = "Loop"
_SANDBOX = "Sandbox"
_VERDICT = "Verdict"
ProviderOpt = Annotated[
    str | None,
    typer.Option(
        help="openai, offline or scripted (default: openai when a key or base URL is configured, else offline).",
        rich_help_panel=_MODEL,
    ),
]
ModelOpt = Annotated[str | None, typer.Option(help="Model name (default gpt-4o-mini).", rich_help_panel=_MODEL)]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option(help="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1.", rich_help_panel=_MODEL),
]
ApiKeyEnvOpt = Annotated[
    str | None,
    typer.Option(help="Environment variable holding the API key (default OPENAI_API_KEY).", rich_help_panel=_MODEL),
]
TemperatureOpt = Annotated[float | None, typer.Option(help="Sampling temperature.", rich_help_panel=_MODEL)]
SeedOpt = Annotated[int | None, typer.Option(help="Sampling seed (endpoints that honour it).", rich_help_panel=_MODEL)]
RequestTimeoutOpt = Annotated[
    float | None, typer.Option(help="Seconds to wait for one answer (default 120).", rich_help_panel=_MODEL)
]
MaxRetriesOpt = Annotated[
    int | None,
    typer.Option(help="Retries with backoff on 429, 5xx and connection errors (default 2).", rich_help_panel=_MODEL),
]
MaxCallsOpt = Annotated[int | None, typer.Option(help="Most model calls in the run.", rich_help_panel=_MODEL)]
MaxTokensOpt = Annotated[
    int | None, typer.Option(help="Most tokens (prompt + answer) in the run.", rich_help_panel=_MODEL)
]
ContextTokensOpt = Annotated[
    int | None,
    typer.Option(help="Prompt budget; older attempts are left out beyond it (default 16000).", rich_help_panel=_MODEL),
]
CacheOpt = Annotated[
    bool | None,
    typer.Option("--cache/--no-cache", help="Reuse answers saved on disk (default: on).", rich_help_panel=_MODEL),
]
CacheDirOpt = Annotated[
    Path | None,
    typer.Option(help="Where answers are saved (default ~/.cache/coderefine/responses).", rich_help_panel=_MODEL),
]
MaxIterationsOpt = Annotated[
    int | None, typer.Option(help="Most candidates to make (default from the task: 4).", rich_help_panel=_LOOP)
]
PatienceOpt = Annotated[
    int | None,
    typer.Option(help="Refinement rounds without improvement before stopping (default 1).", rich_help_panel=_LOOP),
]
MinSpeedupOpt = Annotated[
    float | None,
    typer.Option(help="Speedup the interval's lower bound must clear (default 0.05 = 5%).", rich_help_panel=_LOOP),
]
SandboxOpt = Annotated[
    str | None,
    typer.Option(
        help="auto (Docker when an engine answers, else process), docker, process (bubblewrap if present) or "
        "subprocess.",
        rich_help_panel=_SANDBOX,
    ),
]
ImageOpt = Annotated[
    str | None,
    typer.Option(
        help="Docker image with its own Python (default: an offline image made from this interpreter).",
        rich_help_panel=_SANDBOX,
    ),
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        help="Time limit in seconds for the original's test run; candidates get less (default 300).",
        rich_help_panel=_SANDBOX,
    ),
]
MemoryOpt = Annotated[
    int | None, typer.Option(help="Memory limit per sandboxed process, MiB (default 2048).", rich_help_panel=_SANDBOX)
]
TimingPairsOpt = Annotated[
    int | None,
    typer.Option(help="Interleaved original/candidate process pairs per timing (default 6).", rich_help_panel=_SANDBOX),
]

RelTolOpt = Annotated[
    float | None,
    typer.Option(help="Relative tolerance for floats in recorded calls (default 1e-9).", rich_help_panel=_VERDICT),
]
AbsTolOpt = Annotated[
    float | None,
    typer.Option(help="Absolute tolerance for floats in recorded calls (default 0).", rich_help_panel=_VERDICT),
]
UnorderedOpt = Annotated[
    str | None,
    typer.Option(
        help="Targets whose returned list or tuple may come in any order, comma-separated (default: none).",
        rich_help_panel=_VERDICT,
    ),
]
MinCallsOpt = Annotated[
    int | None,
    typer.Option(
        help="Fewest usable recorded calls to the targets; fewer stops the run: insufficient tests (default 3).",
        rich_help_panel=_VERDICT,
    ),
]
MinCoverageOpt = Annotated[
    float | None,
    typer.Option(
        help="Least share of the targets' lines the tests must run; less stops the run (default 0.75).",
        rich_help_panel=_VERDICT,
    ),
]
AllowInsufficientOpt = Annotated[
    bool | None,
    typer.Option(
        "--allow-insufficient-tests/--require-sufficient-tests",
        help="Judge candidates even when the tests fall below --min-calls or --min-coverage (default: stop).",
        rich_help_panel=_VERDICT,
    ),
]

GenInputsOpt = Annotated[
    bool | None,
    typer.Option(
        "--gen-inputs/--no-gen-inputs",
        help="Also compare on inputs generated from the targets' type hints (needs coderefine[gen]: hypothesis).",
        rich_help_panel=_VERDICT,
    ),
]


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
    write: Annotated[
        bool, typer.Option("--write", help="Apply the best verified candidate to FILE (atomically).")
    ] = False,
    report: Annotated[Path | None, typer.Option(help="Write the JSON report to this file.")] = None,
    bench: Annotated[
        str | None,
        typer.Option(
            help="Time FILE's bench* functions (or FILE::NAME) instead of the calls the tests make (optimize).",
            rich_help_panel=_LOOP,
        ),
    ] = None,
    sarif: Annotated[
        Path | None, typer.Option(help="Write a SARIF 2.1.0 log of the verified improvement to this file.")
    ] = None,
    trace: Annotated[
        Path | None, typer.Option(help="Save every request and answer here; `coderefine replay DIR` reruns it.")
    ] = None,
    provider: ProviderOpt = None,
    script: Annotated[
        Path | None, typer.Option(help="JSON messages for --provider scripted.", rich_help_panel=_MODEL)
    ] = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    api_key_env: ApiKeyEnvOpt = None,
    temperature: TemperatureOpt = None,
    seed: SeedOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    max_retries: MaxRetriesOpt = None,
    max_calls: MaxCallsOpt = None,
    max_tokens: MaxTokensOpt = None,
    context_tokens: ContextTokensOpt = None,
    cache: CacheOpt = None,
    cache_dir: CacheDirOpt = None,
    max_iterations: MaxIterationsOpt = None,
    patience: PatienceOpt = None,
    min_speedup: MinSpeedupOpt = None,
    sandbox: SandboxOpt = None,
    image: ImageOpt = None,
    timeout: TimeoutOpt = None,
    memory_mb: MemoryOpt = None,
    pass_env: Annotated[
        list[str] | None,
        typer.Option("--pass-env", help="Environment variable the tests need (repeatable).", rich_help_panel=_SANDBOX),
    ] = None,
    timing_pairs: TimingPairsOpt = None,
    rel_tol: RelTolOpt = None,
    abs_tol: AbsTolOpt = None,
    unordered: UnorderedOpt = None,
    min_calls: MinCallsOpt = None,
    min_coverage: MinCoverageOpt = None,
    allow_insufficient_tests: AllowInsufficientOpt = None,
    gen_inputs: GenInputsOpt = None,
    keep_workspaces: Annotated[bool, typer.Option(hidden=True)] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only the final summary.")] = False,
    debug: Annotated[bool, typer.Option(hidden=True, help="Show tracebacks of internal errors.")] = False,
) -> None:
    # Every setting option is named after its setting, so the flags are the locals of that name.
    flags = {name: value for name, value in locals().items() if name in SPEC_BY_NAME}
    from coderefine.refine.run import RunOptions

    def options() -> RunOptions:
        return RunOptions(
            task=ctx.info_name or "optimize",
            file=file,
            settings=resolve_settings(flags, file.parent if file.parent.is_dir() else Path.cwd()),
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

    _run_and_report(ctx.info_name or "optimize", str(file), options, report, quiet, debug, sarif)


app.command("optimize", help="Make FILE faster; only verified, measurably faster versions are kept.")(refine_command)
app.command("readability", help="Make FILE more readable; only verified, higher-scoring versions are kept.")(
    refine_command
)


def _run_and_report(
    task: str,
    file: str,
    make_options: Callable[[], RunOptions],
    report: Path | None,
    quiet: bool,
    debug: bool,
    sarif: Path | None = None,
) -> None:
    """Run, render, write the reports (also on failure) and exit with the documented code."""
    result = _run_once(task, file, make_options, quiet, debug)
    if report is not None:
        _write_report(report, result)
    if sarif is not None:
        _write_sarif(sarif, [result], task)
    if result.interrupted:
        stderr.print("interrupted: nothing was written")
        raise typer.Exit(ExitCode.INTERRUPTED)
    if result.error is not None:
        stderr.print(f"error: {result.error.message}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(result.error.code)


def _run_once(task: str, file: str, make_options: Callable[[], RunOptions], quiet: bool, debug: bool) -> Result:
    """One run, rendered: the whole result when it ran to its end, what it verified when it did not."""
    from coderefine.refine.run import execute, unstarted
    from coderefine.reports.console import ConsoleView, render_result

    view = ConsoleView(stdout, quiet=quiet)
    try:
        result = execute(make_options(), view)
    except CoderefineError as exc:  # the options themselves are wrong (a flag, pyproject.toml, a trace)
        result = unstarted(task, file, exc)
    finally:
        view.close()
    if result.error is None or result.status == INSUFFICIENT_TESTS:
        render_result(stdout, result)
    else:
        if debug and result.error.traceback:
            stderr.print(result.error.traceback, markup=False, highlight=False, end="")
        if result.iterations:  # what was verified before the failure is shown, not lost
            render_result(stdout, result, show_diff=False)
    return result


def refine_files_command(
    files: Annotated[list[Path], typer.Argument(help="The Python files to refine, one run each.", show_default=False)],
    task: Annotated[str, typer.Option(help="readability or optimize.")] = "readability",
    **options: Any,
) -> None:
    """Refine several FILES, one verified run each (the pre-commit hook coderefine-refine).

    With --write each verified improvement is written atomically; a file with none is left as it was.

    A file that cannot be refined is reported in one line, the others still run, and the exit code is its."""
    from coderefine.refine.run import RunOptions

    if task not in ("readability", "optimize"):
        stderr.print(f"error: --task must be readability or optimize, not {task!r}", markup=False, highlight=False)
        raise typer.Exit(int(ExitCode.USAGE))
    flags = {name: value for name, value in options.items() if name in SPEC_BY_NAME}
    runs: list[Result] = []
    first_error: RunError | None = None
    for file in files:

        def make_options(file: Path = file) -> RunOptions:
            return RunOptions(
                task=task,
                file=file,
                settings=resolve_settings(flags, file.parent if file.parent.is_dir() else Path.cwd()),
                tests=options["tests"],
                root=options["root"],
                script=options["script"],
                write=options["write"],
                pass_env=tuple(options["pass_env"] or ()),
            )

        stdout.print(f"== {file}", markup=False, highlight=False)
        result = _run_once(task, str(file), make_options, options["quiet"], options["debug"])
        runs.append(result)
        if result.interrupted:
            stderr.print("interrupted: nothing more was written")
            raise typer.Exit(ExitCode.INTERRUPTED)
        if result.error is not None:
            stderr.print(f"error: {result.error.message}", markup=False, highlight=False, soft_wrap=True)
            first_error = first_error or result.error
    if options["sarif"] is not None:
        _write_sarif(options["sarif"], runs, "refine")
    if first_error is not None:
        raise typer.Exit(first_error.code)


# `refine` takes the refine commands' options, less those that name one file's run (--function, --report,
# --trace); like `config`, its signature is composed from refine_command's.
_NOT_FOR_SEVERAL_FILES = frozenset({"ctx", "file", "function", "report", "trace", "keep_workspaces"})
refine_files_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [
        *list(inspect.signature(refine_files_command, eval_str=True).parameters.values())[:2],
        *(
            p
            for p in inspect.signature(refine_command, eval_str=True).parameters.values()
            if p.name not in _NOT_FOR_SEVERAL_FILES
        ),
    ]
)
app.command("refine")(refine_files_command)


def _write_sarif(path: Path, runs: list[Result], category: str) -> None:
    from coderefine.reports.sarif import refine_log, render_sarif, repository_root

    start = Path(runs[0].file) if runs else Path.cwd()
    try:
        write_text_atomically(path, render_sarif(refine_log(runs, repository_root(start), category)))
    except OSError as exc:
        stderr.print(f"error: cannot write the SARIF log to {path}: {exc.strerror}", markup=False, soft_wrap=True)
        raise typer.Exit(int(ExitCode.WRITE_CONFLICT)) from None


@app.command("replay")
def replay_command(
    trace_dir: Annotated[Path, typer.Argument(help="A folder written by --trace.", show_default=False)],
    report: Annotated[Path | None, typer.Option(help="Write the JSON report to this file.")] = None,
    sandbox: SandboxOpt = None,
    image: ImageOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only the final summary.")] = False,
    debug: Annotated[bool, typer.Option(hidden=True)] = False,
) -> None:
    """Rerun a traced run with its recorded answers: no model, no network, no cost."""
    task, file = "optimize", str(trace_dir)

    from coderefine.refine.run import RunOptions
    from coderefine.refine.trace import read_run_record

    def options() -> RunOptions:
        record = read_run_record(trace_dir)
        flags = {**record.settings, "provider": "scripted", "sandbox": sandbox, "image": image}
        return RunOptions(
            task=record.task,
            file=record.file,
            settings=resolve_settings(flags, record.file.parent if record.file.parent.is_dir() else Path.cwd()),
            function=record.function,
            tests=record.tests,
            root=record.root,
            script=record.script,
            pass_env=record.pass_env,
            expected_sha256=record.file_sha256,
            bench=record.bench,
        )

    try:
        record = read_run_record(trace_dir)
        task, file = record.task, str(record.file)
    except CoderefineError:
        pass  # reported by the run itself, with the report written
    _run_and_report(task, file, options, report, quiet, debug)


def config_command(
    path: Annotated[
        Path | None, typer.Argument(help="File or folder whose pyproject.toml applies (default: here).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    **flags: Any,
) -> None:
    """Print the effective settings, where each comes from, and which provider a run would use."""
    from coderefine.commands.config import describe_settings, render_settings

    start = path or Path.cwd()
    try:
        if not start.exists():
            raise InputFileNotFound(f"{start}: no such file or folder")
        view = describe_settings(resolve_settings(flags, start))
    except CoderefineError as exc:
        stderr.print(f"error: {exc.message}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(int(exc.exit_code)) from None
    if as_json:
        stdout.print_json(data=view)
    else:
        render_settings(stdout, view)


sandbox_app = typer.Typer(help="The Docker sandbox's image.", no_args_is_help=True)
app.add_typer(sandbox_app, name="sandbox")


@sandbox_app.command("build")
def sandbox_build_command(
    tag: Annotated[str, typer.Option(help="Tag of the image to build.")] = BUILD_TAG,
    requirements: Annotated[
        Path | None, typer.Option(help="The project's test dependencies (pip -r) to install into the image.")
    ] = None,
    python_version: Annotated[
        str | None, typer.Option(help="Python version of the base image (default: this interpreter's).")
    ] = None,
    base: Annotated[str | None, typer.Option(help="Base image (default: python:<version>-slim).")] = None,
) -> None:
    """Build sandbox/Dockerfile (needs a registry for the base image); use the result with --image TAG.

    Without a registry, nothing needs building: the offline image is made on the spot."""
    from coderefine.sandboxes.images import build_image

    try:
        built = build_image(
            tag,
            requirements=requirements,
            python_version=python_version,
            base=base,
            progress=lambda line: stdout.print(line, markup=False, highlight=False),
        )
    except CoderefineError as exc:
        stderr.print(f"error: {exc.message}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(int(exc.exit_code)) from None
    stdout.print(f"built {built}; use it with --sandbox docker --image {built}", markup=False, highlight=False)


_CHECK = "Thresholds"


@app.command("check")
def check_command(
    files: Annotated[list[Path], typer.Argument(help="Python files to check.", show_default=False)],
    output_format: Annotated[str, typer.Option("--format", help="text, json or sarif (SARIF 2.1.0).")] = "text",
    output: Annotated[
        Path | None, typer.Option(help="Write the findings in --format to this file (text still goes to stdout).")
    ] = None,
    max_complexity: Annotated[
        int | None,
        typer.Option(help="Most cyclomatic complexity of one function (default 10).", rich_help_panel=_CHECK),
    ] = None,
    min_maintainability: Annotated[
        float | None,
        typer.Option(help="Least maintainability index of a file (default 10; 0: off).", rich_help_panel=_CHECK),
    ] = None,
    min_readability: Annotated[
        float | None,
        typer.Option(help="Least readability score of a file (default 40; 0: off).", rich_help_panel=_CHECK),
    ] = None,
    cache: Annotated[
        bool | None,
        typer.Option("--cache/--no-cache", help="Reuse results saved on disk for unchanged files (default: on)."),
    ] = None,
    debug: Annotated[bool, typer.Option("--debug", hidden=True)] = False,
) -> None:
    """Deterministic thresholds (complexity, maintainability, readability) on FILES: no model, no network.

    Exits 0 when every file is within them, 16 when there are findings, 3-6 when a file cannot be checked."""
    from coderefine.commands.check import run_check

    flags = {"max_complexity": max_complexity, "min_maintainability": min_maintainability}
    flags |= {"min_readability": min_readability, "cache": cache}
    try:
        code = run_check(files, output_format, output, flags, stderr)
    except CoderefineError as exc:
        stderr.print(f"error: {exc.message}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(int(exc.exit_code)) from None
    except Exception as exc:  # a bug: one line for the user, the traceback only on request
        if debug:
            traceback.print_exc()
        stderr.print(
            f"error: internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(int(ExitCode.INTERNAL)) from None
    raise typer.Exit(code)


# `config` takes the same setting options as the refine commands. Typer reads a command's options from
# its signature, so the signature is composed from refine_command's instead of declaring each twice.
def _setting_parameters() -> list[inspect.Parameter]:
    """The setting options of the refine commands and of `check`, each once."""
    seen: dict[str, inspect.Parameter] = {}
    for command in (refine_command, check_command):
        for parameter in inspect.signature(command, eval_str=True).parameters.values():
            if parameter.name in SPEC_BY_NAME and parameter.name not in seen:
                seen[parameter.name] = parameter
    return list(seen.values())


config_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [*list(inspect.signature(config_command, eval_str=True).parameters.values())[:2], *_setting_parameters()]
)
app.command("config")(config_command)


def review_command(
    task: Annotated[str, typer.Option(help="optimize or readability.")] = "optimize",
    paths: Annotated[
        list[str] | None,
        typer.Option(
            "--paths",
            help="Globs limiting the files reviewed (repeatable, or separated by commas or newlines; fnmatch: "
            "* also matches /).",
        ),
    ] = None,
    max_comments: Annotated[
        int, typer.Option(min=1, max=MAX_COMMENTS, help="Most suggestions in the review (at most 30).")
    ] = MAX_COMMENTS,
    **options: Any,
) -> None:
    """Review a pull request in GitHub Actions: verified suggestions on the functions it changed.

    Reads GITHUB_EVENT_PATH, GITHUB_REPOSITORY, GITHUB_API_URL, GITHUB_TOKEN and GITHUB_WORKSPACE."""
    from coderefine.github.review import ReviewOptions, review_pull_request
    from coderefine.reports.console import ConsoleView

    view = ConsoleView(stdout, quiet=options["quiet"])
    try:
        if task not in ("optimize", "readability"):
            raise UsageError(f"--task must be optimize or readability, not {task!r}")
        flags = {name: value for name, value in options.items() if name in SPEC_BY_NAME}
        globs = tuple(g.strip() for value in paths or () for g in value.replace("\n", ",").split(",") if g.strip())
        workspace = Path(os.environ.get("GITHUB_WORKSPACE") or Path.cwd())
        review_options = ReviewOptions(
            task=task,
            settings=resolve_settings(flags, workspace if workspace.is_dir() else Path.cwd()),
            paths=globs,
            max_comments=max_comments,
            tests=options["tests"],
            script=options["script"],
            pass_env=tuple(options["pass_env"] or ()),
        )
        outcome = review_pull_request(os.environ, review_options, view)
    except CoderefineError as exc:
        view.close()
        stderr.print(f"error: {exc.message}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(int(exc.exit_code)) from None
    except KeyboardInterrupt:
        view.close()
        stderr.print("interrupted: nothing more was posted")
        raise typer.Exit(ExitCode.INTERRUPTED) from None
    except Exception as exc:  # a bug: one line for the user, the traceback only on request
        view.close()
        if options["debug"]:
            traceback.print_exc()
        stderr.print(
            f"error: internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(int(ExitCode.INTERNAL)) from None
    view.close()
    where = f"{outcome.repository}#{outcome.number}"
    if outcome.skipped is not None:
        stdout.print(f"review: skipped {where}: {outcome.skipped}", markup=False, highlight=False, soft_wrap=True)
        return
    if outcome.unposted_summary:  # read-only token and no GITHUB_STEP_SUMMARY: the summary is printed
        stdout.print(outcome.unposted_summary, markup=False, highlight=False, soft_wrap=True)
    posted = f"{len(outcome.suggested)} suggestion(s) posted" if outcome.review_posted else "no review posted"
    stdout.print(
        f"review: {where} at {outcome.head_sha[:12]}: {len(outcome.functions)} changed function(s), {posted}; "
        f"summary: {outcome.summary_where}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


# `review` takes every setting option (provider, model, sandbox, speed and check thresholds) and the run
# options of refine_command that make sense for many files, from their signatures like `config`.
_REVIEW_REUSED = ("tests", "script", "pass_env", "quiet", "debug")
review_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [
        *list(inspect.signature(review_command, eval_str=True).parameters.values())[:3],
        *_setting_parameters(),
        *(p for p in inspect.signature(refine_command, eval_str=True).parameters.values() if p.name in _REVIEW_REUSED),
    ]
)
app.command("review")(review_command)


def bench_command(
    suite_dir: Annotated[Path, typer.Argument(help="A folder with one folder per task.", show_default=False)],
    task: Annotated[str | None, typer.Option(help="optimize or readability.")] = None,
    script_dir: Annotated[
        Path | None,
        typer.Option(help="Scripted provider: DIR/<task id>.json is each task's script.", rich_help_panel=_MODEL),
    ] = None,
    oracle: Annotated[
        bool, typer.Option("--oracle", help="Offer each task's reference.py as the candidate (the ceiling).")
    ] = False,
    jobs: Annotated[int, typer.Option(help="Tasks run at once; timing runs never overlap.")] = 1,
    limit: Annotated[int | None, typer.Option(help="Only the first N tasks (in natural order of names).")] = None,
    report: Annotated[Path | None, typer.Option(help="Write the JSON bench report to this file.")] = None,
    html: Annotated[Path | None, typer.Option(help="Write the HTML bench report (self-contained) here.")] = None,
    state: Annotated[
        Path | None,
        typer.Option(help="Finished tasks are saved here (JSON lines); default under .coderefine/bench/."),
    ] = None,
    fresh: Annotated[bool, typer.Option("--fresh", help="Ignore finished tasks saved by an earlier run.")] = False,
    pass_env: Annotated[
        list[str] | None,
        typer.Option("--pass-env", help="Environment variable the tests need (repeatable).", rich_help_panel=_SANDBOX),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only the summary.")] = False,
    debug: Annotated[bool, typer.Option(hidden=True)] = False,
    **flags: Any,
) -> None:
    """Run every task of SUITE_DIR in its own copy and report % improved, speedups or score gains, and
    the per-iteration curve. Finished tasks are saved as they end: rerun the same command to continue."""
    from coderefine.commands.bench import run_bench_command

    try:
        code = run_bench_command(
            stdout,
            suite_dir=suite_dir,
            task=task,
            script_dir=script_dir,
            oracle=oracle,
            jobs=jobs,
            limit=limit,
            report=report,
            html=html,
            state=state,
            fresh=fresh,
            pass_env=tuple(pass_env or ()),
            quiet=quiet,
            flags=flags,
        )
    except CoderefineError as exc:
        stderr.print(f"error: {exc.message}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(int(exc.exit_code)) from None
    except Exception as exc:
        if debug:
            traceback.print_exc()
        message = f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)"
        stderr.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(int(ExitCode.INTERNAL)) from None
    if code:
        raise typer.Exit(code)


bench_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [
        *(p for p in inspect.signature(bench_command, eval_str=True).parameters.values() if p.name != "flags"),
        *(p for p in inspect.signature(refine_command, eval_str=True).parameters.values() if p.name in SPEC_BY_NAME),
    ]
)
app.command("bench")(bench_command)


def _write_report(path: Path, result: Result) -> None:
    from coderefine.reports.json_report import render_json

    try:
        write_text_atomically(path, render_json(result))
    except OSError as exc:
        stderr.print(f"error: cannot write the report to {path}: {exc.strerror}", markup=False, soft_wrap=True)
        raise typer.Exit(int(ExitCode.WRITE_CONFLICT)) from None


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(int(ExitCode.INTERRUPTED))


if __name__ == "__main__":
    main()
