"""Shared fixtures: real CLI subprocesses, small real projects, and the shared benchmark suites."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from coderefine.setting_specs import SPECS
from tests.timed_last import GROUPS_FOLDER, TimedLastScheduling, write_groups

REPO = Path(__file__).resolve().parent.parent

# This machine sets PYTHONDONTWRITEBYTECODE=1 (CI runs on one of its kind). Under it pytest rewrites the asserts of
# every test module in every process anew, its cache never written: 260 modules, ~4 s of CPU in each of the five
# processes a run starts (the controller and four workers). This process writes its bytecode as Python does by
# default, and so that of the coderefine modules it imports, which the processes the tests start (they keep the
# variable) then read instead of compiling them. A clean checkout's first run gains nothing measurable (every
# process rewrites at once; CI dry runs took 517 s and 521 s); a developer's unit pass does (60-68 s before,
# 45-56 s after).
sys.dont_write_bytecode = False


def _shared_bench() -> Path:
    """`../shared/bench` beside the checkout; for a git worktree, beside the main checkout it belongs to."""
    beside = REPO.parent / "shared" / "bench"
    if beside.is_dir() or not (REPO / ".git").is_file():
        return beside
    common = subprocess.run(
        ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()  # <main checkout>/.git
    main_checkout = Path(common).parent if common else REPO
    return main_checkout.parent / "shared" / "bench" if (main_checkout.parent / "shared" / "bench").is_dir() else beside


# The one place the tests find the shared benchmark suites (../shared/bench); CODEREFINE_BENCH overrides it.
BENCH = Path(os.environ.get("CODEREFINE_BENCH") or _shared_bench())
IN_CI = os.environ.get("CI") == "true"
MODEL_ENVIRONMENT = frozenset({"OPENAI_API_KEY", *(name for spec in SPECS for name in spec.env)})


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> Iterator[None]:
    for item in items:
        if item.get_closest_marker("timed"):
            item.add_marker(pytest.mark.slow)  # before `-m "not slow"` deselects
    yield
    if GROUPS_FOLDER in getattr(config, "workerinput", {}):  # an xdist worker: tell the scheduler the groups
        write_groups(Path(config.workerinput[GROUPS_FOLDER]), config.workerinput["workerid"], items)


_groups_folder = pytest.StashKey[Path]()


def _groups(config: pytest.Config) -> Path:
    if _groups_folder not in config.stash:
        config.stash[_groups_folder] = Path(tempfile.mkdtemp(prefix="coderefine-test-groups-"))
    return config.stash[_groups_folder]


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    node.workerinput[GROUPS_FOLDER] = str(_groups(node.config))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two workers per core. With one worker per core the suite kept 0.6 of 2 cores busy (349 s of
    CPU in 611 s: a test waits for a sandbox process to start, a time-out to expire, Docker, Ray or a loopback
    server); two per core finished it in 513 s instead of 610 s. The tests that time something still run last,
    alone (tests/timed_last.py). Since then the suite grew into what two per core keep busy: on a quiet machine
    both cores read 97-100% busy for the whole parallel phase (vmstat), so more workers would only share the
    same CPU."""
    return 2 * len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 2 * (os.cpu_count() or 1)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadgroup` (pyproject's addopts): groups kept together, `timed` and `alone` tests last, alone."""
    return TimedLastScheduling(config, log, _groups(config)) if config.getvalue("dist") == "loadgroup" else None


def pytest_unconfigure(config: pytest.Config) -> None:
    if _groups_folder in config.stash:
        shutil.rmtree(config.stash[_groups_folder], ignore_errors=True)


def require(condition: bool, reason: str) -> None:
    """Skip when a prerequisite is missing on a developer machine; fail in CI, where it must exist."""
    if not condition:
        if IN_CI:
            pytest.fail(f"required in CI: {reason}")
        pytest.skip(reason)


@pytest.fixture
def bench_task() -> Callable[[str, str], Path]:
    def locate(suite: str, name: str) -> Path:
        folder = BENCH / suite / name
        require(folder.is_dir(), f"benchmark task {folder} not found (set CODEREFINE_BENCH)")
        return folder

    return locate


@pytest.fixture
def copy_task(tmp_path: Path, bench_task: Callable[[str, str], Path]) -> Callable[[str, str], Path]:
    """A private copy of a benchmark task: tests that write must never touch ../shared."""

    def make(suite: str, name: str) -> Path:
        destination = tmp_path / name
        shutil.copytree(bench_task(suite, name), destination)
        for path in destination.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        destination.chmod(0o755)
        return destination

    return make


@pytest.fixture
def make_project(tmp_path: Path) -> Callable[..., Path]:
    """Write a small project (files given as {relative path: source}) with a pytest.ini root marker."""

    def make(files: dict[str, str], name: str = "project") -> Path:
        root = tmp_path / name
        root.mkdir()
        (root / "pytest.ini").write_text("[pytest]\n")
        for relative, text in files.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip("\n"))
        return root

    return make


def inherited_environment() -> dict[str, str]:
    """This process's environment for a command-line run: without the developer's own model settings and
    CODEREFINE_* variables. Tests that start the command themselves use it too, so that a rerun through run_cli
    has the same settings (a bench's or a sweep's state records them)."""
    return {name: value for name, value in os.environ.items() if name not in MODEL_ENVIRONMENT}


def run_cli(
    *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """The real command line, in a subprocess, as a user runs it.

    The developer's own model settings (a key, a base URL, CODEREFINE_* variables) are left out, so that
    the default provider is the same everywhere; a test passes the ones it wants in `env`.
    The process sandbox unless the test names one (`--sandbox`, or CODEREFINE_SANDBOX in `env`): where a
    Docker engine answers (CI), `auto` would start a container per run, which costs seconds each and is
    not what these tests are about; Docker has its own tests, which ask for it.
    """
    full_env = {**inherited_environment(), "COLUMNS": "200", "NO_COLOR": "1", "CODEREFINE_SANDBOX": "process"}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "coderefine", *map(str, args)],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    return run_cli


@pytest.fixture
def scripted(tmp_path: Path) -> Callable[..., dict]:
    """Run the CLI on `file` with the scripted provider and return its JSON report.

    `generate`, `refine` are code (fenced here), `feedback` plain messages; `expect` is the exit code.
    The process sandbox unless the test names one: these tests are about the loop, the verdicts and the
    report, and a container start per run would double their time (Docker has its own tests).
    """

    def run(
        task: str,
        file: Path,
        generate: list[str],
        feedback: list[str] = (),
        refine: list[str] = (),
        *options: str | Path,
        env: dict[str, str] | None = None,
        expect: int = 0,
        timeout: float = 600,
    ) -> dict:
        script = write_script(
            tmp_path / "script.json", [fenced(c) for c in generate], list(feedback), [fenced(c) for c in refine]
        )
        report = tmp_path / "report.json"
        sandbox = () if "--sandbox" in options else ("--sandbox", "process")
        proc = run_cli(
            task,
            file,
            "--provider",
            "scripted",
            "--script",
            script,
            "--report",
            report,
            *sandbox,
            *options,
            env=env,
            timeout=timeout,
        )
        assert proc.returncode == expect, proc.stdout + proc.stderr
        data = json.loads(report.read_text())
        data["_stdout"], data["_stderr"] = proc.stdout, proc.stderr
        return data

    return run


def write_script(path: Path, generate: list[str], feedback: list[str] = (), refine: list[str] = ()) -> Path:
    path.write_text(json.dumps({"generate": list(generate), "feedback": list(feedback), "refine": list(refine)}))
    return path


def fenced(code: str) -> str:
    return f"Here is a faster version:\n```python\n{code}\n```\nIt should help."
