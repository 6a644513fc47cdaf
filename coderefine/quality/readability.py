"""A deterministic readability score (0..100) for one Python module.

The score rewards what people call readable code (functions with few branches, names that say what
things are, some comments) and is built to be hard to raise without improving the code: comments stop
paying after a modest share, and renaming ``a`` to ``aaaa1`` earns nothing. ``docs/readability-score.md``
holds the same description for users.

Formula
-------
::

    score = 0.4 * MI_c + 0.3 * C + 0.3 * 100 * Q        (clamped to 0..100, rounded to 2 decimals)

``MI_c``  radon's maintainability index (``radon.metrics.mi_compute``, 0..100) from radon's own inputs
          -- Halstead volume and total cyclomatic complexity of the module, logical lines, and comment
          lines (``#`` lines plus multi-line docstring lines) as a percentage of source lines -- except
          that the comment percentage is capped at ``MI_COMMENT_PERCENT_CAP`` = 10. At or below the cap
          it equals ``radon.metrics.mi_visit(source, multi=True)``. Uncapped, padding a module with
          comments could add up to 29.2 MI points (11.7 score points); capped, at most 17.8 (7.1).
``C``     complexity score ``100 * clamp((21 - cc_max) / 20, 0, 1)``: 100 at ``cc_max`` 1, 0 at 21 or
          more (radon rank D), linear in between. ``cc_max`` is the larger of the module-level
          complexity (code outside any ``def``) and the most complex function, method or nested
          function (see :mod:`coderefine.quality.metrics`).
``Q``     identifier quality, 0..1: the share of distinct bound names that are descriptive and have
          the PEP 8 case (:mod:`coderefine.quality.names`, whose docstring holds the rules).
"""

from __future__ import annotations

from coderefine.quality.metrics import Analysis, analyse
from coderefine.quality.names import identifier_quality_of_tree

# --- score weights and constants -----------------------------------------------------------------

WEIGHT_MI = 0.4
WEIGHT_COMPLEXITY = 0.3
WEIGHT_IDENTIFIERS = 0.3
MI_COMMENT_PERCENT_CAP = 10.0  # comment lines per 100 source lines beyond which comments earn nothing
CC_BEST = 1  # cc_max at which the complexity score is 100
CC_WORST = 21  # cc_max at which it reaches 0 (radon rank D starts at 21)


def readability_score(source: str) -> float:
    """The score in 0..100 (see the module docstring). Raises ``SyntaxError`` if unparsable."""
    return readability_components(source)["score"]


def readability_components(source: str) -> dict[str, float]:
    """The score and its parts (``mi_capped``, ``cc_max``, ``complexity_score``,
    ``identifier_quality``), each rounded to 2 decimals, for feedback that says what to improve."""
    return components_of_analysis(analyse(source))


def components_of_analysis(analysis: Analysis) -> dict[str, float]:
    """:func:`readability_components` on an already analysed module."""
    mi_capped = analysis.maintainability_index(comment_percent_cap=MI_COMMENT_PERCENT_CAP)
    complexity_score = complexity_score_for(analysis.cc_max)
    quality, _ = identifier_quality_of_tree(analysis.tree)
    score = WEIGHT_MI * mi_capped + WEIGHT_COMPLEXITY * complexity_score + WEIGHT_IDENTIFIERS * 100 * quality
    return {
        "score": round(min(100.0, max(0.0, score)), 2),
        "mi_capped": round(mi_capped, 2),
        "cc_max": float(analysis.cc_max),
        "complexity_score": round(complexity_score, 2),
        "identifier_quality": round(quality, 2),
    }


def complexity_score_for(cc_max: int) -> float:
    """100 at ``CC_BEST``, 0 at ``CC_WORST`` and above, linear in between."""
    fraction = (CC_WORST - cc_max) / (CC_WORST - CC_BEST)
    return 100.0 * min(1.0, max(0.0, fraction))
