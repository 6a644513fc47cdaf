"""`coderefine replay DIR`: rerun a traced run with its recorded answers (no model, no network, no cost)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coderefine.commands.runs import Output, run_and_report, settings_start
from coderefine.errors import CoderefineError
from coderefine.refine.run import RunOptions
from coderefine.refine.trace import read_run_record
from coderefine.settings import resolve_settings


def replay(trace_dir: Path, where: Mapping[str, Any], output: Output, report: Path | None = None) -> int:
    """Rerun the run traced in `trace_dir`; `where` holds the two settings a replay may change, the sandbox
    and its image (None: as resolved for the traced file)."""

    def options() -> RunOptions:
        record = read_run_record(trace_dir)
        flags = {**record.settings, "provider": "scripted", "sandbox": where["sandbox"], "image": where["image"]}
        return RunOptions(
            task=record.task,
            file=record.file,
            settings=resolve_settings(flags, settings_start(record.file)),
            function=record.function,
            tests=record.tests,
            root=record.root,
            script=record.script,
            pass_env=record.pass_env,
            expected_sha256=record.file_sha256,
            bench=record.bench,
        )

    task, file = "optimize", str(trace_dir)
    try:
        record = read_run_record(trace_dir)
        task, file = record.task, str(record.file)
    except CoderefineError:
        pass  # reported by the run itself, with the report written
    return run_and_report(task, file, options, output, report)
