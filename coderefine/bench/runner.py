"""Run a suite: one ordinary refinement run (`coderefine.refine.run.execute`) per task, in a private copy of the
task folder, optionally several at once, saving each finished task so that an interrupted bench resumes.

Parallel jobs and timing (`--jobs N`): the tasks run in worker processes, and every sandbox run that times
code (optimize: each baseline and candidate evaluation, whose last step is the interleaved pyperf timing)
holds an exclusive lock on one file for its whole duration. So no two timing runs ever overlap, and no
timing run overlaps another job's tests or replay either; what still overlaps a timing run is host-side
work of the other jobs (asking the model, drafting a candidate, copying a workspace), which is network
waiting with a model and short bursts with the offline provider. Readability runs time nothing and run
fully in parallel.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coderefine.bench.results import TaskRecord, record_from_result
from coderefine.bench.suite import REFERENCE, BenchTask
from coderefine.errors import BenchStateError, CoderefineError, ExitCode
from coderefine.fences import fenced
from coderefine.pool import run_in_workers
from coderefine.records import INSUFFICIENT_TESTS
from coderefine.refine.run import RunOptions, execute, unstarted
from coderefine.refine.tasks import load_task
from coderefine.settings import Settings

STATE_VERSION = 1
ORACLE_FEEDBACK = "This is the task's reference solution; nothing is left to improve.\nVERDICT: STOP"


@dataclass(frozen=True)
class TaskJob:
    """Everything a worker process needs to run one task (picklable)."""

    task: str
    bench_task: BenchTask
    settings: Settings
    script: Path | None  # scripted provider: the task's script (a missing one fails that task alone)
    oracle: bool
    timing_lock: Path | None
    curve_length: int
    min_improvement: float
    pass_env: tuple[str, ...] = ()


@dataclass
class BenchRun:
    records: list[TaskRecord]  # in suite order; finished tasks only
    resumed: int  # of them, loaded from the state file
    wall_seconds: float
    cpu_seconds: float  # this invocation's tasks (host and sandbox) and, with workers, the bench's own work
    interrupted: bool = False
    pending: list[str] = field(default_factory=list)  # task ids not finished (interrupted)


def _cpu_seconds() -> float:
    usage = (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    return sum(u.ru_utime + u.ru_stime for u in usage)


class BenchTaskError(CoderefineError):
    """A task the bench cannot run as asked (recorded as that task's failure, not a bench error)."""

    exit_code = ExitCode.BAD_SUITE


def oracle_script(reference: Path, destination: Path) -> Path:
    """A one-candidate script offering the reference solution, judged by the same loop and gate."""
    code = reference.read_text(encoding="utf-8")
    message = f"The reference solution:\n{fenced(code, 'python')}\n"
    destination.write_text(json.dumps({"generate": [message], "feedback": [ORACLE_FEEDBACK]}), encoding="utf-8")
    return destination


def run_task(job: TaskJob) -> TaskRecord:
    """One task's refinement run in a private copy of its folder; the suite itself is only read."""
    started, cpu_before = time.perf_counter(), _cpu_seconds()
    bench_task = job.bench_task
    with tempfile.TemporaryDirectory(prefix="coderefine-bench-") as scratch:
        workspace = Path(scratch) / bench_task.id
        # The reference is the oracle's answer, not part of the project the model or the tests see.
        ignore = shutil.ignore_patterns(REFERENCE, "__pycache__", ".pytest_cache")
        shutil.copytree(bench_task.folder, workspace, ignore=ignore, symlinks=False)
        try:
            script = job.script
            if job.oracle:
                if bench_task.reference is None:
                    raise BenchTaskError(f"{bench_task.folder}: no {REFERENCE}, so the oracle has nothing to offer")
                script = oracle_script(bench_task.reference, Path(scratch) / "oracle.json")
        except CoderefineError as exc:
            result = unstarted(job.task, str(bench_task.target), exc)
        else:
            options = RunOptions(
                task=job.task,
                file=workspace / "solution.py",
                settings=job.settings,
                root=workspace,
                script=script,
                pass_env=job.pass_env,
                timing_lock=job.timing_lock,
            )
            result = execute(options)
    if result.interrupted:
        raise KeyboardInterrupt  # the bench stops; the tasks finished so far are saved
    error = None
    if result.error is not None and result.error.kind != INSUFFICIENT_TESTS:
        error = {"code": result.error.code, "kind": result.error.kind, "message": result.error.message}
    # The sandbox runs' CPU time as their runners measured it, unless the host saw it already (a plain
    # subprocess is this process's child; bubblewrap's PID namespace and Docker's exec hide it).
    sandbox_cpu = 0.0
    if not result.sandbox.startswith("process (plain"):
        evaluations = [result.baseline.evaluation] if result.baseline is not None else []
        evaluations += [it.evaluation for it in result.iterations if it.evaluation is not None]
        sandbox_cpu = sum(e.cpu_seconds for e in evaluations)
    return record_from_result(
        job.task,
        bench_task.id,
        bench_task.category,
        result,
        min_improvement=job.min_improvement,
        curve_length=job.curve_length,
        wall_seconds=time.perf_counter() - started,
        cpu_seconds=_cpu_seconds() - cpu_before + sandbox_cpu,
        error=error,
    )


# ----------------------------------------------------------------------------- state (resume)


def state_key(
    suite: Path, task: str, settings: Settings, script_dir: Path | None, oracle: bool, pass_env: tuple[str, ...]
) -> dict[str, Any]:
    """What decides a task's outcome; a rerun with the same key continues. --jobs and --limit are not
    part of it: a bigger --limit or another job count continues the same bench."""
    return {
        "suite": str(suite.resolve()),
        "task": task,
        "script_dir": str(script_dir.resolve()) if script_dir is not None else None,
        "oracle": oracle,
        "pass_env": sorted(pass_env),
        "settings": dict(sorted(settings.as_dict().items())),
    }


def default_state_path(key: dict[str, Any], base: Path) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return base / ".coderefine" / "bench" / f"{Path(key['suite']).name}-{key['task']}-{digest}.jsonl"


class StateFile:
    """JSON lines: a header with the key, then one finished task per line, appended and synced as each
    task ends. A line cut short by a crash is ignored (that task simply runs again)."""

    def __init__(self, path: Path, key: dict[str, Any]) -> None:
        self.path = path
        self.key = json.loads(json.dumps(key, default=str))  # as it reads back from the file

    def load(self) -> dict[str, TaskRecord]:
        if not self.path.exists():
            return {}
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise BenchStateError(f"{self.path}: cannot read the bench state ({exc})") from None
        try:
            header = json.loads(lines[0]) if lines else None
        except json.JSONDecodeError:
            header = None
        if not isinstance(header, dict) or header.get("coderefine_bench_state") != STATE_VERSION:
            raise BenchStateError(f"{self.path}: not a coderefine bench state file; pass another --state or --fresh")
        if header.get("key") != self.key:
            changed = sorted(k for k in self.key if header["key"].get(k) != self.key[k])
            raise BenchStateError(
                f"{self.path}: made by a bench with other arguments ({', '.join(changed)} differ); "
                "pass --fresh to start over or another --state"
            )
        records: dict[str, TaskRecord] = {}
        for line in lines[1:]:
            try:
                record = TaskRecord.from_dict(json.loads(line))
            except (json.JSONDecodeError, TypeError):
                continue
            records[record.id] = record
        return records

    def start(self, fresh: bool) -> None:
        if fresh or not self.path.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            header = {"coderefine_bench_state": STATE_VERSION, "key": self.key}
            self.path.write_text(json.dumps(header) + "\n", encoding="utf-8")

    def append(self, record: TaskRecord) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record.to_dict(), allow_nan=False) + "\n")
            handle.flush()
            os.fsync(handle.fileno())


# ----------------------------------------------------------------------------- the bench


@dataclass(frozen=True)
class BenchRequest:
    """What `coderefine bench` is asked: the suite, how to run it, where to keep its state."""

    suite_dir: Path
    flags: dict[str, Any]  # the setting options as given (None: not given)
    task: str | None = None
    script_dir: Path | None = None
    oracle: bool = False
    jobs: int = 1
    limit: int | None = None
    state: Path | None = None
    fresh: bool = False
    pass_env: tuple[str, ...] = ()


@dataclass(frozen=True)
class BenchOptions:
    """A checked request and what was made of it: the task type, the settings, the tasks, the state file."""

    request: BenchRequest
    task: str
    settings: Settings
    tasks: list[BenchTask]
    state: StateFile


def make_jobs(options: BenchOptions, timing_lock: Path | None) -> list[TaskJob]:
    spec = load_task(options.task)
    script_dir = options.request.script_dir
    length = options.settings.max_iterations or spec.max_iterations
    return [
        TaskJob(
            task=options.task,
            bench_task=task,
            settings=options.settings,
            script=(script_dir / f"{task.id}.json") if script_dir is not None else None,
            oracle=options.request.oracle,
            timing_lock=timing_lock,
            curve_length=length,
            min_improvement=spec.min_improvement,
            pass_env=options.request.pass_env,
        )
        for task in options.tasks
    ]


def run_bench(
    options: BenchOptions,
    on_done: Callable[[TaskRecord, int, int], None] | None = None,
    on_start: Callable[[str], None] | None = None,
) -> BenchRun:
    """Run the tasks not finished yet; `on_done(record, done, total)` after each one (and, one job at a
    time, `on_start(task id)` before it). On Ctrl-C the
    running tasks are stopped (their sandboxes cleaned up), finished ones stay saved, and the returned
    run says `interrupted`."""
    started = time.perf_counter()
    own = resource.getrusage(resource.RUSAGE_SELF)
    finished = {} if options.request.fresh else options.state.load()
    options.state.start(options.request.fresh)
    ids = [task.id for task in options.tasks]
    done: dict[str, TaskRecord] = {i: finished[i] for i in ids if i in finished}
    resumed = len(done)
    total = len(ids)
    interrupted = False

    def finish(record: TaskRecord, saved: bool = True) -> None:
        if saved:
            options.state.append(record)
        done[record.id] = record
        if on_done is not None:
            on_done(record, len(done), total)

    def lost(job: TaskJob, why: str) -> None:
        """Its worker died on both attempts: failed in this run's figures, not saved (a rerun tries again)."""
        error = {"code": int(ExitCode.INTERNAL), "kind": "worker_died", "message": why}
        finish(TaskRecord(job.bench_task.id, "failed", "worker died", job.bench_task.category, error=error), False)

    with tempfile.TemporaryDirectory(prefix="coderefine-bench-lock-") as lock_dir:
        timing_lock = Path(lock_dir) / "timing.lock" if options.request.jobs > 1 else None
        jobs = [job for job in make_jobs(options, timing_lock) if job.bench_task.id not in done]
        try:
            if options.request.jobs == 1:
                for job in jobs:
                    if on_start is not None:
                        on_start(job.bench_task.id)
                    finish(run_task(job))
            else:
                interrupted = _run_parallel(jobs, options.request.jobs, finish, lost)
        except KeyboardInterrupt:
            interrupted = True
    ran = [record for i, record in done.items() if i not in finished]
    # In-process (one job) the tasks' CPU is this process's own; with workers, add the bench's own work.
    after = resource.getrusage(resource.RUSAGE_SELF)
    overhead = 0.0 if options.request.jobs == 1 else (after.ru_utime + after.ru_stime) - (own.ru_utime + own.ru_stime)
    return BenchRun(
        records=[done[i] for i in ids if i in done],
        resumed=resumed,
        wall_seconds=time.perf_counter() - started,
        cpu_seconds=sum(record.cpu_seconds for record in ran) + overhead,
        interrupted=interrupted,
        pending=[i for i in ids if i not in done],
    )


def _run_parallel(
    jobs: list[TaskJob], workers: int, finish: Callable[[TaskRecord], None], lost: Callable[[TaskJob, str], None]
) -> bool:
    """True when interrupted."""
    return run_in_workers(
        run_task, ((job,) for job in jobs), workers, finish, lambda args, why, runs: lost(args[0], why)
    )
