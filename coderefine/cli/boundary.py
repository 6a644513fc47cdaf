"""The one error boundary: every command runs inside it, and nothing else turns an error into output.

A `CoderefineError` is bad input or a failure the user can act on: `error: <message>` on stderr, one line,
markup off, and its documented exit code. Anything else is a bug: one line that says so (the traceback
only with --debug) and exit 1. Ctrl-C is exit 130. The words come from `coderefine.errors.error_record`,
the same a run's Result keeps. Standard library only: `coderefine check`'s fast path runs through it too,
and must not pay for rich or typer.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from coderefine.errors import RunFailed, error_record
from coderefine.records import RunError


def print_error(message: str) -> None:
    """`error: <message>` on stderr, as it is: no markup, no wrapping, one line."""
    sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()


def guarded(command: Callable[[], int], *, debug: bool = False) -> int:
    """Run `command` and return its exit code, or the code of what stopped it, told in one line."""
    try:
        return command()
    except (Exception, KeyboardInterrupt) as exc:
        return tell(exc.record() if isinstance(exc, RunFailed) else error_record(exc), debug=debug)


def tell(error: RunError, *, debug: bool = False) -> int:
    """Tell an error in one line (the traceback of a bug first, with --debug) and return its exit code;
    an interruption is not told: the user pressed Ctrl-C."""
    if error.kind != "interrupted":
        if debug and error.traceback:
            sys.stderr.write(error.traceback)
        print_error(error.message)
    return error.code
