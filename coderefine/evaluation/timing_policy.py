"""How timing adapts to the workload the baseline measured: the noise floor a speedup must clear, and how
many values each timing process takes."""

from __future__ import annotations

# Below this mean time per recorded call, what is timed is mostly the timer and the call's own overhead
# (a perf_counter pair and an argument unpacking take about a tenth of a microsecond): no speedup there
# can be told from noise, so candidates are not timed at all and the verdict says so, at once.
TOO_FAST_PER_CALL = 5e-7


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


def too_fast(workload_seconds: float | None, calls: int) -> str | None:
    """Why the recorded workload cannot be timed reliably, or None when it can."""
    if workload_seconds is None or calls <= 0:
        return None
    per_call = workload_seconds / calls
    if per_call >= TOO_FAST_PER_CALL:
        return None
    return (
        f"too fast to measure reliably: the recorded calls take {per_call * 1e9:.0f} ns each "
        f"({workload_seconds * 1e6:.1f} us per pass over {calls}), below the {TOO_FAST_PER_CALL * 1e9:.0f} ns "
        "that timing can resolve; add tests with larger inputs, or time your own workload with --bench"
    )
