"""How timing adapts to the workload the baseline measured: how many values each timing process takes (the
noise floor a speedup must clear is a verdict: coderefine.evaluation.verdicts.noise_floor)."""

from __future__ import annotations


def values_per_process(configured: int, workload_seconds: float | None) -> int:
    """Measured values per timing process. Short workloads need several values (pyperf's 0.1 s minimum
    each) for a stable mean; for passes of a second or more one value is stable, and the spread that
    matters — between processes — is what the paired interval measures."""
    if workload_seconds is None or workload_seconds < 0.3:
        return configured
    return min(configured, 2 if workload_seconds < 1.0 else 1)
