"""`coderefine bench`: check the arguments, run the suite with a progress bar, write the reports.

Bad input fails up front, in a second, with one line: the task type, the numbers, the script folder, the
provider's settings and every task folder are checked before the first task runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console

from coderefine.bench.html import render_html
from coderefine.bench.report import BenchInfo, bench_dict, bench_table, record_line, render_bench_json, summary_lines
from coderefine.bench.results import TaskRecord
from coderefine.bench.runner import BenchOptions, BenchRequest, StateFile, default_state_path, run_bench, state_key
from coderefine.bench.suite import load_suite
from coderefine.errors import BadScript, BadSuite, ExitCode, UsageError, WriteConflict
from coderefine.providers.registry import choose_provider, make_provider
from coderefine.refine.tasks import available_tasks, load_task
from coderefine.reports.console import task_progress
from coderefine.sandboxes.base import refuse_secrets
from coderefine.settings import Settings, resolve_settings
from coderefine.writeback import write_text_atomically


def _check_arguments(
    task: str | None,
    jobs: int,
    limit: int | None,
    oracle: bool,
    flags: Mapping[str, Any],
    script_dir: Path | None,
    pass_env: tuple[str, ...],
) -> str:
    if task is None:
        raise UsageError(f"--task is required: one of {', '.join(available_tasks())}")
    load_task(task)  # an unknown task is a usage error naming the known ones
    if jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {jobs}")
    if limit is not None and limit < 1:
        raise UsageError(f"--limit must be at least 1, not {limit}")
    if oracle and (script_dir is not None or flags.get("provider") is not None):
        raise UsageError("--oracle offers each task's reference.py itself; it takes no --provider or --script-dir")
    if script_dir is not None:
        if flags.get("provider") not in (None, "scripted"):
            raise UsageError("--script-dir is only used with --provider scripted")
        if not script_dir.exists():
            raise BadScript(f"{script_dir}: no such script folder")
        if not script_dir.is_dir():
            raise BadScript(f"{script_dir}: not a folder; --script-dir holds one <task id>.json per task")
    refuse_secrets(pass_env)
    return task


def _provider(settings: Settings, oracle: bool, script_dir: Path | None) -> tuple[str, str | None]:
    """The provider's name for the report, after checking up front that it can be made (an openai run
    without a key fails here, once, rather than in every task)."""
    if oracle:
        return "oracle", None
    name = choose_provider(settings, script_dir).name
    if name == "scripted":
        if script_dir is None:
            raise BadScript("--provider scripted needs --script-dir DIR (one <task id>.json per task)")
        return name, None
    provider = make_provider(name, settings)
    return name, getattr(provider, "description", None)


def run_bench_command(
    args: BenchRequest, console: Console, report: Path | None = None, html: Path | None = None, quiet: bool = False
) -> int:
    """The exit code: 0 when every selected task finished (improved, unchanged or failed), 130 when
    interrupted (finished tasks stay saved)."""
    suite_dir, script_dir, oracle, jobs = args.suite_dir, args.script_dir, args.oracle, args.jobs
    flags = dict(args.flags)
    task = _check_arguments(args.task, jobs, args.limit, oracle, flags, script_dir, args.pass_env)
    if oracle or script_dir is not None:
        flags["provider"] = "scripted"
    settings = resolve_settings(flags, Path.cwd())
    provider, model = _provider(settings, oracle, script_dir)
    tasks = load_suite(suite_dir, args.limit)
    if oracle and all(t.reference is None for t in tasks):
        raise BadSuite(f"{suite_dir}: no task has a reference.py, so --oracle has nothing to offer")
    key = state_key(suite_dir, task, settings, script_dir, oracle, args.pass_env)
    state_file = StateFile(args.state or default_state_path(key, Path.cwd()), key)
    options = BenchOptions(args, task, settings, tasks, state_file)

    progress = task_progress(console, quiet=quiet)
    title = f"bench {task} ({provider}, {jobs} job{'s' if jobs != 1 else ''})"
    bar = progress.add_task(title, total=len(tasks))

    def on_start(task_id: str) -> None:
        progress.update(bar, description=f"{title}: {task_id}")

    def on_done(record: TaskRecord, done: int, total: int) -> None:
        progress.update(bar, completed=done)
        if not quiet:
            progress.console.print(record_line(task, record), highlight=False, soft_wrap=True)

    if not quiet:
        console.print(
            f"bench: {len(tasks)} tasks from {suite_dir}; state {state_file.path}", highlight=False, soft_wrap=True
        )
    with progress:
        run = run_bench(options, on_done, on_start)
    if run.interrupted:
        console.print(
            f"interrupted: {len(run.records)} finished tasks kept in {state_file.path}; rerun the same command to "
            f"continue ({len(run.pending)} left)",
            highlight=False,
            soft_wrap=True,
        )
        return int(ExitCode.INTERRUPTED)

    sandboxes = sorted({r.sandbox for r in run.records if r.sandbox})
    info = BenchInfo(
        suite=str(suite_dir),
        task=task,
        provider=provider,
        model=model,
        script_dir=str(script_dir) if script_dir is not None else None,
        jobs=jobs,
        sandbox=", ".join(sandboxes) or settings.sandbox,
        settings=dict(sorted(settings.as_dict().items())),
        state=str(state_file.path),
    )
    data = bench_dict(info, run)
    if not quiet:
        console.print(bench_table(task, run.records))
    for line in summary_lines(data):
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    for path, text in ((report, render_bench_json(data)), (html, render_html(data))):
        if path is None:
            continue
        try:
            write_text_atomically(path, text)
        except OSError as exc:
            raise WriteConflict(f"cannot write the report to {path}: {exc.strerror}") from None
    return 0
