"""Execution facts as short Markdown bullets: what the feedback and refine steps are told.

The same text goes to a language model, into the offline provider's feedback, and into traces, so
every claim in a prompt is something that was measured.
"""

from __future__ import annotations

from coderefine.evaluation.verdicts import boundary_counterexample, confirmed, faster, mib
from coderefine.records import Baseline, Evaluation, Iteration, Mismatch
from coderefine.reports.program_facts import program_baseline_lines, program_timing_note

_FAILURE_LIMIT = 600
_MAX_FAILURES = 3
# Lines and phrases whose content is measured as a whole: the response cache masks them in its key.
HOT_SPOTS_LABEL = "- Hot spots (profile of the recorded calls, own time):"
TIMING_PAIRS_LABEL = "interleaved process pairs"


def _trim(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 20] + " ... [trimmed]"


def _seconds(value: float) -> str:
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.1f} ms"
    return f"{value * 1e6:.1f} us"


def test_lines(evaluation: Evaluation) -> list[str]:
    tests = evaluation.tests
    if tests is None:
        return []
    if tests.timed_out:
        lines = ["- Tests: TIMED OUT."]
    else:
        lines = [
            f"- Tests: {tests.passed} passed, {tests.failed} failed, {tests.skipped} skipped ({tests.duration:.1f} s)."
        ]
    for failure in tests.failures[:_MAX_FAILURES]:
        message = _trim(failure.message, _FAILURE_LIMIT).replace("\n", "\n    ")
        lines.append(f"  - `{failure.nodeid}`:\n    {message}")
    if len(tests.failures) > _MAX_FAILURES:
        lines.append(f"  - ... and {len(tests.failures) - _MAX_FAILURES} more failing tests")
    return lines


def behavior_lines(evaluation: Evaluation) -> list[str]:
    behavior = evaluation.behavior
    if behavior is None:
        return []
    if not behavior.mismatches:
        lines = [f"- Behaviour: {behavior.calls_compared} recorded calls replayed, all identical to the original."]
    else:
        lines = [
            f"- Behaviour: {behavior.mismatches} of {behavior.calls_compared} recorded calls differ from the original:"
        ]
    lines += [_mismatch_line(m) for m in behavior.examples if not m.generated and not m.held_out]
    if behavior.held_out_mismatches:
        lines.append(
            f"  - {behavior.held_out_mismatches} of the differing calls are held out: their inputs are never shown; "
            "make the change correct for every input, not only for the ones shown."
        )
    if behavior.generated_compared:
        if behavior.generated_mismatches:
            lines.append(
                f"- Generated inputs (from type hints): {behavior.generated_mismatches} of "
                f"{behavior.generated_compared} differ from the original:"
            )
        else:
            lines.append(
                f"- Generated inputs (from type hints): {behavior.generated_compared} compared, all identical."
            )
        lines += [_mismatch_line(m) for m in behavior.examples if m.generated]
    if behavior.boundary_compared:
        if behavior.boundary_mismatches:
            lines.append(
                f"- Inputs the tests never tried (boundary variants of the recorded calls): "
                f"{behavior.boundary_mismatches} of {behavior.boundary_compared} differ from the original; "
                "handle them exactly as the original does:"
            )
            lines += [f"  - {boundary_counterexample(m)}" for m in behavior.examples if m.boundary]
        else:
            lines.append(
                f"- Inputs the tests never tried (boundary variants of the recorded calls): "
                f"{behavior.boundary_compared} compared, all identical."
            )
    return lines


def _mismatch_line(m: Mismatch) -> str:
    return f"  - `{m.function}` called with {m.args}: {m.kind} differs; expected {m.expected}, got {m.got}"


def timing_lines(evaluation: Evaluation) -> list[str]:
    timing = evaluation.timing
    if timing is None:
        return []
    if faster(timing):
        verdict = "faster, confirmed by a second timing series"
    elif timing.confirmation is not None and not confirmed(timing):
        speedup, low, high = timing.confirmation
        verdict = f"NOT faster: a second timing series did not confirm it ({speedup:.2f}x [{low:.2f}, {high:.2f}])"
    else:
        verdict = f"NOT faster (the lower bound must clear +{timing.min_speedup:.0%})"
    return [
        f"- Speed: {timing.speedup:.2f}x, 95% interval [{timing.ci_low:.2f}, {timing.ci_high:.2f}]: {verdict}. "
        f"One pass over the {timing.workload}: original {_seconds(timing.original_seconds)}, "
        f"this version {_seconds(timing.candidate_seconds)} ({timing.pairs} {TIMING_PAIRS_LABEL}"
        + (
            "; first pass of each process, because later passes were flattered by state kept between calls"
            if timing.basis == "first"
            else ""
        )
        + ")."
        + program_timing_note(timing)
    ]


def trust_lines(evaluation: Evaluation) -> list[str]:
    """What the trust checks saw: powers refused, import time before and after, the held-out calls."""
    lines = [
        f"- Refused power: {r.kind} ({r.detail}) {'at import' if r.call == 'import' else 'in ' + r.call}; "
        "the original never uses it."
        for r in evaluation.refused[:3]
    ]
    timing = evaluation.timing
    if timing is not None and timing.import_seconds is not None:
        before, after = timing.import_seconds
        lines.append(
            f"- Import time (module-level work, charged to the speedup): original {_seconds(before)}, "
            f"this version {_seconds(after)}."
        )
    memory = evaluation.memory
    if memory is not None:
        lines.append(
            f"- Peak memory per call (on the {memory.calls} recorded calls with the largest inputs): original "
            f"{mib(memory.original)}, this version {mib(memory.candidate)}"
            + (
                f"; more than {memory.max_ratio:g}x and {mib(memory.min_growth)} over the original is refused."
                if memory.max_ratio > 0 and not memory.allowed
                else "."
            )
        )
    if timing is not None and timing.held_out is not None:
        held, low, high = timing.held_out
        lines.append(
            f"- On held-out calls (inputs never shown): {held:.2f}x [{low:.2f}, {high:.2f}]; "
            "a speedup must hold there too."
        )
    return lines


def hot_spot_lines(evaluation: Evaluation) -> list[str]:
    if not evaluation.hot_spots:
        return []
    spots = ", ".join(
        f"`{s.function}` (line {s.line}) {s.share:.0%} of the time in {s.calls} calls" for s in evaluation.hot_spots[:4]
    )
    return [f"{HOT_SPOTS_LABEL} {spots}."]


def metric_lines(evaluation: Evaluation, reference: Evaluation | None = None) -> list[str]:
    m = evaluation.metrics
    if not m:
        return []

    def figure(key: str, label: str, digits: int = 1) -> str:
        value = m.get(key)
        if value is None:
            return ""
        text = f"{label} {value:.{digits}f}"
        if reference is not None and key in reference.metrics and reference.metrics[key] != value:
            text += f" (was {reference.metrics[key]:.{digits}f})"
        return text

    parts = [
        figure("readability", "readability score"),
        figure("mi", "maintainability index"),
        figure("cc_max", "max cyclomatic complexity", 0),
        figure("identifier_quality", "identifier quality", 2),
        figure("sloc", "source lines", 0),
    ]
    return ["- Metrics (radon): " + ", ".join(p for p in parts if p) + "."]


def baseline_facts(baseline: Baseline) -> str:
    evaluation = baseline.evaluation
    lines = test_lines(evaluation)
    if baseline.program is not None:
        lines += program_baseline_lines(baseline)
    elif baseline.calls_recorded:
        behavior = evaluation.behavior
        skipped = f"; {behavior.skipped} could not be replayed" if behavior and behavior.skipped else ""
        lines.append(
            f"- {baseline.calls_recorded} calls to the target were recorded while the tests ran{skipped}; every "
            "candidate is replayed on them and must give identical results."
        )
    else:
        lines.append("- The tests made no recordable calls to the target functions: the tests alone judge behaviour.")
    lines += evidence_lines(baseline)
    if baseline.workload_seconds is not None and baseline.program is None:
        lines.append(
            f"- One pass over the recorded calls takes {_seconds(baseline.workload_seconds)} (the timing workload)."
        )
    lines += hot_spot_lines(evaluation)
    lines += metric_lines(evaluation)
    return "\n".join(lines)


def evidence_lines(baseline: Baseline) -> list[str]:
    """Per target: how many calls judge it and how much of it the tests run, so that the model knows
    which changes the tests can see and which they cannot."""
    lines = []
    for e in baseline.evidence if baseline.program is None else ():
        coverage = f"{e.covered}/{e.lines} lines run by the tests" if e.lines else "no lines measured"
        missed = ""
        if e.missed_lines:
            shown = ", ".join(str(n) for n in e.missed_lines[:8]) + (", ..." if len(e.missed_lines) > 8 else "")
            missed = f" (never run: lines {shown})"
        lines.append(f"- `{e.target}`: {e.usable} recorded calls judge it, {coverage}{missed}.")
    gate = baseline.sufficiency
    if gate is not None and gate.applies and not gate.sufficient:
        lines.append(f"- Warning: {gate.reason}; changes outside what the tests run are not checked, keep them out.")
    generated = baseline.generated
    if generated is not None and generated.calls:
        lines.append(
            f"- {generated.calls} inputs were generated from the type hints and the original's outcomes on them "
            "recorded; candidates must give the same outcomes on them too."
        )
    boundary = baseline.boundary
    if boundary is not None and boundary.calls:
        lines.append(
            f"- {boundary.calls} boundary variants of the recorded calls (empty and one-element containers, 0, "
            "empty strings, ...) and the original's outcomes on them were recorded; candidates must give the "
            "same outcomes on them too."
        )
    if baseline.pinned and baseline.calls_recorded:
        lines.append(
            "- Each recorded call runs with `random` seeded and `time.time` pinned: draw random numbers and read "
            "the clock in the same order as the original, or the results differ."
        )
    return lines


def iteration_facts(iteration: Iteration, baseline: Baseline | None = None) -> str:
    lines = [f"- Verdict: {'ACCEPTED' if iteration.verdict.accepted else 'REJECTED'}: {iteration.verdict.reason}."]
    evaluation = iteration.evaluation
    if iteration.candidate is not None:
        lines += [f"- Note: {note}." for note in iteration.candidate.notes]
    if evaluation is None:
        return "\n".join(lines)
    lines += test_lines(evaluation)
    lines += behavior_lines(evaluation)
    lines += timing_lines(evaluation)
    lines += trust_lines(evaluation)
    lines += hot_spot_lines(evaluation)
    lines += metric_lines(evaluation, baseline.evaluation if baseline else None)
    return "\n".join(lines)
