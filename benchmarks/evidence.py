"""What the sufficiency gate sees on benchmark tasks: calls and line coverage per task, and its verdict.

    python benchmarks/evidence.py ../shared/bench/optimize [TASK ...] [--limit N] [--sandbox process]

Runs only the baseline of each task (the original's tests with the calls recorded and the targets' lines
measured, then the original replayed on its recording), never a model and never timing, with the default
`min_calls` / `min_coverage`. Optimize tasks are gated on their entry point (`task.json`), as
`--function` would; the others on every function of `solution.py`. Tasks run one at a time: they share
module names.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from coderefine.evaluation.evaluator import SandboxEvaluator
from coderefine.evaluation.project import resolve_project
from coderefine.evaluation.settings import EvaluationSettings
from coderefine.sandboxes.registry import make_sandbox
from coderefine.setting_specs import SPEC_BY_NAME
from coderefine.source import resolve_targets, runs_as_program


def task_evidence(folder: Path, sandbox_name: str) -> dict[str, object]:
    module = folder / "solution.py"
    code = module.read_text(encoding="utf-8")
    meta = json.loads((folder / "task.json").read_text(encoding="utf-8")) if (folder / "task.json").is_file() else {}
    function = meta.get("entry_point")
    targets = resolve_targets(code, function, module)
    settings = EvaluationSettings(
        measure_speed=False,
        min_calls=SPEC_BY_NAME["min_calls"].default,
        min_coverage=SPEC_BY_NAME["min_coverage"].default,
        script=function is None and runs_as_program(code),
    )
    evaluator = SandboxEvaluator(
        resolve_project(module, None, None), targets, make_sandbox(sandbox_name, None), settings
    )
    started = time.perf_counter()
    try:
        facts = evaluator.baseline(code)
    finally:
        evaluator.close()
    gate = facts.sufficiency
    assert gate is not None
    return {
        "task": folder.name,
        "targets": ",".join(targets) or "-",
        "calls": sum(e.calls for e in facts.evidence),
        "usable": gate.calls,
        "covered": f"{gate.covered}/{gate.lines}",
        "coverage": f"{gate.coverage:.0%}" if gate.coverage is not None else "-",
        "verdict": "n/a (program)" if not gate.applies else ("sufficient" if gate.sufficient else "INSUFFICIENT"),
        "missed": {e.target: list(e.missed_lines) for e in facts.evidence if e.missed_lines},
        "seconds": round(time.perf_counter() - started, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", type=Path)
    parser.add_argument("tasks", nargs="*")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--sandbox", default="process")
    args = parser.parse_args(argv)
    names = args.tasks or sorted(p.name for p in args.suite.iterdir() if (p / "solution.py").is_file())
    rows = [task_evidence(args.suite / name, args.sandbox) for name in names[: args.limit]]
    columns = ("task", "targets", "calls", "usable", "covered", "coverage", "verdict", "seconds")
    print(" | ".join(columns))
    for row in rows:
        print(" | ".join(str(row[c]) for c in columns) + (f"  missed lines: {row['missed']}" if row["missed"] else ""))
    blocked = sum(row["verdict"] == "INSUFFICIENT" for row in rows)
    print(
        f"{len(rows)} tasks, {blocked} insufficient at min_calls={SPEC_BY_NAME['min_calls'].default}, "
        f"min_coverage={SPEC_BY_NAME['min_coverage'].default}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
