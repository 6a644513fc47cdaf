"""`coderefine sweep`: scan, choose, refine the chosen functions through an engine, merge file by file,
write only what verified. The composition root of a sweep; it returns values, the command renders them."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from coderefine.errors import UsageError
from coderefine.refine.tasks import load_task
from coderefine.settings import Settings
from coderefine.source import read_source
from coderefine.sweep.engines.base import Engine, EngineRun
from coderefine.sweep.jobs import WORKER_DIED, FunctionJob, FunctionOutcome
from coderefine.sweep.merge import FilePlan, plan_file, plan_key
from coderefine.sweep.ranking import ScanEntry, choose
from coderefine.sweep.scan import ScanOptions, ScanResult, run_scan, validate
from coderefine.sweep.state import SweepState, default_state_path
from coderefine.writeback import write_atomically


@dataclass(frozen=True)
class SweepOptions:
    scan: ScanOptions
    task: str = "optimize"
    top: int | None = None
    min_share: float | None = None
    write: bool = False
    state: Path | None = None
    fresh: bool = False
    script: Path | None = None
    from_scan: Path | None = None  # a `scan --report` of this project to use instead of scanning again


@dataclass
class SweepResult:
    scan: ScanResult
    chosen: tuple[ScanEntry, ...]
    outcomes: list[FunctionOutcome]  # in the order of `chosen`; finished ones only
    resumed: int
    engine: str
    engine_description: str
    wall_seconds: float
    state: Path
    interrupted: bool = False
    lost: tuple[str, ...] = ()
    files: list[FilePlan] = field(default_factory=list)
    written: list[str] = field(default_factory=list)


def state_key(options: SweepOptions, root: Path, paths: tuple[str, ...]) -> dict[str, object]:
    """What decides the outcomes; --top, --min-share, the engine and its workers are not part of it."""
    scan = options.scan
    settings: Settings = scan.settings
    return {
        "root": str(root),
        "paths": list(paths),
        "task": options.task,
        "tests": str(scan.tests) if scan.tests else None,
        "command": scan.command,
        "script": str(options.script.resolve()) if options.script else None,
        "pass_env": sorted(scan.pass_env),
        "settings": dict(sorted(settings.as_dict().items())),
    }


def load_scan(path: Path, root: Path) -> ScanResult:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        scan = ScanResult.from_dict(data)
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"--from-scan {path}: not a report of `coderefine scan --report` ({exc})") from None
    if scan.root != root:
        raise UsageError(f"--from-scan {path}: a scan of {scan.root}, not of {root}")
    return scan


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""


def run_sweep(
    options: SweepOptions,
    engine: Engine,
    on_scan: Callable[[ScanResult, tuple[ScanEntry, ...]], None],
    on_start: Callable[[FunctionJob], None],
    on_done: Callable[[FunctionOutcome], None],
) -> SweepResult:
    started = time.perf_counter()
    if options.top is not None and options.top < 1:
        raise UsageError(f"--top must be at least 1, not {options.top}")
    if options.top is not None and options.min_share is not None:
        raise UsageError("--top and --min-share both choose the functions: give one of them")
    load_task(options.task)
    if options.script is not None and not options.script.is_file():
        raise UsageError(f"--script {options.script}: no such file")
    root, paths, _, _ = validate(options.scan)
    key = state_key(options, root, paths)
    state = SweepState(options.state or default_state_path(key, root), key)
    if not options.fresh:
        state.load()
    state.start(options.fresh)
    scan = state.scan
    if scan is None:
        scan = load_scan(options.from_scan, root) if options.from_scan is not None else run_scan(options.scan)
        state.save_scan(scan)
    top = options.top if options.top is not None or options.min_share is not None else 10
    chosen = choose(scan.entries, top, options.min_share)
    on_scan(scan, chosen)

    tests = options.scan.tests.resolve().relative_to(root).as_posix() if options.scan.tests else None
    jobs = [
        FunctionJob(
            file=entry.file,
            function=entry.target,
            task=options.task,
            settings=options.scan.settings,
            tests=tests,
            script=options.script.read_text(encoding="utf-8") if options.script else None,
            pass_env=options.scan.pass_env,
        )
        for entry in chosen
    ]
    done: dict[str, FunctionOutcome] = {}
    for job in jobs:  # finished before, on a file that has not changed since
        previous = state.outcomes.get(job.key)
        if previous is not None and previous.original_sha256 == _sha(root / job.file):
            done[job.key] = previous
    resumed = len(done)

    def finished(outcome: FunctionOutcome) -> None:
        # Counted first: a Ctrl-C while the save syncs (it can take a while on a busy disk, with the line
        # already there for all to read) must not leave out of the report what the state keeps.
        done[outcome.key] = outcome
        if outcome.stop_reason != WORKER_DIED:  # a job whose worker died is tried again by a rerun
            state.save(outcome)
        on_done(outcome)

    run: EngineRun = engine.run([j for j in jobs if j.key not in done], root, finished, on_start)
    result = SweepResult(
        scan=scan,
        chosen=chosen,
        outcomes=[done[j.key] for j in jobs if j.key in done],
        resumed=resumed,
        engine=engine.name,
        engine_description=run.description,
        wall_seconds=0.0,
        state=state.path,
        interrupted=run.interrupted,
        lost=run.lost,
    )
    if not run.interrupted:
        try:
            result.files = plan_files(root, result.outcomes, options, tests, state)
            if options.write:
                write_files(root, result.files, result.outcomes, result.written)
        except KeyboardInterrupt:  # each merge verified and each file written so far is kept (and saved)
            result.interrupted = True
    result.wall_seconds = time.perf_counter() - started
    return result


def plan_files(
    root: Path, outcomes: list[FunctionOutcome], options: SweepOptions, tests: str | None, state: SweepState
) -> list[FilePlan]:
    """Each file with verified changes: merged and verified again when there are several (once: the state
    keeps the verdict), before anything is written."""
    plans = []
    for file in sorted({o.file for o in outcomes if o.verified}):
        source = read_source(root / file)
        of_file = [o for o in outcomes if o.file == file and o.original_sha256 == source.raw_sha256]
        key = plan_key(file, source.raw_sha256, of_file)
        plan = state.plans.get(key)
        if plan is None:
            test_path = root / tests if tests else None
            plan = plan_file(root, file, source.text, of_file, options.scan.settings, test_path, options.scan.pass_env)
            state.save_plan(key, plan)
        plans.append(plan)
    return plans


def write_files(root: Path, plans: list[FilePlan], outcomes: list[FunctionOutcome], written: list[str]) -> None:
    """Every planned file, each atomically and only if unchanged since its functions were refined; each
    one's name goes to `written` as soon as it is (a Ctrl-C between two files reports the first)."""
    sha = {o.file: o.original_sha256 for o in outcomes}
    for plan in plans:
        if plan.code is None:
            continue
        path = root / plan.file
        has_bom = read_source(path).has_bom
        data = plan.code.encode("utf-8")
        write_atomically(path, (b"\xef\xbb\xbf" + data) if has_bom else data, sha[plan.file])
        written.append(plan.file)
