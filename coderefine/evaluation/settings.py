"""What an Evaluator is told: the user's settings that shape an evaluation, and a few internal ones.

A field that mirrors a user setting takes its default from the setting's spec (`coderefine.setting_specs`),
so each default is written once; the others are the evaluator's own (capture limits, pyperf's parameters)
or the run's (`from_settings`' keyword arguments). Every run builds it with `from_settings`, so a setting
reaches the evaluation by one path.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coderefine.evaluation.workload import UserBenchmark
from coderefine.setting_specs import SPEC_BY_NAME

if TYPE_CHECKING:
    from coderefine.settings import Settings


def _user_default(name: str) -> Any:
    return SPEC_BY_NAME[name].default


@dataclass(frozen=True)
class EvaluationSettings:
    measure_speed: bool
    test_timeout: float = _user_default("timeout")  # the original's test run; candidates get a derived limit
    memory_mb: int = _user_default("memory_mb")
    timing_pairs: int = _user_default("timing_pairs")
    timing_budget: float = _user_default("timing_budget")  # seconds per pass before calls are sampled
    timing_value_seconds: float = _user_default("timing_value_seconds")  # wall seconds of one timing value
    timing_values: int = 3
    timing_warmups: int = 1
    timing_min_time: float = 0.1
    min_speedup: float = _user_default("min_speedup")
    max_calls_per_target: int = 500
    max_capture_bytes: int = 64 * 1024 * 1024
    rel_tol: float = _user_default("rel_tol")
    abs_tol: float = _user_default("abs_tol")
    unordered: tuple[str, ...] = _user_default("unordered")  # targets whose returned sequences compare in any order
    # the sufficiency gate (see coderefine.evaluation.sufficiency); 0 and 0.0 switch it off
    min_calls: int = _user_default("min_calls")
    min_coverage: float = _user_default("min_coverage")
    allow_insufficient_tests: bool = _user_default("allow_insufficient_tests")
    script: bool = False  # the module runs as a program: with no recorded calls its tests alone judge it
    allow: tuple[str, ...] = _user_default("allow")  # capability kinds a candidate may gain (see audit.py)
    memory_growth: float = _user_default("memory_growth")  # peak memory per call: the limit's ratio ...
    memory_margin_mb: float = _user_default("memory_margin_mb")  # ... and MiB over the original's
    gen_inputs: int = 0  # inputs to generate per target from type hints (hypothesis); 0: none
    boundary_inputs: int = _user_default("boundary_inputs")  # boundary variants of the recorded calls; 0: none
    boundary_seconds: float = 2.0  # the original's time to derive and check them (the variants left are dropped)
    pass_env: tuple[str, ...] = ()
    python: str = sys.executable
    keep_workspaces: bool = False
    bench: UserBenchmark | None = None  # the user's own timing workload, instead of the recorded calls
    # `coderefine bench --jobs N`: a file every job locks exclusively around a sandbox run that times code,
    # so that no two timing runs overlap (see coderefine.bench.runner)
    timing_lock: Path | None = None
    # programs (coderefine.evaluation.programs)
    output_match: str = _user_default("output_match")
    compare_stderr: bool = _user_default("compare_stderr")
    min_runs: int = _user_default("min_runs")
    timing_inputs: tuple[str, ...] = ()  # stdin files, relative to the project root
    program_repeats: int = 3  # processes per input and version in one timing pair (the fastest counts)
    max_runs: int = 200
    # What the lock covers: "run", the whole sandbox run of an evaluation that times code (bench: its tests
    # and replay never overlap another job's timing either), or "timing", only the timing steps inside the
    # sandbox (sweep: tests and replays run side by side, timing never does)
    timing_lock_scope: str = "run"
    # Processes that verify one round's drafts side by side (--drafts N; pool.py's workers). Their timing
    # steps take a lock of the run's own, so timing stays one at a time (SandboxEvaluator.evaluate_many).
    draft_workers: int = 1

    @classmethod
    def from_settings(
        cls, settings: Settings, *, measure_speed: bool, targets: tuple[str, ...], **run: Any
    ) -> EvaluationSettings:
        """The evaluation a run's settings ask for, on these targets (`unordered` keeps only theirs); `run`
        sets the fields the run itself decides (script, gen_inputs, pass_env, bench, timing lock, ...)."""
        return cls(
            measure_speed=measure_speed,
            test_timeout=settings.timeout,
            memory_mb=settings.memory_mb,
            timing_pairs=settings.timing_pairs,
            timing_budget=settings.timing_budget,
            timing_value_seconds=settings.timing_value_seconds,
            min_speedup=settings.min_speedup,
            rel_tol=settings.rel_tol,
            abs_tol=settings.abs_tol,
            unordered=tuple(name for name in settings.unordered if name in targets),
            min_calls=settings.min_calls,
            min_coverage=settings.min_coverage,
            allow_insufficient_tests=settings.allow_insufficient_tests,
            allow=settings.allow,
            memory_growth=settings.memory_growth,
            memory_margin_mb=settings.memory_margin_mb,
            output_match=settings.output_match,
            compare_stderr=settings.compare_stderr,
            min_runs=settings.min_runs,
            boundary_inputs=settings.boundary_inputs,
            **run,
        )
