"""SARIF 2.1.0 logs for GitHub code scanning and other SARIF viewers.

Two producers share one shape (one run, tool.driver with its rules, results with a physical location
relative to the repository root under the ``%SRCROOT%`` base id):

- ``check_log``: the findings of `coderefine check`, level ``warning``, one rule per metric;
- ``refine_log``: the verified improvements of `optimize` / `readability` / `refine`, level ``note``, rule
  ``verified-speedup`` or ``verified-readability``; the region spans the original lines the verified
  version changes, the message carries the evidence, and a SARIF ``fix`` holds the whole verified file
  change (code scanning does not apply fixes, but viewers such as the VS Code SARIF viewer show them).
  A run with no verified improvement has no results: nothing unverified is ever reported.

Files that could not be checked and runs that failed become ``toolExecutionNotifications`` of the
invocation (``executionSuccessful: false``), not results: they are not findings about the code.

What GitHub code scanning adds to the schema (docs.github.com, "SARIF support for code scanning"), and
how it is met: stable ``ruleId`` values; rules with ``shortDescription``, ``fullDescription`` and ``help``
(text and markdown); one location per result with a ``region.startLine``; paths relative to the
repository root and the same across runs; ``partialFingerprints`` so an alert survives the lines around
it moving (our key hashes the rule, the path and the function, never a line number); a category in
``automationDetails.id`` so the check and the refine logs do not replace each other's alerts; at most
25,000 results per run (the rest are dropped with a notification saying how many).
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from coderefine import __version__
from coderefine.errors import CoderefineError
from coderefine.quality.check import RULES, CheckOutcome, CheckRule, Finding
from coderefine.records import RunError
from coderefine.reports.evidence import verification_evidence

if TYPE_CHECKING:
    from coderefine.records import Result

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
MAX_RESULTS = 25_000  # GitHub code scanning rejects a run with more
FINGERPRINT_KEY = "coderefineFingerprint/v1"

VERIFIED_SPEEDUP = "verified-speedup"
VERIFIED_READABILITY = "verified-readability"
IMPROVEMENT_RULES: dict[str, CheckRule] = {
    rule.id: rule
    for rule in (
        CheckRule(
            VERIFIED_SPEEDUP,
            "VerifiedSpeedup",
            "Verified faster version available",
            "coderefine found a faster version of this code that passes the project's tests, replays every "
            "recorded call identically, and is faster by a 95% confidence interval that clears the noise floor.",
            "The message gives the speedup with its interval and the evidence (tests passed, calls compared). "
            "Apply it with `coderefine optimize FILE --write` (rerun: the loop is deterministic with the offline "
            "or scripted provider and cached with a model), or take the change from this result's fix.",
            upper_bound=True,
        ),
        CheckRule(
            VERIFIED_READABILITY,
            "VerifiedReadability",
            "Verified more readable version available",
            "coderefine found a version of this code with a higher readability score that passes the project's "
            "tests and replays every recorded call identically.",
            "The message gives the score before and after and the evidence (tests passed, calls compared). "
            "Apply it with `coderefine readability FILE --write`, or take the change from this result's fix.",
            upper_bound=False,
        ),
    )
}
_TASK_RULE = {"optimize": VERIFIED_SPEEDUP, "readability": VERIFIED_READABILITY}
_TAGS = {
    "cyclomatic-complexity": ["maintainability", "complexity"],
    "maintainability-index": ["maintainability"],
    "readability-score": ["maintainability", "readability"],
    VERIFIED_SPEEDUP: ["performance", "verified"],
    VERIFIED_READABILITY: ["readability", "verified"],
}


def repository_root(start: Path) -> Path:
    """The nearest folder upward holding `.git` (a folder, or a file in a worktree), else `start`'s folder:
    code scanning resolves paths against the repository root."""
    folder = start.resolve()
    if not folder.is_dir():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return folder


def artifact_location(path: str | Path, root: Path) -> dict[str, Any]:
    """A URI relative to `root` under %SRCROOT%; an absolute file URI for a path outside it."""
    absolute = Path(path).resolve()
    try:
        relative = absolute.relative_to(root.resolve())
    except ValueError:
        return {"uri": absolute.as_uri()}
    return {"uri": quote(relative.as_posix(), safe="/"), "uriBaseId": SRCROOT}


def fingerprint(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()[:32]


def _rule_descriptor(rule: CheckRule, level: str, information_uri: str | None) -> dict[str, Any]:
    descriptor: dict[str, Any] = {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.short},
        "fullDescription": {"text": rule.full},
        "help": {"text": rule.help, "markdown": rule.help},
        "defaultConfiguration": {"level": level},
        "properties": {"tags": _TAGS.get(rule.id, []), "precision": "very-high"},
    }
    if information_uri:
        descriptor["helpUri"] = information_uri
    return descriptor


def _information_uri() -> str | None:
    """The project's home page from the installed package's metadata, when it declares one."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        urls = metadata("coderefine").get_all("Project-URL") or []
    except PackageNotFoundError:
        return None
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("homepage", "home", "repository", "source"):
            return url.strip()
    return None


def _driver(rules: Sequence[CheckRule], level: str) -> dict[str, Any]:
    information_uri = _information_uri()
    driver: dict[str, Any] = {
        "name": "coderefine",
        "version": __version__,
        "semanticVersion": __version__,
        "rules": [_rule_descriptor(rule, level, information_uri) for rule in rules],
    }
    if information_uri:
        driver["informationUri"] = information_uri
    return driver


def _notification(error: CoderefineError | RunError, path: str | None, root: Path) -> dict[str, Any]:
    if isinstance(error, CoderefineError):
        error = error.record()
    notification: dict[str, Any] = {
        "level": "error",
        "message": {"text": error.message},
        "properties": {"exitCode": error.code, "kind": error.kind},
    }
    if path is not None:
        notification["locations"] = [{"physicalLocation": {"artifactLocation": artifact_location(path, root)}}]
    return notification


def _log(
    category: str,
    rules: Sequence[CheckRule],
    level: str,
    results: list[dict[str, Any]],
    notifications: list[dict[str, Any]],
    root: Path,
) -> dict[str, Any]:
    if len(results) > MAX_RESULTS:
        notifications.append(
            {
                "level": "warning",
                "message": {
                    "text": f"{len(results) - MAX_RESULTS} results left out: code scanning accepts at most "
                    f"{MAX_RESULTS} per run"
                },
            }
        )
        results = results[:MAX_RESULTS]
    invocation: dict[str, Any] = {"executionSuccessful": not any(n["level"] == "error" for n in notifications)}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {"driver": _driver(rules, level)},
                "automationDetails": {"id": f"coderefine/{category}/"},
                "originalUriBaseIds": {SRCROOT: {"uri": root.resolve().as_uri() + "/"}},
                "columnKind": "unicodeCodePoints",
                "invocations": [invocation],
                "results": results,
            }
        ],
    }


def _finding_result(finding: Finding, rule_index: int, root: Path) -> dict[str, Any]:
    location = artifact_location(finding.path, root)
    where = f" in `{finding.function}`" if finding.function else ""
    value = f"{finding.value:g}"
    text = (
        f"{RULES[finding.metric].short}{where}: {finding.metric} {value} {finding.comparison} "
        f"{finding.threshold:g}. {finding.message[0].upper()}{finding.message[1:]}."
    )
    return {
        "ruleId": finding.metric,
        "ruleIndex": rule_index,
        "level": "warning",
        "message": {"text": text},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": location,
                    "region": {"startLine": finding.line, "endLine": max(finding.line, finding.end_line)},
                }
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(finding.metric, location["uri"], finding.function or "")},
        "properties": {"value": finding.value, "threshold": finding.threshold},
    }


def check_log(outcome: CheckOutcome, root: Path) -> dict[str, Any]:
    """The SARIF log of a `coderefine check` run; `root` is the repository root (see repository_root)."""
    rules = list(RULES.values())
    index = {rule.id: position for position, rule in enumerate(rules)}
    results = [_finding_result(finding, index[finding.metric], root) for finding in outcome.findings]
    notifications = [_notification(error.error, error.path, root) for error in outcome.errors]
    return _log("check", rules, "warning", results, notifications, root)


def _changed_span(original: str, code: str) -> tuple[int, int, list[dict[str, Any]]]:
    """First and last changed line of the original (1-based) and the replacements, by character offset,
    that turn the original into the new code."""
    old_lines = original.splitlines(keepends=True)
    new_lines = code.splitlines(keepends=True)
    offsets = [0]
    for line in old_lines:
        offsets.append(offsets[-1] + len(line))
    replacements: list[dict[str, Any]] = []
    first, last = None, None
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        replacements.append(
            {
                "deletedRegion": {"charOffset": offsets[i1], "charLength": offsets[i2] - offsets[i1]},
                "insertedContent": {"text": "".join(new_lines[j1:j2])},
            }
        )
        start = min(i1 + 1, max(1, len(old_lines)))
        end = max(start, i2)
        first = start if first is None else min(first, start)
        last = end if last is None else max(last, end)
    return first or 1, last or 1, replacements


def _improvement_result(result: Result, rule_index: int, root: Path) -> dict[str, Any] | None:
    best = result.best
    if best is None or best.candidate is None or best.evaluation is None:
        return None
    rule_id = _TASK_RULE.get(result.task, VERIFIED_SPEEDUP)
    location = artifact_location(result.file, root)
    start, end, replacements = _changed_span(result.original_code, best.candidate.code)
    evidence = verification_evidence(best.evaluation)
    changed = ", ".join(f"`{name}`" for name in best.candidate.changed) or "the module"
    action = (
        "Applied with --write."
        if result.written
        else f"Apply it with `coderefine {result.task} {Path(result.file).as_posix()} --write`."
    )
    text = f"Verified rewrite of {changed}: {best.verdict.reason}; {', '.join(evidence)}. {action}"
    properties: dict[str, Any] = {"score": best.verdict.score, "written": result.written}
    timing = best.evaluation.timing
    if timing is not None:
        properties.update(
            speedup=round(timing.speedup, 4), speedup_ci=[round(timing.ci_low, 4), round(timing.ci_high, 4)]
        )
    memory = best.evaluation.memory
    if memory is not None:
        properties.update(peak_memory_bytes={"original": memory.original, "candidate": memory.candidate})
    sarif_result: dict[str, Any] = {
        "ruleId": rule_id,
        "ruleIndex": rule_index,
        "level": "note",
        "message": {"text": text},
        "locations": [
            {"physicalLocation": {"artifactLocation": location, "region": {"startLine": start, "endLine": end}}}
        ],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(rule_id, location["uri"], *best.candidate.changed)},
        "properties": properties,
    }
    if replacements:
        sarif_result["fixes"] = [
            {
                "description": {"text": f"The verified version ({best.verdict.reason})"},
                "artifactChanges": [{"artifactLocation": location, "replacements": replacements}],
            }
        ]
    return sarif_result


def refine_log(runs: Sequence[Result], root: Path, category: str = "refine") -> dict[str, Any]:
    """The SARIF log of one or more refinement runs (an error that ended one becomes a notification)."""
    rules = list(IMPROVEMENT_RULES.values())
    index = {rule.id: position for position, rule in enumerate(rules)}
    results: list[dict[str, Any]] = []
    notifications: list[dict[str, Any]] = []
    for result in runs:
        sarif_result = _improvement_result(result, index[_TASK_RULE.get(result.task, VERIFIED_SPEEDUP)], root)
        if sarif_result is not None:
            results.append(sarif_result)
        if result.error is not None:
            notifications.append(_notification(result.error, result.file, root))
    return _log(category, rules, "note", results, notifications, root)


def render_sarif(log: dict[str, Any]) -> str:
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
