"""Where the typer commands render, and how they end: inside the error boundary, with its exit code."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console

from coderefine.cli.boundary import guarded
from coderefine.cli.options import given_settings

if TYPE_CHECKING:
    from coderefine.commands.runs import Output
    from coderefine.settings import Settings

stdout = Console(highlight=False)
stderr = Console(stderr=True, highlight=False)


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
