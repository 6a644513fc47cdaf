"""What boundary inputs (variants of the recorded calls the tests never tried) cost and catch, over the
optimisation suite.

    python benchmarks/boundary_inputs.py [SUITE] [--tasks A,B] [--limit N] [--mutants 3] [--json out.json]

For every task of SUITE (default ../shared/bench/optimize), one at a time (tasks share module names), one
Evaluator takes the baseline of `solution.py` without timing (boundary variants are a correctness condition;
timing adds nothing to it) and judges:

  - the task's `reference.py`, correct on the task's valid inputs: a rejection by a boundary variant is a
    false rejection (goal 0), printed with its counterexample;
  - the first `--mutants` mutants of the entry point (benchmarks/mutants.py) that the task's cases (its
    tests' inputs) do not tell apart from the original in an independent run (the others fail the tests):
    those that pass the
    tests and replay the recorded calls identically but differ on a boundary variant are the ones boundary
    inputs newly catch.

and prints, per task and in total: variants kept (and left out: the original raises, slow, not
deterministic), the baseline's seconds spent on them, the candidates' median seconds replaying them,
references refused, mutants accepted by the recorded calls and, of those, caught by boundary variants.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(REPO), str(HERE)]

from mutants import mutants  # noqa: E402
from verdict_quality import distinguishable  # noqa: E402

from coderefine.evaluation.evaluator import SandboxEvaluator  # noqa: E402
from coderefine.evaluation.project import resolve_project  # noqa: E402
from coderefine.evaluation.settings import EvaluationSettings  # noqa: E402
from coderefine.evaluation.verdicts import correctness_problem  # noqa: E402
from coderefine.refine.candidate import original_candidate  # noqa: E402
from coderefine.sandboxes.registry import make_sandbox  # noqa: E402
from coderefine.source import resolve_targets  # noqa: E402

DEFAULT_SUITE = REPO.parent / "shared" / "bench" / "optimize"


@dataclass
class TaskFigures:
    task: str
    kept: int = 0
    derived: int = 0
    raised: int = 0
    slow: int = 0
    not_deterministic: int = 0
    baseline_seconds: float = 0.0
    reference_refused: str | None = None  # the counterexample
    reference_problem: str | None = None  # any other reason the reference was rejected
    mutants: int = 0
    mutants_unseen: int = 0  # the task's cases do not tell them apart from the original
    mutants_past_recorded: int = 0  # pass the tests and the recorded calls
    mutants_caught: list[str] = field(default_factory=list)  # of those, refused by a boundary variant
    replay_seconds: list[float] = field(default_factory=list)
    error: str | None = None
    wall: float = 0.0


def evaluate_task(task: Path, most_mutants: int) -> TaskFigures:
    figures = TaskFigures(task.name)
    started = time.perf_counter()
    entry = json.loads((task / "task.json").read_text())["entry_point"]
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / task.name
        shutil.copytree(task, copy)
        target = copy / "solution.py"
        code = target.read_text(encoding="utf-8")
        settings = EvaluationSettings(measure_speed=False)
        evaluator = SandboxEvaluator(
            resolve_project(target), resolve_targets(code, None, target), make_sandbox("process"), settings
        )
        try:
            facts = evaluator.baseline(code)
            boundary = facts.boundary
            if boundary is not None:
                figures.kept, figures.derived, figures.raised = boundary.calls, boundary.derived, boundary.raised
                figures.slow = boundary.slow
                figures.not_deterministic = boundary.not_deterministic + boundary.unstable
                figures.baseline_seconds = boundary.seconds
                figures.error = boundary.error
            reference = evaluator.evaluate(original_candidate((copy / "reference.py").read_text(encoding="utf-8")))
            problem = correctness_problem(reference)
            if reference.behavior is not None and reference.behavior.boundary_mismatches:
                figures.reference_refused = problem
            elif problem is not None:
                figures.reference_problem = problem
            if reference.behavior is not None:
                figures.replay_seconds.append(reference.behavior.boundary_seconds)
            found = mutants(code, entry)
            figures.mutants = len(found)
            for mutant in found:
                if figures.mutants_unseen >= most_mutants:
                    break
                if distinguishable(code, mutant.code, entry, copy / "cases.pkl"):
                    continue  # the tests fail it: nothing left for boundary inputs to catch
                figures.mutants_unseen += 1
                evaluation = evaluator.evaluate(original_candidate(mutant.code))
                behavior = evaluation.behavior
                tests = evaluation.tests
                if tests is None or not tests.all_passed or behavior is None or behavior.mismatches:
                    continue
                if evaluation.error is not None and not behavior.boundary_mismatches:
                    continue
                figures.mutants_past_recorded += 1
                figures.replay_seconds.append(behavior.boundary_seconds)
                if behavior.boundary_mismatches:
                    figures.mutants_caught.append(f"{mutant.description}: {correctness_problem(evaluation)}")
        except Exception as exc:  # one broken task must not end the benchmark
            figures.error = f"{type(exc).__name__}: {exc}"
        finally:
            evaluator.close()
    figures.wall = time.perf_counter() - started
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", nargs="?", type=Path, default=DEFAULT_SUITE)
    parser.add_argument("--tasks", default="")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--mutants", type=int, default=3, help="most mutants the cases do not tell apart, per task")
    args = parser.parse_args(argv)
    tasks = sorted(p for p in args.suite.iterdir() if (p / "task.json").exists())
    if args.tasks:
        wanted = set(args.tasks.split(","))
        tasks = [t for t in tasks if t.name in wanted]
    if args.limit:
        tasks = tasks[: args.limit]
    results = []
    for task in tasks:
        figures = evaluate_task(task, args.mutants)
        results.append(figures)
        refused = f" REFERENCE REFUSED: {figures.reference_refused}" if figures.reference_refused else ""
        other = f" (reference rejected otherwise: {figures.reference_problem})" if figures.reference_problem else ""
        print(
            f"{task.name}: kept {figures.kept}/{figures.derived} (raised {figures.raised}, slow {figures.slow}, "
            f"not deterministic {figures.not_deterministic}) in {figures.baseline_seconds:.2f} s; mutants "
            f"{len(figures.mutants_caught)}/{figures.mutants_past_recorded} past the recorded calls caught "
            f"({figures.mutants_unseen} of {figures.mutants} not told apart by the cases); {figures.wall:.0f} s"
            + refused
            + other
            + (f" ERROR {figures.error}" if figures.error else ""),
            flush=True,
        )
        for caught in figures.mutants_caught:
            print(f"    caught {caught}", flush=True)
    replay = [s for f in results for s in f.replay_seconds]
    summary = {
        "tasks": len(results),
        "references_refused": [f.task for f in results if f.reference_refused],
        "references_rejected_otherwise": [f.task for f in results if f.reference_problem],
        "mutants": sum(f.mutants for f in results),
        "mutants_unseen_by_cases": sum(f.mutants_unseen for f in results),
        "mutants_past_recorded": sum(f.mutants_past_recorded for f in results),
        "mutants_caught": sum(len(f.mutants_caught) for f in results),
        "variants_kept_median": statistics.median([f.kept for f in results]) if results else 0,
        "baseline_seconds_median": statistics.median([f.baseline_seconds for f in results]) if results else 0,
        "baseline_seconds_max": max((f.baseline_seconds for f in results), default=0),
        "candidate_replay_seconds_median": statistics.median(replay) if replay else 0,
        "candidate_replay_seconds_max": max(replay, default=0),
        "errors": {f.task: f.error for f in results if f.error},
    }
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "tasks": [asdict(f) for f in results]}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
