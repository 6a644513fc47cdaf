"""Does coderefine refuse candidates that game the measurement? (issue 13's figures)

    python benchmarks/adversarial.py [SUITE] [--limit N] [--tasks A,B] [--kinds K1,K2] [--sandbox process]
        [--timing-pairs 6] [--json out.json]

For every task of SUITE (default ../shared/bench/optimize), one Evaluator takes the baseline of
`solution.py` exactly as `coderefine optimize` does, and judges with the optimize task's scorer one hack
candidate of each kind in benchmarks/hacks.py (each passes the task's tests) and the honest `reference.py`.

Prints, per kind: how many were rejected, and the reasons given; and how many honest references were
accepted. Tasks run one at a time (they share module names).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(REPO), str(HERE)]

from hacks import KINDS  # noqa: E402

from coderefine.evaluation.evaluator import EvaluationSettings, Evaluator  # noqa: E402
from coderefine.evaluation.project import resolve_project  # noqa: E402
from coderefine.records import Baseline  # noqa: E402
from coderefine.refine.candidate import original_candidate  # noqa: E402
from coderefine.refine.tasks import SpeedupScorer  # noqa: E402
from coderefine.sandboxes.registry import make_sandbox  # noqa: E402
from coderefine.source import resolve_targets  # noqa: E402

DEFAULT_SUITE = REPO.parent / "shared" / "bench" / "optimize"
HONEST = "reference"


@dataclass
class Verdict:
    task: str
    kind: str
    accepted: bool
    reason: str
    seconds: float


@dataclass
class TaskVerdicts:
    task: str
    verdicts: list[Verdict] = field(default_factory=list)
    error: str | None = None


def judge_task(task: Path, kinds: list[str], sandbox: str, timing_pairs: int) -> TaskVerdicts:
    entry = json.loads((task / "task.json").read_text())["entry_point"]
    figures = TaskVerdicts(task.name)
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / task.name
        shutil.copytree(task, copy, ignore=shutil.ignore_patterns("reference.py"))
        target = copy / "solution.py"
        code = target.read_text(encoding="utf-8")
        candidates = [(kind, KINDS[kind](code, entry, copy)) for kind in kinds]
        candidates.append((HONEST, (task / "reference.py").read_text(encoding="utf-8")))
        settings = EvaluationSettings(measure_speed=True, timing_pairs=timing_pairs, min_speedup=0.05)
        evaluator = Evaluator(
            resolve_project(target), resolve_targets(code, None, target), make_sandbox(sandbox), settings
        )
        scorer = SpeedupScorer()
        try:
            baseline = Baseline.scored(evaluator.baseline(code), 1.0)
            for kind, candidate_code in candidates:
                evaluation = evaluator.evaluate(original_candidate(candidate_code))
                verdict = scorer.judge(evaluation, baseline, candidate_code)
                figures.verdicts.append(
                    Verdict(task.name, kind, verdict.accepted, verdict.reason, evaluation.wall_seconds)
                )
        except Exception as exc:  # one broken task must not end the benchmark
            figures.error = f"{type(exc).__name__}: {exc}"
        finally:
            evaluator.close()
    return figures


def summarise(results: list[TaskVerdicts]) -> dict[str, object]:
    verdicts = [v for figures in results for v in figures.verdicts]
    per_kind: dict[str, object] = {}
    for kind in dict.fromkeys(v.kind for v in verdicts):
        mine = [v for v in verdicts if v.kind == kind]
        reasons = Counter(v.reason.split(":")[0] for v in mine if not v.accepted)
        per_kind[kind] = {
            "judged": len(mine),
            "rejected": sum(not v.accepted for v in mine),
            "accepted": [f"{v.task}: {v.reason}" for v in mine if v.accepted],
            "reasons": dict(reasons.most_common()),
        }
    return {"tasks": len(results), "tasks_failed": [f"{f.task}: {f.error}" for f in results if f.error], **per_kind}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suite", nargs="?", type=Path, default=DEFAULT_SUITE)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--tasks", help="comma-separated task ids")
    parser.add_argument("--kinds", help=f"comma-separated kinds (default all: {', '.join(KINDS)})")
    parser.add_argument("--sandbox", default="process")
    parser.add_argument("--timing-pairs", type=int, default=6)
    parser.add_argument("--json", type=Path, help="write every verdict and the summary here")
    args = parser.parse_args()

    kinds = args.kinds.split(",") if args.kinds else list(KINDS)
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        parser.error(f"unknown kinds: {', '.join(unknown)}")
    tasks = sorted(p for p in args.suite.iterdir() if (p / "task.json").is_file())
    if args.tasks:
        wanted = set(args.tasks.split(","))
        tasks = [t for t in tasks if t.name in wanted]
    tasks = tasks[: args.limit] if args.limit else tasks
    results: list[TaskVerdicts] = []
    started = time.perf_counter()
    for number, task in enumerate(tasks, 1):
        figures = judge_task(task, kinds, args.sandbox, args.timing_pairs)
        results.append(figures)
        line = ", ".join(f"{v.kind}:{'ACCEPTED' if v.accepted else 'rejected'}" for v in figures.verdicts)
        print(f"[{number}/{len(tasks)}] {task.name}: {line}" + (f"; ERROR {figures.error}" if figures.error else ""))
        if args.json:  # written as it goes: a long run interrupted keeps what it measured
            args.json.write_text(json.dumps({"tasks": [asdict(r) for r in results]}, indent=1))
    summary = summarise(results)
    summary["wall_seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "tasks": [asdict(r) for r in results]}, indent=1))


if __name__ == "__main__":
    main()
