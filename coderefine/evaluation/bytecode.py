"""A candidate's bytecode cache, seeded from the baseline's (RunnerRequest.pycache, process.bytecode_env).

With PYTHONPYCACHEPREFIX set, Python looks for every module's bytecode under the prefix, the standard library's
and the installed packages' too, and would compile them all again from source in each candidate's first
processes. The candidate's cache starts as links to the baseline's folders instead: everything but the mirror
of the candidate's own workspace, which starts empty (its modules compile there, from the candidate's files).
The baseline's folder is read only in the candidate's sandbox: a write through a link fails, and Python then
goes on without writing; what a candidate's process compiles lands only in its own folders.
"""

from __future__ import annotations

from pathlib import Path


def seed_from_baseline(baseline_cache: Path, own_cache: Path, workspace: Path) -> None:
    """Links in `own_cache` to the baseline's cached folders, beside the path down to `workspace`'s mirror."""
    source, target = baseline_cache, own_cache
    target.mkdir(parents=True, exist_ok=True)
    for part in workspace.resolve().parts[1:]:
        if source.is_dir():
            for entry in source.iterdir():
                if entry.name != part and not (target / entry.name).exists():
                    (target / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
        source, target = source / part, target / part
        target.mkdir(exist_ok=True)
