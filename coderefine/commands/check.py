"""`coderefine check FILES...`: deterministic thresholds (complexity, maintainability, readability).

No model, no network, and nothing heavy on its import path: it runs as a pre-commit hook on every
commit, so it reaches this module through the launcher's fast path (`cli/fast_check.py`) as well as typer.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coderefine.errors import ExitCode, UsageError, WriteConflict
from coderefine.settings import resolve_settings
from coderefine.writeback import write_text_atomically

OUTPUT_FORMATS = ("text", "json", "sarif")


@dataclass(frozen=True)
class CheckArgs:
    files: Sequence[Path]
    flags: Mapping[str, Any]  # the setting options as given (None: not given)
    output_format: str = "text"
    output: Path | None = None


def run_check(args: CheckArgs, report_error: Callable[[str], None]) -> int:
    """Check the files, print the findings, write --output; the exit code (0, 16, or a bad-input code).

    `report_error` tells a file that could not be checked; the other files are still checked."""
    from coderefine.quality.check import CheckThresholds, check_files, check_json, sorted_findings, summary_text
    from coderefine.quality.check_cache import CheckCache

    if args.output_format not in OUTPUT_FORMATS:
        raise UsageError(f"--format must be one of {', '.join(OUTPUT_FORMATS)}, not {args.output_format!r}")
    settings = resolve_settings(args.flags, common_folder(args.files))
    thresholds = CheckThresholds.from_settings(settings)
    outcome = check_files(args.files, thresholds, CheckCache() if settings.cache else None)
    outcome.findings = sorted_findings(outcome.findings)

    lines = [finding.line_text() for finding in outcome.findings]
    text = "".join(f"{line}\n" for line in [*lines, summary_text(outcome)] if line)
    if args.output_format == "json":
        rendered = json.dumps(check_json(outcome, thresholds), indent=2) + "\n"
    elif args.output_format == "sarif":
        from coderefine.reports.sarif import check_log, render_sarif, repository_root

        rendered = render_sarif(check_log(outcome, repository_root(Path.cwd())))
    else:
        rendered = text
    if args.output is not None:
        try:
            write_text_atomically(args.output, rendered)
        except OSError as exc:
            raise WriteConflict(f"cannot write {args.output}: {exc.strerror}") from None
    # A machine format goes to stdout only when no file is named; otherwise stdout shows the text lines.
    sys.stdout.write(rendered if args.output is None else text)
    sys.stdout.flush()
    for error in outcome.errors:
        report_error(error.error.message)
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
