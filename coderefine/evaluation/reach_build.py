"""Build or update a project's reach map: the test files split across workers, each worker one run of the
sandbox runner's `reach` mode on its own copy of the project, side by side; their tables merged into the
map (reach_map.py), which is cached outside the user's tree."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from coderefine.evaluation.layered import Snapshot, snapshot, tree_writes
from coderefine.evaluation.project_run import import_roots, run_on_copy, runner_said
from coderefine.evaluation.protocol import (
    CaptureSpec,
    ProtocolError,
    ReachReport,
    ReachRequest,
    ReachTable,
    RecordedShare,
    from_json,
    to_json,
)
from coderefine.evaluation.reach_map import (
    RANKS,
    ReachMap,
    Update,
    apply_update,
    cache_file,
    counted,
    file_prints,
    list_test_files,
    nearest_first,
    plan_update,
    project_files,
    project_hashes,
    python_files,
    read_map,
    round_robin,
    split_files,
    write_map,
)
from coderefine.evaluation.requests import HASH_SEED
from coderefine.pool import available_cpus
from coderefine.sandboxes.base import Sandbox, SandboxOutcome


@dataclass(frozen=True)
class BuildOptions:
    root: Path
    cache_dir: Path
    jobs: int
    timeout: float  # per worker's pytest run
    memory_mb: int
    pass_env: tuple[str, ...] = ()
    full: bool = False  # ignore the cached map: trace every test
    deadline: float = 0.0  # seconds after which each worker stops collecting and running (0: none)
    # A first run's trace: each worker also records the target's calls, kept under `keep` (a folder per worker
    # with its calls, its tests' outcomes and a RecordedShare in share.json) for the baseline to take
    record: CaptureSpec | None = None
    keep: Path | None = None


@dataclass(frozen=True)
class BuildResult:
    reach: ReachMap
    update: Update
    retraced: int  # tests traced by this build
    workers: int
    seconds: float
    failures: tuple[str, ...]  # workers whose run did not finish (what was not traced, and why)
    cache: Path
    untraced_files: tuple[str, ...] = ()  # test files not (wholly) traced: a deadline or a failed worker
    tests_untraced: int = 0
    nodes: int = 0  # --engine ray: the cluster nodes the workers ran on

    def to_dict(self) -> dict[str, object]:
        functions_reached = len({n for numbers in self.reach.tests.values() for n in numbers})
        return {
            "root": self.reach.root,
            "cache": str(self.cache),
            "built_at": self.reach.built_at,
            "tracer": self.reach.tracer,
            "full": self.update.full,
            "why": self.update.why,
            "changed_files": list(self.update.changed),
            "changed_functions": list(self.update.functions),
            "retraced_tests": self.retraced,
            "retraced_test_files": len(self.update.test_files),
            "retraced_single_tests": len(self.update.node_ids),
            "dropped_tests": len(self.update.dropped),
            "tests": len(self.reach.tests),
            "test_files": len({test.split("::")[0] for test in self.reach.tests}),
            "functions": functions_reached,
            "workers": self.workers,
            "seconds": round(self.seconds, 3),
            "failures": list(self.failures),
            "untraced_test_files": list(self.untraced_files),
            "tests_untraced": self.tests_untraced,
            "ray_nodes": self.nodes,
        }


ShareRequest = tuple[tuple[str, ...], tuple[str, ...], bool]  # whole test files, single tests, `others`
ShareResult = tuple[ReachTable | None, str | None]  # the table, or why there is none
# Runs the shares of one build side by side and returns their results in order (local threads by default;
# `coderefine reach --engine ray` passes one that runs them as Ray tasks).
ShareRunner = Callable[[Path, tuple[str, ...], "BuildOptions", list[ShareRequest]], list[ShareResult]]


def build(options: BuildOptions, sandbox: Sandbox, runner: ShareRunner | None = None) -> BuildResult:
    """Bring the cached map of `options.root` up to date (all of it when there is none) and save it."""
    started = time.perf_counter()
    root = options.root.resolve()
    path = cache_file(options.cache_dir, root)
    old = None if options.full else read_map(path)
    hashes = project_hashes(root)
    test_files = list_test_files(hashes, python_files(root))
    update = plan_update(old, hashes, test_files, file_prints(root))
    if options.full:
        update = replace(update, why="--full: every test traced again")
    shares = _shares(root, update, options.jobs)
    return _finish(root, path, old, update, hashes, test_files, shares, options, sandbox, started, runner)


def first_trace(
    root: Path,
    ranked: tuple[tuple[str, int], ...],
    options: BuildOptions,
    sandbox: Sandbox,
) -> BuildResult:
    """A bounded first map: the test files in `ranked`'s order (nearest to the target first) dealt to the
    workers, each stopping at `options.deadline`; what it leaves out is named and traced by a later build."""
    started = time.perf_counter()
    root = root.resolve()
    hashes = project_hashes(root)
    test_files = list_test_files(hashes, python_files(root))
    order = tuple(name for name, _ in ranked)
    update = Update(True, order, (), (), (), "a first trace, nearest first")
    shares = [(files, ()) for files in round_robin(order, options.jobs)]
    path = cache_file(options.cache_dir, root)
    return _finish(root, path, None, update, hashes, test_files, shares, options, sandbox, started)


Share = tuple[tuple[str, ...], tuple[str, ...]]  # whole test files, single tests


def _shares(root: Path, update: Update, jobs: int) -> list[Share]:
    sizes = {name: _size(root / name) for name in update.test_files}
    shares: list[Share] = [(files, ()) for files in split_files(update.test_files, sizes, jobs)]
    if update.node_ids:  # single tests: split by test, apart from the whole files
        singles = sorted(update.node_ids)
        count = max(1, min(jobs, len(singles)))
        shares += [((), tuple(singles[i::count])) for i in range(count)]
    return shares


def _finish(
    root: Path,
    path: Path,
    old: ReachMap | None,
    update: Update,
    hashes: dict[str, str],
    test_files: tuple[str, ...],
    shares: list[Share],
    options: BuildOptions,
    sandbox: Sandbox,
    started: float,
    runner: ShareRunner | None = None,
) -> BuildResult:
    tables, failed = trace(root, test_files, shares, update.full, options, runner or local_runner(sandbox))
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    if update.nothing and old is not None:
        stamp = old.built_at
    untraced = {name for table in tables for name in table.untraced_files}
    failures = []
    for (files, nodes), why in failed:
        failures.append(f"{_share_text(files, nodes)}: {why}")
        untraced.update(files)
        untraced.update(node.split("::")[0] for node in nodes)
    # What was not traced must not pass for up to date: its files keep no hash (so a later build traces
    # them whole), and when single tests were lost, the changed files that chose them keep their old hash.
    settled = dict(hashes)
    for name in untraced:
        settled[name] = ""
    if any(nodes for (_, nodes), _ in failed):
        for name in update.changed:
            settled[name] = old.hashes.get(name, "") if old is not None else ""
    fresh = apply_update(
        old,
        update,
        tables,
        root=str(root),
        built_at=stamp,
        hashes=settled,
        test_files=test_files,
        prints_of=file_prints(root),
    )
    write_map(path, fresh)
    return BuildResult(
        fresh,
        update,
        sum(len(table.tests) for table in tables),
        len(shares),
        time.perf_counter() - started,
        tuple(failures),
        path,
        tuple(sorted(untraced)),
        sum(table.tests_untraced for table in tables),
    )


def trace(
    root: Path,
    universe: tuple[str, ...],
    shares: list[Share],
    full: bool,
    options: BuildOptions,
    runner: ShareRunner,
) -> tuple[list[ReachTable], list[tuple[Share, str]]]:
    """Run the shares side by side: their tables, and the shares that failed, and why."""
    if not shares:
        return [], []
    requests = [(files, nodes, index == 0 and full) for index, (files, nodes) in enumerate(shares)]
    tables: list[ReachTable] = []
    failed: list[tuple[Share, str]] = []
    for (files, nodes, _), (table, failure) in zip(requests, runner(root, universe, options, requests), strict=True):
        if table is not None:
            tables.append(table)
        if failure is not None:
            failed.append(((files, nodes), failure))
    return tables, failed


def local_runner(sandbox: Sandbox) -> ShareRunner:
    """Shares in `options.jobs` threads of this process, each waiting on its sandboxed pytest run."""

    def run(
        root: Path, universe: tuple[str, ...], options: BuildOptions, requests: list[ShareRequest]
    ) -> list[ShareResult]:
        with ThreadPoolExecutor(max(1, options.jobs)) as pool:
            return list(pool.map(lambda request: run_share(root, universe, options, sandbox, *request), requests))

    return run


def _share_text(files: tuple[str, ...], nodes: tuple[str, ...]) -> str:
    parts = []
    if files:
        parts.append(
            f"{len(files)} test file{'s' if len(files) != 1 else ''} ({files[0]}{', ...' if len(files) > 1 else ''})"
        )
    if nodes:
        parts.append(f"{len(nodes)} test{'s' if len(nodes) != 1 else ''}")
    return " and ".join(parts)


def run_share(
    root: Path,
    universe: tuple[str, ...],
    options: BuildOptions,
    sandbox: Sandbox,
    files: tuple[str, ...],
    nodes: tuple[str, ...],
    others: bool,
) -> tuple[ReachTable | None, str | None]:
    before: list[Snapshot] = []

    def request(workspace: Path, io_dir: Path) -> ReachRequest:
        if options.record is not None:  # what the tests write into the tree decides how candidates get copies
            before.append(snapshot(workspace))
        return ReachRequest(
            mode="reach",
            workspace=str(workspace),
            io_dir=str(io_dir),
            import_roots=import_roots(root),
            test_files=files,
            node_ids=nodes,
            universe=universe,
            others=others,
            test_patterns=python_files(root),
            deadline=options.deadline,
            timeout=options.timeout,
            hash_seed=HASH_SEED,
            record=options.record,
        )

    kept: list[Path] = []

    def keep(workspace: Path, io_dir: Path, outcome: object) -> None:
        """A recording worker's calls and outcomes, out of its copy before the copy goes."""
        if options.record is None or options.keep is None:
            return
        folder = Path(tempfile.mkdtemp(prefix="share-", dir=options.keep))
        for name in ("calls.pkl", "pytest-results.json"):
            if (io_dir / name).exists():
                shutil.copyfile(io_dir / name, folder / name)
        (folder / "workspace").write_text(str(workspace), encoding="utf-8")
        written = tree_writes(before[0], snapshot(workspace)) if before else ()
        (folder / "writes.json").write_text(json.dumps(written), encoding="utf-8")
        kept.append(folder)

    limit = options.timeout + 60  # the runner's own start and end around the pytest run
    outcome = run_on_copy(
        root,
        request,
        sandbox,
        prefix="coderefine-reach-",
        timeout=limit,
        memory_mb=options.memory_mb,
        pass_env=options.pass_env,
        keep=keep,
    )
    table, why = _share_outcome(outcome, limit)
    if kept and table is not None:  # only a worker whose table the map takes gives the baseline its calls
        seconds = table_seconds(outcome.stdout)
        workspace = (kept[0] / "workspace").read_text(encoding="utf-8")
        written = tuple(json.loads((kept[0] / "writes.json").read_text(encoding="utf-8")))
        calls, results = str(kept[0] / "calls.pkl"), str(kept[0] / "pytest-results.json")
        share = RecordedShare(workspace, calls, results, seconds, written)
        (kept[0] / "share.json").write_text(to_json(share), encoding="utf-8")
    return table, why


def table_seconds(stdout: str) -> float:
    """The wall time of a reach report's pytest run."""
    report = from_json(ReachReport, stdout)
    return report.tests.duration if report.tests is not None else 0.0


def _share_outcome(outcome: SandboxOutcome, limit: float) -> tuple[ReachTable | None, str | None]:
    """A worker's table from its run's outcome, or why there is none."""
    if outcome.timed_out:
        return None, f"exceeded its limit of {limit:g}s"
    try:
        json.loads(outcome.stdout)
        report = from_json(ReachReport, outcome.stdout)
    except (json.JSONDecodeError, ProtocolError):
        return None, "the sandbox runner failed: " + runner_said(outcome)
    if report.runner_error is not None:
        return None, report.runner_error
    if report.table is None:
        tests = report.tests
        why = tests.session_error if tests is not None and tests.session_error else "pytest ended without a table"
        return None, why
    return report.table, None


@dataclass(frozen=True)
class MapForRun:
    """The cached map as a run finds it: usable (current, stale only where the targets' tests do not run, or
    updated now within the budget) or not, and what the run's report says about it."""

    reach: ReachMap | None  # None: not usable
    note: str
    # A first run's trace that recorded the target's calls too: its workers' calls and outcomes (the baseline
    # takes them instead of running the reaching tests again)
    recorded: tuple[RecordedShare, ...] = ()


def map_for_run(
    root: Path,
    target_file: str,
    targets: tuple[str, ...],
    cache_dir: Path,
    sandbox: Sandbox,
    budget: float,
    memory_mb: int,
    pass_env: tuple[str, ...] = (),
) -> MapForRun | None:
    """The project's cached reach map brought up to date for these targets, or None when there is none.

    A change to functions no test reaching the targets runs (with no new or changed test file) leaves the map
    usable as it is; otherwise the map is updated incrementally first, in the sandbox, with every core, each
    worker within `budget` seconds; a full rebuild (the pytest configuration changed) is not tried. A target
    the map has no test for (a new function) is left to the traced first run (selection.py)."""
    root = root.resolve()
    old = cached_map(root, cache_dir)
    if old is None:
        return None
    hashes = project_hashes(root)
    update = plan_update(old, hashes, list_test_files(hashes, python_files(root)), file_prints(root))
    built = f"map built at {old.built_at}"
    if update.nothing:
        return MapForRun(old, built)
    reaching = set(old.reaching(target_file, targets))
    if not update.full and not update.test_files and not reaching.intersection(update.node_ids):
        return MapForRun(old, f"{built}; {update.why} since, none that the tests reaching the targets run")
    if update.full:
        return MapForRun(None, f"the reach map is stale ({update.why}); `coderefine reach` rebuilds it")
    options = BuildOptions(root, cache_dir, available_cpus(), budget + 60, memory_mb, pass_env, deadline=budget)
    result = build(options, sandbox)
    if result.failures:
        return MapForRun(None, f"updating the stale reach map failed: {result.failures[0]}")
    note = (
        f"{built}, updated first ({update.why}): re-traced {counted(result.retraced, 'test')} in {result.seconds:.1f}s"
    )
    return MapForRun(result.reach, note + untraced_text(result, budget))


# A first run traces test files for a reach map of its own only on a suite this large (in test files); a smaller
# one is traced as before, in the original's own run (selection.py), which costs no extra pytest run.
LARGE_SUITE = 40
# Workers per core for a first trace. Its files are dealt before any test's duration is known, and a suite's
# time sits in a few long tests (networkx: single tests of 5-27 s): one worker a core left one running on alone
# (62 s of tracing against 26 s). With two a core the system shares each core between two shares, so the long
# share gets a whole core once its neighbours end; each extra worker costs its own start and collection (~4 s
# of CPU on networkx). Measured side by side on networkx's nearest-first order: 82.1 s with 2 workers, 73.2 s
# with 4, 71.9 s with 6 (load 2-4.5).
FIRST_TRACE_WORKERS_PER_CPU = 2


def bounded_first_map(
    root: Path,
    module_name: str,
    names: tuple[str, ...],
    cache_dir: Path,
    sandbox: Sandbox,
    budget: float,
    memory_mb: int,
    pass_env: tuple[str, ...] = (),
    record: CaptureSpec | None = None,
    keep: Path | None = None,
) -> MapForRun | None:
    """No map yet and a large suite: a first map traced nearest first within `budget`, in a worker per core,
    saved for later runs (`coderefine reach` completes it). None on a small suite.

    With `record` (and `keep`, a folder that outlives this call), the same pytest runs record the target's
    calls: the baseline then takes them and the reaching tests' outcomes, and does not run those tests again."""
    root = root.resolve()
    test_files = list_test_files(project_files(root), python_files(root))
    if len(test_files) <= LARGE_SUITE:
        return None  # decided from the names alone: a small project's first run reads no file for this
    texts = {name: _text(root / name) for name in test_files}
    package = module_name.partition(".")[0]
    ranked = nearest_first(texts, module_name, names, package)
    workers = FIRST_TRACE_WORKERS_PER_CPU * available_cpus()
    options = BuildOptions(
        root, cache_dir, workers, budget + 60, memory_mb, pass_env, deadline=budget, record=record, keep=keep
    )
    result = first_trace(root, ranked, options, sandbox)
    if not result.reach.tests:
        why = result.failures[0] if result.failures else "no test was traced"
        return MapForRun(None, f"the first reach trace found nothing: {why}")
    untraced = set(result.untraced_files)
    done = [0] * len(RANKS)
    total = [0] * len(RANKS)
    for name, rank in ranked:
        total[rank] += 1
        done[rank] += name not in untraced
    ranks = ", ".join(
        f"{label.replace('its package', f'{package}')} {done[i]}/{total[i]}"
        for i, label in enumerate(RANKS)
        if total[i]
    )
    recorded = _recorded_shares(keep) if record is not None and keep is not None else ()
    note = (
        f"no map yet: traced {sum(done)} of {counted(len(ranked), 'test file')} nearest first ({ranks}) with "
        f"{counted(result.workers, 'worker')} in {result.seconds:.1f}s"
        f"{', recording the calls in the same run' if recorded else ''}, saved as the project's reach map"
    )
    return MapForRun(result.reach, note + untraced_text(result, budget), recorded)


def _recorded_shares(keep: Path) -> tuple[RecordedShare, ...]:
    """The recording workers whose tables the map took (run_share wrote their share.json)."""
    return tuple(
        from_json(RecordedShare, path.read_text(encoding="utf-8")) for path in sorted(keep.glob("share-*/share.json"))
    )


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def untraced_text(result: BuildResult, budget: float) -> str:
    """'; not traced within the 100 s budget: 12 test files (340 collected tests unrun), e.g. tests/test_x.py'."""
    if not result.untraced_files:
        return ""
    text = f"; not traced within the {budget:g} s budget: {counted(len(result.untraced_files), 'test file')}"
    if result.tests_untraced:
        text += f" ({counted(result.tests_untraced, 'collected test')} unrun)"
    return text + f", e.g. {result.untraced_files[0]}; `coderefine reach` completes the map"


def cached_map(root: Path, cache_dir: Path) -> ReachMap | None:
    return read_map(cache_file(cache_dir, root.resolve()))


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
