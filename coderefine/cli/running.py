"""Where the typer commands render, and how they end: inside the error boundary, with its exit code."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from coderefine.cli.boundary import guarded

if TYPE_CHECKING:
    from coderefine.commands.runs import Output

stdout = Console(highlight=False)
stderr = Console(stderr=True, highlight=False)


def exit_with(command: Callable[[], int], debug: bool) -> None:
    """Run a command inside the error boundary and exit with its code."""
    code = guarded(command, debug=debug)
    if code:
        raise typer.Exit(code)


def output(quiet: bool = False, debug: bool = False) -> Output:
    from coderefine.commands.runs import Output

    return Output(stdout, stderr, quiet=quiet, debug=debug)
