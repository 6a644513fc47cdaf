"""`coderefine review`: the verified loop on the functions a pull request changed, posted as one review.

The flow: read the pull request from the Actions environment, skip the action's own commits, list the
PR's files with their diff hunks, run `execute` once per changed function (`--function`), turn each
verified result into a suggestion covering exactly the lines it changes, post one review with at most
`max_comments` of them, and create or update the single summary comment. A token that may not write
(fork pull requests) sends the summary to the job's step summary instead; neither that nor a missing
model key fails the job.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from coderefine.errors import (
    BaselineFails,
    CoderefineError,
    InputFileNotFound,
    InputIsDirectory,
    InputNotUtf8,
    InputSyntaxError,
    NoTestsFound,
    RunFailed,
    UnknownFunction,
)
from coderefine.github import MAX_COMMENTS
from coderefine.github.api import GitHubClient, ReadOnlyToken, Unprocessable
from coderefine.github.context import ActionsContext, check_checkout, head_commit, read_context, skip_reason
from coderefine.github.diff import Definition, FilePatch, changed_definitions, parse_patch, selected
from coderefine.github.suggestions import LineChange, line_change, suggestion_block
from coderefine.providers.registry import choose_provider
from coderefine.quality.check import CheckThresholds, check_source, sorted_findings
from coderefine.records import INSUFFICIENT_TESTS
from coderefine.refine.loop import LoopObserver
from coderefine.refine.run import RunOptions, execute
from coderefine.reports.console import unified_diff
from coderefine.reports.markdown import (
    SUMMARY_MARKER,
    comment_body,
    evidence,
    fenced_diff,
    review_marker,
)
from coderefine.settings import Settings
from coderefine.source import read_source

SUMMARY_BUDGET = 60000  # characters of diffs in the summary: GitHub's limit for a comment is 65536
# Problems of one file (or its tests) end the review of that file only; anything else (the model, the
# sandbox, the settings) would fail every function the same way, so it ends the review.
_FILE_ERRORS = frozenset(
    error.exit_code
    for error in (
        InputFileNotFound,
        InputIsDirectory,
        InputNotUtf8,
        InputSyntaxError,
        NoTestsFound,
        BaselineFails,
        UnknownFunction,
    )
)


@dataclass(frozen=True)
class ReviewOptions:
    """What the review is asked (the settings come apart: they are resolved in the checkout)."""

    task: str
    paths: tuple[str, ...] = ()
    max_comments: int = MAX_COMMENTS
    tests: Path | None = None
    script: Path | None = None
    pass_env: tuple[str, ...] = ()


@dataclass
class FunctionReview:
    path: str
    function: str
    state: str  # "suggested", "outside the diff", "no improvement", "failed", "not examined"
    detail: str
    change: LineChange | None = None
    diff: str = ""  # the verified change as a unified diff, for the summary when it is not inline
    proof: str = ""


@dataclass
class ReviewOutcome:
    repository: str
    number: int
    head_sha: str
    task: str
    provider_line: str
    functions: list[FunctionReview] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    skipped: str | None = None  # why nothing was reviewed (the action's own commit)
    review_posted: bool = False
    summary_where: str = ""  # "comment created", "comment updated", "step summary", "stdout"
    unposted_summary: str = ""  # the summary when it could be neither commented nor put in a step summary
    error: CoderefineError | None = None  # what ended the review early (reported after publishing)

    @property
    def suggested(self) -> list[FunctionReview]:
        return [f for f in self.functions if f.state == "suggested"]


def deterministic_findings(workspace: Path, patches: list[FilePatch], settings: Settings) -> list[str]:
    """The `coderefine check` findings on what the pull request changed, one Markdown line each: file-wide
    metrics of the changed files, and functions whose lines the diff touches. They need no key and no
    network, so every pull request gets them, forks included. A file check cannot read is reported by
    the review itself."""
    thresholds = CheckThresholds.from_settings(settings)
    lines = []
    for patch in patches:
        try:
            text = read_source(workspace / patch.path).text
            findings = check_source(patch.path, text, thresholds)
        except (CoderefineError, SyntaxError):
            continue
        for finding in sorted_findings(findings):
            whole_file = finding.function is None
            if whole_file or any(finding.line <= line <= finding.end_line for line in patch.touched):
                lines.append(f"`{finding.path}:{finding.line}` {finding.detail()}")
    return lines


def _provider_line(options: ReviewOptions, settings: Settings) -> str:
    choice = choose_provider(settings, options.script)
    if choice.name == "offline":
        return (
            f"provider: offline ({choice.reason}): deterministic checks only - rule-based rewrites, "
            "each verified like a model's"
        )
    return f"provider: {choice.name} ({choice.reason})"


def _review_function(
    context: ActionsContext,
    patch: FilePatch,
    definition: Definition,
    options: ReviewOptions,
    settings: Settings,
    view: LoopObserver,
) -> FunctionReview:
    source_path = context.workspace / patch.path
    run_options = RunOptions(
        task=options.task,
        file=source_path,
        settings=settings,
        function=definition.name,
        tests=options.tests,
        script=options.script,
        pass_env=options.pass_env,
    )
    result = execute(run_options, view)
    if result.interrupted:
        raise KeyboardInterrupt  # the review stops; what was posted stays
    if result.error is not None and result.error.kind != INSUFFICIENT_TESTS:
        raise RunFailed(result.error)
    best = result.best
    if best is None or best.candidate is None:
        return FunctionReview(patch.path, definition.name, "no improvement", result.stop_reason)
    proof = evidence(result)
    diff = unified_diff(result.original_code, best.candidate.code, patch.path)
    change = line_change(result.original_code, best.candidate.code, definition)
    if change is None:
        why = f"verified, but it also changes lines outside `{definition.name}` (one suggestion cannot)"
        return FunctionReview(patch.path, definition.name, "outside the diff", why, None, diff, proof)
    if patch.hunk_holding(change.first, change.last) is None:
        why = f"verified, but lines {change.first}-{change.last} are not all in one hunk of the pull request's diff"
        return FunctionReview(patch.path, definition.name, "outside the diff", why, change, diff, proof)
    return FunctionReview(patch.path, definition.name, "suggested", proof, change, diff, proof)


def _collect(
    client: GitHubClient,
    context: ActionsContext,
    options: ReviewOptions,
    settings: Settings,
    outcome: ReviewOutcome,
    view: LoopObserver,
) -> None:
    pull = context.pull
    patches: list[FilePatch] = []
    for item in client.get_all(f"/repos/{pull.owner}/{pull.repo}/pulls/{pull.number}/files"):
        path, status = str(item.get("filename", "")), str(item.get("status", ""))
        if status == "removed" or item.get("changes") == 0 or not selected(path, options.paths):
            continue  # deleted, or renamed without a change: nothing to review
        patch = parse_patch(path, status, item.get("patch"))
        if patch.patch_missing:
            outcome.notes.append(f"`{path}`: GitHub sent no diff for it (too large or binary); not reviewed")
        else:
            patches.append(patch)
    outcome.findings = deterministic_findings(context.workspace, patches, settings)

    for patch in patches:
        try:
            changed = changed_definitions(read_source(context.workspace / patch.path).text, patch.touched)
        except CoderefineError as exc:
            outcome.notes.append(f"`{patch.path}`: not reviewed: {exc.message}")
            continue
        file_error: str | None = None
        for definition in changed:
            if outcome.error is not None or len(outcome.suggested) >= options.max_comments:
                why = outcome.error.message if outcome.error else f"the review holds {options.max_comments}"
                outcome.functions.append(FunctionReview(patch.path, definition.name, "not examined", why))
                continue
            if file_error is not None:
                outcome.functions.append(FunctionReview(patch.path, definition.name, "failed", file_error))
                continue
            view.note(f"review: {patch.path} {definition.name}")
            try:
                outcome.functions.append(_review_function(context, patch, definition, options, settings, view))
            except CoderefineError as exc:
                if exc.exit_code in _FILE_ERRORS:
                    file_error = exc.message
                else:
                    outcome.error = exc
                outcome.functions.append(FunctionReview(patch.path, definition.name, "failed", exc.message))


def render_summary(outcome: ReviewOutcome, inline: bool) -> str:
    """The summary comment (and step summary): one row per changed function, diffs of what is not inline."""
    lines = [
        SUMMARY_MARKER,
        f"### coderefine {outcome.task} review of {outcome.head_sha[:12]}",
        "",
        outcome.provider_line,
        "",
    ]
    if outcome.functions:
        lines += ["| file | function | result |", "| --- | --- | --- |"]
        for f in outcome.functions:
            state = f.state
            if state == "suggested" and not inline:
                state = "verified (not posted: the token may not comment)"
            elif state == "suggested":
                state = f"suggested on lines {f.change.first}-{f.change.last}" if f.change else state
            detail = f.detail.replace("|", "\\|").replace("\n", " ")
            lines.append(f"| `{f.path}` | `{f.function}` | {state}: {detail} |")
    else:
        lines.append("No changed Python function to review.")
    lines.append("")
    if outcome.review_posted:
        lines.append(f"{len(outcome.suggested)} verified suggestion(s) posted as review comments.")
    shown = [f for f in outcome.functions if f.diff and (f.state != "suggested" or not inline)]
    budget = SUMMARY_BUDGET
    for index, f in enumerate(shown):
        block = ["", f"<details><summary>{f.path} {f.function}: {f.proof}</summary>", "", fenced_diff(f.diff)]
        block += ["", "</details>"]
        budget -= sum(len(line) + 1 for line in block)
        if budget < 0:  # GitHub refuses comments over 65536 characters
            lines += ["", f"{len(shown) - index} more verified diff(s) left out: a comment holds 65536 characters."]
            break
        lines += block
    if outcome.findings:
        lines += ["", "#### Checks", "", *(f"- {finding}" for finding in outcome.findings)]
    if outcome.notes:
        lines += ["", *(f"- {note}" for note in outcome.notes)]
    if outcome.error is not None:
        lines += ["", f"The review stopped early: {outcome.error.message}"]
    return "\n".join(lines) + "\n"


def _post_review(client: GitHubClient, context: ActionsContext, outcome: ReviewOutcome, max_comments: int) -> None:
    pull = context.pull
    base = f"/repos/{pull.owner}/{pull.repo}/pulls/{pull.number}/reviews"
    marker = review_marker(pull.head_sha)
    if any(marker in str(review.get("body") or "") for review in client.get_all(base)):
        outcome.notes.append(f"the suggestions for {pull.head_sha[:12]} were posted by an earlier run")
        return
    for f in outcome.suggested[max_comments:]:  # collection stops at the cap; this keeps the promise regardless
        f.state, f.detail = "not posted", f"the review holds at most {max_comments} suggestions; {f.detail}"
    comments = []
    for f in outcome.suggested:
        assert f.change is not None
        comment: dict[str, object] = {
            "path": f.path,
            "body": comment_body(f.function, suggestion_block(f.change.replacement), f.proof),
            "line": f.change.last,
            "side": "RIGHT",
        }
        if f.change.first < f.change.last:
            comment.update(start_line=f.change.first, start_side="RIGHT")
        comments.append(comment)
    body = (
        f"coderefine ({outcome.task}): {len(comments)} verified suggestion(s); each was run against the tests "
        f"and the recorded calls before being suggested.\n\n{marker}"
    )
    client.post(base, {"commit_id": pull.head_sha, "event": "COMMENT", "body": body, "comments": comments})
    outcome.review_posted = True


def _upsert_summary(client: GitHubClient, context: ActionsContext, body: str) -> str:
    pull = context.pull
    comments = f"/repos/{pull.owner}/{pull.repo}/issues/{pull.number}/comments"
    existing = next((c for c in client.get_all(comments) if SUMMARY_MARKER in str(c.get("body") or "")), None)
    if existing is None:
        client.post(comments, {"body": body})
        return "comment created"
    client.patch(f"/repos/{pull.owner}/{pull.repo}/issues/comments/{existing['id']}", {"body": body})
    return "comment updated"


def _publish(
    client: GitHubClient, context: ActionsContext, outcome: ReviewOutcome, max_comments: int = MAX_COMMENTS
) -> str | None:
    """Post the review and the summary; returns the step-summary text when the token may not write."""
    read_only = False
    if outcome.suggested:
        try:
            _post_review(client, context, outcome, max_comments)
        except ReadOnlyToken:
            read_only = True
        except Unprocessable as exc:  # our hunk check should prevent it; if GitHub disagrees, keep the proof
            for f in outcome.suggested:
                f.state, f.detail = "outside the diff", f"verified; GitHub refused it inline: {f.detail}"
            outcome.notes.append(f"the inline suggestions were refused ({exc.message}); they are shown as diffs")
    if not read_only:
        try:
            outcome.summary_where = _upsert_summary(client, context, render_summary(outcome, inline=True))
            return None
        except ReadOnlyToken:
            read_only = True
    outcome.notes.append("the token may not comment on this pull request (read-only: a fork?); summary only here")
    return render_summary(outcome, inline=False)


def review_pull_request(
    environ: Mapping[str, str], options: ReviewOptions, settings: Settings, view: LoopObserver
) -> ReviewOutcome:
    """Review the pull request of this Actions job. Raises the error that ended it early, after publishing."""
    context = read_context(environ)
    pull = context.pull
    check_checkout(context.workspace, pull.head_sha)
    outcome = ReviewOutcome(
        repository=f"{pull.owner}/{pull.repo}",
        number=pull.number,
        head_sha=pull.head_sha,
        task=options.task,
        provider_line=_provider_line(options, settings),
    )
    outcome.skipped = skip_reason(head_commit(context.workspace, pull.head_sha))
    if outcome.skipped is not None:
        return outcome
    client = GitHubClient(context.api_url, context.token)
    try:
        _collect(client, context, options, settings, outcome, view)
        step_summary = _publish(client, context, outcome, options.max_comments)
    finally:
        client.close()
    if step_summary is not None:
        if context.step_summary is not None:
            with context.step_summary.open("a", encoding="utf-8") as handle:
                handle.write(step_summary)
            outcome.summary_where = "step summary"
        else:
            outcome.summary_where, outcome.unposted_summary = "stdout", step_summary
    if outcome.error is not None:
        raise outcome.error
    return outcome
