"""One run of the sandbox runner on a throwaway copy of the whole project: `coderefine scan`'s profile mode and
the reach map's traced runs. The copy, its io folder and home, the request file and the job are the same for
both; each mode brings its own request and reads its own report from the outcome. Where the project's packages
import from, and what to say when the runner wrote no report, are the same for both too."""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from coderefine.evaluation.protocol import to_json
from coderefine.evaluation.workspace import copy_project
from coderefine.resources import sandbox_dir
from coderefine.sandboxes.base import Sandbox, SandboxJob, SandboxOutcome, sandbox_env


def import_roots(root: Path) -> tuple[str, ...]:
    """Where the project's own packages import from: the root, and `src/` in a src layout."""
    return (".", "src") if (root / "src").is_dir() else (".",)


def runner_said(outcome: SandboxOutcome) -> str:
    """The last line the runner wrote when it wrote no report (its traceback's last line, usually): what a
    user is shown of a runner that failed."""
    detail = outcome.stderr.strip() or outcome.stdout.strip() or f"exit code {outcome.returncode}"
    return detail.splitlines()[-1][:300]


def run_on_copy(
    root: Path,
    make_request: Callable[[Path, Path], object],
    sandbox: Sandbox,
    *,
    prefix: str,
    timeout: float,
    memory_mb: int,
    pass_env: tuple[str, ...],
    keep: Callable[[Path, Path, SandboxOutcome], None] | None = None,
) -> SandboxOutcome:
    """Copy the project at `root`, write `make_request(workspace, io_dir)` beside it, run the runner on it in
    `sandbox` within `timeout`, and remove the copy whatever happens; `keep(workspace, io_dir, outcome)` may
    take what it needs of the io folder first."""
    run_dir = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        workspace, io_dir = run_dir / "project", run_dir / "io"
        copy_project(root, workspace)
        io_dir.mkdir()
        home = io_dir / "home"
        home.mkdir()
        request_path = io_dir / "request.json"
        request_path.write_text(to_json(make_request(workspace, io_dir)), encoding="utf-8")
        job = SandboxJob(
            argv=(sys.executable, "-m", "coderefine_sandbox.runner", str(request_path)),
            cwd=workspace,
            writable=(workspace, io_dir),
            readonly=(sandbox_dir().resolve(),),
            env=sandbox_env(home, {"PYTHONPATH": str(sandbox_dir().resolve())}, pass_env),
            timeout=timeout,
            memory_mb=memory_mb,
            scratch=run_dir,
        )
        outcome = sandbox.run(job)
        if keep is not None:
            keep(workspace, io_dir, outcome)
        return outcome
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
