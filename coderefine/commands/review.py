"""`coderefine review`: verified suggestions on the functions a pull request changed (GitHub Actions).

Reads GITHUB_EVENT_PATH, GITHUB_REPOSITORY, GITHUB_API_URL, GITHUB_TOKEN and GITHUB_WORKSPACE.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coderefine.commands.runs import Output
from coderefine.errors import ExitCode, UsageError
from coderefine.settings import resolve_settings

if TYPE_CHECKING:
    from coderefine.github.review import ReviewOptions

TASKS = ("optimize", "readability")


def path_globs(values: Sequence[str]) -> tuple[str, ...]:
    """--paths as given (repeatable, each separated by commas or newlines) as one tuple of globs."""
    return tuple(g.strip() for value in values for g in value.replace("\n", ",").split(",") if g.strip())


def review(
    options: ReviewOptions, flags: Mapping[str, Any], output: Output, environ: Mapping[str, str] | None = None
) -> int:
    """Review the pull request of the Actions environment; the settings apply as in the checkout."""
    from coderefine.github.review import review_pull_request
    from coderefine.reports.console import ConsoleView

    environ = os.environ if environ is None else environ
    if options.task not in TASKS:
        raise UsageError(f"--task must be optimize or readability, not {options.task!r}")
    workspace = Path(environ.get("GITHUB_WORKSPACE") or Path.cwd())
    view = ConsoleView(output.stdout, quiet=output.quiet)
    try:
        settings = resolve_settings(flags, workspace if workspace.is_dir() else Path.cwd())
        outcome = review_pull_request(environ, options, settings, view)
    except KeyboardInterrupt:
        view.close()
        output.notice("interrupted: nothing more was posted")
        return int(ExitCode.INTERRUPTED)
    finally:
        view.close()

    where = f"{outcome.repository}#{outcome.number}"
    if outcome.skipped is not None:
        say(output, f"review: skipped {where}: {outcome.skipped}")
        return 0
    if outcome.unposted_summary:  # read-only token and no GITHUB_STEP_SUMMARY: the summary is printed
        say(output, outcome.unposted_summary)
    posted = f"{len(outcome.suggested)} suggestion(s) posted" if outcome.review_posted else "no review posted"
    say(
        output,
        f"review: {where} at {outcome.head_sha[:12]}: {len(outcome.functions)} changed function(s), {posted}; "
        f"summary: {outcome.summary_where}",
    )
    return 0


def say(output: Output, text: str) -> None:
    output.stdout.print(text, markup=False, highlight=False, soft_wrap=True)
