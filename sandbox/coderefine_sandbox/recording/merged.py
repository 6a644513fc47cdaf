"""The baseline's tests step when a first run's trace already ran them (protocol.RecordedTests): each trace
worker ran its share of the suite with the reach tracer and the recorder in the same pytest run, so the
reaching tests are not run a second time. Here their outcomes become the baseline's `TestRun` (only the tests
reaching the targets count: they alone judge candidates, as when the baseline runs them) and the workers'
calls files become one, as if one recorder had seen every call.

Standard library only: this runs inside the sandbox.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from itertools import zip_longest
from typing import Any

from coderefine_sandbox.protocol import (
    CallsHeader,
    CaptureLimits,
    PytestResults,
    RecordedShare,
    RecordedTests,
    RecordingSummary,
    TargetLines,
    TestRun,
    read_calls,
    read_json,
    write_calls,
)


def merged_run(recorded: RecordedTests, workspace: str) -> TestRun:
    """The reaching tests' outcomes in the workers' runs, as one test run of the original in `workspace`."""
    wanted = frozenset(recorded.tests)
    outcomes: dict[str, str] = {}
    messages: dict[str, str] = {}
    module_file = None
    for share in recorded.shares:
        if not os.path.exists(share.results_path):
            continue
        results = read_json(PytestResults, share.results_path)
        for node, outcome in results.outcomes.items():
            if node in wanted and outcomes.get(node) != "failed":
                outcomes[node] = outcome
                if node in results.messages:
                    messages[node] = results.messages[node]
        module_file = module_file or _moved(results.module_file, share, workspace)
    return TestRun.from_outcomes(
        outcomes,
        messages,
        duration=max((share.seconds for share in recorded.shares), default=0.0),
        exit_code=1 if "failed" in outcomes.values() else 0,
        output_tail="",
        collected=len(outcomes),
        module_file=module_file,
        selected=None,
    )


def merge_calls(recorded: RecordedTests, out: str, workspace: str, limits: CaptureLimits) -> None:
    """One calls file from the workers' (those that wrote one): per target, their calls taken in turn up to
    the per-target limit and the size limit, so that every share's tests are among the recorded calls."""
    parts = [(share, *read_calls(share.calls_path)) for share in recorded.shares if os.path.exists(share.calls_path)]
    if not parts:
        return
    summaries = [header.recording for _, header, _ in parts if header.recording is not None]
    module = parts[0][1].module
    kept: list[dict[str, Any]] = []
    per_target: dict[str, int] = {}
    size = 0
    truncated = any(summary.truncated for summary in summaries)
    # Each worker recorded in its own copy: every record keeps the folder it was recorded in (relocation.py).
    for _, header, records in parts:
        for record in records:
            record.setdefault("folder", header.folder)
    for record in _in_turn([records for _, _, records in parts]):
        target = record["target"]
        if per_target.get(target, 0) >= limits.max_calls_per_target:
            continue
        weight = len(record["args"]) + len(record.get("value") or b"") + len(record.get("args_after") or b"")
        if size + weight > limits.max_bytes:
            truncated = True
            continue
        size += weight
        per_target[target] = per_target.get(target, 0) + 1
        kept.append(record)
    first = parts[0][0]
    summary = _merged_summary(
        summaries, truncated, _moved(summaries[0].module_file if summaries else None, first, workspace)
    )
    write_calls(out, CallsHeader(module=module, recording=summary), kept)


def _in_turn(lists: list[list[dict[str, Any]]]) -> Iterator[dict[str, Any]]:
    for row in zip_longest(*lists):
        yield from (record for record in row if record is not None)


def _merged_summary(summaries: list[RecordingSummary], truncated: bool, module_file: str | None) -> RecordingSummary:
    counts: dict[str, int] = {}
    unreplayable: dict[str, int] = {}
    reasons: dict[str, dict[str, int]] = {}
    calls_per_test: dict[str, int] = {}
    covered: dict[str, set[int]] = {}
    lines: dict[str, tuple[int, ...]] = {}
    reached: set[str] = set()
    patched: list[str] = []
    pinned: list[str] = []
    not_pinned: list[str] = []
    for summary in summaries:
        _add(counts, summary.counts)
        _add(unreplayable, summary.unreplayable)
        for target, why in summary.reasons.items():
            _add(reasons.setdefault(target, {}), why)
        calls_per_test.update(summary.calls_per_test)
        for target, seen in summary.coverage.items():
            lines.setdefault(target, seen.lines)
            covered.setdefault(target, set()).update(seen.covered)
        reached.update(summary.reached)
        patched += [name for name in summary.patched if name not in patched]
        pinned += [name for name in summary.pinned if name not in pinned]
        not_pinned += [name for name in summary.not_pinned if name not in not_pinned]
    return RecordingSummary(
        module_file=module_file,
        counts=counts,
        unreplayable=unreplayable,
        truncated=truncated,
        patched=tuple(patched),
        reached=tuple(sorted(reached)),
        coverage={target: TargetLines(lines[target], tuple(sorted(covered[target]))) for target in lines},
        coverage_method=summaries[0].coverage_method if summaries else "none",
        pinned=tuple(pinned),
        not_pinned=tuple(not_pinned),
        reasons=reasons,
        calls_per_test=calls_per_test,
    )


def _add(into: dict[str, int], more: dict[str, int]) -> None:
    for key, value in more.items():
        into[key] = into.get(key, 0) + value


def _moved(module_file: str | None, share: RecordedShare, workspace: str) -> str | None:
    """The module file a worker imported, named in `workspace` when it was that worker's copy: an installed
    copy shadowing the project stays as it was, and the host's check still refuses it."""
    if module_file is None:
        return None
    base = share.workspace.rstrip(os.sep) + os.sep
    if not module_file.startswith(base):
        return module_file
    return os.path.join(workspace, module_file[len(base) :])
