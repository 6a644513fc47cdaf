"""Where the typer commands render, and how they end: inside the error boundary, with its exit code."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import typer
from rich.console import Console

from coderefine.cli.boundary import guarded
from coderefine.cli.options import given_settings

if TYPE_CHECKING:
    from coderefine.commands.runs import Output
    from coderefine.settings import Settings

# Output that is not a terminal (a pipe, a file, a CI log) has no width to fit, but rich would wrap it at 80
# columns: a diff's lines cut mid-token, tables squeezed to a word per cell. It gets this much room instead
# (tables are only as wide as their content; COLUMNS, when set, still wins).
UNBOUNDED_WIDTH = 10_000


def console_for(stream: IO[str], *, stderr: bool = False) -> Console:
    """The console a command renders on `stream` (sys.stdout or sys.stderr, looked up when printing, so
    that a test runner's capture applies): the terminal's width, or room enough for any line elsewhere."""
    wide = not stream.isatty() and not os.environ.get("COLUMNS")
    return Console(stderr=stderr, highlight=False, width=UNBOUNDED_WIDTH if wide else None)


stdout = console_for(sys.stdout)
stderr = console_for(sys.stderr, stderr=True)


def in_boundary(command: Callable[..., int]) -> Callable[..., None]:
    """A typer command whose body runs inside the one error boundary and whose return value is the exit
    code (its `debug` option, when it has one, asks for the traceback of an internal error).

    typer reads the options from the wrapped function's signature (`functools.wraps` keeps it)."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> None:
        code = guarded(lambda: command(*args, **kwargs), debug=bool(kwargs.get("debug")))
        if code:
            raise typer.Exit(code)

    return run


def output(quiet: bool = False, debug: bool = False) -> Output:
    from coderefine.commands.runs import Output

    return Output(stdout, stderr, quiet=quiet, debug=debug)


def settings_at(ctx: typer.Context, start: Path | None, **forced: Any) -> Settings:
    """The command's settings as they apply at `start` (a file or folder; None or a missing path: here):
    its setting options as given, the environment, the nearest pyproject.toml, the defaults. `forced`
    replaces given options (e.g. the scripted provider that `--script` implies)."""
    from coderefine.settings import resolve_settings

    folder = start if start is not None and start.exists() else Path.cwd()
    return resolve_settings({**given_settings(ctx), **forced}, folder)
