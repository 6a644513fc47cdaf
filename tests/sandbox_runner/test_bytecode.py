"""Bytecode kept between a run's steps (process.bytecode_env): real interpreters importing a real module."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from coderefine_sandbox.process import base_env

from coderefine.evaluation.bytecode import seed_from_baseline
from tests.sandbox_runner.samples import request


def _import(workspace: Path, env: dict[str, str]) -> str:
    """Import pkg.mod from `workspace` verbosely: what the import system said about the module's bytecode."""
    env = {**env, "PYTHONPATH": str(workspace)}
    proc = subprocess.run(
        [sys.executable, "-v", "-c", "import pkg.mod"], cwd=workspace, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-800:]
    return "\n".join(line for line in proc.stderr.splitlines() if "mod" in line)


def test_the_baseline_writes_the_runs_bytecode_and_a_candidate_only_reads_it_for_the_original(tmp_path):
    original, candidate = tmp_path / "original", tmp_path / "cand-1"
    for root, body in ((original, "VALUE = 1\n"), (candidate, "VALUE = 2  # the candidate's\n")):
        (root / "pkg").mkdir(parents=True)
        (root / "pkg" / "__init__.py").write_text("")
        (root / "pkg" / "mod.py").write_text(body)
    kept, own = tmp_path / "io" / "pycache", tmp_path / "io-1" / "pycache"
    baseline = request(
        mode="baseline", workspace=str(original), original_workspace=str(original), io_dir=str(tmp_path / "io"),
        pycache=str(kept),
    )  # fmt: skip
    said = _import(original, base_env(baseline, str(original)))
    written = sorted(path.relative_to(kept).as_posix() for path in (kept / original.relative_to("/")).rglob("*.pyc"))
    tag = sys.implementation.cache_tag
    assert written == [f"{original.relative_to('/')}/pkg/{name}.{tag}.pyc" for name in ("__init__", "mod")], said
    assert not list(original.rglob("__pycache__"))  # nothing written into the project tree

    judged = request(
        mode="candidate", workspace=str(candidate), original_workspace=str(original), io_dir=str(tmp_path / "io-1"),
        pycache=str(own), original_pycache=str(kept),
    )  # fmt: skip
    before = {path: path.stat().st_mtime_ns for path in kept.rglob("*.pyc")}
    # the original's steps in a candidate's run load the baseline's bytecode and write none
    said = _import(original, base_env(judged, str(original)))
    assert f"{kept}" in said and "matches" in said, said
    assert {path: path.stat().st_mtime_ns for path in kept.rglob("*.pyc")} == before
    assert not own.exists()
    # the candidate's steps compile its own module into the run's own cache, seeded with links to the baseline's
    # folders (the standard library's bytecode is not compiled again), and never write the baseline's
    seed_from_baseline(kept, own, candidate)
    said = _import(candidate, base_env(judged, str(candidate)))
    compiled = [path for path in own.rglob("*.pyc") if not any(parent.is_symlink() for parent in path.parents)]
    assert sorted(path.relative_to(own).as_posix() for path in compiled) == [
        f"{candidate.relative_to('/')}/pkg/{name}.{tag}.pyc" for name in ("__init__", "mod")
    ], said
    assert (own / "root").is_symlink() or (own / "usr").is_symlink()  # where the interpreter's library lives
    assert {path: path.stat().st_mtime_ns for path in kept.rglob("*.pyc")} == before
    assert not (own / original.relative_to("/")).exists() or (own / original.relative_to("/")).is_symlink()
    # a workspace that is neither keeps no bytecode, as before
    other = base_env(judged, str(tmp_path / "elsewhere"))
    assert other["PYTHONDONTWRITEBYTECODE"] == "1" and "PYTHONPYCACHEPREFIX" not in other
