"""`coderefine scan [PATHS]`: which of the project's functions take the time, and which can be judged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from coderefine.errors import WriteConflict
from coderefine.sweep.scan import ScanOptions, ScanResult, run_scan
from coderefine.writeback import write_text_atomically

TABLE_ROWS = 30


def scan_table(result: ScanResult, limit: int) -> Table:
    table = Table(title=f"functions by own time ({result.workload})", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("function", overflow="fold")
    table.add_column("file:line", overflow="fold")
    table.add_column("share", justify="right")
    for name in ("own s", "calls", "tests", "coverage", "judgeable (estimate)"):
        table.add_column(name, justify="right" if not name.startswith("judgeable") else "left")
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
        f"({share:.1%} of the profiled time; an estimate under optimize's gate, which its baseline measures); "
        f"{result.wall_seconds:.1f}s in the {result.sandbox} sandbox"
    )


def write_report(path: Path, data: dict[str, Any]) -> None:
    try:
        write_text_atomically(path, json.dumps(data, indent=2, allow_nan=False) + "\n")
    except OSError as exc:
        raise WriteConflict(f"cannot write the report to {path}: {exc.strerror}") from None


def scan(
    options: ScanOptions, console: Console, report: Path | None = None, quiet: bool = False, limit: int = TABLE_ROWS
) -> int:
    """Profile and rank; the table (the first `limit` rows) and the summary on `console`, all in `report`."""
    result = run_scan(options)
    for warning in result.warnings:
        console.print(f"warning: {warning}", highlight=False, markup=False, soft_wrap=True)
    if not quiet:
        console.print(scan_table(result, limit))
        if len(result.entries) > limit:
            console.print(f"({len(result.entries) - limit} more in --report)", highlight=False)
    console.print(summary(result), highlight=False, markup=False, soft_wrap=True)
    if report is not None:
        write_report(report, {"coderefine_scan": 1, **result.to_dict()})
    return 0
