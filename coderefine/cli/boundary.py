"""The one error boundary: every command runs inside it, and nothing else turns an error into output.

A `CoderefineError` is bad input or a failure the user can act on: `error: <message>` on stderr, one line,
markup off, and its documented exit code. Anything else is a bug: one line that says so (the traceback
only with --debug) and exit 1. Ctrl-C is exit 130. Standard library only: `coderefine check`'s fast path
runs through it too, and must not pay for rich or typer.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable

from coderefine.errors import CoderefineError, ExitCode


def print_error(message: str) -> None:
    """`error: <message>` on stderr, as it is: no markup, no wrapping, one line."""
    sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()


def guarded(command: Callable[[], int], *, debug: bool = False) -> int:
    """Run `command` and return its exit code, or the code of what stopped it, told in one line."""
    try:
        return command()
    except CoderefineError as exc:
        print_error(exc.message)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        return int(ExitCode.INTERRUPTED)
    except Exception as exc:  # a bug: one line for the user, the traceback only on request
        if debug:
            traceback.print_exc()
        print_error(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)")
        return int(ExitCode.INTERNAL)
