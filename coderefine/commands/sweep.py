"""`coderefine sweep [PATHS]`: scan, refine the chosen functions in parallel, merge, report, --write."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from coderefine.commands.scan import scan_table, summary
from coderefine.errors import ExitCode, UsageError, WriteConflict
from coderefine.reports.console import task_progress
from coderefine.sandboxes.base import looks_secret
from coderefine.settings import Settings, resolve_settings
from coderefine.sweep.engines.base import Engine
from coderefine.sweep.jobs import FunctionJob, FunctionOutcome
from coderefine.sweep.ranking import ScanEntry
from coderefine.sweep.report import render_html, render_markdown, sarif_log, sweep_dict
from coderefine.sweep.run import SweepOptions, run_sweep
from coderefine.sweep.scan import ScanOptions, ScanResult
from coderefine.writeback import write_text_atomically


@dataclass(frozen=True)
class SweepArgs:
    paths: tuple[Path, ...]
    flags: Mapping[str, Any]
    task: str = "optimize"
    top: int | None = None
    min_share: float | None = None
    tests: Path | None = None
    command: str | None = None
    root: Path | None = None
    script: Path | None = None
    write: bool = False
    report: Path | None = None
    markdown: Path | None = None
    html: Path | None = None
    sarif: Path | None = None
    state: Path | None = None
    fresh: bool = False
    from_scan: Path | None = None
    pass_env: tuple[str, ...] = ()
    quiet: bool = False


def make_engine(settings: Settings) -> Engine:
    if settings["engine"] == "ray":
        from coderefine.sweep.engines.ray_engine import RayEngine, import_ray, model_env

        import_ray()  # a missing extra fails now, before the scan
        return RayEngine(settings["ray_address"] or "auto", model_env(settings))
    from coderefine.sweep.engines.local import LocalEngine

    return LocalEngine(settings["workers"])


def outcome_line(outcome: FunctionOutcome) -> str:
    if outcome.verified and outcome.speedup is not None and outcome.ci is not None:
        figure = f"{outcome.speedup:.2f}x [{outcome.ci[0]:.2f}, {outcome.ci[1]:.2f}] faster"
    else:
        figure = outcome.reason
    node = outcome.placement.node
    where = f" on {node[:12]}" if node not in ("local", "") else ""
    retried = "; retried: its first worker died" if outcome.attempts > 1 and outcome.error is None else ""
    return f"{outcome.status:<18} {outcome.key}: {figure} ({outcome.wall_seconds:.0f}s{where}{retried})"


def _write(path: Path | None, text: str) -> None:
    if path is None:
        return
    try:
        write_text_atomically(path, text)
    except OSError as exc:
        raise WriteConflict(f"cannot write the report to {path}: {exc.strerror}") from None


def sweep_command(args: SweepArgs, console: Console) -> int:
    for name in args.pass_env:
        if looks_secret(name):
            raise UsageError(f"--pass-env {name}: refusing to pass what looks like a secret into the sandbox")
    flags = dict(args.flags)
    if args.script is not None:
        flags["provider"] = "scripted"
    start = args.paths[0] if args.paths else Path.cwd()
    settings = resolve_settings(flags, start if start.exists() else Path.cwd())
    engine = make_engine(settings)
    scan_options = ScanOptions(args.paths, settings, args.tests, args.command, args.root, args.pass_env)
    options = SweepOptions(
        scan=scan_options,
        task=args.task,
        top=args.top,
        min_share=args.min_share,
        write=args.write,
        state=args.state,
        fresh=args.fresh,
        script=args.script,
        from_scan=args.from_scan,
    )
    progress = task_progress(console, quiet=args.quiet)
    bar = progress.add_task("sweep: scanning", total=None)
    running: set[str] = set()

    def on_scan(scan: ScanResult, chosen: tuple[ScanEntry, ...]) -> None:
        if not args.quiet:
            progress.console.print(scan_table(scan, max(10, len(chosen))))
        progress.console.print(summary(scan), highlight=False, markup=False, soft_wrap=True)
        progress.update(bar, total=len(chosen), completed=0, description=f"sweep ({engine.name})")

    def on_start(job: FunctionJob) -> None:
        running.add(job.key)

    def on_done(outcome: FunctionOutcome) -> None:
        running.discard(outcome.key)
        progress.advance(bar)
        if not args.quiet:
            progress.console.print(outcome_line(outcome), highlight=False, markup=False, soft_wrap=True)

    try:
        with progress:
            result = run_sweep(options, engine, on_scan, on_start, on_done)
    except KeyboardInterrupt:  # before the engine started (the scan): nothing new to keep
        console.print(
            "interrupted before this run finished a function; rerun the same command to continue", highlight=False
        )
        return int(ExitCode.INTERRUPTED)
    data = sweep_dict(result)
    if result.interrupted:
        left = len(result.chosen) - len(result.outcomes)
        written = f"; written: {', '.join(result.written)}" if result.written else ""
        console.print(
            f"interrupted: {len(result.outcomes)} finished functions kept in {result.state}; rerun the same command "
            f"to continue ({f'{left} left' if left else 'the merges left'}){written}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        _write(args.report, json.dumps(data, indent=2, allow_nan=False) + "\n")
        return int(ExitCode.INTERRUPTED)
    s = data["summary"]
    for plan in result.files:
        if plan.dropped:
            console.print(f"{plan.file}: {plan.verified_by}; left out {', '.join(plan.dropped)}", highlight=False)
    written = f"written: {', '.join(result.written)}" if result.written else "nothing written"
    if result.files and not args.write:
        written += " (rerun with --write to apply the verified changes)"
    console.print(
        f"sweep: {s['improved']} of {s['finished']} functions made faster ({s['resumed']} from {result.state}), "
        f"{result.engine_description}, {result.wall_seconds:.0f}s; {written}",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    _write(args.report, json.dumps(data, indent=2, allow_nan=False) + "\n")
    _write(args.markdown, render_markdown(data))
    _write(args.html, render_html(data))
    if args.sarif is not None:
        _write(args.sarif, json.dumps(sarif_log(result), indent=2, ensure_ascii=False) + "\n")
    return 0
