"""`coderefine check`'s fast path past typer.

The typer command in `cli/app.py` is the documented interface (help, completion of the option set); but
importing typer and building every command costs about half a second, several times the check itself on a
warm cache. A pre-commit hook pays that on every commit, so the launcher first tries `fast_check`, a plain
argparse parser of exactly the same options that needs nothing but the standard library; anything it does
not understand (--help, a typo, a bad number) goes to typer, so errors and help read the same either way.
tests/quality/test_check.py keeps the two option sets equal.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from coderefine.cli.boundary import guarded, print_error
from coderefine.commands.check import CheckArgs, run_check


class _Unhandled(Exception):
    """The fast parser gives up: typer parses the command line instead."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _Unhandled(message)


def fast_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="coderefine check", add_help=False, allow_abbrev=False)
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--format", dest="output_format", default="text")
    parser.add_argument("--output", type=Path)
    parser.add_argument("--max-complexity", type=int)
    parser.add_argument("--min-maintainability", type=float)
    parser.add_argument("--min-readability", type=float)
    parser.add_argument("--cache", action="store_true", default=None)
    parser.add_argument("--no-cache", dest="cache", action="store_false")
    parser.add_argument("--debug", action="store_true")
    return parser


def fast_check(argv: Sequence[str]) -> int | None:
    """Run `coderefine check ARGV` without typer; None when typer should parse ARGV instead."""
    if any(arg in ("-h", "--help") for arg in argv):
        return None
    try:
        options = fast_parser().parse_args(list(argv))
    except _Unhandled:
        return None
    flags = {
        "max_complexity": options.max_complexity,
        "min_maintainability": options.min_maintainability,
        "min_readability": options.min_readability,
        "cache": options.cache,
    }
    args = CheckArgs(options.files, flags, options.output_format, options.output)
    return guarded(lambda: run_check(args, print_error), debug=options.debug)
