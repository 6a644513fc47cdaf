"""The engine interface: run function jobs, hand back each outcome as it finishes, stop cleanly on Ctrl-C."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from coderefine.sweep.jobs import FunctionJob, FunctionOutcome

OnDone = Callable[[FunctionOutcome], None]
OnStart = Callable[[FunctionJob], None]


@dataclass(frozen=True)
class EngineRun:
    interrupted: bool
    lost: tuple[str, ...] = ()  # jobs whose worker died twice (keys): no outcome
    description: str = ""  # what ran them: "local: 2 worker processes", "ray: 2 nodes, 4 CPUs"


class Engine(Protocol):
    name: str

    def run(self, jobs: Sequence[FunctionJob], root: Path, on_done: OnDone, on_start: OnStart) -> EngineRun:
        """Run every job against the project at `root`; `on_done` in the calling thread as each ends.
        On KeyboardInterrupt: stop the rest, return with `interrupted` (finished outcomes already handed)."""
        ...
