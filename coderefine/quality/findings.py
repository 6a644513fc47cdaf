"""The records of `coderefine check`: the rules it applies, its thresholds, and what it finds.

Kept apart from the check itself (check.py) so that the on-disk cache (check_cache.py), the SARIF report
and the review comments can read and write findings without importing the code that computes them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from coderefine.errors import CoderefineError

if TYPE_CHECKING:
    from coderefine.settings import Settings

COMPLEXITY = "cyclomatic-complexity"
MAINTAINABILITY = "maintainability-index"
READABILITY = "readability-score"
NEW_POWER = "new-sensitive-import"


@dataclass(frozen=True)
class CheckRule:
    """What a metric means and how to act on it (the SARIF rule metadata is made from this)."""

    id: str
    name: str  # CamelCase, as SARIF consumers show it
    short: str
    full: str
    help: str  # plain text, several sentences
    upper_bound: bool  # True: a value above the threshold is a finding; False: a value below it


RULES: dict[str, CheckRule] = {
    rule.id: rule
    for rule in (
        CheckRule(
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
        CheckRule(
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
        CheckRule(
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
        CheckRule(
            NEW_POWER,
            "NewSensitiveImport",
            "New network, process or native-code import",
            "The file imports a module that gives network, process or native-code powers (socket, "
            "subprocess, requests, ctypes, ...) that its committed version (git HEAD) does not import.",
            "A refactoring or optimisation should not gain powers: coderefine's sandbox refuses a candidate that "
            "uses a power the original never used (see the README, 'What coderefine refuses'), and this check "
            "does the same statically at commit time. Remove the import, or keep it knowingly: the finding "
            "names the module and the power it gives.",
            upper_bound=True,
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
            max_complexity=settings.max_complexity,
            min_maintainability=settings.min_maintainability,
            min_readability=settings.min_readability,
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
