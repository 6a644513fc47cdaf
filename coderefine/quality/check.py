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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coderefine import __version__
from coderefine.errors import CoderefineError
from coderefine.source import decode_source, read_bytes, syntax_error

if TYPE_CHECKING:
    from coderefine.quality.check_cache import CheckCache
    from coderefine.settings import Settings

# Bump when the findings for the same source and thresholds would change (new rule, new message): the
# cache key includes it, so results cached by an older coderefine are not reused.
CHECK_FORMAT = 1

COMPLEXITY = "cyclomatic-complexity"
MAINTAINABILITY = "maintainability-index"
READABILITY = "readability-score"


@dataclass(frozen=True)
class Rule:
    """What a metric means and how to act on it (the SARIF rule metadata is made from this)."""

    id: str
    name: str  # CamelCase, as SARIF consumers show it
    short: str
    full: str
    help: str  # plain text, several sentences
    upper_bound: bool  # True: a value above the threshold is a finding; False: a value below it


RULES: dict[str, Rule] = {
    rule.id: rule
    for rule in (
        Rule(
            COMPLEXITY,
            "CyclomaticComplexity",
            "Function too complex",
            "A function's cyclomatic complexity (radon: 1 + its decision points) is above `max_complexity`.",
            "Each branch, loop, boolean operator and exception handler adds a path through the function that "
            "readers and tests must follow. Split the function: move nested branches and loop bodies into "
            "helpers with descriptive names, return early instead of nesting, or replace if/elif chains with a "
            "lookup table. `coderefine readability FILE --function NAME` proposes a verified rewrite. "
            "The threshold is the `max_complexity` setting (default 10).",
            upper_bound=True,
        ),
        Rule(
            MAINTAINABILITY,
            "MaintainabilityIndex",
            "Module hard to maintain",
            "The module's maintainability index (radon, 0..100, from Halstead volume, complexity and lines) "
            "is below `min_maintainability`.",
            "A low maintainability index means a long module with much logic per line and many paths. Split "
            "the module, shorten its longest and most complex functions, and remove dead code. The threshold "
            "is the `min_maintainability` setting (default 10: radon's rank C, 'extremely low').",
            upper_bound=False,
        ),
        Rule(
            READABILITY,
            "ReadabilityScore",
            "Module hard to read",
            "The module's readability score (0..100: maintainability, worst complexity and identifier "
            "quality; see docs/readability-score.md) is below `min_readability`.",
            "The score combines radon's maintainability index, the complexity of the most complex function "
            "and the share of well-chosen names. Rename unclear names (single letters outside loops, "
            "placeholders such as tmp or foo, names that shadow builtins), simplify the most complex function, "
            "and shorten long ones. `coderefine readability FILE` proposes a verified rewrite. The threshold "
            "is the `min_readability` setting (default 40).",
            upper_bound=False,
        ),
    )
}


@dataclass(frozen=True)
class CheckThresholds:
    max_complexity: int = 10  # McCabe's classic limit; radon rank C starts at 11, ruff's C901 default is 10
    min_maintainability: float = 10.0  # radon rank C ("extremely low") is below 10
    min_readability: float = 40.0  # see the README: below 40, at least two of the score's three parts are poor

    @classmethod
    def from_settings(cls, settings: Settings) -> CheckThresholds:
        return cls(
            max_complexity=settings["max_complexity"],
            min_maintainability=settings["min_maintainability"],
            min_readability=settings["min_readability"],
        )

    def key(self) -> str:
        return f"{self.max_complexity}:{self.min_maintainability:g}:{self.min_readability:g}"


@dataclass(frozen=True)
class Finding:
    path: str  # as given on the command line (pre-commit passes paths relative to the repository root)
    line: int  # 1-based; the `def` line for a function, 1 for a whole-module metric
    end_line: int
    function: str | None  # qualified name (Class.method, outer.inner); None for a whole-module metric
    metric: str  # a rule id of RULES
    value: float
    threshold: float
    message: str  # what to do, one line

    @property
    def comparison(self) -> str:
        return ">" if RULES[self.metric].upper_bound else "<"

    def detail(self) -> str:
        """`metric value > threshold: what to do`: the finding without its location."""
        return f"{self.metric} {_number(self.value)} {self.comparison} {_number(self.threshold)}: {self.message}"

    def line_text(self) -> str:
        """`path:line: metric value > threshold: what to do`, the line the text format prints."""
        return f"{self.path}:{self.line}: {self.detail()}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class FileError:
    """A file that could not be checked (missing, a folder, not UTF-8, a syntax error)."""

    path: str
    error: CoderefineError

    def to_json(self) -> dict[str, Any]:
        code = self.error.exit_code
        return {"path": self.path, "code": int(code), "kind": code.name.lower(), "message": self.error.message}


@dataclass
class CheckOutcome:
    files: int = 0
    findings: list[Finding] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    cached: int = 0  # files whose findings came from the cache


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def check_source(path: str, text: str, thresholds: CheckThresholds) -> list[Finding]:
    """The findings for one module's source. Raises ``SyntaxError`` if it does not parse."""
    # Imported here: radon and the score are only needed when the cache has no answer.
    from coderefine.quality.metrics import analyse
    from coderefine.quality.readability import components_of_analysis, identifier_quality_of_tree

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
    for path in paths:
        outcome.files += 1
        try:
            raw = read_bytes(path)
            key = cache_key(str(path), raw, thresholds)
            cached = cache.get(key) if cache is not None else None
            if cached is not None:
                outcome.cached += 1
                outcome.findings.extend(cached)
                continue
            findings = _check_raw(path, raw, thresholds)
        except CoderefineError as exc:
            outcome.errors.append(FileError(str(path), exc))
            continue
        if cache is not None:
            cache.put(key, findings)
        outcome.findings.extend(findings)
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
