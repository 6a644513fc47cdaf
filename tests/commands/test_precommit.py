"""The hooks of .pre-commit-hooks.yaml with the real pre-commit, in temporary git repositories.

pre-commit installs a hook repository from a git revision, so the checkout (as it is on disk, committed or
not) is copied into a temporary repository and committed there. Its environment (a virtualenv with
coderefine pip-installed from PyPI's packages) is built once per test session in a private
PRE_COMMIT_HOME; each test then makes its own user repository whose config points at that revision.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import MODEL_ENVIRONMENT, REPO
from tests.quality.test_check import CLEAN, COMPLEX

PRE_COMMIT = [sys.executable, "-m", "pre_commit"]
# The hook environment is a session fixture: all on one xdist worker, so it is installed once.
pytestmark = pytest.mark.xdist_group("precommit")


def run(command, cwd, env, check=True):
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    if check:
        assert proc.returncode == 0, f"{command}: {proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory):
    """(repository, revision, environment) with the hook environment installed."""
    base = tmp_path_factory.mktemp("precommit")
    env = {name: value for name, value in os.environ.items() if name not in MODEL_ENVIRONMENT}
    env |= {
        "PRE_COMMIT_HOME": str(base / "pre-commit-home"),
        "XDG_CACHE_HOME": str(base / "cache"),
        "GIT_AUTHOR_NAME": "coderefine tests",
        "GIT_AUTHOR_EMAIL": "tests@example.invalid",
        "GIT_COMMITTER_NAME": "coderefine tests",
        "GIT_COMMITTER_EMAIL": "tests@example.invalid",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "NO_COLOR": "1",
        "COLUMNS": "200",
    }
    repo = base / "coderefine"
    repo.mkdir()
    listed = run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], REPO, env).stdout
    for relative in filter(None, listed.split("\0")):
        source = REPO / relative
        if source.is_file():  # deleted but still in the index: skip
            target = repo / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    run(["git", "init", "-q"], repo, env)
    run(["git", "add", "-A"], repo, env)
    run(["git", "commit", "-q", "-m", "coderefine as checked out"], repo, env)
    revision = run(["git", "rev-parse", "HEAD"], repo, env).stdout.strip()

    scratch = make_user_repo(base / "scratch", repo, revision, env)
    run([*PRE_COMMIT, "install-hooks"], scratch, env)  # the one environment install of the session
    return repo, revision, env


def make_user_repo(folder: Path, repo: Path, revision: str, env: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    run(["git", "init", "-q"], folder, env)
    (folder / ".pre-commit-config.yaml").write_text(
        textwrap.dedent(
            f"""\
            repos:
              - repo: {repo}
                rev: {revision}
                hooks:
                  - id: coderefine-check
                  - id: coderefine-refine
                    args: [--provider, offline, --sandbox, process]
            """
        )
    )
    (folder / "pytest.ini").write_text("[pytest]\n")
    run(["git", "add", ".pre-commit-config.yaml", "pytest.ini"], folder, env)
    return folder


@pytest.fixture
def user_repo(hook_repo, tmp_path):
    repo, revision, env = hook_repo
    folder = make_user_repo(tmp_path / "user", repo, revision, env)
    run([*PRE_COMMIT, "install"], folder, env)  # the git hook: `git commit` runs the commit-stage hooks
    return folder, env


def test_manifest_is_valid():
    proc = subprocess.run([*PRE_COMMIT, "validate-manifest", REPO / ".pre-commit-hooks.yaml"], capture_output=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_commit_with_a_too_complex_function_fails_with_the_finding(user_repo):
    folder, env = user_repo
    (folder / "complex.py").write_text(COMPLEX.lstrip("\n"))
    run(["git", "add", "complex.py"], folder, env)
    proc = run(["git", "commit", "-m", "add classify"], folder, env, check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert "coderefine check" in output and "Failed" in output and "exit code: 16" in output
    assert "complex.py:1: cyclomatic-complexity 12 > 10: split `classify` into smaller functions" in output
    assert run(["git", "rev-parse", "--verify", "HEAD"], folder, env, check=False).returncode != 0  # no commit


@pytest.mark.slow
def test_clean_commit_passes_and_the_manual_hook_stays_out_of_it(user_repo):
    folder, env = user_repo
    (folder / "clean.py").write_text(CLEAN.lstrip("\n"))
    (folder / "mod.py").write_text(IMPROVABLE)
    run(["git", "add", "clean.py", "mod.py"], folder, env)
    proc = run(["git", "commit", "-m", "add double"], folder, env)
    output = proc.stdout + proc.stderr  # git shows the hook's output on stderr
    assert re.search(r"^coderefine check\.+Passed$", output, re.MULTILINE), output
    assert "coderefine refine" not in output  # stage manual: never on a plain commit
    assert (folder / "mod.py").read_text() == IMPROVABLE


IMPROVABLE = """\
def is_adult(age):
    if age >= 18:
        return True
    else:
        return False


def label(age):
    return "adult" if is_adult(age) else "minor"
"""
LABEL_TESTS = """\
from mod import is_adult, label


def test_label():
    assert label(20) == "adult"
    assert label(3) == "minor"
    assert is_adult(18)
"""
DOUBLE_TESTS = (
    "from clean import double\n\n\ndef test_double():\n    assert double(4) == 8\n"
    "    assert double(0) == 0 and double(-3) == -6\n"  # three calls: enough to judge a candidate
)


@pytest.mark.slow
def test_manual_refine_hook_writes_only_a_verified_change(user_repo):
    folder, env = user_repo
    (folder / "mod.py").write_text(IMPROVABLE)
    (folder / "test_mod.py").write_text(LABEL_TESTS)
    (folder / "clean.py").write_text(CLEAN.lstrip("\n"))
    (folder / "test_clean.py").write_text(DOUBLE_TESTS)
    run(["git", "add", "-A"], folder, env)

    # Nothing to improve: the hook passes and the file stays byte for byte.
    proc = run(
        [*PRE_COMMIT, "run", "coderefine-refine", "--hook-stage", "manual", "--verbose", "--files", "clean.py"],
        folder,
        env,
    )
    assert "status: unchanged" in proc.stdout, proc.stdout
    assert (folder / "clean.py").read_text() == CLEAN.lstrip("\n")

    # A verified improvement: written atomically; pre-commit fails the hook because a file changed.
    proc = run(
        [*PRE_COMMIT, "run", "coderefine-refine", "--hook-stage", "manual", "--files", "mod.py", "test_mod.py"],
        folder,
        env,
        check=False,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "files were modified by this hook" in proc.stdout
    assert "== test_mod.py" not in proc.stdout  # test files verify; they are not refined themselves
    assert "written to mod.py" in proc.stdout
    refined = (folder / "mod.py").read_text()
    assert "return age >= 18" in refined and "return True" not in refined
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=folder, text=True, capture_output=True
    )
    assert tests.returncode == 0, tests.stdout
    assert (folder / "test_mod.py").read_text() == LABEL_TESTS
