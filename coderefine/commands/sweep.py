"""`coderefine sweep [PATHS]`: scan, refine the chosen functions in parallel, merge, report, --write."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from coderefine.commands.scan import scan_table, summary
from coderefine.errors import ExitCode, WriteConflict
from coderefine.reports.console import task_progress
from coderefine.sandboxes.base import refuse_secrets
from coderefine.settings import Settings
from coderefine.sweep.engines.base import Engine
from coderefine.sweep.jobs import FunctionJob, FunctionOutcome
from coderefine.sweep.ranking import ScanEntry
from coderefine.sweep.report import render_html, render_markdown, sarif_log, sweep_dict
from coderefine.sweep.run import SweepOptions, run_sweep
from coderefine.sweep.scan import ScanResult
from coderefine.writeback import write_text_atomically


@dataclass(frozen=True)
class SweepReports:
    """Where a sweep's reports go (None: not written)."""

    json: Path | None = None
    markdown: Path | None = None
    html: Path | None = None
    sarif: Path | None = None


def make_engine(settings: Settings) -> Engine:
    if settings.engine == "ray":
        from coderefine.sweep.engines.ray_engine import RayEngine, import_ray, model_env

        import_ray()  # a missing extra fails now, before the scan
        return RayEngine(settings.ray_address or "auto", model_env(settings))
    from coderefine.sweep.engines.local import LocalEngine

    return LocalEngine(settings.workers)


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


def sweep(options: SweepOptions, reports: SweepReports, console: Console, quiet: bool = False) -> int:
    refuse_secrets(options.scan.pass_env)
    engine = make_engine(options.scan.settings)
    progress = task_progress(console, quiet=quiet)
    bar = progress.add_task("sweep: scanning", total=None)
    running: set[str] = set()

    def on_scan(scan: ScanResult, chosen: tuple[ScanEntry, ...]) -> None:
        if not quiet:
            progress.console.print(scan_table(scan, max(10, len(chosen))))
        progress.console.print(summary(scan), highlight=False, markup=False, soft_wrap=True)
        progress.update(bar, total=len(chosen), completed=0, description=f"sweep ({engine.name})")

    def on_start(job: FunctionJob) -> None:
        running.add(job.key)

    def on_done(outcome: FunctionOutcome) -> None:
        running.discard(outcome.key)
        progress.advance(bar)
        if not quiet:
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
        _write(reports.json, json.dumps(data, indent=2, allow_nan=False) + "\n")
        return int(ExitCode.INTERRUPTED)
    s = data["summary"]
    for plan in result.files:
        if plan.dropped:
            console.print(f"{plan.file}: {plan.verified_by}; left out {', '.join(plan.dropped)}", highlight=False)
    written = f"written: {', '.join(result.written)}" if result.written else "nothing written"
    if result.files and not options.write:
        written += " (rerun with --write to apply the verified changes)"
    console.print(
        f"sweep: {s['improved']} of {s['finished']} functions made faster ({s['resumed']} from {result.state}), "
        f"{result.engine_description}, {result.wall_seconds:.0f}s; {written}",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    _write(reports.json, json.dumps(data, indent=2, allow_nan=False) + "\n")
    _write(reports.markdown, render_markdown(data))
    _write(reports.html, render_html(data))
    if reports.sarif is not None:
        _write(reports.sarif, json.dumps(sarif_log(result), indent=2, ensure_ascii=False) + "\n")
    return 0
