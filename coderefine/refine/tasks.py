"""Tasks are data: a folder under `tasks/` with `task.toml` and prompt templates.

`task.toml` names a scorer (`coderefine.refine.scoring`: how an Evaluation becomes a verdict and a score),
the stop parameters and the offline provider's rewrite rules; the Markdown templates hold every word the
model sees. Adding a task is adding a folder that reuses a scorer.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from coderefine.errors import UsageError
from coderefine.resources import tasks_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

ROLES = ("system", "generate", "feedback", "refine")


@dataclass(frozen=True)
class TaskSpec:
    name: str
    description: str
    scorer: str
    measure_speed: bool
    min_improvement: float  # progress below this (relative for speedups, points for scores) is a tie
    max_iterations: int
    patience: int
    prompts: dict[str, str]
    offline_rules: tuple[str, ...]
    folder: Path


def available_tasks() -> list[str]:
    return sorted(p.name for p in tasks_dir().iterdir() if (p / "task.toml").is_file())


def load_task(name: str) -> TaskSpec:
    folder = tasks_dir() / name
    if not (folder / "task.toml").is_file():
        raise UsageError(f"unknown task '{name}'; available: {', '.join(available_tasks())}")
    data = tomllib.loads((folder / "task.toml").read_text(encoding="utf-8"))
    prompt_files = data.get("prompts", {})
    prompts = {role: (folder / prompt_files.get(role, f"{role}.md")).read_text(encoding="utf-8") for role in ROLES}
    stop = data.get("stop", {})
    return TaskSpec(
        name=data.get("name", name),
        description=data["description"],
        scorer=data["scorer"],
        measure_speed=bool(data.get("measure_speed", False)),
        min_improvement=float(stop.get("min_improvement", 0.0)),
        max_iterations=int(stop.get("max_iterations", 4)),
        patience=int(stop.get("patience", 1)),
        prompts=prompts,
        offline_rules=tuple(data.get("offline", {}).get("rules", ())),
        folder=folder,
    )
