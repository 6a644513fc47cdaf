"""The runner's requests (`coderefine_sandbox.protocol.RunnerRequest`), built from the evaluation settings,
the project and what the baseline established."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from coderefine.evaluation.programs import console_script_runs, program_spec
from coderefine.evaluation.project import Project
from coderefine.evaluation.protocol import (
    BehaviorTolerances,
    Bench,
    BoundaryPaths,
    Capability,
    CaptureLimits,
    FailFast,
    GeneratedPaths,
    Mode,
    ProgramSpec,
    RunnerRequest,
    TestSelection,
    TimingParameters,
)
from coderefine.evaluation.settings import EvaluationSettings
from coderefine.evaluation.timing_policy import values_per_process
from coderefine.evaluation.verdicts import noise_floor

# Pinned for every run, whatever the code imports (the sandbox reports the rest).
HASH_SEED = 0
ALWAYS_PINNED = (
    f"PYTHONHASHSEED={HASH_SEED} (str/bytes hashes, set and dict-of-str iteration order)",
    "random reseeded before each test",
)


@dataclass(frozen=True)
class Learned:
    """What the baseline established that shapes every candidate's request."""

    loops: int | None = None  # calibrated timing loops
    workload_seconds: float | None = None  # one pass over the workload, original
    calls_recorded: int = 0
    generated_calls: int = 0  # usable generated inputs (--gen-inputs)
    boundary_calls: int = 0  # usable boundary variants of the recorded calls
    capabilities: tuple[Capability, ...] = ()  # the powers the original used while replayed (audit.py)
    untimed: str | None = None  # why candidates are not timed (see verdicts.too_fast)
    program: bool = False  # candidates are judged by the program runs the tests made
    # (call index, bytes): the original's peak memory per call in its replay (coderefine_sandbox/behaviour/memory.py)
    peak_memory: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Requests:
    """Builds the requests of one run: the baseline's, then each candidate's."""

    settings: EvaluationSettings
    project: Project
    targets: tuple[str, ...]
    original_workspace: Path
    baseline_io: Path  # the baseline's artefacts: recorded calls, unstable indices, generated inputs
    selection: TestSelection | None = None  # which of the tests pytest finds run (evaluation/selection.py)

    def baseline(self, test_timeout: float) -> RunnerRequest:
        generate = self._generated_paths(self.settings.gen_inputs) if self.settings.gen_inputs else None
        return self._request("baseline", self.original_workspace, self.baseline_io, test_timeout, Learned(), generate)

    def candidate(
        self,
        workspace: Path,
        io_dir: Path,
        test_timeout: float,
        learned: Learned,
        fail_fast: FailFast | None = None,
        test_workers: int = 1,
        test_seconds: Path | None = None,
        changed: tuple[str, ...] = (),
    ) -> RunnerRequest:
        request = self._request("candidate", workspace, io_dir, test_timeout, learned, None)
        seconds = str(test_seconds) if test_seconds is not None else None
        changed_targets = tuple(target for target in self.targets if target in changed)
        return replace(
            request,
            fail_fast=fail_fast,
            test_workers=test_workers,
            test_seconds=seconds,
            changed_targets=changed_targets,
        )

    def _request(
        self,
        mode: Mode,
        workspace: Path,
        io_dir: Path,
        test_timeout: float,
        learned: Learned,
        generate: GeneratedPaths | None,
    ) -> RunnerRequest:
        settings = self.settings
        return RunnerRequest(
            mode=mode,
            python=settings.python,
            workspace=str(workspace),
            original_workspace=str(self.original_workspace),
            io_dir=str(io_dir),
            module_name=self.project.module_name,
            import_root=str(self.project.import_root),
            targets=self.targets,
            tests=tuple(self.project.tests),
            test_timeout=test_timeout,
            step_timeout=max(60.0, test_timeout),
            calls_path=str(self.baseline_io / "calls.pkl"),
            unstable_path=str(self.baseline_io / "unstable.json"),
            capture=CaptureLimits(
                max_calls_per_target=settings.max_calls_per_target, max_bytes=settings.max_capture_bytes
            ),
            hash_seed=HASH_SEED,
            behavior=BehaviorTolerances(
                rel_tol=settings.rel_tol, abs_tol=settings.abs_tol, unordered=tuple(settings.unordered)
            ),
            timing=self._timing(learned),
            bench=self._bench(),
            replay=learned.calls_recorded > 0 and not learned.program,
            generate=generate,
            generated=self._generated_paths() if mode == "candidate" and learned.generated_calls else None,
            original_capabilities=learned.capabilities,
            allow=tuple(settings.allow),
            selection=self.selection,
            program=self._program(mode, learned),
            timing_lock=str(settings.timing_lock) if self._locks_timing_steps else None,
            boundary=self._boundary_paths(mode, learned),
        )

    def _boundary_paths(self, mode: Mode, learned: Learned) -> BoundaryPaths | None:
        """The baseline derives boundary variants when the setting asks for them; candidates replay them
        when the baseline kept some."""
        count = self.settings.boundary_inputs
        if not count or (mode == "candidate" and not learned.boundary_calls):
            return None
        return BoundaryPaths(
            count=count,
            seconds=self.settings.boundary_seconds,
            calls_path=str(self.baseline_io / "boundary.pkl"),
            report_path=str(self.baseline_io / "boundary.json"),
            unstable_path=str(self.baseline_io / "boundary-unstable.json"),
        )

    def _program(self, mode: Mode, learned: Learned) -> ProgramSpec | None:
        """Record program runs in the baseline of anything that can run as a program; replay them for
        candidates when the baseline judged by them."""
        if mode == "baseline":  # a module a console script runs is recorded as a program too
            wanted = self.settings.script or console_script_runs(
                self.project.module_name, self.settings.python, self.project.root
            )
        else:
            wanted = learned.program
        return program_spec(self.settings, self.project, self.baseline_io) if wanted else None

    @property
    def _locks_timing_steps(self) -> bool:
        settings = self.settings
        return settings.timing_lock is not None and settings.measure_speed and settings.timing_lock_scope == "timing"

    def _timing(self, learned: Learned) -> TimingParameters | None:
        settings = self.settings
        if not settings.measure_speed or learned.untimed is not None:
            return None
        return TimingParameters(
            pairs=settings.timing_pairs,
            # a sampled pass takes about the budget, whatever the full one takes
            values=values_per_process(
                settings.timing_values,
                None if learned.workload_seconds is None else min(learned.workload_seconds, settings.timing_budget),
            ),
            warmups=settings.timing_warmups,
            min_time=settings.timing_min_time,
            loops=learned.loops,
            floor=noise_floor(settings.min_speedup, learned.workload_seconds),
            budget=settings.timing_budget,
            value_seconds=settings.timing_value_seconds,
        )

    def _generated_paths(self, count: int = 0) -> GeneratedPaths:
        return GeneratedPaths(
            count=count,
            calls_path=str(self.baseline_io / "generated.pkl"),
            report_path=str(self.baseline_io / "generated.json"),
            unstable_path=str(self.baseline_io / "generated-unstable.json"),
        )

    def _bench(self) -> Bench | None:
        bench = self.settings.bench
        if bench is None:
            return None
        return Bench(file=bench.file.as_posix(), functions=tuple(bench.functions))
