"""The `coderefine` console script: `check` takes a fast path; everything else goes to the typer CLI."""

from __future__ import annotations

import sys

from coderefine.interrupts import redeliver_lost_interrupts


def main() -> None:
    redeliver_lost_interrupts()
    arguments = sys.argv[1:]
    if arguments[:1] == ["check"]:
        from coderefine.cli.fast_check import fast_check

        code = fast_check(arguments[1:])
        if code is not None:
            sys.exit(code)
    from coderefine.cli.app import main as cli_main

    cli_main()
