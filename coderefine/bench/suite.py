"""A benchmark suite on disk: one folder per task (see ../shared/bench/*/SUITE.md).

    SUITE_DIR/<task id>/solution.py       the code to refine
    SUITE_DIR/<task id>/test_*.py         its tests (any pytest file)
    SUITE_DIR/<task id>/task.json         {"id", ...}: metadata, e.g. "category" (headroom/control)
    SUITE_DIR/<task id>/reference.py      optional: a known-good answer (the oracle mode offers it)

Everything is checked up front, so a malformed suite fails in a second with one line, not after an hour.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coderefine.errors import BadSuite, InputFileNotFound

TARGET = "solution.py"
REFERENCE = "reference.py"
METADATA = "task.json"


@dataclass(frozen=True)
class BenchTask:
    id: str
    folder: Path
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def target(self) -> Path:
        return self.folder / TARGET

    @property
    def reference(self) -> Path | None:
        path = self.folder / REFERENCE
        return path if path.is_file() else None

    @property
    def category(self) -> str | None:
        category = self.metadata.get("category")
        return category if isinstance(category, str) else None


def _natural(name: str) -> list[Any]:
    # HumanEval_2 before HumanEval_10, as a reader expects.
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _task(folder: Path) -> BenchTask:
    missing = [name for name in (TARGET, METADATA) if not (folder / name).is_file()]
    if not any(folder.glob("test_*.py")) and not any(folder.glob("*_test.py")):
        missing.append("test_*.py")
    if missing:
        raise BadSuite(f"{folder}: task folder lacks {', '.join(missing)}")
    try:
        metadata = json.loads((folder / METADATA).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadSuite(f"{folder / METADATA}: not valid JSON ({exc})") from None
    if not isinstance(metadata, dict):
        raise BadSuite(f"{folder / METADATA}: must be a JSON object")
    task_id = metadata.get("id", folder.name)
    if not isinstance(task_id, str) or not task_id or "/" in task_id:
        raise BadSuite(f"{folder / METADATA}: 'id' must be a non-empty name without '/'")
    return BenchTask(task_id, folder, metadata)


def load_suite(path: Path, limit: int | None = None) -> list[BenchTask]:
    """The suite's tasks in natural order of their folder names, the first `limit` of them."""
    if not path.exists():
        raise InputFileNotFound(f"{path}: no such suite folder")
    if not path.is_dir():
        raise BadSuite(f"{path}: not a folder; a suite is a folder with one folder per task")
    folders = sorted(
        (p for p in path.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))),
        key=lambda p: _natural(p.name),
    )
    # A folder holding none of a task's files is not a task (e.g. a results folder kept beside them);
    # one holding some of them is a broken task, and says what it lacks.
    folders = [f for f in folders if (f / TARGET).exists() or (f / METADATA).exists()]
    if not folders:
        raise BadSuite(f"{path}: no task folders (each needs {TARGET}, its tests and {METADATA})")
    tasks = [_task(folder) for folder in folders]
    seen: dict[str, Path] = {}
    for task in tasks:
        if task.id in seen:
            raise BadSuite(f"{task.folder}: task id '{task.id}' is also used by {seen[task.id]}")
        seen[task.id] = task.folder
    return tasks[:limit] if limit is not None else tasks
