"""The evidence behind a verified candidate, in the same words in every report (console, SARIF, PR comments)."""

from __future__ import annotations

from coderefine.evaluation.verdicts import mib
from coderefine.records import Evaluation, MemoryUse, Timing


def verification_evidence(evaluation: Evaluation) -> list[str]:
    """What executing the candidate showed: the tests it passed and the calls it replayed identically."""
    parts = []
    if evaluation.tests is not None:
        parts.append(f"{evaluation.tests.passed} tests passed")
    behavior = evaluation.behavior
    if behavior is not None and behavior.calls_compared:
        parts.append(f"{behavior.calls_compared} recorded {behavior.unit}s replayed identically")
    if behavior is not None and behavior.generated_compared:
        parts.append(f"{behavior.generated_compared} generated inputs identical")
    if behavior is not None and behavior.boundary_compared:
        parts.append(f"{behavior.boundary_compared} inputs the tests never tried identical")
    if evaluation.memory is not None:
        parts.append(memory_evidence(evaluation.memory))
    return parts


def memory_evidence(memory: MemoryUse) -> str:
    """Peak memory per call before and after, and what it was read on."""
    return (
        f"peak memory per call {mib(memory.original)} before, {mib(memory.candidate)} after "
        f"({memory.calls} recorded call{'s' if memory.calls != 1 else ''} with the largest inputs)"
    )


def timing_evidence(timing: Timing) -> str:
    """How the speedup was measured, for a reader who wants to know what the interval means."""
    series = "two series" if timing.confirmation is not None else "one series"
    return (
        f"95% interval over {timing.pairs} interleaved process pairs in {series} on the {timing.workload}; "
        f"the lower bound had to clear +{timing.min_speedup:.0%}"
        + (", in each series" if timing.confirmation is not None else "")
    )


def basis_evidence(timing: Timing | None) -> str:
    """When the first pass of each process decided the speedup (later passes were flattered by state kept
    between calls), that fact and the steady figure beside it; empty otherwise."""
    if timing is None or timing.basis != "first":
        return ""
    text = "decided on the first pass of each process (later passes were flattered by state kept between calls)"
    if timing.steady is not None:
        steady, low, high = timing.steady
        text += f"; steady {steady:.2f}x [{low:.2f}, {high:.2f}]"
    return text


def per_function_evidence(timing: Timing) -> str:
    """Each target's own speedup when a run has several (the headline figure is their workload-weighted
    total), on its first pass where that decided it (a function keeping state between calls); empty for a
    single target."""
    if len(timing.per_function) < 2:
        return ""
    figures = [
        f"{name} {s:.2f}x [{low:.2f}, {high:.2f}]{' on its first pass' if name in timing.per_function_steady else ''}"
        for name, (s, low, high) in timing.per_function.items()
    ]
    return "per function: " + ", ".join(figures) + " (the total is weighted by each one's share of the workload)"
