"""Fresh copies of the user's project, one per evaluation, so candidate code never touches the user's tree."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

# Folders that are never part of what the tests need, and can be huge.
IGNORED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".coderefine",
        "build",
        "dist",
        ".eggs",
    }
)


def copy_project(source: Path, destination: Path) -> None:
    """Copy `source` to `destination` (which must not exist), without following links out of it.

    A symlink that points inside the project is kept as a link (relative to the copy); one that points
    outside is copied as a file, or dropped if it is a folder, so that writing through it cannot reach the
    user's files.
    """
    source = source.resolve()
    destination.mkdir(parents=True)
    for folder, dirnames, filenames in os.walk(source):
        here = Path(folder)
        rel = here.relative_to(source)
        target_dir = destination / rel
        keep_dirs = []
        for name in sorted(dirnames):
            path = here / name
            if name in IGNORED_DIRS or name.endswith(".egg-info"):
                continue
            if path.is_symlink():
                _copy_link(path, source, target_dir / name)
                continue
            (target_dir / name).mkdir()
            keep_dirs.append(name)
        dirnames[:] = keep_dirs
        for name in filenames:
            path = here / name
            if path.is_symlink():
                _copy_link(path, source, target_dir / name)
            elif path.is_file():
                shutil.copy2(path, target_dir / name)


def _copy_link(link: Path, root: Path, target: Path) -> None:
    resolved = link.resolve()
    if resolved == root or root in resolved.parents:
        relative = os.path.relpath(resolved, link.parent.resolve())
        target.symlink_to(relative)
    elif resolved.is_file():
        shutil.copy2(resolved, target)


def write_module(workspace: Path, relative: Path, code: str, with_bom: bool) -> None:
    data = code.encode("utf-8")
    (workspace / relative).write_bytes((b"\xef\xbb\xbf" + data) if with_bom else data)
