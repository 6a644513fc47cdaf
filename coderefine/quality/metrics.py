"""Static code metrics (radon) for one module: the numbers the feedback step and the reports quote.

``code_metrics(source)`` returns a flat ``dict[str, float]`` (every value rounded to 2 decimals):

=====================  ===========================================================================
key                    meaning
=====================  ===========================================================================
``mi``                 radon maintainability index, ``mi_visit(source, multi=True)`` (0..100)
``cc_max``             the larger of radon's module-level cyclomatic complexity
                       (``ComplexityVisitor.from_code(source).complexity``: the code outside any
                       ``def``) and the largest complexity of one function / method / nested function
``cc_mean``            mean complexity of those blocks; the module-level figure when there are none
``loc``                radon raw: all lines
``sloc``               radon raw: source lines (not blank, not comment, not docstring)
``comments``           radon raw: lines holding a ``#`` comment
``halstead_volume``    radon Halstead metrics, module total (``h_visit(source).total``)
``halstead_difficulty``
``halstead_effort``
``identifier_quality`` share of well-named bound identifiers, see :mod:`coderefine.quality.names`
=====================  ===========================================================================

Blocks are functions, methods and functions nested in them (radon calls the latter closures). Classes
are *not* blocks here although radon's ``cc_visit`` lists them: radon's class figure is the average of
its methods plus one, so counting it would charge an object-oriented refactoring for code paths that
do not exist. Nested functions *are* blocks (radon's ``cc_visit`` leaves them out): otherwise moving
a tangled loop into an inner function would hide its complexity.

Everything is deterministic (no clocks, no randomness, no hash-order dependence) and the only exception
raised is ``SyntaxError`` for source that Python cannot parse. radon's raw line counter tokenises line by
line and has failed on valid code in the past (new string syntax); for parsable source it is replaced by
an AST-based approximation (:func:`_fallback_raw`) instead of failing.
"""

from __future__ import annotations

import ast
import statistics
from dataclasses import dataclass
from typing import NamedTuple

from radon.metrics import h_visit_ast, mi_compute
from radon.raw import analyze
from radon.visitors import Class, ComplexityVisitor, Function

from coderefine.quality.names import identifier_quality_of_tree
from coderefine.quality.parsing import parse


class RawCounts(NamedTuple):
    """The subset of radon's raw counts that the metrics use."""

    loc: int
    lloc: int
    sloc: int
    comments: int  # lines with a '#' comment (also end-of-line ones)
    multi: int  # lines of multi-line strings standing alone (docstrings)


@dataclass(frozen=True)
class Analysis:
    """Everything computed from one parse, shared by the metrics and the readability score."""

    tree: ast.Module
    raw: RawCounts
    halstead_volume: float
    halstead_difficulty: float
    halstead_effort: float
    module_complexity: int  # decision points outside any def/class, plus 1
    total_complexity: int  # what radon's MI uses: module + functions + classes
    blocks: tuple[tuple[str, int, int], ...]  # (qualified name, line, complexity), sorted by line

    @property
    def cc_max(self) -> int:
        return max([self.module_complexity, *(complexity for _, _, complexity in self.blocks)])

    @property
    def cc_mean(self) -> float:
        if not self.blocks:
            return float(self.module_complexity)
        return statistics.fmean(complexity for _, _, complexity in self.blocks)

    @property
    def comment_percent(self) -> float:
        """Comment lines per source line, in percent, exactly as radon's MI counts it (multi=True)."""
        if self.raw.sloc == 0:
            return 0.0
        return (self.raw.comments + self.raw.multi) / self.raw.sloc * 100

    def maintainability_index(self, comment_percent_cap: float | None = None) -> float:
        """radon's MI; with a cap, comments beyond that share of the source earn nothing more."""
        percent = self.comment_percent
        if comment_percent_cap is not None:
            percent = min(percent, comment_percent_cap)
        return float(mi_compute(self.halstead_volume, self.total_complexity, self.raw.lloc, percent))


def analyse(source: str) -> Analysis:
    """Parse ``source`` once and run radon's visitors on it. Raises ``SyntaxError`` if unparsable."""
    tree = parse(source)
    visitor = ComplexityVisitor.from_ast(tree)
    halstead = h_visit_ast(tree).total
    blocks: list[tuple[str, int, int]] = []
    for function in visitor.functions:
        _collect_function(function, "", blocks)
    for cls in visitor.classes:
        _collect_class(cls, "", blocks)
    blocks.sort(key=lambda block: (block[1], block[0]))
    return Analysis(
        tree=tree,
        raw=_raw_counts(source, tree),
        halstead_volume=float(halstead.volume),
        halstead_difficulty=float(halstead.difficulty),
        halstead_effort=float(halstead.effort),
        module_complexity=int(visitor.complexity),
        total_complexity=int(visitor.total_complexity),
        blocks=tuple(blocks),
    )


def code_metrics(source: str) -> dict[str, float]:
    """The metrics table described in the module docstring. Raises ``SyntaxError`` if unparsable."""
    analysis = analyse(source)
    quality, _ = identifier_quality_of_tree(analysis.tree)
    values = {
        "mi": analysis.maintainability_index(),
        "cc_max": analysis.cc_max,
        "cc_mean": analysis.cc_mean,
        "loc": analysis.raw.loc,
        "sloc": analysis.raw.sloc,
        "comments": analysis.raw.comments,
        "halstead_volume": analysis.halstead_volume,
        "halstead_difficulty": analysis.halstead_difficulty,
        "halstead_effort": analysis.halstead_effort,
        "identifier_quality": quality,
    }
    return {key: round(float(value), 2) for key, value in values.items()}


def block_complexities(source: str) -> list[tuple[str, int, int]]:
    """``(qualified name, first line, cyclomatic complexity)`` of every function, method and nested
    function, in source order. Qualified names join enclosing classes and functions with dots
    (``Parser.parse.helper``), so feedback can say *where* the complexity is."""
    return list(analyse(source).blocks)


def _collect_function(function: Function, prefix: str, out: list[tuple[str, int, int]]) -> None:
    qualified = f"{prefix}{function.name}"
    out.append((qualified, int(function.lineno), int(function.complexity)))
    for closure in function.closures:
        _collect_function(closure, f"{qualified}.", out)


def _collect_class(cls: Class, prefix: str, out: list[tuple[str, int, int]]) -> None:
    qualified = f"{prefix}{cls.name}"
    for method in cls.methods:
        _collect_function(method, f"{qualified}.", out)
    for inner in cls.inner_classes:
        _collect_class(inner, f"{qualified}.", out)


def _raw_counts(source: str, tree: ast.Module) -> RawCounts:
    try:
        raw = analyze(source)
    except Exception:
        # radon re-tokenises stripped lines and has choked on valid syntax before; the source already
        # parsed, so approximate rather than fail (the contract is: SyntaxError only if unparsable).
        return _fallback_raw(source, tree)
    return RawCounts(raw.loc, raw.lloc, raw.sloc, raw.comments, raw.multi)


def _fallback_raw(source: str, tree: ast.Module) -> RawCounts:
    """Line counts from the AST and a plain line scan, close to radon's on ordinary code."""
    lines = source.splitlines()
    multi_lines: set[int] = set()  # lines of string statements spanning several lines (docstrings)
    single_string_lines: set[int] = set()  # one-line string statements: radon files them as comments
    for node in ast.walk(tree):
        is_string_statement = (
            isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        )
        if not is_string_statement or node.end_lineno is None:
            continue
        if node.end_lineno > node.lineno:
            multi_lines.update(range(node.lineno, node.end_lineno + 1))
        else:
            single_string_lines.add(node.lineno)
    numbered = list(enumerate(lines, start=1))
    multi = sum(1 for number, line in numbered if number in multi_lines and line.strip())
    blank = sum(1 for line in lines if not line.strip())
    single_comments = sum(
        1
        for number, line in numbered
        if number not in multi_lines and (line.strip().startswith("#") or number in single_string_lines)
    )
    # A '#' after code may sit inside a string; without tokens this over-counts, which only matters
    # on the rare source radon cannot read.
    comments = sum(1 for number, line in numbered if "#" in line and number not in multi_lines)
    sloc = max(0, len(lines) - blank - multi - single_comments)
    lloc = sum(1 for node in ast.walk(tree) if isinstance(node, ast.stmt))
    return RawCounts(len(lines), lloc, sloc, comments, multi)
