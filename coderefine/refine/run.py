"""One `coderefine optimize|readability FILE` run, from validated options to a Result.

Validation happens up front and in the order a user fixes things (file, function, script, tests), so
bad input fails in well under a second with one line, before any sandbox starts. `_Run.go` is the
composition root and reads top to bottom: validate, choose the provider, the project and the sandbox,
prepare the provider, build the evaluation settings and the loop, run it, write the best back.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from coderefine.errors import CoderefineError, ExitCode, UsageError, error_record
from coderefine.evaluation.evaluator import SandboxEvaluator
from coderefine.evaluation.programs import resolve_timing_inputs
from coderefine.evaluation.project import Project, resolve_project
from coderefine.evaluation.protocol import CaptureSpec
from coderefine.evaluation.reach_build import bounded_first_map, map_for_run
from coderefine.evaluation.reach_map import default_reach_cache
from coderefine.evaluation.selection import (
    Selection,
    default_selection_cache,
    plan_selection,
    selection_names,
    tracing_budget,
)
from coderefine.evaluation.settings import EvaluationSettings
from coderefine.evaluation.workload import UserBenchmark, parse_bench
from coderefine.pool import available_cpus
from coderefine.providers.base import Provider, RunContext
from coderefine.providers.registry import choose_provider, make_provider
from coderefine.records import INSUFFICIENT_TESTS, Result, RunError, Usage
from coderefine.refine.loop import LoopObserver, LoopSettings, RefinementLoop
from coderefine.refine.options import RunOptions
from coderefine.refine.scoring import scorer_for
from coderefine.refine.tasks import TaskSpec, load_task
from coderefine.refine.trace import TracingProvider, write_run_record
from coderefine.sandboxes.base import Sandbox, refuse_secrets
from coderefine.sandboxes.registry import make_sandbox
from coderefine.source import SourceFile, is_script, read_source, resolve_targets, runs_as_program
from coderefine.writeback import write_atomically

# Inputs generated per target with --gen-inputs: enough to reach the edge cases hypothesis favours
# (empty, zero, negative, duplicates) at about a second of generation per target.
GENERATED_PER_TARGET = 50


def execute(options: RunOptions, observer: LoopObserver | None = None) -> Result:
    """One run, from options to the Result it builds once, when it ends.

    Whatever ends a run early (bad input, the model or the sandbox failing, Ctrl-C, a bug) does not
    escape: the Result says so in `error`, with the exit code, and keeps everything verified before."""
    run = _Run(options)
    try:
        run.go(observer)
    except (Exception, KeyboardInterrupt) as exc:  # told as the CLI's boundary tells it (errors.error_record)
        return run.result(error_record(exc))
    return run.result(None)


def unstarted(task: str, file: str, error: CoderefineError) -> Result:
    """The Result of a run whose options could not even be read (a bad flag, pyproject.toml or trace)."""
    return Result(
        task=task,
        file=file,
        status="failed",
        stop_reason="",
        original_code="",
        baseline=None,
        best=None,
        error=error.record(),
    )


class _Run:
    """The parts of one run as they are put together; `result()` turns whatever was reached into a Result."""

    def __init__(self, options: RunOptions) -> None:
        self.options = options
        self.original_code = ""
        self.provider_facts: tuple[str, str, str | None] = ("", "", None)  # name, why, "model M at URL"
        self.sandbox_facts = ("", "")  # name, why
        self.warnings: list[str] = []
        self.provider_warnings: tuple[str, ...] = ()  # what the model provider noticed while it served
        self.loop: RefinementLoop | None = None
        self.written = False

    def result(self, error: RunError | None) -> Result:
        options = self.options
        outcome = self.loop.outcome() if self.loop is not None else None
        stop_reason = outcome.stop_reason if outcome is not None else ""
        if error is not None and error.kind == "interrupted":
            stop_reason = "interrupted"
        if outcome is not None and outcome.status == INSUFFICIENT_TESTS and error is None:
            # Not a failure of the run, but nothing was judged: pre-commit and CI must be able to tell.
            message = f"{stop_reason}; add tests, or pass --allow-insufficient-tests to judge candidates anyway"
            error = RunError(int(ExitCode.INSUFFICIENT_TESTS), INSUFFICIENT_TESTS, message)
        provider, provider_reason, model = self.provider_facts
        return Result(
            task=options.task,
            file=str(options.file),
            status=outcome.status if outcome is not None else "failed",
            stop_reason=stop_reason,
            original_code=self.original_code,
            baseline=outcome.baseline if outcome is not None else None,
            best=outcome.best if outcome is not None else None,
            iterations=outcome.iterations if outcome is not None else (),
            rounds=outcome.rounds if outcome is not None else (),
            usage=outcome.usage if outcome is not None else Usage(),
            warnings=(*self.warnings, *(outcome.warnings if outcome is not None else ()), *self.provider_warnings),
            provider=provider,
            provider_reason=provider_reason,
            model=model,
            sandbox=self.sandbox_facts[0],
            sandbox_reason=self.sandbox_facts[1],
            written=self.written,
            error=error,
        )

    def go(self, observer: LoopObserver | None) -> None:
        """The run, step by step: each step fails with one line before the next starts anything costly."""
        options = self.options
        task, source, targets = self._validate()
        model_provider, choice_reason = self._choose_provider()
        project = resolve_project(source.path, options.tests, options.root)
        bench = parse_bench(options.bench, project.root) if options.bench else None
        if bench is not None and not task.measure_speed:
            raise UsageError(f"--bench times a workload; the {task.name} task measures no speed")
        sandbox = self._choose_sandbox()
        if observer is not None:
            self._note_choices(observer, choice_reason, bench)
        provider = self._prepare_provider(model_provider, project, source)  # wrapped for --trace
        evaluation_settings = self._evaluation_settings(task, source, targets, bench, project.root)
        settings = options.settings
        cache = default_selection_cache() if settings.cache else None
        budget = tracing_budget(settings.timeout)
        reach = None
        if settings.cache and not project.tests and settings.test_selection != "all":
            target_file = project.target.as_posix()
            reach = map_for_run(
                project.root,
                target_file,
                targets,
                default_reach_cache(),
                sandbox,
                budget,
                settings.memory_mb,
                options.pass_env,
            )
        selection = plan_selection(project, targets, source.text, settings.test_selection, cache, budget, reach)
        recorded = Path(tempfile.mkdtemp(prefix="coderefine-first-trace-"))  # the first trace's recorded calls
        try:
            if selection.mode == "traced" and reach is None and settings.cache:
                # No map and no earlier selection: on a large suite, a bounded first map rather than every test
                # file naming the target in full (which may not end within --timeout). Its pytest runs record
                # the targets' calls too, so the baseline does not run the reaching tests a second time.
                names = selection_names(project.module_name, targets, source.text)
                record = CaptureSpec(
                    project.module_name,
                    targets,
                    evaluation_settings.max_calls_per_target,
                    evaluation_settings.max_capture_bytes,
                )
                reach = bounded_first_map(
                    project.root,
                    project.module_name,
                    names,
                    default_reach_cache(),
                    sandbox,
                    budget,
                    settings.memory_mb,
                    options.pass_env,
                    record,
                    recorded,
                )
                if reach is not None:
                    selection = plan_selection(
                        project, targets, source.text, settings.test_selection, cache, budget, reach
                    )
            self._evaluate(task, source, targets, provider, model_provider, project, sandbox, evaluation_settings,
                           selection, observer)  # fmt: skip
        finally:
            shutil.rmtree(recorded, ignore_errors=True)
        self._write_best(source)

    def _evaluate(
        self,
        task: TaskSpec,
        source: SourceFile,
        targets: tuple[str, ...],
        provider: Provider,
        model_provider: Provider,
        project: Project,
        sandbox: Sandbox,
        evaluation_settings: EvaluationSettings,
        selection: Selection,
        observer: LoopObserver | None,
    ) -> None:
        """The baseline and the refinement loop, in an evaluator whose folder goes with it."""
        evaluator = SandboxEvaluator(project, targets, sandbox, evaluation_settings, source.has_bom, selection)
        try:  # from the moment its folder exists: a Ctrl-C while the loop is built must not leave it behind
            self.loop = self._build_loop(task, source, targets, provider, evaluator, observer)
            self.loop.run()
        finally:
            evaluator.close()
            if evaluator.copy_reason is not None:
                self.warnings.append(f"candidates ran in full copies of the project: {evaluator.copy_reason}")
            self.provider_warnings = tuple(getattr(model_provider, "warnings", ()))

    # ----------------------------------------------------------------- the steps, in order

    def _validate(self) -> tuple[TaskSpec, SourceFile, tuple[str, ...]]:
        """The options a user fixes first, in the order they would fix them: env names, task, file, function."""
        options = self.options
        refuse_secrets(options.pass_env)
        task = load_task(options.task)
        source = read_source(options.file)
        self.original_code = source.text
        if options.expected_sha256 is not None and options.expected_sha256 != source.raw_sha256:
            self.warnings.append(f"{options.file} changed since the trace was made; the replay may take another path")
        targets = resolve_targets(source.text, options.function, options.file)
        return task, source, targets

    def _choose_provider(self) -> tuple[Provider, str]:
        """The model provider, and why it was chosen (a flag, a setting, a key in the environment, or none)."""
        options = self.options
        choice = choose_provider(options.settings, options.script)
        provider = make_provider(choice.name, options.settings, options.script)
        self.provider_facts = (provider.name, choice.reason, getattr(provider, "description", None))
        return provider, choice.reason

    def _choose_sandbox(self) -> Sandbox:
        settings = self.options.settings
        sandbox = make_sandbox(settings.sandbox, settings.image)
        self.sandbox_facts = (sandbox.name, sandbox.reason or f"set by {settings.source('sandbox')}")
        if sandbox.warning:
            self.warnings.append(sandbox.warning)
        return sandbox

    def _note_choices(self, observer: LoopObserver, provider_reason: str, bench: UserBenchmark | None) -> None:
        provider, _, model = self.provider_facts
        sandbox, sandbox_reason = self.sandbox_facts
        observer.note(f"provider: {provider}{f' ({model})' if model else ''} - {provider_reason}")
        observer.note(f"sandbox: {sandbox} - {sandbox_reason}")
        if bench is not None:
            observer.note(f"timing workload: {', '.join(bench.functions)} from {bench.file.as_posix()} (--bench)")

    def _prepare_provider(self, provider: Provider, project: Project, source: SourceFile) -> Provider:
        """Check a model provider's key and URL now, not after the baseline; wrap it for --trace."""
        options = self.options
        preflight = getattr(provider, "check", None)
        if callable(preflight):
            preflight()
        if options.trace is not None:
            provider = TracingProvider(provider, options.trace)
            write_run_record(options.trace, options, project.root, source.raw_sha256)
        return provider

    def _evaluation_settings(
        self,
        task: TaskSpec,
        source: SourceFile,
        targets: tuple[str, ...],
        bench: UserBenchmark | None,
        root: Path,
    ) -> EvaluationSettings:
        options = self.options
        settings = options.settings
        gen_inputs = 0
        if settings.gen_inputs:
            try:
                import hypothesis  # noqa: F401  (only asked whether it is there: the sandbox uses it)
            except ImportError:
                raise UsageError("--gen-inputs needs hypothesis: pip install 'coderefine[gen]'") from None
            if is_script(source.text):
                self.warnings.append("--gen-inputs: not for a script (importing it runs it); the tests alone judge it")
            else:
                gen_inputs = GENERATED_PER_TARGET
        unknown = [name for name in settings.unordered if name not in targets]
        if unknown:  # a pyproject.toml setting applies to many files: not an error, but say so
            self.warnings.append(f"unordered: {', '.join(unknown)} not among this run's targets ({', '.join(targets)})")
        return EvaluationSettings.from_settings(
            settings,
            measure_speed=task.measure_speed,
            targets=targets,
            script=runs_as_program(source.text),
            gen_inputs=gen_inputs,
            pass_env=options.pass_env,
            keep_workspaces=options.keep_workspaces,
            bench=bench,
            timing_lock=options.timing_lock,
            timing_inputs=resolve_timing_inputs(settings.timing_inputs, root),
            timing_lock_scope=options.timing_lock_scope,
            draft_workers=self._draft_workers(),
        )

    def _draft_workers(self) -> int:
        """Processes verifying one round's drafts side by side: one per draft up to `workers` (one per CPU).
        Inside `bench --jobs` or a sweep (a timing lock shared with other jobs) the cores are the jobs'
        already: drafts are verified one after another there."""
        settings = self.options.settings
        if settings.drafts <= 1 or self.options.timing_lock is not None:
            return 1
        return max(1, min(settings.drafts, settings.workers or available_cpus()))

    def _build_loop(
        self,
        task: TaskSpec,
        source: SourceFile,
        targets: tuple[str, ...],
        provider: Provider,
        evaluator: SandboxEvaluator,
        observer: LoopObserver | None,
    ) -> RefinementLoop:
        options = self.options
        settings = options.settings
        context = RunContext(
            task=task.name,
            file=str(options.file),
            original_code=source.text,
            targets=targets,
            allowed=(targets if options.function is not None else None),
            whole_module=options.function is None and is_script(source.text),
            offline_rules=task.offline_rules,
        )
        loop_settings = LoopSettings(
            max_iterations=settings.max_iterations or task.max_iterations,
            patience=settings.patience or task.patience,
            min_improvement=task.min_improvement,
            max_calls=settings.max_calls,
            max_tokens=settings.max_tokens,
            context_tokens=settings.context_tokens,
            drafts=settings.drafts,
        )
        return RefinementLoop(task, scorer_for(task), provider, evaluator, context, loop_settings, observer)

    def _write_best(self, source: SourceFile) -> None:
        """--write: the best verified candidate replaces the file, atomically, if the file is as it was read."""
        assert self.loop is not None
        best = self.loop.outcome().best
        if self.options.write and best is not None and best.candidate is not None:
            data = best.candidate.code.encode("utf-8")
            write_atomically(source.path, (b"\xef\xbb\xbf" + data) if source.has_bom else data, source.raw_sha256)
            self.written = True
