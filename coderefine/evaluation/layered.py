"""Candidate workspaces whose cost does not grow with the project: the run's copy of the original, seen
through links, with only the changed module written.

A full copy per candidate costs seconds on a large project (and the Docker backend ships each copy into
its container). Instead, a candidate's workspace holds real folders only along the path to the target
module; every other entry of those folders is a symbolic link into the original's workspace (the run's
own copy, never the user's tree, and read-only for candidate jobs in both sandboxed backends). The cost
is one link per entry of the folders on that path, whatever the size of the rest of the tree.

Two things can make links unsound, and both are checked so that a run falls back to full copies:
- the tests write into the project tree (through a link they would fail on the read-only original, or
  change it under later candidates): found by comparing the original's tree before and after the
  baseline run;
- the tests reach the module through a resolved path (`Path(__file__).resolve()` in a conftest), so that
  they would import the original instead of the candidate: found from where a candidate's tests imported
  the module (`module_imported_from_workspace`).
"""

from __future__ import annotations

import os
from pathlib import Path

from coderefine.evaluation.workspace import IGNORED_DIRS

# Written by the interpreter and pytest whatever the tests do: not a sign that the tests write into the tree.
_CACHE_DIRS = frozenset({"__pycache__", ".pytest_cache", ".hypothesis"})

Snapshot = dict[str, tuple[int, int]]  # relative path -> (size, mtime in ns)


def snapshot(root: Path) -> Snapshot:
    """Every file under `root` (caches left out) with its size and modification time."""
    found: Snapshot = {}
    for folder, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in _CACHE_DIRS and d not in IGNORED_DIRS]
        for name in filenames:
            path = os.path.join(folder, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            found[os.path.relpath(path, root)] = (info.st_size, info.st_mtime_ns)
    return found


def tree_writes(before: Snapshot, after: Snapshot) -> tuple[str, ...]:
    """Files the tests added, changed or removed in the project tree (sorted)."""
    changed = {path for path, stamp in after.items() if before.get(path) != stamp}
    changed |= before.keys() - after.keys()
    return tuple(sorted(changed))


def shadow_project(original: Path, destination: Path, changed: Path) -> int:
    """Make `destination` (which must not exist) show `original` through links, with real folders along the
    path to `changed` (relative) and nothing at `changed` itself: the caller writes the candidate there.
    Returns the number of entries made."""
    original = original.resolve()
    chain = changed.parts[:-1]
    made = 0
    destination.mkdir(parents=True)
    for depth in range(len(chain) + 1):
        relative = Path(*chain[:depth])
        source_dir = original / relative
        target_dir = destination / relative
        if depth:
            target_dir.mkdir()
        keep_real = chain[depth] if depth < len(chain) else changed.name
        for entry in os.scandir(source_dir):
            # The compiled module of the original must not stand beside the candidate's source.
            if entry.name == keep_real or entry.name in _CACHE_DIRS:
                continue
            (target_dir / entry.name).symlink_to(source_dir / entry.name)
            made += 1
    return made


def module_imported_from_workspace(module_file: str | None, workspace: Path) -> bool:
    """Whether the tests imported the module under the candidate's workspace (not through a resolved link
    into the original's). Unknown (the tests never imported it in-process) counts as yes: nothing shows
    they reached the original instead."""
    if not module_file:
        return True
    path = os.path.abspath(module_file)
    return path.startswith(os.path.abspath(workspace) + os.sep)
