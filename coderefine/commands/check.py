"""`coderefine check` from parsed options to an exit code, and its fast path past typer.

The typer command in cli.py is the documented interface (help, completion of the option set); but
importing typer with its pydantic coercion layer and building every command costs about half a second,
several times the check itself on a warm cache. A pre-commit hook pays that on every commit, so the
launcher first tries `fast_check`, a plain argparse parser of exactly the same options that needs
nothing but the standard library; anything it does not understand (--help, a typo, a bad number) goes to
typer, so errors and help read the same either way. tests/test_check.py keeps the two option sets equal.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from coderefine.errors import CoderefineError, ExitCode, UsageError, WriteConflict
from coderefine.settings import resolve_settings
from coderefine.writeback import write_text_atomically

OUTPUT_FORMATS = ("text", "json", "sarif")


class ErrorPrinter(Protocol):
    def print(self, text: str, *, markup: bool, highlight: bool, soft_wrap: bool) -> None: ...


class _PlainStderr:
    """The one-line error writer of the fast path (rich's console would cost its import)."""

    def print(self, text: str, *, markup: bool = False, highlight: bool = False, soft_wrap: bool = True) -> None:
        sys.stderr.write(f"{text}\n")
        sys.stderr.flush()


def run_check(
    files: Sequence[Path], output_format: str, output: Path | None, flags: dict[str, Any], errors: ErrorPrinter
) -> int:
    """Check `files`, print the findings, write `output`; the exit code (0, 16, or a bad-input code)."""
    from coderefine.quality.check import CheckThresholds, check_files, check_json, sorted_findings, summary_text
    from coderefine.quality.check_cache import CheckCache

    if output_format not in OUTPUT_FORMATS:
        raise UsageError(f"--format must be one of {', '.join(OUTPUT_FORMATS)}, not {output_format!r}")
    settings = resolve_settings(flags, common_folder(files))
    thresholds = CheckThresholds.from_settings(settings)
    outcome = check_files(files, thresholds, CheckCache() if settings["cache"] else None)
    outcome.findings = sorted_findings(outcome.findings)

    lines = [finding.line_text() for finding in outcome.findings]
    text = "".join(f"{line}\n" for line in [*lines, summary_text(outcome)] if line)
    if output_format == "json":
        rendered = json.dumps(check_json(outcome, thresholds), indent=2) + "\n"
    elif output_format == "sarif":
        from coderefine.reports.sarif import check_log, render_sarif, repository_root

        rendered = render_sarif(check_log(outcome, repository_root(Path.cwd())))
    else:
        rendered = text
    if output is not None:
        try:
            write_text_atomically(output, rendered)
        except OSError as exc:
            raise WriteConflict(f"cannot write {output}: {exc.strerror}") from None
    # A machine format goes to stdout only when no file is named; otherwise stdout shows the text lines.
    sys.stdout.write(rendered if output is None else text)
    sys.stdout.flush()
    for error in outcome.errors:
        errors.print(f"error: {error.error.message}", markup=False, highlight=False, soft_wrap=True)
    if outcome.errors:
        # A file that could not be checked is bad input, not a finding: its code wins, so that "clean" is
        # never claimed for a file nobody could read (the first bad file's code, as with a single file).
        return int(outcome.errors[0].error.exit_code)
    return int(ExitCode.FINDINGS) if outcome.findings else int(ExitCode.OK)


def common_folder(files: Sequence[Path]) -> Path:
    """Where the settings are looked up: the files' common folder (the nearest pyproject.toml with
    [tool.coderefine] above it applies), or here when there is none."""
    folders = [path.resolve().parent for path in files]
    try:
        common = Path(os.path.commonpath(folders)) if folders else Path.cwd()
    except ValueError:
        return Path.cwd()
    return common if common.is_dir() else Path.cwd()


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
    errors = _PlainStderr()
    try:
        return run_check(options.files, options.output_format, options.output, flags, errors)
    except CoderefineError as exc:
        errors.print(f"error: {exc.message}")
        return int(exc.exit_code)
    except Exception as exc:  # a bug: one line for the user, the traceback only on request
        if options.debug:
            traceback.print_exc()
        errors.print(f"error: internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)")
        return int(ExitCode.INTERNAL)
