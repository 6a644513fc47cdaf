"""Markdown for pull requests: the evidence of a verified change, review comments, the summary comment."""

from __future__ import annotations

from coderefine.fences import fenced
from coderefine.records import Result
from coderefine.reports.evidence import per_function_evidence, timing_evidence, verification_evidence

SUMMARY_MARKER = "<!-- coderefine-summary -->"


def review_marker(head_sha: str) -> str:
    """Hidden in a review's body so a rerun for the same head commit does not post the same review again."""
    return f"<!-- coderefine-review head={head_sha} -->"


def _number(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def evidence(result: Result) -> str:
    """What was measured about the best verified candidate: tests, calls compared, speedup or scores."""
    best, baseline = result.best, result.baseline
    if best is None or best.evaluation is None:
        return ""
    evaluation, parts = best.evaluation, []
    timing = evaluation.timing
    if timing is not None:
        parts.append(
            f"**{timing.speedup:.2f}x faster** [{timing.ci_low:.2f}, {timing.ci_high:.2f}] ({timing_evidence(timing)})"
        )
        if per_function_evidence(timing):
            parts.append(per_function_evidence(timing))
    elif best.verdict.score is not None and baseline is not None:
        parts.append(
            f"**readability {_number(baseline.score)} → {_number(best.verdict.score)}** "
            f"({best.verdict.score - baseline.score:+.2f})"
        )
    parts += verification_evidence(evaluation)
    if baseline is not None:
        deltas = [
            f"{label} {_number(baseline.evaluation.metrics[name])} → {_number(evaluation.metrics[name])}"
            for name, label in (("cc_max", "largest cyclomatic complexity"), ("mi", "maintainability index"))
            if name in evaluation.metrics
            and name in baseline.evaluation.metrics
            and evaluation.metrics[name] != baseline.evaluation.metrics[name]
        ]
        if deltas:
            parts.append("module: " + ", ".join(deltas))
    return "; ".join(parts)


def comment_body(function: str, block: str, proof: str) -> str:
    return f"coderefine: a verified version of `{function}`.\n\n{block}\n\n{proof}"


def fenced_diff(diff: str) -> str:
    return fenced(diff.rstrip(), "diff")
