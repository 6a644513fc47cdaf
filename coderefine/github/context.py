"""The pull request a GitHub Actions job runs for, read from the environment Actions sets.

Everything is validated here, before any API call or sandbox run, so that a workflow wired up wrongly
(not a pull request event, the merge commit checked out instead of the head) fails in a second with one
line naming the fix.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coderefine.errors import ActionsContextError

DEFAULT_API_URL = "https://api.github.com"
# The commits the action must not review (see README, "GitHub Action"): authored by the Actions bot (a
# workflow that commits with the default token), or carrying this marker in the message.
BOT_LOGIN = "github-actions[bot]"
SKIP_MARKER = "[skip coderefine]"
_SHA = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class PullRequest:
    owner: str
    repo: str
    number: int
    head_sha: str
    base_sha: str
    head_repo: str  # owner/name the head branch lives in
    base_repo: str

    @property
    def is_fork(self) -> bool:
        # Fork PRs get a read-only token and no secrets: no key, and the summary may not be postable.
        return self.head_repo.lower() != self.base_repo.lower()


@dataclass(frozen=True)
class ActionsContext:
    pull: PullRequest
    api_url: str
    token: str
    workspace: Path
    step_summary: Path | None


def _field(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            raise ActionsContextError(f"GITHUB_EVENT_PATH: the event has no pull_request.{'.'.join(keys[1:])}")
        data = data[key]
    return data


def read_event(path: Path, repository: str) -> PullRequest:
    try:
        event = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ActionsContextError(f"GITHUB_EVENT_PATH {path}: cannot read ({exc.strerror})") from None
    except ValueError:
        raise ActionsContextError(f"GITHUB_EVENT_PATH {path}: not JSON") from None
    if not isinstance(event, dict) or not isinstance(event.get("pull_request"), dict):
        raise ActionsContextError(
            "the workflow event is not a pull request; run `coderefine review` on `pull_request` events"
        )
    number, head, base = (_field(event, "pull_request", key) for key in ("number", "head", "base"))
    head_sha, base_sha = _field(event, "pull_request", "head", "sha"), _field(event, "pull_request", "base", "sha")
    if not isinstance(number, int) or not all(isinstance(s, str) and _SHA.match(s) for s in (head_sha, base_sha)):
        raise ActionsContextError("GITHUB_EVENT_PATH: pull_request.number or a head/base sha is malformed")
    owner, _, name = repository.partition("/")
    base_repo = ((base.get("repo") or {}).get("full_name")) or repository
    head_repo = ((head.get("repo") or {}).get("full_name")) or base_repo  # a deleted fork has repo: null
    return PullRequest(owner, name, number, head_sha, base_sha, head_repo, base_repo)


def read_context(environ: Mapping[str, str]) -> ActionsContext:
    missing = [name for name in ("GITHUB_EVENT_PATH", "GITHUB_REPOSITORY") if not environ.get(name)]
    if missing:
        raise ActionsContextError(
            f"{' and '.join(missing)} not set: `coderefine review` runs inside a GitHub Actions pull_request job"
        )
    repository = environ["GITHUB_REPOSITORY"]
    if repository.count("/") != 1 or not all(repository.split("/")):
        raise ActionsContextError(f"GITHUB_REPOSITORY must be owner/name, not {repository!r}")
    token = environ.get("GITHUB_TOKEN", "").strip()
    if not token:
        raise ActionsContextError("GITHUB_TOKEN is not set; pass github-token to the action (default: github.token)")
    pull = read_event(Path(environ["GITHUB_EVENT_PATH"]), repository)
    workspace = Path(environ.get("GITHUB_WORKSPACE") or Path.cwd())
    summary = environ.get("GITHUB_STEP_SUMMARY")
    return ActionsContext(
        pull=pull,
        api_url=(environ.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
        token=token,
        workspace=workspace,
        step_summary=Path(summary) if summary else None,
    )


def _git(workspace: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(workspace), *args], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ActionsContextError(f"git in {workspace}: {exc}") from None
    if done.returncode != 0:
        detail = (done.stderr.strip().splitlines() or ["failed"])[-1]
        raise ActionsContextError(f"git {' '.join(args)} in {workspace}: {detail}")
    return done.stdout


def check_checkout(workspace: Path, head_sha: str) -> None:
    """The files reviewed must be the head commit's: comment lines are numbered in the head's files.

    actions/checkout checks out the merge commit of a pull_request event by default, whose files can
    differ from the head's; that must be fixed in the workflow, not guessed around."""
    if not workspace.is_dir():
        raise ActionsContextError(f"GITHUB_WORKSPACE {workspace}: no such folder")
    current = _git(workspace, "rev-parse", "HEAD").strip()
    if current != head_sha:
        raise ActionsContextError(
            f"the checkout in {workspace} is at {current[:12]}, not the pull request's head {head_sha[:12]}; "
            "check out with `ref: ${{ github.event.pull_request.head.sha }}`"
        )


@dataclass(frozen=True)
class HeadCommit:
    author_name: str
    author_email: str
    message: str


def head_commit(workspace: Path, sha: str) -> HeadCommit:
    name, email, message = _git(workspace, "log", "-1", "--format=%an%x00%ae%x00%B", sha).split("\0", 2)
    return HeadCommit(name, email, message)


def skip_reason(commit: HeadCommit) -> str | None:
    """Why this commit is the action's own (and is not reviewed, to avoid a loop), or None."""
    if commit.author_name == BOT_LOGIN or commit.author_email.split("@")[0].endswith(f"+{BOT_LOGIN}"):
        return f"the head commit was authored by {BOT_LOGIN}"
    if SKIP_MARKER in commit.message:
        return f"the head commit's message carries {SKIP_MARKER}"
    return None
