"""`coderefine reach [PATH]`: build the project's reach map ahead of time (which tests execute which of its
functions), or bring the cached one up to date; later `optimize` runs start from it (evaluation/selection.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from rich.console import Console

from coderefine.errors import InputFileNotFound, NoTestsFound, UsageError
from coderefine.evaluation.reach_build import BuildOptions, BuildResult, build
from coderefine.evaluation.reach_map import (
    counted,
    default_reach_cache,
    list_test_files,
    project_hashes,
    python_files,
)
from coderefine.sandboxes.base import refuse_secrets
from coderefine.sandboxes.registry import make_sandbox
from coderefine.settings import Settings
from coderefine.sweep.scan import project_root

ENGINES = ("local", "ray")


@dataclass(frozen=True)
class ReachOptions:
    path: Path | None
    root: Path | None
    settings: Settings
    jobs: int
    limit: float
    full: bool
    as_json: bool
    engine: str = "local"
    pass_env: tuple[str, ...] = ()
    ray_address: str | None = None


def reach(options: ReachOptions, console: Console) -> int:
    """Build or update the map; what was traced on the console (or as JSON with --json)."""
    refuse_secrets(options.pass_env)
    if options.jobs < 1:
        raise UsageError(f"--jobs {options.jobs}: give at least 1")
    if options.engine not in ENGINES:
        raise UsageError(f"--engine {options.engine}: not available; available: {', '.join(ENGINES)}")
    if options.path is not None and not options.path.exists():
        raise InputFileNotFound(f"{options.path}: no such file or folder")
    root = project_root((options.path,) if options.path is not None else (), options.root)
    if not list_test_files(project_hashes(root), python_files(root)):
        raise NoTestsFound(f"no test files found under {root} (by pytest's python_files patterns)")
    sandbox = make_sandbox(options.settings.sandbox, options.settings.image)
    runner = None
    nodes: list[str] = []
    if options.engine == "ray":
        from coderefine.sweep.engines.reach_ray import ray_runner

        address = options.ray_address or options.settings.ray_address or "auto"
        runner = ray_runner(address, options.settings.sandbox, options.settings.image, nodes)
    try:
        result = build(
            BuildOptions(
                root,
                default_reach_cache(),
                options.jobs,
                options.limit,
                options.settings.memory_mb,
                options.pass_env,
                options.full,
            ),
            sandbox,
            runner,
        )
    finally:
        sandbox.close()
    if nodes:
        result = replace(result, nodes=len(set(nodes)))
    if options.as_json:
        console.print_json(json.dumps({"coderefine_reach": 1, **result.to_dict()}))
    else:
        for line in summary(result):
            console.print(line, highlight=False, markup=False, soft_wrap=True)
    return 0 if not result.failures else 1


def summary(result: BuildResult) -> list[str]:
    data = result.to_dict()
    update = result.update
    if update.full:
        head = f"reach map built ({update.why}): traced {counted(result.retraced, 'test')}"
    elif update.nothing:
        head = "reach map up to date: no file changed since it was built; re-traced 0 tests"
    else:
        changed = ", ".join(update.changed[:3]) + (
            f" (+{len(update.changed) - 3} more)" if len(update.changed) > 3 else ""
        )
        head = (
            f"reach map updated ({update.why}: {changed}): re-traced {counted(result.retraced, 'test')} "
            f"({counted(len(update.test_files), 'new or changed test file')} whole, "
            f"{counted(len(update.node_ids), 'test')} reaching a changed file), dropped {len(update.dropped)}"
        )
    lines = [
        f"{head} in {data['seconds']:.1f}s with {counted(result.workers, 'worker')}"
        + (f" on {counted(result.nodes, 'Ray node')}" if result.nodes else ""),
        f"{counted(len(result.reach.tests), 'test')} in {counted(int(data['test_files']), 'test file')} map to "
        f"{counted(int(data['functions']), 'project function')} "
        f"(tracer: {data['tracer'] or 'none'}); built at {data['built_at']}; cached in {data['cache']}",
    ]
    lines += [f"not traced: {failure}" for failure in result.failures]
    if result.untraced_files:
        lines.append(
            f"{counted(len(result.untraced_files), 'test file')} not (wholly) traced; the next build traces them"
        )
    return lines
