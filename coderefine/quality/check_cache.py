"""The on-disk cache of `coderefine check` results, keyed by file content, thresholds and version.

It lives in the user's cache folder (``$XDG_CACHE_HOME/coderefine/check``, else ``~/.cache/...``), not
in the checked repository: a pre-commit hook must not leave files in the user's tree (they would show up
in `git status`, or need a .gitignore entry), and one cache then serves every clone and worktree. The
key hashes the path and the content, so an edited file misses.

One small JSON file per entry, written atomically: several checks may run at once (two repositories'
hooks, CI jobs sharing a home), and a reader must never see half an entry. Unreadable entries are misses.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from coderefine.quality.findings import Finding


def default_check_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "coderefine" / "check"


class CheckCache:
    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder if folder is not None else default_check_cache_dir()

    def _entry(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> list[Finding] | None:
        """The findings cached under `key`; None on a miss."""
        try:
            entries = json.loads(self._entry(key).read_text(encoding="utf-8"))
            return [Finding(**entry) for entry in entries]
        except (OSError, ValueError, TypeError):
            return None

    def put(self, key: str, findings: list[Finding]) -> None:
        """Best effort: a cache that cannot be written (read-only home, full disk) only costs speed."""
        entry = self._entry(key)
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            fd, temp_name = tempfile.mkstemp(dir=entry.parent, prefix=".", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump([finding.to_json() for finding in findings], fh)
                os.replace(temp_name, entry)
            except BaseException:
                Path(temp_name).unlink(missing_ok=True)
                raise
        except OSError:
            return
