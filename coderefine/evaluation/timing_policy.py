"""How timing adapts to the workload the baseline measured: the noise floor a speedup must clear, and how
many values each timing process takes."""

from __future__ import annotations


def noise_floor(min_speedup: float, workload_seconds: float | None) -> float:
    """The speedup a lower bound must clear. Workloads in the microsecond range are dominated by call
    overhead and timer resolution, so they must show a larger effect before it is believed."""
    if workload_seconds is None:
        return min_speedup
    if workload_seconds < 1e-5:
        return max(min_speedup, 0.20)
    if workload_seconds < 1e-4:
        return max(min_speedup, 0.10)
    return min_speedup


def values_per_process(configured: int, workload_seconds: float | None) -> int:
    """Measured values per timing process. Short workloads need several values (pyperf's 0.1 s minimum
    each) for a stable mean; for passes of a second or more one value is stable, and the spread that
    matters — between processes — is what the paired interval measures."""
    if workload_seconds is None or workload_seconds < 0.3:
        return configured
    return min(configured, 2 if workload_seconds < 1.0 else 1)
