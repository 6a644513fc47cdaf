"""One function's refinement as a sweep runs it, wherever it runs (this process, a worker, a Ray node).

`refine_function(job, root)` is the small interface between the sweep and today's per-function run
(`coderefine.refine.run.execute` with `--function`): a better per-function run plugs in here. The outcome
is a plain JSON-ready record (saved in the resumable state, sent back from workers), carrying the whole
verified file as the run returned it, never written by the job itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from coderefine.records import INSUFFICIENT_TESTS, Result
from coderefine.refine.options import RunOptions
from coderefine.refine.run import execute
from coderefine.reports.evidence import verification_evidence
from coderefine.settings import Settings


@dataclass(frozen=True)
class FunctionJob:
    """Everything a worker needs to refine one function (picklable; paths are relative to the project)."""

    file: str  # relative to the project root
    function: str
    task: str
    settings: Settings
    tests: str | None = None  # relative to the project root
    script: str | None = None  # scripted provider: the script's text (it travels with the job to any node)
    pass_env: tuple[str, ...] = ()
    timing_lock: str | None = None  # a lock file on the machine the job runs on (None: nothing else times here)

    @property
    def key(self) -> str:
        return f"{self.file}::{self.function}"


@dataclass(frozen=True)
class Placement:
    """Where and when a job ran, and when it held the machine's timing lock (wall-clock seconds)."""

    node: str
    host: str
    pid: int
    started: float
    ended: float
    timing: tuple[tuple[float, float], ...] = ()


@dataclass(frozen=True)
class FunctionOutcome:
    key: str
    file: str
    function: str
    status: str  # improved, unchanged, insufficient_tests, failed
    stop_reason: str
    original_sha256: str  # of the file the job refined
    best_code: str | None  # the whole verified file (None: nothing verified)
    speedup: float | None
    ci: tuple[float, float] | None
    reason: str  # the verdict on the best candidate, or the error
    evidence: tuple[str, ...]
    changed: tuple[str, ...]
    error: str | None
    wall_seconds: float
    placement: Placement
    attempts: int = 1
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def verified(self) -> bool:
        return self.status == "improved" and self.best_code is not None and self.error is None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["placement"]["timing"] = [list(hold) for hold in self.placement.timing]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FunctionOutcome:
        placement = dict(data["placement"])
        placement["timing"] = tuple(tuple(hold) for hold in placement["timing"])
        return cls(
            **{
                **data,
                "ci": tuple(data["ci"]) if data["ci"] is not None else None,
                "evidence": tuple(data["evidence"]),
                "changed": tuple(data["changed"]),
                "placement": Placement(**placement),
            }
        )


def outcome_from_result(
    job: FunctionJob, result: Result, sha: str, placement: Placement, wall: float
) -> FunctionOutcome:
    best = result.best
    timing = best.evaluation.timing if best is not None and best.evaluation is not None else None
    verified = result.status == "improved" and best is not None and best.candidate is not None
    error = result.error.message if result.error is not None and result.error.kind != INSUFFICIENT_TESTS else None
    return FunctionOutcome(
        key=job.key,
        file=job.file,
        function=job.function,
        status="failed" if error is not None else result.status,
        stop_reason=result.stop_reason,
        original_sha256=sha,
        best_code=best.candidate.code if verified and best is not None and best.candidate is not None else None,
        speedup=round(timing.speedup, 4) if verified and timing is not None else None,
        ci=(round(timing.ci_low, 4), round(timing.ci_high, 4)) if verified and timing is not None else None,
        reason=error or _reason(result),
        evidence=tuple(verification_evidence(best.evaluation)) if verified and best and best.evaluation else (),
        changed=tuple(best.candidate.changed) if verified and best and best.candidate else (),
        error=error,
        wall_seconds=round(wall, 3),
        placement=placement,
    )


WORKER_DIED = "worker died"  # the stop reason of a job whose worker died on every attempt: not saved, rerun


def lost_outcome(job: FunctionJob, root: Path, attempts: int, why: str) -> FunctionOutcome:
    """A job with no result because the process running it died (each time it was tried): failed, for
    this function only; the sweep does not save it, so a rerun tries again."""
    path = root / job.file
    now = time.time()
    return FunctionOutcome(
        key=job.key,
        file=job.file,
        function=job.function,
        status="failed",
        stop_reason=WORKER_DIED,
        original_sha256=hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "",
        best_code=None,
        speedup=None,
        ci=None,
        reason=why,
        evidence=(),
        changed=(),
        error=why,
        wall_seconds=0.0,
        placement=Placement("", "", 0, now, now),
        attempts=attempts,
    )


def _reason(result: Result) -> str:
    """The verdict on the best candidate; with none verified, the last candidate's and why the run stopped."""
    if result.best is not None and result.status == "improved":
        return result.best.verdict.reason
    judged = [it for it in result.iterations if it.verdict.reason]
    last = f"{judged[-1].verdict.reason}; " if judged else ""
    return f"{last}stopped: {result.stop_reason}"


def timing_holds(result: Result) -> tuple[tuple[float, float], ...]:
    """When the run's evaluations held the timing lock, in order (the baseline's, then each candidate's)."""
    evaluations = [result.baseline.evaluation] if result.baseline is not None else []
    evaluations += [it.evaluation for it in result.iterations if it.evaluation is not None]
    return tuple(hold for evaluation in evaluations for hold in evaluation.timing_holds)


def share_lock(lock: Path) -> None:
    """Create the timing lock file readable by all, in a folder all may enter: the sandbox opens it
    read-only, and Docker's jobs run as user ids that exist nowhere on the host (the folder's and file's
    modes, not the umask, decide what they may open). Nothing else is in that folder."""
    lock.touch(exist_ok=True)
    for path, mode in ((lock.parent, 0o755), (lock, 0o644)):
        with contextlib.suppress(PermissionError):  # another user's shared folder: already set by its owner
            path.chmod(mode)


def refine_function(job: FunctionJob, root: Path, node: str = "local") -> FunctionOutcome:
    """Refine `job.function` in the project at `root` (a copy of the user's: nothing here writes it)."""
    with tempfile.TemporaryDirectory(prefix="coderefine-job-") as scratch:
        script = None
        if job.script is not None:
            script = Path(scratch) / "script.json"
            script.write_text(job.script, encoding="utf-8")
        return _refine(job, root, node, script)


def _refine(job: FunctionJob, root: Path, node: str, script: Path | None) -> FunctionOutcome:
    started = time.time()
    if job.timing_lock is not None:
        share_lock(Path(job.timing_lock))
    path = root / job.file
    sha = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
    options = RunOptions(
        task=job.task,
        file=path,
        settings=job.settings,
        function=job.function,
        tests=root / job.tests if job.tests is not None else None,
        root=root,
        script=script,
        pass_env=job.pass_env,
        timing_lock=Path(job.timing_lock) if job.timing_lock is not None else None,
        timing_lock_scope="timing",  # tests and replays of jobs side by side; their timing never overlaps
    )
    result = execute(options)
    if result.interrupted:
        raise KeyboardInterrupt
    ended = time.time()
    holds = timing_holds(result)
    placement = Placement(node, socket.gethostname(), os.getpid(), started, ended, holds)
    return outcome_from_result(job, result, sha, placement, ended - started)
