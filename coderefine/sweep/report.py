"""A sweep's reports, all from one dict (`sweep_dict`, the JSON report): Markdown summary, HTML page, SARIF,
and the placement trace with its check that timing never overlapped on a node."""

from __future__ import annotations

from collections import defaultdict
from html import escape
from pathlib import Path
from typing import Any

from coderefine import __version__
from coderefine.bench.html import _CSS, _figure_box, _svg

# The refine log's building blocks: a sweep's results have the same shape, one per verified function.
from coderefine.reports.sarif import (
    FINGERPRINT_KEY,
    IMPROVEMENT_RULES,
    VERIFIED_SPEEDUP,
    _changed_span,
    _log,
    artifact_location,
    fingerprint,
)
from coderefine.sweep.run import SweepResult


def timing_overlaps(outcomes: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """Pairs of functions whose timing-lock holds overlapped on the same node (node, a, b): must be empty."""
    holds: dict[str, list[tuple[float, float, str]]] = defaultdict(list)
    for o in outcomes:
        for start, end in o["placement"]["timing"]:
            holds[o["placement"]["node"]].append((start, end, o["key"]))
    found = []
    for node, spans in holds.items():
        spans.sort()
        latest_end, latest_key = float("-inf"), ""
        for start, end, key in spans:
            if start < latest_end - 1e-6:
                found.append((node, latest_key, key))
            if end > latest_end:
                latest_end, latest_key = end, key
    return found


def sweep_dict(result: SweepResult) -> dict[str, Any]:
    outcomes = [o.to_dict() for o in result.outcomes]
    nodes: dict[str, int] = defaultdict(int)
    for o in result.outcomes:
        nodes[o.placement.node] += 1
    verified = [o for o in result.outcomes if o.verified]
    return {
        "coderefine_sweep": 1,
        "coderefine": __version__,
        "root": str(result.scan.root),
        "engine": result.engine,
        "engine_description": result.engine_description,
        "wall_seconds": round(result.wall_seconds, 3),
        "state": str(result.state),
        "interrupted": result.interrupted,
        "summary": {
            "chosen": len(result.chosen),
            "finished": len(result.outcomes),
            "resumed": result.resumed,
            "improved": len(verified),
            "unchanged": sum(o.status == "unchanged" for o in result.outcomes),
            "insufficient_tests": sum(o.status == "insufficient_tests" for o in result.outcomes),
            "failed": sum(o.status == "failed" for o in result.outcomes),
            "lost": list(result.lost),
            "retried": [o.key for o in result.outcomes if o.attempts > 1],
            "written": list(result.written),
            "functions_per_node": dict(nodes),
            "timing_overlaps": [list(t) for t in timing_overlaps(outcomes)],
        },
        "scan": result.scan.to_dict(),
        "chosen": [e.target and f"{e.file}::{e.target}" for e in result.chosen],
        "functions": outcomes,
        "files": [
            {
                "file": p.file,
                "functions": list(p.functions),
                "verified_by": p.verified_by,
                "speedup": p.speedup,
                "dropped": list(p.dropped),
                "written": p.file in result.written,
            }
            for p in result.files
        ],
    }


def verdicts(data: dict[str, Any]) -> dict[str, str]:
    """Each function's verdict, for comparing engines: status, and for an improvement the verified code."""
    return {o["key"]: o["status"] + (f" {hash(o['best_code'])}" if o["best_code"] else "") for o in data["functions"]}


def _result_text(o: dict[str, Any]) -> str:
    if o["status"] == "improved" and o["speedup"] is not None:
        low, high = o["ci"]
        return f"{o['speedup']:.2f}x [{low:.2f}, {high:.2f}]"
    return "-"


def render_markdown(data: dict[str, Any]) -> str:
    s = data["summary"]
    lines = [
        f"## coderefine sweep: {s['improved']} of {s['finished']} functions made faster",
        "",
        f"Engine {data['engine_description'] or data['engine']}, {data['wall_seconds']:.0f} s wall time"
        + (" (interrupted: rerun to continue)" if data["interrupted"] else "")
        + (f"; written: {', '.join(s['written'])}" if s["written"] else "; nothing written (rerun with --write)"),
        "",
        "| function | share | status | speedup [95% CI] | evidence / reason |",
        "| --- | ---: | --- | ---: | --- |",
    ]
    shares = {f"{e['file']}::{e['target']}": e["share"] for e in data["scan"]["functions"]}
    for o in data["functions"]:
        why = "; ".join(o["evidence"]) if o["status"] == "improved" else o["reason"]
        lines.append(
            f"| `{o['key']}` | {shares.get(o['key'], 0):.1%} | {o['status']} | {_result_text(o)} | "
            f"{why.replace('|', '/')} |"
        )
    for f in data["files"]:
        dropped = f"; left out: {', '.join(f['dropped'])}" if f["dropped"] else ""
        lines.append(f"\n- `{f['file']}`: {', '.join(f['functions'])} - verified by {f['verified_by']}{dropped}")
    return "\n".join(lines) + "\n"


def _timeline(data: dict[str, Any]) -> str:
    """One lane per node: each function's run as a bar, its timing-lock holds darker on top."""
    functions = data["functions"]
    if not functions:
        return "<p>No function finished.</p>"
    t0 = min(o["placement"]["started"] for o in functions)
    t1 = max(o["placement"]["ended"] for o in functions)
    span = max(t1 - t0, 1e-6)
    lanes: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for o in functions:
        lanes[o["placement"]["node"]].append(o)
    width, label = 900.0, 150.0
    body: list[str] = []
    y = 10.0
    for node, items in sorted(lanes.items()):
        rows: list[float] = []  # end time of each row in this lane
        placed = []
        for o in sorted(items, key=lambda o: o["placement"]["started"]):
            free = next((i for i, end in enumerate(rows) if end <= o["placement"]["started"]), None)
            if free is None:
                rows.append(o["placement"]["ended"])
                free = len(rows) - 1
            rows[free] = o["placement"]["ended"]
            placed.append((free, o))
        lane_h = 16.0 * max(1, len(rows))
        body.append(f'<text x="0" y="{y + 12:.0f}">node {escape(node[:12])}</text>')
        for row, o in placed:
            x = label + (o["placement"]["started"] - t0) / span * (width - label)
            w = max(1.0, (o["placement"]["ended"] - o["placement"]["started"]) / span * (width - label))
            ry = y + row * 16
            body.append(
                f'<rect x="{x:.1f}" y="{ry:.1f}" width="{w:.1f}" height="12" fill="#90caf9">'
                f"<title>{escape(o['key'])}</title></rect>"
            )
            for start, end in o["placement"]["timing"]:
                hx = label + (start - t0) / span * (width - label)
                hw = max(1.0, (end - start) / span * (width - label))
                body.append(f'<rect x="{hx:.1f}" y="{ry + 3:.1f}" width="{hw:.1f}" height="6" fill="#0d47a1"/>')
        y += lane_h + 10
    return _svg(width, y + 10, body, "placement of the refinements per node, timing holds in dark blue")


def _css_class(status: str) -> str:
    return status if status in ("improved", "unchanged") else "failed"


def render_html(data: dict[str, Any]) -> str:
    s = data["summary"]
    boxes = [
        _figure_box(f"{s['improved']} of {s['finished']}", "functions made faster, verified"),
        _figure_box(
            f"{data['wall_seconds']:.0f} s", f"wall time, {escape(data['engine_description'] or data['engine'])}"
        ),
        _figure_box(f"{len(s['functions_per_node'])}", "nodes used"),
        _figure_box(f"{len(s['timing_overlaps'])}", "timing overlaps on a node"),
    ]
    rows = "".join(
        f"<tr><td>{escape(o['key'])}</td><td class='{_css_class(o['status'])}'>"
        f"{escape(o['status'])}</td><td class='n'>{_result_text(o)}</td><td class='n'>{o['wall_seconds']:.1f}</td>"
        f"<td>{escape(o['placement']['node'][:12])}</td><td>{escape(o['reason'])}</td></tr>"
        for o in data["functions"]
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>coderefine sweep</title><style>{_CSS}</style></head><body>
<h1>coderefine sweep</h1>
<p class="meta">{escape(data["root"])} &middot; {escape(data["scan"]["workload"])} &middot;
coderefine {escape(data["coderefine"])}</p>
<div class="figures">{"".join(boxes)}</div>
<h2>Where each refinement ran</h2>
{_timeline(data)}
<h2>Functions</h2>
<table><thead><tr><th>function</th><th>status</th><th class='n'>speedup [95% CI]</th><th class='n'>wall s</th>
<th>node</th><th>evidence / reason</th></tr></thead><tbody>{rows}</tbody></table>
</body></html>
"""


def sarif_log(result: SweepResult) -> dict[str, Any]:
    """One `verified-speedup` result per verified function, with its fix (the function's verified file)."""
    root = result.scan.root
    rules = list(IMPROVEMENT_RULES.values())
    index = {rule.id: position for position, rule in enumerate(rules)}
    results = []
    for o in result.outcomes:
        if not o.verified or o.best_code is None:
            continue
        location = artifact_location(root / o.file, root)
        original = (root / o.file).read_text(encoding="utf-8-sig") if o.file not in result.written else None
        start, end, replacements = _changed_span(original, o.best_code) if original is not None else (1, 1, [])
        text = f"Verified rewrite of `{o.function}`: {o.reason}; {', '.join(o.evidence)}."
        entry: dict[str, Any] = {
            "ruleId": VERIFIED_SPEEDUP,
            "ruleIndex": index[VERIFIED_SPEEDUP],
            "level": "note",
            "message": {"text": text},
            "locations": [
                {"physicalLocation": {"artifactLocation": location, "region": {"startLine": start, "endLine": end}}}
            ],
            "partialFingerprints": {FINGERPRINT_KEY: fingerprint(VERIFIED_SPEEDUP, location["uri"], o.function)},
            "properties": {"speedup": o.speedup, "speedup_ci": list(o.ci or ()), "written": o.file in result.written},
        }
        if replacements:
            entry["fixes"] = [
                {
                    "description": {"text": text},
                    "artifactChanges": [{"artifactLocation": location, "replacements": replacements}],
                }
            ]
        results.append(entry)
    return _log("sweep", rules, "note", results, [], Path(root))
