"""`coderefine review`: verified suggestions on the functions a pull request changed (GitHub Actions).

Reads GITHUB_EVENT_PATH, GITHUB_REPOSITORY, GITHUB_API_URL, GITHUB_TOKEN and GITHUB_WORKSPACE.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coderefine.commands.runs import Output
from coderefine.errors import ExitCode, UsageError
from coderefine.settings import resolve_settings

TASKS = ("optimize", "readability")


@dataclass(frozen=True)
class ReviewArgs:
    flags: Mapping[str, Any]  # the setting options as given (None: not given)
    task: str = "optimize"
    paths: Sequence[str] = ()  # as given: repeatable, each separated by commas or newlines
    max_comments: int = 30
    tests: Path | None = None
    script: Path | None = None
    pass_env: tuple[str, ...] = ()


def path_globs(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(g.strip() for value in values for g in value.replace("\n", ",").split(",") if g.strip())


def review(args: ReviewArgs, output: Output, environ: Mapping[str, str] | None = None) -> int:
    from coderefine.github.review import ReviewOptions, review_pull_request
    from coderefine.reports.console import ConsoleView

    environ = os.environ if environ is None else environ
    if args.task not in TASKS:
        raise UsageError(f"--task must be optimize or readability, not {args.task!r}")
    workspace = Path(environ.get("GITHUB_WORKSPACE") or Path.cwd())
    view = ConsoleView(output.stdout, quiet=output.quiet)
    try:
        review_options = ReviewOptions(
            task=args.task,
            settings=resolve_settings(args.flags, workspace if workspace.is_dir() else Path.cwd()),
            paths=path_globs(args.paths),
            max_comments=args.max_comments,
            tests=args.tests,
            script=args.script,
            pass_env=args.pass_env,
        )
        outcome = review_pull_request(environ, review_options, view)
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
