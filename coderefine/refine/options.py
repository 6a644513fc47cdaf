"""What one `coderefine optimize|readability FILE` run is asked to do, as the CLI, `replay`, `review` and
`bench` give it to `coderefine.refine.run.execute` (and as `--trace` records it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from coderefine.settings import Settings


@dataclass(frozen=True)
class RunOptions:
    task: str
    file: Path
    settings: Settings  # provider, model, budgets, sandbox, limits: flag > env > pyproject > default
    function: str | None = None
    tests: Path | None = None
    root: Path | None = None
    script: Path | None = None
    write: bool = False
    trace: Path | None = None
    pass_env: tuple[str, ...] = ()
    keep_workspaces: bool = False
    expected_sha256: str | None = None  # replay: the file as it was traced
    bench: str | None = None  # --bench FILE[::NAME]: time this instead of the recorded calls
    timing_lock: Path | None = None  # bench --jobs N: serialises the sandbox runs that time code
    timing_lock_scope: str = "run"  # sweep: "timing", only the timing steps (see EvaluationSettings)
