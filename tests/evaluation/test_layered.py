"""Candidate workspaces made of links into the original's copy, and the checks that fall back to copies."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from coderefine.evaluation.layered import module_imported_from_workspace, shadow_project, snapshot, tree_writes


def _tree(root: Path) -> None:
    files = {
        "pyproject.toml": "[tool.pytest.ini_options]\n",
        "pkg/__init__.py": "",
        "pkg/sub/__init__.py": "",
        "pkg/sub/mod.py": "def f():\n    return 'original'\n",
        "pkg/sub/other.py": "X = 1\n",
        "pkg/big/data.txt": "x" * 1000,
        "tests/test_mod.py": "from pkg.sub.mod import f\n\n\ndef test_f():\n    assert f() == 'candidate'\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "pkg/sub/__pycache__").mkdir()
    (root / "pkg/sub/__pycache__/mod.cpython-311.pyc").write_bytes(b"stale")


def test_only_the_path_to_the_target_is_real_and_the_candidate_is_what_the_tests_import(tmp_path):
    original = tmp_path / "original"
    _tree(original)
    workspace = tmp_path / "cand"
    made = shadow_project(original, workspace, Path("pkg/sub/mod.py"))
    (workspace / "pkg/sub/mod.py").write_text("def f():\n    return 'candidate'\n")
    assert made == 6  # pyproject.toml, tests, pkg/__init__.py, pkg/big, pkg/sub/__init__.py, pkg/sub/other.py
    assert not (workspace / "pkg").is_symlink() and not (workspace / "pkg/sub").is_symlink()
    assert (workspace / "tests").is_symlink() and (workspace / "pkg/big").is_symlink()
    assert not (workspace / "pkg/sub/__pycache__").exists()  # the original's compiled module stays out
    assert (original / "pkg/sub/mod.py").read_text().endswith("'original'\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(workspace), "tests"],
        cwd=workspace,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert proc.returncode == 0, proc.stdout


def test_tree_writes_ignore_caches_and_see_added_changed_and_removed_files(tmp_path):
    _tree(tmp_path)
    before = snapshot(tmp_path)
    assert tree_writes(before, snapshot(tmp_path)) == ()
    (tmp_path / "pkg/sub/__pycache__/other.pyc").write_bytes(b"")
    (tmp_path / ".pytest_cache").mkdir()
    (tmp_path / ".pytest_cache/x").write_text("")
    assert tree_writes(before, snapshot(tmp_path)) == ()
    (tmp_path / "tests/out.txt").write_text("written by a test")
    (tmp_path / "pkg/sub/other.py").write_text("X = 22\n")
    (tmp_path / "pkg/big/data.txt").unlink()
    assert tree_writes(before, snapshot(tmp_path)) == ("pkg/big/data.txt", "pkg/sub/other.py", "tests/out.txt")


def test_a_module_imported_through_a_resolved_link_is_not_the_candidates(tmp_path):
    workspace = tmp_path / "cand-1"
    assert module_imported_from_workspace(str(workspace / "pkg/mod.py"), workspace)
    assert not module_imported_from_workspace(str(tmp_path / "original/pkg/mod.py"), workspace)
    assert not module_imported_from_workspace(str(tmp_path / "cand-10/pkg/mod.py"), workspace)
    assert module_imported_from_workspace(None, workspace)
