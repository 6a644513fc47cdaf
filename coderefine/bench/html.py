"""The bench's HTML page: one self-contained file (inline SVG and CSS, no script, nothing fetched) with the
summary, a chart of each task's result, the per-iteration curve and the task table."""

from __future__ import annotations

import math
from html import escape
from typing import Any

_COLORS = {"improved": "#2e7d32", "unchanged": "#9e9e9e", "failed": "#c62828"}
_CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto; max-width: 1100px;
       color: #212121; padding: 0 16px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 28px; }
.meta { color: #616161; } .figures { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0; }
.figure { border: 1px solid #e0e0e0; border-radius: 6px; padding: 8px 14px; min-width: 150px; }
.figure b { display: block; font-size: 20px; } .figure span { color: #616161; font-size: 12px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { border-bottom: 1px solid #eee; padding: 3px 6px; text-align: left; vertical-align: top; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; } td.n { white-space: nowrap; }
.improved { color: #2e7d32; } .unchanged { color: #757575; } .failed { color: #c62828; }
svg text { font: 11px system-ui, sans-serif; fill: #424242; }
"""


def _svg(width: float, height: float, body: list[str], label: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{escape(label)}">' + "".join(body) + "</svg>"
    )


def _ticks_log(low: float, high: float) -> list[float]:
    candidates = [0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 10000]
    return [t for t in candidates if low <= t <= high]


def _ticks_linear(low: float, high: float, count: int = 6) -> list[float]:
    span = high - low or 1.0
    step = 10 ** math.floor(math.log10(span / count))
    for factor in (1, 2, 5, 10):
        if span / (step * factor) <= count:
            step *= factor
            break
    first = math.ceil(low / step) * step
    return [round(first + i * step, 6) for i in range(int((high - first) / step) + 1)]


def task_chart(task: str, tasks: list[dict[str, Any]]) -> str:
    """Horizontal bars, one row per task: speedup on a log axis from 1.0 (with its 95% interval), or the
    readability score from before to after."""
    label_width, plot_width, row, top = 170, 760, 16, 28
    height = top + row * len(tasks) + 30
    body: list[str] = []
    if task == "optimize":
        values = [t["speedup"] for t in tasks if t["status"] == "improved" and t["speedup"]]
        highs = [t["speedup_ci"][1] for t in tasks if t["status"] == "improved" and t.get("speedup_ci")]
        measured = [v for t in tasks if t["status"] != "improved" and t.get("top_measured") for v in t["top_measured"]]
        low = min([0.8, *(0.9 * v for v in measured if v > 0)])
        high = max([2.0, *values, *highs, *measured]) * 1.15
        low = max(low, 0.1)

        def x(value: float) -> float:
            return label_width + plot_width * (math.log(value) - math.log(low)) / (math.log(high) - math.log(low))

        ticks = _ticks_log(low, high)
        tick_label = "{:g}x"
        axis_title = (
            "speedup of the best verified candidate (log scale; bar from 1x; whisker: 95% interval); "
            "hollow: fastest candidate measured but not accepted"
        )
    else:
        scores = [t[k] for t in tasks for k in ("baseline_score", "best_score") if t.get(k) is not None]
        low = max(0.0, math.floor((min(scores, default=0.0) - 5) / 10) * 10)
        high = min(100.0, math.ceil((max(scores, default=100.0) + 5) / 10) * 10)

        def x(value: float) -> float:
            return label_width + plot_width * (value - low) / ((high - low) or 1.0)

        ticks = _ticks_linear(low, high)
        tick_label = "{:g}"
        axis_title = "readability score: original (left end) to best verified candidate (bar)"
    body.append(f'<text x="{label_width}" y="14">{escape(axis_title)}</text>')
    bottom = top + row * len(tasks)
    for tick in ticks:
        body.append(f'<line x1="{x(tick):.1f}" y1="{top - 4}" x2="{x(tick):.1f}" y2="{bottom}" stroke="#eee"/>')
        body.append(f'<text x="{x(tick):.1f}" y="{bottom + 14}" text-anchor="middle">{tick_label.format(tick)}</text>')
    if task == "optimize":
        body.append(f'<line x1="{x(1.0):.1f}" y1="{top - 4}" x2="{x(1.0):.1f}" y2="{bottom}" stroke="#757575"/>')
    for i, t in enumerate(tasks):
        y = top + i * row
        color = _COLORS.get(t["status"], "#9e9e9e")
        body.append(f'<text x="{label_width - 6}" y="{y + 11}" text-anchor="end">{escape(t["id"])}</text>')
        if task == "optimize":
            improved = t["status"] == "improved" and t.get("speedup")
            value = t["speedup"] if improved else 1.0
            start, end = sorted((x(1.0), x(value)))
            title = f"{t['id']}: {t['status']}" + (f", {t['speedup']:.2f}x" if improved else "")
            body.append(
                f'<rect x="{start:.1f}" y="{y + 2}" width="{max(end - start, 2):.1f}" height="{row - 5}" '
                f'fill="{color}"><title>{escape(title)}</title></rect>'
            )
            if improved and t.get("speedup_ci"):
                lo, hi = (x(max(v, low)) for v in t["speedup_ci"])
                mid = y + (row - 3) / 2
                body.append(f'<line x1="{lo:.1f}" y1="{mid:.1f}" x2="{hi:.1f}" y2="{mid:.1f}" stroke="#1b1b1b"/>')
                body.append(f'<text x="{hi + 4:.1f}" y="{y + 11}">{t["speedup"]:.2f}x</text>')
            elif t["status"] == "failed":
                body.append(f'<text x="{x(1.0) + 6:.1f}" y="{y + 11}" fill="{color}">failed</text>')
            elif t.get("top_measured"):
                # Not accepted, but measured: a hollow mark shows how close it came to the noise floor.
                speed, lo, hi = (x(min(max(v, low), high)) for v in t["top_measured"])
                mid = y + (row - 3) / 2
                body.append(f'<line x1="{lo:.1f}" y1="{mid:.1f}" x2="{hi:.1f}" y2="{mid:.1f}" stroke="#9e9e9e"/>')
                body.append(
                    f'<circle cx="{speed:.1f}" cy="{mid:.1f}" r="3.5" fill="white" stroke="#616161">'
                    f"<title>{escape(t['id'])}: fastest measured {t['top_measured'][0]:.2f}x, not accepted</title>"
                    "</circle>"
                )
        else:
            before = t.get("baseline_score")
            if before is None:
                body.append(f'<text x="{label_width + 6}" y="{y + 11}">failed</text>')
                continue
            after = t["best_score"] if t["status"] == "improved" and t.get("best_score") is not None else before
            start, end = sorted((x(before), x(after)))
            body.append(f'<circle cx="{x(before):.1f}" cy="{y + row / 2 - 1:.1f}" r="3" fill="#757575"/>')
            body.append(
                f'<rect x="{start:.1f}" y="{y + 2}" width="{max(end - start, 2):.1f}" height="{row - 5}" '
                f'fill="{color}"><title>{escape(t["id"])}: {before:.1f} to {after:.1f}</title></rect>'
            )
            body.append(f'<text x="{end + 4:.1f}" y="{y + 11}">{after - before:+.1f}</text>')
    return _svg(label_width + plot_width + 60, height, body, "result per task")


def curve_chart(task: str, curve: list[float], improved_after: list[int], total: int) -> str:
    """The per-iteration view: the suite's figure of the best so far after each iteration."""
    width, height, left, right, top, bottom = 600, 300, 60, 60, 30, 50
    if not curve:
        return _svg(width, 60, ['<text x="10" y="30">no iterations ran</text>'], "per-iteration curve")
    base = 1.0 if task == "optimize" else 0.0
    low = min(base, *curve)
    high = max(*curve, base + (0.05 if task == "optimize" else 1.0))
    pad = (high - low) * 0.1
    low, high = low - pad, high + pad
    span_x = max(len(curve) - 1, 1)

    def px(i: int) -> float:
        return left + (width - left - right) * i / span_x

    def py(value: float) -> float:
        return top + (height - top - bottom) * (1 - (value - low) / (high - low))

    title = "geometric-mean speedup, all tasks" if task == "optimize" else "mean readability gain, all tasks"
    body = [f'<text x="{left}" y="16">{escape(title)} (best verified so far)</text>']
    for tick in _ticks_linear(low, high, 5):
        body.append(f'<line x1="{left}" y1="{py(tick):.1f}" x2="{width - right}" y2="{py(tick):.1f}" stroke="#eee"/>')
        text = f"{tick:.2f}x" if task == "optimize" else f"{tick:+.1f}"
        body.append(f'<text x="{left - 6}" y="{py(tick) + 4:.1f}" text-anchor="end">{text}</text>')
    points = " ".join(f"{px(i):.1f},{py(v):.1f}" for i, v in enumerate(curve))
    body.append(f'<polyline points="{points}" fill="none" stroke="#1565c0" stroke-width="2"/>')
    for i, value in enumerate(curve):
        figure = f"{value:.3f}x" if task == "optimize" else f"{value:+.2f}"
        share = f"{improved_after[i]}/{total} improved" if i < len(improved_after) else ""
        body.append(f'<circle cx="{px(i):.1f}" cy="{py(value):.1f}" r="4" fill="#1565c0"/>')
        body.append(f'<text x="{px(i):.1f}" y="{py(value) - 9:.1f}" text-anchor="middle">{figure}</text>')
        body.append(f'<text x="{px(i):.1f}" y="{height - bottom + 16}" text-anchor="middle">{i}</text>')
        body.append(
            f'<text x="{px(i):.1f}" y="{height - bottom + 30}" text-anchor="middle" fill="#757575">{share}</text>'
        )
    body.append(f'<text x="{(left + width - right) / 2:.0f}" y="{height - 4}" text-anchor="middle">iteration</text>')
    return _svg(width, height, body, "per-iteration curve")


def improved_after(task: str, tasks: list[dict[str, Any]], length: int) -> list[int]:
    base = 1.0 if task == "optimize" else 0.0
    return [
        sum(1 for t in tasks if t["curve"] and t["curve"][min(i, len(t["curve"]) - 1)] != base) for i in range(length)
    ]


def _figure_box(value: str, label: str) -> str:
    return f'<div class="figure"><b>{escape(value)}</b><span>{escape(label)}</span></div>'


def render_html(data: dict[str, Any]) -> str:
    task, summary, tasks = data["task"], data["summary"], data["tasks"]
    n = summary["tasks"]
    boxes = [
        _figure_box(f"{summary['improved_pct']:g}%", f"tasks improved ({summary['improved']} of {n})"),
        _figure_box(
            f"{summary['behavior_rejected_pct']:g}%",
            f"tasks with a candidate rejected for behaviour ({summary['behavior_rejected_tasks']})",
        ),
    ]
    if task == "optimize":
        boxes.insert(1, _figure_box(f"{summary['geomean_speedup']:.3f}x", "geometric-mean speedup (1.0 unimproved)"))
    else:
        boxes.insert(1, _figure_box(f"{summary['mean_gain']:+.2f}", "mean readability gain (points)"))
    boxes += [
        _figure_box(f"{summary['failed']}", "tasks failed"),
        _figure_box(
            f"{data['wall_seconds']:.0f} s", f"wall time, {data['jobs']} job{'s' if data['jobs'] != 1 else ''}"
        ),
        _figure_box(f"{data['cpu_seconds']:.0f} s", "CPU time"),
        _figure_box(f"{summary['llm_calls']}", f"model calls, {summary['tokens']} tokens"),
    ]
    rows = []
    for t in tasks:
        if task == "optimize":
            improved = t["status"] == "improved" and t.get("speedup_ci")
            result = f"{t['speedup']:.2f}x [{t['speedup_ci'][0]:.2f}, {t['speedup_ci'][1]:.2f}]" if improved else "-"
        elif t.get("baseline_score") is not None:
            after = t["best_score"] if t["status"] == "improved" else t["baseline_score"]
            result = f"{t['baseline_score']:.1f} &rarr; {after:.1f}"
        else:
            result = "-"
        reason = t["error"]["message"] if t.get("error") else t["stop_reason"]
        if not t.get("error") and t["status"] != "improved" and t.get("verdicts"):
            reason += "; " + t["verdicts"][-1]
        category = f" <span class='meta'>({escape(t['category'])})</span>" if t.get("category") else ""
        rows.append(
            f"<tr><td>{escape(t['id'])}</td><td class='{escape(t['status'])}'>{escape(t['status'])}{category}</td>"
            f"<td class='n'>{result}</td><td class='n'>{t['iterations']}</td>"
            f"<td class='n'>{t['behavior_rejections']}</td><td class='n'>{t['llm_calls']}</td>"
            f"<td class='n'>{t['prompt_tokens'] + t['completion_tokens']}</td>"
            f"<td class='n'>{t['wall_seconds']:.1f}</td><td class='n'>{t['cpu_seconds']:.1f}</td>"
            f"<td>{escape(reason)}</td></tr>"
        )
    figure_head = "speedup [95% CI]" if task == "optimize" else "score before &rarr; after"
    incomplete = (
        f"<p class='failed'>Incomplete: {len(data['pending'])} tasks not run yet (rerun to continue).</p>"
        if data["pending"]
        else ""
    )
    model = f" ({escape(data['model'])})" if data.get("model") else ""
    curve = summary["curve"]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>coderefine bench: {escape(task)}</title>
<style>{_CSS}</style></head><body>
<h1>coderefine bench: {escape(task)}</h1>
<p class="meta">suite {escape(data["suite"])} &middot; provider {escape(data["provider"])}{model} &middot;
sandbox {escape(data["sandbox"])} &middot; {n} tasks &middot; {escape(data["timing_isolation"])} &middot;
coderefine {escape(data["coderefine"])}</p>
{incomplete}
<div class="figures">{"".join(boxes)}</div>
<h2>Does each iteration help?</h2>
{curve_chart(task, curve, improved_after(task, tasks, len(curve)), n)}
<h2>Per task</h2>
{task_chart(task, tasks)}
<h2>Tasks</h2>
<table><thead><tr><th>task</th><th>status</th><th class='n'>{figure_head}</th><th class='n'>iterations</th>
<th class='n'>rejected for behaviour</th><th class='n'>calls</th><th class='n'>tokens</th><th class='n'>wall s</th>
<th class='n'>CPU s</th><th>stop reason; last verdict / error</th></tr></thead>
<tbody>{"".join(rows)}</tbody></table>
</body></html>
"""
