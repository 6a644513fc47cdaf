"""One `coderefine optimize|readability FILE` run, from validated options to a Result.

Validation happens up front and in the order a user fixes things (file, function, script, tests), so
bad input fails in well under a second with one line, before any sandbox starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from coderefine.context import RunContext
from coderefine.errors import UsageError
from coderefine.evaluation import EvaluationSettings, Evaluator
from coderefine.loop import LoopObserver, LoopSettings, RefinementLoop
from coderefine.project import resolve_project
from coderefine.providers.base import Provider
from coderefine.providers.registry import make_provider
from coderefine.records import Result
from coderefine.sandboxes.base import looks_secret
from coderefine.sandboxes.registry import make_sandbox
from coderefine.source import is_script, read_source, resolve_targets
from coderefine.tasks import load_task, scorer_for
from coderefine.trace import TracingProvider
from coderefine.writeback import write_atomically


@dataclass(frozen=True)
class RunOptions:
    task: str
    file: Path
    function: str | None = None
    tests: Path | None = None
    root: Path | None = None
    provider: str = "offline"
    script: Path | None = None
    max_iterations: int | None = None
    patience: int | None = None
    max_calls: int | None = None
    min_speedup: float = 0.05
    write: bool = False
    trace: Path | None = None
    sandbox: str = "auto"
    timeout: float = 300.0
    memory_mb: int = 2048
    pass_env: tuple[str, ...] = ()
    timing_pairs: int = 6
    keep_workspaces: bool = False


def _check_numbers(options: RunOptions) -> None:
    if options.max_iterations is not None and options.max_iterations < 1:
        raise UsageError("--max-iterations must be at least 1")
    if options.patience is not None and options.patience < 1:
        raise UsageError("--patience must be at least 1")
    if options.max_calls is not None and options.max_calls < 1:
        raise UsageError("--max-calls must be at least 1")
    if options.timing_pairs < 2:
        raise UsageError("--timing-pairs must be at least 2 (an interval needs two pairs)")
    if options.timeout <= 0:
        raise UsageError("--timeout must be positive")
    if not 0 <= options.min_speedup < 10:
        raise UsageError("--min-speedup is a fraction, e.g. 0.05 for 5%")
    for name in options.pass_env:
        if looks_secret(name):
            raise UsageError(f"--pass-env {name}: refusing to pass what looks like a secret into the sandbox")


def prepare_result(options: RunOptions) -> Result:
    return Result(
        task=options.task,
        file=str(options.file),
        status="failed",
        stop_reason="",
        original_code="",
        baseline=None,
        best=None,
    )


def execute(options: RunOptions, result: Result, observer: LoopObserver | None = None) -> Result:
    """Run the loop, filling `result` in as it goes (the caller reports it even if this raises)."""
    _check_numbers(options)
    task = load_task(options.task)
    source = read_source(options.file)
    result.original_code = source.text
    targets = resolve_targets(source.text, options.function, options.file)
    provider: Provider = make_provider(options.provider, options.script)
    project = resolve_project(source.path, options.tests, options.root)
    sandbox = make_sandbox(options.sandbox)
    result.provider = provider.name
    result.sandbox = sandbox.name
    if sandbox.warning:
        result.warnings.append(sandbox.warning)
    if options.trace is not None:
        provider = TracingProvider(provider, options.trace)

    whole_module = options.function is None and is_script(source.text)
    context = RunContext(
        task=task.name,
        file=str(options.file),
        original_code=source.text,
        targets=targets,
        allowed=(targets if options.function is not None else None),
        whole_module=whole_module,
        offline_rules=task.offline_rules,
    )
    settings = EvaluationSettings(
        measure_speed=task.measure_speed,
        test_timeout=options.timeout,
        memory_mb=options.memory_mb,
        timing_pairs=options.timing_pairs,
        min_speedup=options.min_speedup,
        pass_env=options.pass_env,
        keep_workspaces=options.keep_workspaces,
    )
    evaluator = Evaluator(project, targets, sandbox, settings, with_bom=source.has_bom)
    loop = RefinementLoop(
        task,
        scorer_for(task),
        provider,
        evaluator,
        context,
        LoopSettings(
            max_iterations=options.max_iterations or task.max_iterations,
            patience=options.patience or task.patience,
            min_improvement=task.min_improvement,
            max_calls=options.max_calls,
        ),
        observer,
    )
    try:
        loop.run(result)
    finally:
        evaluator.close()
    best = result.best
    if options.write and best is not None and best.candidate is not None:
        data = best.candidate.code.encode("utf-8")
        write_atomically(source.path, (b"\xef\xbb\xbf" + data) if source.has_bom else data, source.raw_sha256)
        result.written = True
    return result
