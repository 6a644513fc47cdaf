"""The bench's reports: the JSON document (the machine contract, see README "Bench report") and the
console table with its summary lines."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rich.table import Table
from rich.text import Text

from coderefine import __version__
from coderefine.bench.results import TaskRecord, summarize
from coderefine.bench.runner import BenchRun

SCHEMA_VERSION = 1
TIMING_ISOLATION = (
    "one task at a time"
    " | parallel tasks; every sandbox run that times code holds an exclusive lock, so timing runs never overlap"
)


@dataclass(frozen=True)
class BenchInfo:
    suite: str
    task: str
    provider: str  # "offline", "scripted", "openai" or "oracle"
    model: str | None
    script_dir: str | None
    jobs: int
    sandbox: str
    settings: dict[str, Any]
    state: str


def bench_dict(info: BenchInfo, run: BenchRun) -> dict[str, Any]:
    isolation = TIMING_ISOLATION.split(" | ")[0 if info.jobs == 1 else 1]
    return {
        "schema": SCHEMA_VERSION,
        "coderefine": __version__,
        "suite": info.suite,
        "task": info.task,
        "provider": info.provider,
        "model": info.model,
        "script_dir": info.script_dir,
        "jobs": info.jobs,
        "timing_isolation": isolation,
        "sandbox": info.sandbox,
        "settings": info.settings,
        "complete": not run.pending,
        "pending": run.pending,
        "resumed": run.resumed,
        "wall_seconds": round(run.wall_seconds, 3),
        "cpu_seconds": round(run.cpu_seconds, 3),
        "state": info.state,
        "summary": summarize(info.task, run.records),
        "tasks": [record.to_dict() for record in run.records],
    }


def render_bench_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, allow_nan=False, default=str) + "\n"


def _best_cell(task: str, record: TaskRecord) -> str:
    if task == "optimize":
        if record.improved and record.speedup is not None and record.speedup_ci is not None:
            return f"{record.speedup:.2f}x [{record.speedup_ci[0]:.2f}, {record.speedup_ci[1]:.2f}]"
        return "-"
    if record.baseline_score is None:
        return "-"
    after = record.best_score if record.improved and record.best_score is not None else record.baseline_score
    return f"{record.baseline_score:.1f} -> {after:.1f}"


_STATUS_STYLE = {"improved": "green", "unchanged": "yellow", "failed": "red"}


def record_line(task: str, record: TaskRecord) -> Text:
    """One line as a task finishes (printed above the progress bar)."""
    style = _STATUS_STYLE.get(record.status, "")
    text = Text(f"{record.id}: ")
    text.append(record.status, style=style)
    if record.status == "failed" and record.error is not None:
        text.append(f" - {record.error['message']}")
    else:
        last = f"; {record.verdicts[-1]}" if not record.improved and record.verdicts else ""
        text.append(f" {_best_cell(task, record)} ({record.stop_reason}{last}; {record.wall_seconds:.0f}s)")
    return text


def bench_table(task: str, records: list[TaskRecord]) -> Table:
    table = Table(title="tasks", title_justify="left")
    table.add_column("task", no_wrap=True)
    table.add_column("status")
    table.add_column("speedup [95% CI]" if task == "optimize" else "score before -> after", justify="right")
    table.add_column("iter", justify="right")
    table.add_column("rej. behav.", justify="right")
    table.add_column("calls", justify="right")
    table.add_column("tokens", justify="right")
    table.add_column("wall s", justify="right")
    table.add_column("cpu s", justify="right")
    table.add_column("stop reason; last verdict / error", overflow="fold", ratio=1, min_width=24)
    for record in records:
        reason = record.error["message"] if record.error else record.stop_reason
        if record.error is None and not record.improved and record.verdicts:
            reason += f"; {record.verdicts[-1]}"
        status = Text(record.status, style=_STATUS_STYLE.get(record.status, ""))
        if record.category:
            status.append(f" ({record.category})", style="dim")
        table.add_row(
            record.id,
            status,
            _best_cell(task, record),
            str(record.iterations),
            str(record.behavior_rejections),
            str(record.llm_calls),
            str(record.prompt_tokens + record.completion_tokens),
            f"{record.wall_seconds:.1f}",
            f"{record.cpu_seconds:.1f}",
            Text(reason),
        )
    return table


def summary_lines(data: dict[str, Any]) -> list[str]:
    summary = data["summary"]
    n = summary["tasks"]
    lines = [
        f"{summary['improved']}/{n} tasks improved ({summary['improved_pct']:g}%), {summary['failed']} failed; "
        f"{summary['behavior_rejected_tasks']} tasks ({summary['behavior_rejected_pct']:g}%) had a candidate "
        f"rejected for behaviour ({summary['candidates_rejected_for_behavior']} of "
        f"{summary['candidates_evaluated']} candidates run)",
    ]
    causes = summary.get("candidates_rejected_by_cause") or {}
    if causes:
        lines.append("rejections by cause: " + ", ".join(f"{cause} {count}" for cause, count in causes.items()))
    curve = summary["curve"]
    if data["task"] == "optimize":
        improved_only = summary["geomean_speedup_improved"]
        lines.append(
            f"geometric-mean speedup {summary['geomean_speedup']:.3f}x over all tasks (1.0 for unimproved)"
            + (f", {improved_only:.2f}x over the improved ones" if improved_only else "")
        )
        lines.append("per iteration (best so far): " + ", ".join(f"{i}: {v:.3f}x" for i, v in enumerate(curve)))
    else:
        lines.append(
            f"mean readability gain {summary['mean_gain']:+.2f} points (0 for unimproved); mean score "
            f"{summary['mean_score_before']} -> {summary['mean_score_after']}"
        )
        lines.append("per iteration (best so far): " + ", ".join(f"{i}: {v:+.2f}" for i, v in enumerate(curve)))
    calls, jobs = summary["llm_calls"], data["jobs"]
    lines.append(
        f"{calls} model call{_s(calls)}, {summary['tokens']} tokens; wall {data['wall_seconds']:.1f}s, "
        f"CPU {data['cpu_seconds']:.1f}s ({jobs} job{_s(jobs)}"
        + (f"; {data['resumed']} tasks from an earlier run" if data["resumed"] else "")
        + ")"
    )
    return lines


def _s(count: int) -> str:
    return "s" if count != 1 else ""
