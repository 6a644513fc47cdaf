"""How long `coderefine check` takes on a typical commit: 5 files, cold and warm cache, with start-up.

    .venv/bin/python benchmarks/check_speed.py [--runs 7] [--no-pre-commit] [--json FILE]

Each figure is the median wall time of `--runs` runs of a fresh process, interpreter start-up included:

- cold: an empty check cache every run (every file parsed and measured);
- warm: the cache filled by an earlier run (what a commit of files already checked once costs);
- warm, typer path: the same through the typer CLI instead of the launcher's fast path, for comparison;
- pre-commit: `pre-commit run coderefine-check --files ...` in a temporary git repository whose config
  points at a copy of this checkout (the hook environment is installed once before timing, which needs
  PyPI and takes about a minute; --no-pre-commit skips it), and `pre-commit run` of a no-op hook
  (`entry: true`), which is what pre-commit itself costs per run.

The 5 files are modules of coderefine itself, 44 to 257 lines, 711 in all: ordinary application code.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FILES = [
    "coderefine/errors.py",
    "coderefine/writeback.py",
    "coderefine/source.py",
    "coderefine/refine/tasks.py",
    "coderefine/refine/loop.py",
]
TYPER_PATH = "import sys; from coderefine.cli.app import main; sys.argv[0] = 'coderefine'; main()"


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1, 16):  # 16: findings, which the files may have (pre-commit: 1)
        raise SystemExit(f"{command} failed ({proc.returncode}): {proc.stderr}")
    return elapsed


def median_of(runs: int, command: list[str], cwd: Path, env: dict[str, str], fresh_cache: Path | None = None) -> float:
    times = []
    for _ in range(runs):
        if fresh_cache is not None:
            shutil.rmtree(fresh_cache, ignore_errors=True)
        times.append(timed(command, cwd, env))
    return statistics.median(times)


def git(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout


def pre_commit_setup(base: Path, env: dict[str, str]) -> Path:
    """A copy of this checkout as a hook repository, and a user repository holding the 5 files."""
    hooks = base / "hooks"
    hooks.mkdir()
    for relative in filter(None, git(["ls-files", "-z", "-co", "--exclude-standard"], REPO, env).split("\0")):
        if (REPO / relative).is_file():
            (hooks / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / relative, hooks / relative)
    git(["init", "-q"], hooks, env)
    git(["add", "-A"], hooks, env)
    git(["commit", "-q", "-m", "checkout"], hooks, env)
    revision = git(["rev-parse", "HEAD"], hooks, env).strip()
    user = base / "user"
    (user / "coderefine").mkdir(parents=True)
    git(["init", "-q"], user, env)
    for relative in FILES:
        shutil.copy2(REPO / relative, user / relative)
    # A no-op local hook beside it measures what pre-commit itself costs per run.
    (user / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hooks}\n    rev: {revision}\n    hooks:\n      - id: coderefine-check\n"
        "  - repo: local\n    hooks:\n      - id: noop\n        name: noop\n        entry: 'true'\n"
        "        language: system\n        types: [python]\n"
    )
    git(["add", "-A"], user, env)
    print("installing the hook environment (once)...", file=sys.stderr)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pre_commit", "install-hooks"], cwd=user, env=env, check=True)
    print(f"  installed in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return user


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-pre-commit", action="store_true")
    parser.add_argument("--json", type=Path)
    options = parser.parse_args()

    script = Path(sys.executable).parent / "coderefine"
    with tempfile.TemporaryDirectory(prefix="coderefine-check-speed-") as temp:
        base = Path(temp)
        cache_home = base / "cache"
        env = {
            **os.environ,
            "XDG_CACHE_HOME": str(cache_home),
            "PRE_COMMIT_HOME": str(base / "pre-commit-home"),
            "GIT_AUTHOR_NAME": "bench",
            "GIT_AUTHOR_EMAIL": "bench@example.invalid",
            "GIT_COMMITTER_NAME": "bench",
            "GIT_COMMITTER_EMAIL": "bench@example.invalid",
            "GIT_CONFIG_GLOBAL": os.devnull,
        }
        command = [str(script), "check", *FILES]
        figures = {
            "python -c pass": median_of(options.runs, [sys.executable, "-c", "pass"], REPO, env),
            "cold": median_of(options.runs, command, REPO, env, fresh_cache=cache_home),
        }
        timed(command, REPO, env)  # fill the cache
        figures["warm"] = median_of(options.runs, command, REPO, env)
        figures["warm, typer path"] = median_of(
            options.runs, [sys.executable, "-c", TYPER_PATH, "check", *FILES], REPO, env
        )
        if not options.no_pre_commit:
            user = pre_commit_setup(base, env)
            hook = [sys.executable, "-m", "pre_commit", "run", "coderefine-check", "--files", *FILES]
            subprocess.run(hook, cwd=user, env=env, capture_output=True)  # fills the hook's cache
            figures["pre-commit run, warm"] = median_of(options.runs, hook, user, env)
            figures["pre-commit run, cold"] = median_of(options.runs, hook, user, env, fresh_cache=cache_home)
            noop = [sys.executable, "-m", "pre_commit", "run", "noop", "--files", *FILES]
            figures["pre-commit run, no-op hook"] = median_of(options.runs, noop, user, env)

    lines = sum(len((REPO / relative).read_text().splitlines()) for relative in FILES)
    print(f"coderefine check on {len(FILES)} files ({lines} lines), median of {options.runs} runs, start-up included:")
    for name, seconds in figures.items():
        print(f"  {name:<24} {seconds * 1000:7.0f} ms")
    print(f"  (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    if options.json is not None:
        options.json.write_text(json.dumps({"files": FILES, "runs": options.runs, "seconds": figures}, indent=2))


if __name__ == "__main__":
    main()
