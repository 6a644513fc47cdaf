"""`coderefine check`: deterministic quality thresholds on Python files, for pre-commit and CI.

No model, no network, no sandbox: radon's cyclomatic complexity per function, its maintainability index
per file, and coderefine's readability score per file (docs/readability-score.md), each compared with a
threshold from the settings. Every finding is one actionable line::

    src/app.py:12: cyclomatic-complexity 14 > 10: split `parse` into smaller functions (...)

Results are cached on disk by file content (see check_cache.py), so a commit of a few files is checked
without parsing anything that was checked before. radon and the readability score are imported only on
a cache miss, which keeps a warm `coderefine check` at interpreter start-up plus the CLI's own imports.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from coderefine import __version__
from coderefine.errors import CoderefineError
from coderefine.quality.check_cache import CheckCache
from coderefine.quality.findings import (
    COMPLEXITY,
    MAINTAINABILITY,
    READABILITY,
    RULES,
    CheckOutcome,
    CheckRule,
    CheckThresholds,
    FileError,
    Finding,
)
from coderefine.quality.powers import new_power_findings
from coderefine.source import decode_source, read_bytes, syntax_error

# The records live in findings.py; these names stay importable from here for the check's callers.
__all__ = [
    "COMPLEXITY",
    "MAINTAINABILITY",
    "READABILITY",
    "RULES",
    "CheckOutcome",
    "CheckRule",
    "CheckThresholds",
    "FileError",
    "Finding",
    "cache_key",
    "check_file",
    "check_files",
    "check_json",
    "check_source",
    "sorted_findings",
    "summary_text",
]

# Bump when the findings for the same source and thresholds would change (new rule, new message): the
# cache key includes it, so results cached by an older coderefine are not reused.
CHECK_FORMAT = 1


def check_source(path: str, text: str, thresholds: CheckThresholds) -> list[Finding]:
    """The findings for one module's source. Raises ``SyntaxError`` if it does not parse."""
    # Imported here for start-up speed: radon and the score are only needed when the cache has no answer.
    from coderefine.quality.metrics import analyse
    from coderefine.quality.names import identifier_quality_of_tree
    from coderefine.quality.readability import components_of_analysis

    analysis = analyse(text)
    findings: list[Finding] = []
    end_lines = _end_lines(analysis.tree)
    worst = max(analysis.blocks, key=lambda block: block[2], default=None)
    for name, line, complexity in analysis.blocks:
        if complexity > thresholds.max_complexity:
            findings.append(
                Finding(
                    path,
                    line,
                    end_lines.get(line, line),
                    name,
                    COMPLEXITY,
                    float(complexity),
                    float(thresholds.max_complexity),
                    f"split `{name}` into smaller functions (move nested branches and loop bodies into helpers, "
                    "return early instead of nesting)",
                )
            )
    if analysis.module_complexity > thresholds.max_complexity:
        findings.append(
            Finding(
                path,
                1,
                1,
                None,
                COMPLEXITY,
                float(analysis.module_complexity),
                float(thresholds.max_complexity),
                "move the module-level code (outside any function) into functions",
            )
        )
    mi = round(analysis.maintainability_index(), 2)
    if mi < thresholds.min_maintainability:
        where = f"; start with `{worst[0]}` (complexity {worst[2]})" if worst is not None else ""
        findings.append(
            Finding(
                path,
                1,
                1,
                None,
                MAINTAINABILITY,
                mi,
                thresholds.min_maintainability,
                f"split the module or shorten its longest functions{where}",
            )
        )
    if thresholds.min_readability > 0:
        score = components_of_analysis(analysis)["score"]
        if score < thresholds.min_readability:
            quality, poor_names = identifier_quality_of_tree(analysis.tree)
            advice = _readability_advice(path, quality, poor_names, worst)
            findings.append(Finding(path, 1, 1, None, READABILITY, score, thresholds.min_readability, advice))
    return findings


def _readability_advice(path: str, quality: float, poor_names: list[str], worst: tuple[str, int, int] | None) -> str:
    """Name the parts of the score that cost the most, most costly first."""
    steps: list[tuple[float, str]] = []
    if poor_names:
        shown = ", ".join(poor_names[:5]) + (", ..." if len(poor_names) > 5 else "")
        steps.append((1.0 - quality, f"rename unclear names ({shown})"))
    if worst is not None and worst[2] > 5:
        steps.append(((worst[2] - 1) / 20, f"simplify `{worst[0]}` (complexity {worst[2]})"))
    steps.sort(key=lambda step: -step[0])
    advice = "; ".join(text for _, text in steps) or "shorten the module's long functions"
    return f"{advice}; `coderefine readability {path}` proposes a verified rewrite"


def _end_lines(tree: ast.Module) -> dict[int, int]:
    """The last line of each function, by the line of its `def` (radon gives only the first)."""
    return {
        node.lineno: node.end_lineno or node.lineno
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


def check_file(path: Path, thresholds: CheckThresholds) -> list[Finding]:
    """The findings for one file; bad input raises the usual CoderefineError (exit codes 3-6)."""
    raw = read_bytes(path)
    return _check_raw(path, raw, thresholds)


def _check_raw(path: Path, raw: bytes, thresholds: CheckThresholds) -> list[Finding]:
    text, _ = decode_source(path, raw)
    try:
        return check_source(str(path), text, thresholds)
    except SyntaxError as exc:
        raise syntax_error(path, exc) from None


def cache_key(path: str, raw: bytes, thresholds: CheckThresholds) -> str:
    """Path (it is in the findings and their advice), content, thresholds and version: nothing else (the
    time, the file's mtime) can change the findings."""
    digest = hashlib.sha256()
    digest.update(f"coderefine {__version__} check {CHECK_FORMAT} {thresholds.key()} {path}\n".encode())
    digest.update(raw)
    return digest.hexdigest()


def check_files(paths: Iterable[Path], thresholds: CheckThresholds, cache: CheckCache | None = None) -> CheckOutcome:
    """Check every file; files that cannot be read or parsed are collected as errors, not raised, so one
    broken file does not hide the findings in the others."""
    outcome = CheckOutcome()
    checked: list[tuple[Path, bytes]] = []
    for path in paths:
        outcome.files += 1
        try:
            raw = read_bytes(path)
            key = cache_key(str(path), raw, thresholds)
            cached = cache.get(key) if cache is not None else None
            if cached is not None:
                outcome.cached += 1
                outcome.findings.extend(cached)
                checked.append((path, raw))
                continue
            findings = _check_raw(path, raw, thresholds)
        except CoderefineError as exc:
            outcome.errors.append(FileError(str(path), exc))
            continue
        if cache is not None:
            cache.put(key, findings)
        outcome.findings.extend(findings)
        checked.append((path, raw))
    # Not cached: whether an import is new depends on the committed version, not on the content alone.
    for path, raw in checked:
        outcome.findings.extend(new_power_findings(path, decode_source(path, raw)[0]))
    return outcome


def summary_text(outcome: CheckOutcome) -> str:
    checked = outcome.files - len(outcome.errors)
    if checked == 0:
        return ""
    text = f"{checked} file{'s' if checked != 1 else ''} checked"
    if outcome.errors:
        text += f", {len(outcome.errors)} could not be"
    if not outcome.findings:
        return f"{text}: no findings"
    with_findings = len({finding.path for finding in outcome.findings})
    return (
        f"{text}: {len(outcome.findings)} finding{'s' if len(outcome.findings) != 1 else ''} in {with_findings} "
        f"file{'s' if with_findings != 1 else ''} (`coderefine config` shows the thresholds)"
    )


def check_json(outcome: CheckOutcome, thresholds: CheckThresholds) -> dict[str, Any]:
    """The JSON format of `coderefine check` (README, "coderefine check")."""
    return {
        "version": __version__,
        "files": outcome.files,
        "cached": outcome.cached,
        "thresholds": asdict(thresholds),
        "findings": [finding.to_json() for finding in outcome.findings],
        "errors": [error.to_json() for error in outcome.errors],
    }


def sorted_findings(findings: Sequence[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda finding: (finding.path, finding.line, finding.metric))
