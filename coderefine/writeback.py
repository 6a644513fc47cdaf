"""Atomic file writes: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from coderefine.errors import WriteConflict


def write_atomically(path: Path, data: bytes, expected_sha256: str | None = None) -> None:
    """Write `data` to `path` via a temporary file in the same folder and an atomic rename.

    With `expected_sha256`, refuse to write if the file changed since it was read: the user (or their
    editor) edited it while coderefine ran, and overwriting would lose that work.
    """
    mode = None
    if path.exists():
        if expected_sha256 is not None and hashlib.sha256(path.read_bytes()).hexdigest() != expected_sha256:
            raise WriteConflict(
                f"{path} changed on disk while coderefine ran; not overwriting it (rerun to refine the new version)"
            )
        mode = path.stat().st_mode & 0o7777
    try:
        fd, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise WriteConflict(f"cannot write {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(temp_name, mode)
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise


def write_text_atomically(path: Path, text: str) -> None:
    write_atomically(path, text.encode("utf-8"))
