"""`coderefine review` end to end: real git checkouts, the real CLI, a loopback GitHub API (tests/github_server.py)."""

from __future__ import annotations

import json
import re
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from coderefine.github.diff import Definition, changed_definitions, parse_patch
from coderefine.github.suggestions import apply_change, line_change
from tests.conftest import run_cli, write_script
from tests.github_server import GitHubServer
from tests.openai_server import OpenAIServer

TEST_FILE = """
from mod import evens, is_small, scale


def test_all():
    # Three calls to each function at least: fewer cannot judge a candidate (the sufficiency gate).
    assert scale([1, 2], 3) == [3, 6]
    assert scale([], 2) == [] and scale([5], 0) == [0]
    assert evens([1, 2, 3, 4]) == [2, 4]
    assert evens([]) == [] and evens([7, 8]) == [8]
    assert is_small(9)
    assert is_small(3) and not is_small(30)
"""
BASE = """
def scale(xs, k):
    return [x * k for x in xs]


def evens(xs):
    return [x for x in xs if x % 2 == 0]


def is_small(n):
    return n < 10
"""
# The pull request makes `evens` and `is_small` wordier; `scale` is left as it was.
HEAD = """
def scale(xs, k):
    qzx = []
    for x in xs:
        qzx.append(x * k)
    return qzx


def evens(xs):
    zzq = []
    for x in xs:
        if x % 2 == 0:
            zzq.append(x)
    return zzq


def is_small(n):
    if n < 10:
        return True
    else:
        return False
"""


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# BASE with only `evens` made wordy: a pull request with one changed function (one run of the loop).
WORDY_EVENS = dedent(BASE).replace(
    "    return [x for x in xs if x % 2 == 0]\n", dedent(HEAD).split("\n\n\n")[1][15:] + "\n"
)


@dataclass
class PullRequest:
    checkout: Path
    base: str
    head: str
    files: list[dict]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def make_pull(
    tmp_path: Path,
    base: dict[str, str],
    head: dict[str, str],
    author: str = "Dev <dev@example.com>",
    message: str = "Change things",
) -> PullRequest:
    """A real repository with a base and a head commit, checked out at the head, and the files list the
    API would serve for it (the patches are git's own, from the first hunk header)."""
    repo = tmp_path / "checkout"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Dev")
    git(repo, "config", "user.email", "dev@example.com")
    for files, text in ((base, "Base"), (head, message)):
        for relative, source in files.items():
            (repo / relative).parent.mkdir(parents=True, exist_ok=True)
            (repo / relative).write_text(dedent(source))
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", text, *(["--author", author] if files is head else []))
    base_sha, head_sha = git(repo, "rev-parse", "HEAD~1").strip(), git(repo, "rev-parse", "HEAD").strip()
    listed = []
    for relative in git(repo, "diff", "--name-only", base_sha, head_sha).split():
        diff = git(repo, "diff", "--no-color", base_sha, head_sha, "--", relative)
        listed.append(
            {
                "filename": relative,
                "status": "added" if relative not in base else "modified",
                "patch": diff[diff.index("@@") :].rstrip("\n"),
            }
        )
    return PullRequest(repo, base_sha, head_sha, listed)


def project_pull(tmp_path: Path, head: str = HEAD) -> PullRequest:
    """BASE with its test as the base commit, `head` as the pull request's mod.py."""
    return make_pull(tmp_path, {"pytest.ini": "[pytest]\n", "mod.py": BASE, "test_mod.py": TEST_FILE}, {"mod.py": head})


@pytest.fixture
def github():
    server = GitHubServer().start()
    yield server
    server.stop()


def actions_env(tmp_path: Path, server: GitHubServer, pull: PullRequest, fork: bool = False, number: int = 7) -> dict:
    head_repo = "contributor/demo" if fork else "octo/demo"
    event = {
        "action": "synchronize",
        "number": number,
        "pull_request": {
            "number": number,
            "head": {"sha": pull.head, "ref": "feature", "repo": {"full_name": head_repo}},
            "base": {"sha": pull.base, "ref": "main", "repo": {"full_name": "octo/demo"}},
        },
        "repository": {"full_name": "octo/demo"},
    }
    (tmp_path / "event.json").write_text(json.dumps(event))
    server.add_pull(number, pull.head, pull.files)
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
        "GITHUB_REPOSITORY": "octo/demo",
        "GITHUB_API_URL": server.url,
        "GITHUB_TOKEN": server.token,
        "GITHUB_WORKSPACE": str(pull.checkout),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "step-summary.md"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }


def review(env: dict, *options: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli("review", "--sandbox", "process", *options, env=env, cwd=cwd, timeout=300)


def fenced(code: str) -> str:
    return f"```python\n{dedent(code)}```"


def readable_script(tmp_path: Path, *names: str) -> Path:
    """One answer rewriting every function of HEAD; each run merges only the function it targets."""
    rewritten = {
        "scale": "def scale(xs, k):\n    return [x * k for x in xs]\n",
        "evens": "def evens(xs):\n    return [x for x in xs if x % 2 == 0]\n",
        "is_small": "def is_small(n):\n    return n < 10\n",
    }
    code = "\n\n".join(rewritten[name] for name in names or rewritten)
    return write_script(tmp_path / "script.json", [fenced(code)], ["VERDICT: STOP"])


def summary_comments(server: GitHubServer, number: int = 7) -> list[dict]:
    return [c for c in server.pulls[number].comments if "<!-- coderefine-summary -->" in c["body"]]


def suggestion_of(comment: dict) -> str:
    match = re.search(r"(`{3,})suggestion\n(.*?)^\1$", comment["body"], re.DOTALL | re.MULTILINE)
    assert match, comment["body"]
    return match.group(2)


def applied(head_text: str, comment: dict) -> str:
    """GitHub's "Commit suggestion": lines start_line..line replaced by the block."""
    lines = head_text.splitlines(keepends=True)
    first = comment.get("start_line", comment["line"])
    return "".join(lines[: first - 1]) + suggestion_of(comment) + "".join(lines[comment["line"] :])


# -- end to end


SLOW_BASE = """
def unique(items):
    seen = []
    out = []
    for item in items:
        if item not in seen:
            seen.append(item)
            out.append(item)
    return out


def count_common(a, b):
    return len(set(a) & set(b))
"""
SLOW_HEAD = """
def unique(items):
    seen = []
    out = []
    for item in items:
        if item not in seen:
            seen.append(item)
            out.append(item)
    return out


def count_common(a, b):
    count = 0
    for x in a:
        if x in b:
            count += 1
    return count
"""
SLOW_TESTS = """
from mod import count_common, unique


def test_count_common():
    assert count_common(list(range(400)), list(range(200, 600))) == 200
    assert count_common([], [1]) == 0 and count_common([1, 2], [2]) == 1


def test_unique():
    assert unique([3, 1, 3, 2, 1]) == [3, 1, 2]
    assert unique([]) == [] and unique([4, 4]) == [4]
"""
FAST_COUNT = "def count_common(a, b):\n    wanted = set(b)\n    return sum(1 for x in a if x in wanted)\n"


@pytest.mark.slow  # not `timed`: a 7x-1000x candidate holds under load (see timed_last.py)
def test_a_changed_slow_function_gets_one_verified_suggestion_and_its_unchanged_neighbour_none(tmp_path, github):
    pull = make_pull(
        tmp_path,
        {"pytest.ini": "[pytest]\n", "mod.py": SLOW_BASE, "test_mod.py": SLOW_TESTS},
        {"mod.py": SLOW_HEAD},
    )
    # The model also rewrites the unchanged (and slow) `unique`: only `count_common` is the PR's, so only it changes.
    fast_unique = "def unique(items):\n    return list(dict.fromkeys(items))\n"
    script = write_script(tmp_path / "script.json", [fenced(fast_unique + "\n\n" + FAST_COUNT)], ["VERDICT: STOP"])
    env = actions_env(tmp_path, github, pull)

    proc = review(env, "--task", "optimize", "--provider", "scripted", "--script", script, "--timing-pairs", "3")

    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert github.violations == []
    reviews = [r for r in github.requests if r.method == "POST" and r.path.endswith("/pulls/7/reviews")]
    assert len(reviews) == 1
    body = reviews[0].body
    assert body["event"] == "COMMENT" and body["commit_id"] == pull.head
    (comment,) = body["comments"]
    head_text = (pull.checkout / "mod.py").read_text()
    unique_lines = range(1, 9)  # `unique` spans lines 1-8 of the head's mod.py
    assert comment["path"] == "mod.py" and comment["side"] == "RIGHT"
    assert comment["start_line"] not in unique_lines and comment["line"] not in unique_lines
    assert comment["start_line"] == 12 and comment["line"] == 16  # exactly the body lines that change
    expected = dedent(SLOW_HEAD).replace(dedent(SLOW_HEAD).split("\n\n\n")[1], FAST_COUNT)
    assert applied(head_text, comment) == expected
    assert re.search(r"\*\*\d+\.\d\dx faster\*\* \[\d+\.\d\d, \d+\.\d\d\]", comment["body"])
    # the one test that calls count_common judges it (test selection); test_unique ran in the baseline only
    assert "1 tests passed" in comment["body"] and "recorded calls replayed identically" in comment["body"]
    (summary,) = summary_comments(github)
    assert "`count_common` | suggested on lines 12-16" in summary["body"] and "unique" not in summary["body"]
    assert (pull.checkout / "mod.py").read_text() == head_text  # the checkout is never written


@pytest.mark.slow
def test_a_second_run_updates_the_one_summary_and_does_not_repeat_the_review(tmp_path, github):
    pull = project_pull(tmp_path, WORDY_EVENS)
    env = actions_env(tmp_path, github, pull)
    github.max_per_page = 10  # the summary lands on the third page of 25 earlier comments
    for index in range(25):
        github.add_comment(7, f"comment {index}")
    script = readable_script(tmp_path)

    first = review(env, "--task", "readability", "--script", script, "--paths", "*.py")
    second = review(env, "--task", "readability", "--script", script)

    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert github.violations == []
    assert len(summary_comments(github)) == 1
    posts = [r.path for r in github.writes() if r.method == "POST"]
    assert posts.count("/repos/octo/demo/pulls/7/reviews") == 1
    assert posts.count("/repos/octo/demo/issues/7/comments") == 1
    (patch,) = [r for r in github.writes() if r.method == "PATCH"]
    assert re.fullmatch(r"/repos/octo/demo/issues/comments/\d+", patch.path)
    assert "posted by an earlier run" in patch.body["body"]
    pages = [r.query.get("page", ["1"])[0] for r in github.requests if r.path.endswith("/issues/7/comments")]
    assert "3" in pages  # it followed the Link header to find the marker
    (posted,) = github.pulls[7].reviews
    head_text = (pull.checkout / "mod.py").read_text()
    (comment,) = posted["comments"]
    assert "`evens`" in comment["body"] and "readability" in comment["body"] and "1 tests passed" in comment["body"]
    assert applied(head_text, comment) == dedent(BASE)
    assert "review: octo/demo#7" in second.stdout and "comment updated" in second.stdout


@pytest.mark.slow
def test_a_read_only_token_writes_the_step_summary_and_succeeds_and_no_secret_is_printed(tmp_path, github):
    """A fork's pull request: read-only token, no key. The key and token appear in no output and no file."""
    pull = project_pull(tmp_path)
    github.token = "ghs_DISTINCTIVE_token_ee5f7c01d2"
    github.read_only = True
    env = actions_env(tmp_path, github, pull, fork=True)
    key = "sk-DISTINCTIVE-key-9b1c44e7aa"
    env.update(OPENAI_API_KEY=key, CODEREFINE_PROVIDER="scripted")

    proc = review(env, "--task", "readability", "--script", readable_script(tmp_path, "evens"))

    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert github.violations == []
    refused = [r for r in github.writes() if r.status == 403]
    assert refused and all(r.status == 403 for r in github.writes())
    step = (tmp_path / "step-summary.md").read_text()
    assert "<!-- coderefine-summary -->" in step and "read-only" in step
    assert "```diff" in step and "+    return [x for x in xs if x % 2 == 0]" in step  # the verified change, shown
    assert "summary: step summary" in proc.stdout
    for secret in (key, github.token):
        assert secret not in proc.stdout + proc.stderr
        for path in tmp_path.rglob("*"):
            if path.is_file():
                assert secret.encode() not in path.read_bytes(), path


@pytest.mark.slow
def test_no_key_means_the_offline_provider_and_deterministic_checks_only(tmp_path, github):
    wordy = dedent(BASE).replace("    return n < 10\n", dedent(HEAD).split("\n\n\n")[2][17:])
    pull = project_pull(tmp_path, wordy)
    env = actions_env(tmp_path, github, pull, fork=True)

    proc = review(env, "--task", "readability", "--paths", "other/*.py,mod.py", "--max-complexity", "1")

    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert github.violations == []
    (summary,) = summary_comments(github)
    assert "provider: offline" in summary["body"] and "deterministic checks only" in summary["body"]
    # The check findings, on the function the pull request changed only (all three are above 1).
    checks = summary["body"].split("#### Checks", 1)[1]
    assert "`mod.py:9` cyclomatic-complexity 2 > 1: split `is_small`" in checks, checks
    assert "`scale`" not in checks and "`evens`" not in checks
    (posted,) = github.pulls[7].reviews
    (comment,) = posted["comments"]  # the rule-based rewrite, verified and suggested without any model
    assert "`is_small`" in comment["body"] and (comment["start_line"], comment["line"]) == (10, 13)
    assert applied((pull.checkout / "mod.py").read_text(), comment) == dedent(BASE)


def test_the_actions_own_commit_is_skipped_without_a_request(tmp_path, github):
    pull = make_pull(
        tmp_path,
        {"pytest.ini": "[pytest]\n", "mod.py": BASE, "test_mod.py": TEST_FILE},
        {"mod.py": HEAD},
        author="github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>",
    )
    env = actions_env(tmp_path, github, pull)

    proc = review(env, "--task", "readability", "--script", readable_script(tmp_path))

    assert proc.returncode == 0, proc.stderr
    assert "skipped octo/demo#7: the head commit was authored by github-actions[bot]" in proc.stdout
    assert github.requests == []


def test_a_skip_marker_in_the_message_is_skipped(tmp_path, github):
    pull = make_pull(
        tmp_path,
        {"pytest.ini": "[pytest]\n", "mod.py": BASE, "test_mod.py": TEST_FILE},
        {"mod.py": HEAD},
        message="Apply the suggestions [skip coderefine]",
    )
    proc = review(actions_env(tmp_path, github, pull), "--task", "readability")
    assert proc.returncode == 0 and "[skip coderefine]" in proc.stdout and github.requests == []


@pytest.mark.slow
def test_suggestions_beyond_the_cap_are_listed_in_the_summary_not_posted(tmp_path, github):
    pull = project_pull(tmp_path)
    env = actions_env(tmp_path, github, pull)

    proc = review(env, "--task", "readability", "--script", readable_script(tmp_path), "--max-comments", "2")

    assert proc.returncode == 0, proc.stdout + proc.stderr
    (posted,) = github.pulls[7].reviews
    assert len(posted["comments"]) == 2
    (summary,) = summary_comments(github)
    assert "| `mod.py` | `is_small` | not examined: the review holds 2 |" in summary["body"]


def test_the_cap_is_thirty_and_no_more_can_be_asked_for(tmp_path, github):
    proc = run_cli("review", "--max-comments", "31")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_an_api_failure_is_one_line_and_exit_17(tmp_path, github):
    pull = project_pull(tmp_path)
    env = actions_env(tmp_path, github, pull)
    github.faults[("GET", r"/pulls/7/files$")] = 500

    proc = review(env, "--task", "readability", "--script", readable_script(tmp_path))

    assert proc.returncode == 17, proc.stdout + proc.stderr
    assert proc.stderr.strip() == "error: GitHub API: GET /repos/octo/demo/pulls/7/files answered 500: Server Error"
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.slow
def test_a_failing_write_is_exit_17_after_the_review(tmp_path, github):
    pull = project_pull(tmp_path, WORDY_EVENS)
    env = actions_env(tmp_path, github, pull)
    github.faults[("POST", r"/issues/7/comments$")] = 500

    proc = review(env, "--task", "readability", "--script", readable_script(tmp_path, "evens"))

    assert proc.returncode == 17 and proc.stderr.count("\n") == 1, proc.stderr
    assert len(github.pulls[7].reviews) == 1


@pytest.mark.slow
def test_the_openai_provider_gets_the_key_from_the_environment_and_never_shows_it(tmp_path, github):
    pull = project_pull(tmp_path, WORDY_EVENS)
    key = "sk-review-DISTINCTIVE-0f9e8d7c6b"
    model = OpenAIServer(api_key=key).start()
    try:
        model.queue(fenced("def evens(xs):\n    return [x for x in xs if x % 2 == 0]\n"), "VERDICT: STOP")
        env = actions_env(tmp_path, github, pull)
        env.update(OPENAI_API_KEY=key, CODEREFINE_BASE_URL=model.url, CODEREFINE_MODEL="test-model")
        proc = review(env, "--task", "readability", "--paths", "mod.py", "--max-iterations", "1")
    finally:
        model.stop()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert model.chat_requests() and all(r.headers["authorization"] == f"Bearer {key}" for r in model.requests)
    (summary,) = summary_comments(github)
    assert "provider: openai" in summary["body"]
    assert any("`evens`" in c["body"] for c in github.pulls[7].reviews[0]["comments"])
    assert key not in proc.stdout + proc.stderr
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path


@pytest.mark.slow
def test_failing_tests_and_a_syntax_error_are_reported_in_the_summary_not_failures(tmp_path, github):
    broken_evens = dedent(BASE).replace("x % 2 == 0]", "x % 2 == 1]")
    pull = make_pull(
        tmp_path,
        {"pytest.ini": "[pytest]\n", "mod.py": BASE, "test_mod.py": TEST_FILE},
        {"mod.py": broken_evens.replace("    return n < 10\n", "    return n <= 9\n"), "broken.py": "def f(:\n"},
    )
    proc = review(actions_env(tmp_path, github, pull), "--task", "readability", "--script", readable_script(tmp_path))

    assert proc.returncode == 0, proc.stdout + proc.stderr
    (summary,) = summary_comments(github)
    assert "`broken.py`: not reviewed: " in summary["body"] and "syntax error" in summary["body"]
    rows = [line for line in summary["body"].splitlines() if line.startswith("| `mod.py`")]
    assert len(rows) == 2 and all("failed" in row and "fails" in row for row in rows), rows
    assert github.pulls[7].reviews == []  # nothing verified, nothing suggested


LONG_BASE = """
def total(xs):
    qzx = 0
    zqq = 1
    qqz = 2
    for x in xs:
        qzx += x
    qzx = qzx + zqq + qqz - 3
    return qzx
"""
LONG_TEST = """
from long import total


def test_total():
    assert total([1, 2, 3]) == 6
    assert total([]) == 0 and total([-1]) == -1
"""


@pytest.mark.slow
def test_a_verified_change_reaching_outside_the_diff_goes_to_the_summary_not_inline(tmp_path, github):
    """The PR touches the top of `total`; the verified rewrite also changes its last lines, which the
    diff's hunk does not show: GitHub would refuse that comment (422), so the change is a summary diff."""
    head = dedent(LONG_BASE).replace("    qzx = 0\n", "    qzx = 0  # the running sum\n")
    pull = make_pull(
        tmp_path, {"pytest.ini": "[pytest]\n", "long.py": LONG_BASE, "test_long.py": LONG_TEST}, {"long.py": head}
    )
    script = write_script(tmp_path / "script.json", [fenced("def total(xs):\n    return sum(xs)\n")], ["VERDICT: STOP"])

    proc = review(actions_env(tmp_path, github, pull), "--task", "readability", "--script", script)

    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert github.violations == [] and github.pulls[7].reviews == []
    (summary,) = summary_comments(github)
    assert (
        "| `long.py` | `total` | outside the diff: verified, but lines 2-8 are not all in one hunk" in summary["body"]
    )
    assert "```diff" in summary["body"] and "+    return sum(xs)" in summary["body"]


def test_a_read_only_token_without_a_step_summary_prints_the_summary(tmp_path, github):
    pull = make_pull(tmp_path, {"pytest.ini": "[pytest]\n", "notes.txt": "a\n"}, {"notes.txt": "b\n"})
    env = actions_env(tmp_path, github, pull, fork=True)
    env["GITHUB_STEP_SUMMARY"] = ""
    github.read_only = True

    proc = review(env)

    assert proc.returncode == 0, proc.stderr
    assert "<!-- coderefine-summary -->" in proc.stdout and "No changed Python function to review." in proc.stdout
    assert "summary: stdout" in proc.stdout


def test_the_review_never_holds_more_than_thirty_suggestions(tmp_path, github):
    """The cap where the review is built, with 31 verified suggestions, against the loopback API."""
    from coderefine.github.api import GitHubClient
    from coderefine.github.context import read_context
    from coderefine.github.review import FunctionReview, ReviewOutcome, _publish
    from coderefine.github.suggestions import LineChange

    code = "\n".join(f"def f{i}():\n    return {i}\n" for i in range(31))
    patch = f"@@ -0,0 +1,{len(code.splitlines())} @@\n" + "".join(f"+{line}\n" for line in code.splitlines())
    pull = PullRequest(tmp_path, "a" * 40, "b" * 40, [{"filename": "big.py", "status": "added", "patch": patch}])
    context = read_context(actions_env(tmp_path, github, pull))
    outcome = ReviewOutcome("octo/demo", 7, pull.head, "readability", "provider: scripted")
    for i in range(31):
        change = LineChange(3 * i + 2, 3 * i + 2, f"    return {i} + 0\n")
        outcome.functions.append(FunctionReview("big.py", f"f{i}", "suggested", "proof", change, "diff", "proof"))
    client = GitHubClient(context.api_url, context.token)
    try:
        assert _publish(client, context, outcome) is None
    finally:
        client.close()

    assert github.violations == []
    (posted,) = github.pulls[7].reviews
    assert len(posted["comments"]) == 30 and {c["line"] for c in posted["comments"]} == {3 * i + 2 for i in range(30)}
    (summary,) = summary_comments(github)
    assert "| `big.py` | `f30` | not posted: the review holds at most 30 suggestions" in summary["body"]


def test_the_summary_stays_under_githubs_comment_limit():
    from coderefine.github.review import FunctionReview, ReviewOutcome, render_summary

    outcome = ReviewOutcome("octo/demo", 7, "c" * 40, "optimize", "provider: offline")
    diff = "".join(f"+    line_{i} = {i}\n" for i in range(200))
    for i in range(40):
        outcome.functions.append(FunctionReview("m.py", f"f{i}", "outside the diff", "verified", None, diff, "1.5x"))
    text = render_summary(outcome, inline=True)
    assert len(text) < 65536 and text.count("<details>") < 40
    assert f"{40 - text.count('<details>')} more verified diff(s) left out" in text


# -- bad environments


def test_outside_a_pull_request_job_is_exit_18(tmp_path):
    proc = run_cli("review", env={"GITHUB_EVENT_PATH": "", "GITHUB_REPOSITORY": ""})
    assert proc.returncode == 18 and proc.stderr.startswith("error: GITHUB_EVENT_PATH and GITHUB_REPOSITORY not set")


def test_the_merge_commit_checked_out_is_exit_18_naming_the_fix(tmp_path, github):
    pull = project_pull(tmp_path)
    env = actions_env(tmp_path, github, pull)
    git(pull.checkout, "checkout", "-q", pull.base)
    proc = review(env)
    assert proc.returncode == 18 and "ref: ${{ github.event.pull_request.head.sha }}" in proc.stderr
    assert github.requests == []


# -- the pieces


def test_changed_definitions_follow_added_lines_and_deletions():
    code = dedent(HEAD)
    patch = "@@ -7,2 +8,3 @@ def scale(xs, k):\n-def evens(xs):\n+def evens(xs):\n+    zzq = []\n x\n"
    touched = parse_patch("mod.py", "modified", patch).touched
    assert [d.name for d in changed_definitions(code, touched)] == ["evens"]
    deletion = parse_patch("mod.py", "modified", "@@ -3,3 +3,2 @@\n     for x in xs:\n-    pass\n     x\n").touched
    assert [d.name for d in changed_definitions(code, deletion)] == ["scale"]


def test_a_change_outside_the_function_gives_no_suggestion():
    original = "def f():\n    return 1\n"
    assert line_change(original, "import os\n\n" + original, Definition("f", 1, 2)) is None
    change = line_change(original, "def f():\n    x = 1\n    return x\n", Definition("f", 1, 2))
    assert change is not None and (change.first, change.last) == (2, 2)
    assert apply_change(original, change) == "def f():\n    x = 1\n    return x\n"
    assert line_change(original, original + "\n\ndef g():\n    pass\n", Definition("f", 1, 2)) is None
    appended = line_change(original, original + "    # done\n", Definition("f", 1, 2))
    assert appended is not None and apply_change(original, appended) == original + "    # done\n"
