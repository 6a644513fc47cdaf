"""`coderefine scan [PATHS]`: which of the project's functions take the time, and which can be judged."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from coderefine.errors import WriteConflict
from coderefine.settings import resolve_settings
from coderefine.sweep.scan import ScanOptions, ScanResult, run_scan
from coderefine.writeback import write_text_atomically

TABLE_ROWS = 30


@dataclass(frozen=True)
class ScanArgs:
    paths: tuple[Path, ...]
    flags: Mapping[str, Any]
    tests: Path | None = None
    command: str | None = None
    root: Path | None = None
    report: Path | None = None
    pass_env: tuple[str, ...] = ()
    limit: int = TABLE_ROWS
    quiet: bool = False


def scan_table(result: ScanResult, limit: int) -> Table:
    table = Table(title=f"functions by own time ({result.workload})", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("function", overflow="fold")
    table.add_column("file:line", overflow="fold")
    table.add_column("share", justify="right")
    for name in ("own s", "calls", "tests", "coverage", "judgeable"):
        table.add_column(name, justify="right" if name != "judgeable" else "left")
    for entry in result.entries[:limit]:
        table.add_row(
            str(entry.rank),
            entry.target,
            entry.location,
            f"{entry.share:.1%}",
            f"{entry.own_seconds:.4f}",
            str(entry.calls),
            str(entry.test_count),
            f"{entry.coverage:.0%}" if entry.coverage is not None else "-",
            "yes" if entry.judgeable else f"no: {entry.why_not}",
        )
    return table


def summary(result: ScanResult) -> str:
    judgeable = [e for e in result.entries if e.judgeable]
    share = sum(e.share for e in judgeable)
    return (
        f"scan: {len(result.entries)} project functions ran, {len(judgeable)} can be judged "
        f"({share:.1%} of the profiled time); {result.wall_seconds:.1f}s in the {result.sandbox} sandbox"
    )


def write_report(path: Path, data: dict[str, Any]) -> None:
    try:
        write_text_atomically(path, json.dumps(data, indent=2, allow_nan=False) + "\n")
    except OSError as exc:
        raise WriteConflict(f"cannot write the report to {path}: {exc.strerror}") from None


def scan_command(args: ScanArgs, console: Console) -> int:
    start = args.paths[0] if args.paths else Path.cwd()
    settings = resolve_settings(args.flags, start if start.exists() else Path.cwd())
    options = ScanOptions(args.paths, settings, args.tests, args.command, args.root, args.pass_env)
    result = run_scan(options)
    for warning in result.warnings:
        console.print(f"warning: {warning}", highlight=False, markup=False, soft_wrap=True)
    if not args.quiet:
        console.print(scan_table(result, args.limit))
        if len(result.entries) > args.limit:
            console.print(f"({len(result.entries) - args.limit} more in --report)", highlight=False)
    console.print(summary(result), highlight=False, markup=False, soft_wrap=True)
    if args.report is not None:
        write_report(args.report, {"coderefine_scan": 1, **result.to_dict()})
    return 0
