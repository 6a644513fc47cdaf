"""The per-function job's parts that need no sandbox run."""

from __future__ import annotations

import os

from coderefine.sweep.jobs import share_lock


def test_the_timing_lock_is_shared_with_the_sandboxs_strangers_whatever_the_umask(tmp_path):
    folder = tmp_path / "locks"
    folder.mkdir(mode=0o700)
    previous = os.umask(0o077)
    try:
        share_lock(folder / "timing.lock")
    finally:
        os.umask(previous)
    assert folder.stat().st_mode & 0o777 == 0o755 and (folder / "timing.lock").stat().st_mode & 0o777 == 0o644
