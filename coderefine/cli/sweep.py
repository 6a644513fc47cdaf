"""The typer functions of `coderefine scan` and `coderefine sweep` (registered on the app in app.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from coderefine.cli.params import Debug, PassEnv, Quiet, Report, Root, Script, Tests
from coderefine.cli.running import in_boundary, settings_at, stdout

Paths = Annotated[
    list[Path] | None,
    typer.Argument(
        metavar="PATHS", help="Files or folders whose functions count (default: the whole project).", show_default=False
    ),
]
Command = Annotated[
    str | None,
    typer.Option(metavar="CMD", help='Profile this Python workload instead of the tests, e.g. "python bench.py".'),
]
SCAN_SETTINGS = ("sandbox", "image", "timeout", "memory_mb", "min_calls", "min_coverage")


@in_boundary
def scan_command(
    ctx: typer.Context,
    paths: Paths = None,
    tests: Tests = None,
    command: Command = None,
    root: Root = None,
    report: Annotated[Path | None, typer.Option(metavar="FILE", help="Write the ranking as JSON to this file.")] = None,
    pass_env: PassEnv = None,
    quiet: Quiet = False,
    debug: Debug = False,
) -> int:
    """Profile the project's tests (or a workload) in the sandbox and rank its functions by own time.

    Only functions defined under PATHS in the project count; each is marked judgeable, or why not."""
    from coderefine.commands.scan import scan
    from coderefine.sweep.scan import ScanOptions

    found = tuple(paths or ())
    settings = settings_at(ctx, found[0] if found else None)
    return scan(ScanOptions(found, settings, tests, command, root, tuple(pass_env or ())), stdout, report, quiet)


@in_boundary
def sweep_command(
    ctx: typer.Context,
    paths: Paths = None,
    task: Annotated[str, typer.Option(metavar="NAME", help="optimize or readability.")] = "optimize",
    top: Annotated[
        int | None,
        typer.Option(metavar="N", help="Refine the N judgeable functions with the most own time (default 10)."),
    ] = None,
    min_share: Annotated[
        float | None,
        typer.Option(metavar="F", help="Refine every judgeable function with at least this share of the time."),
    ] = None,
    tests: Tests = None,
    command: Command = None,
    root: Root = None,
    write: Annotated[
        bool, typer.Option("--write", help="Apply the verified changes (merged and re-verified per file, atomically).")
    ] = False,
    report: Report = None,
    markdown: Annotated[
        Path | None, typer.Option(metavar="FILE", help="Write a Markdown summary to this file.")
    ] = None,
    html: Annotated[
        Path | None, typer.Option(metavar="FILE", help="Write the HTML page (self-contained) here.")
    ] = None,
    sarif: Annotated[
        Path | None, typer.Option(metavar="FILE", help="Write a SARIF 2.1.0 log of the verified changes here.")
    ] = None,
    state: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="Finished functions are saved here; default under .coderefine/sweep/."),
    ] = None,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Ignore the scan and finished functions saved before.")
    ] = False,
    from_scan: Annotated[
        Path | None, typer.Option(metavar="FILE", help="Use this `scan --report` instead of scanning again.")
    ] = None,
    script: Script = None,
    pass_env: PassEnv = None,
    quiet: Quiet = False,
    debug: Debug = False,
) -> int:
    """Scan the project, then refine the functions worth it in parallel (local processes or a Ray cluster).

    Finished functions are saved as they end: rerun the same command to continue."""
    from coderefine.commands.sweep import SweepReports, sweep
    from coderefine.sweep.run import SweepOptions
    from coderefine.sweep.scan import ScanOptions

    found = tuple(paths or ())
    settings = settings_at(ctx, found[0] if found else None, **({"provider": "scripted"} if script else {}))
    options = SweepOptions(
        scan=ScanOptions(found, settings, tests, command, root, tuple(pass_env or ())),
        task=task,
        top=top,
        min_share=min_share,
        write=write,
        state=state,
        fresh=fresh,
        script=script,
        from_scan=from_scan,
    )
    return sweep(options, SweepReports(report, markdown, html, sarif), stdout, quiet)
