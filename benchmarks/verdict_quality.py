"""How far coderefine's verdicts can be trusted, over the optimisation suite (issue 5's figures).

    python benchmarks/verdict_quality.py [SUITE] [--limit N] [--tasks A,B] [--sandbox process]
        [--mutants 3] [--timing-pairs 6] [--json out.json]

For every task of SUITE (default ../shared/bench/optimize) one Evaluator takes the baseline of
`solution.py`, exactly as `coderefine optimize` does, and judges these candidates with the optimize
task's scorer:

  (a) null:     the original itself;
  (b) comment:  the original with comments added (a different file, the same program);
  (c) reference: the task's expert `reference.py`;
  (d) mutants:  small behaviour-changing edits of the entry point (benchmarks/mutants.py); only those
                that an independent run on the recorded inputs tells apart from the original count.

and prints:
  - false-speedup rate on (a)+(b): accepted as faster (goal 0%);
  - detection rate on (c) where the reference is at least 2x faster in an independent measurement
    (goal 100%);
  - the median ratio between coderefine's reported speedup and the independent one, on (c);
  - false-accept rate on (d) (goal 0%);
  - wall time per candidate evaluation, by kind.

The independent measurement runs outside any sandbox: solution and reference alternate in fresh
processes (7 each), each timing repeated passes over the task's cases for at least 0.2 s and reporting
its median pass; the speedup is the ratio of the medians. Tasks run one at a time (they share module
names).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(REPO), str(HERE)]

from mutants import mutants  # noqa: E402

from coderefine.evaluation.evaluator import SandboxEvaluator  # noqa: E402
from coderefine.evaluation.project import resolve_project  # noqa: E402
from coderefine.evaluation.settings import EvaluationSettings  # noqa: E402
from coderefine.records import Baseline  # noqa: E402
from coderefine.refine.candidate import original_candidate  # noqa: E402
from coderefine.refine.scoring import SpeedupScorer  # noqa: E402
from coderefine.sandboxes.registry import make_sandbox  # noqa: E402
from coderefine.source import resolve_targets  # noqa: E402

DEFAULT_SUITE = REPO.parent / "shared" / "bench" / "optimize"

# Runs in a fresh interpreter: the median time of one pass over the cases, passes repeated for >= 0.2 s.
PROBE = r"""
import copy, importlib.util, pickle, statistics, sys, time
path, entry, cases_path = sys.argv[1:4]
spec = importlib.util.spec_from_file_location("probe_target", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
func = getattr(module, entry)
with open(cases_path, "rb") as fh:
    cases = pickle.load(fh)
passes, spent = [], 0.0
while spent < 0.2 or len(passes) < 3:
    inputs = [copy.deepcopy(args) for args, _ in cases]
    started = time.perf_counter()
    for args in inputs:
        try:
            func(*args)
        except Exception:
            pass
    passes.append(time.perf_counter() - started)
    spent += passes[-1]
print(statistics.median(passes))
"""


@dataclass
class Judged:
    task: str
    kind: str  # null, comment, reference, mutant
    accepted: bool
    reason: str
    speedup: float | None
    ci: list[float] | None
    seconds: float
    detail: str = ""


@dataclass
class TaskFigures:
    task: str
    calls_recorded: int
    independent_speedup: float | None
    judged: list[Judged] = field(default_factory=list)
    mutants_total: int = 0
    mutants_indistinguishable: int = 0
    error: str | None = None


def independent_speedup(task: Path, entry: str, rounds: int = 7) -> float:
    times: dict[str, list[float]] = {"solution": [], "reference": []}
    for k in range(rounds):
        order = ["solution", "reference"] if k % 2 == 0 else ["reference", "solution"]
        for name in order:
            out = subprocess.run(
                [sys.executable, "-c", PROBE, str(task / f"{name}.py"), entry, str(task / "cases.pkl")],
                capture_output=True,
                text=True,
                check=True,
                cwd=task,
            )
            times[name].append(float(out.stdout.strip()))
    return statistics.median(times["solution"]) / statistics.median(times["reference"])


def distinguishable(original: str, mutant: str, entry: str, cases_path: Path, timeout: float = 30) -> bool:
    """Whether the mutant's outcome differs from the original's on some of the task's inputs (outside any
    sandbox, in a fresh process with a time limit: a mutant may loop forever)."""
    script = r"""
import copy, pickle, sys
def outcome(code, entry, args):
    namespace = {"__name__": "mutant_check"}
    exec(compile(code, "<candidate>", "exec"), namespace)
    try:
        return ("return", namespace[entry](*copy.deepcopy(args)))
    except Exception as exc:
        return ("raise", type(exc).__name__)
original, mutant, entry, cases_path = sys.argv[1:5]
with open(original) as fh: original = fh.read()
with open(mutant) as fh: mutant = fh.read()
with open(cases_path, "rb") as fh: cases = pickle.load(fh)
for args, _ in cases:
    if outcome(original, entry, args) != outcome(mutant, entry, args):
        print("differs"); break
else:
    print("same")
"""
    with tempfile.TemporaryDirectory() as scratch:
        original_path, mutant_path = Path(scratch) / "o.py", Path(scratch) / "m.py"
        original_path.write_text(original)
        mutant_path.write_text(mutant)
        try:
            out = subprocess.run(
                [sys.executable, "-c", script, str(original_path), str(mutant_path), entry, str(cases_path)],
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=cases_path.parent,
            )
        except subprocess.TimeoutExpired:
            return True  # hangs where the original returns: any test run tells them apart
    return out.stdout.strip() != "same"


def comment_edit(code: str) -> str:
    """The same program with comments added on every function's first line and at the end."""
    lines = code.splitlines()
    edited = [line + "  # reviewed" if line.lstrip().startswith("def ") else line for line in lines]
    return "\n".join(edited) + "\n# end of module\n"


def evaluate_task(task: Path, args: argparse.Namespace) -> TaskFigures:
    info = json.loads((task / "task.json").read_text())
    entry = info["entry_point"]
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / task.name
        shutil.copytree(task, copy)
        target = copy / "solution.py"
        code = target.read_text(encoding="utf-8")
        figures = TaskFigures(task.name, 0, independent_speedup(copy, entry))
        settings = EvaluationSettings(measure_speed=True, timing_pairs=args.timing_pairs, min_speedup=0.05)
        evaluator = SandboxEvaluator(
            resolve_project(target), resolve_targets(code, None, target), make_sandbox(args.sandbox), settings
        )
        scorer = SpeedupScorer()
        try:
            facts = evaluator.baseline(code)
            figures.calls_recorded = facts.calls_recorded
            baseline = Baseline.scored(facts, 1.0)
            candidates = [
                ("null", code, ""),
                ("comment", comment_edit(code), ""),
                ("reference", (copy / "reference.py").read_text(encoding="utf-8"), ""),
            ]
            all_mutants = mutants(code, entry)
            figures.mutants_total = len(all_mutants)
            chosen = 0
            for mutant in all_mutants:
                if chosen >= args.mutants:
                    break
                if not distinguishable(code, mutant.code, entry, copy / "cases.pkl"):
                    figures.mutants_indistinguishable += 1
                    continue
                chosen += 1
                candidates.append(("mutant", mutant.code, mutant.description))
            for kind, candidate_code, detail in candidates:
                evaluation = evaluator.evaluate(original_candidate(candidate_code))
                verdict = scorer.judge(evaluation, baseline, candidate_code)
                timing = evaluation.timing
                figures.judged.append(
                    Judged(
                        task=task.name,
                        kind=kind,
                        accepted=verdict.accepted,
                        reason=verdict.reason,
                        speedup=timing.speedup if timing else None,
                        ci=[timing.ci_low, timing.ci_high] if timing else None,
                        seconds=evaluation.wall_seconds,
                        detail=detail,
                    )
                )
        except Exception as exc:  # one broken task must not end the benchmark
            figures.error = f"{type(exc).__name__}: {exc}"
        finally:
            evaluator.close()
    return figures


def rate(part: int, whole: int) -> str:
    return f"{part}/{whole} = {part / whole:.1%}" if whole else "n/a (0 cases)"


def summarise(results: list[TaskFigures]) -> dict[str, object]:
    judged = [j for figures in results for j in figures.judged]
    null_like = [j for j in judged if j.kind in ("null", "comment")]
    independent = {f.task: f.independent_speedup for f in results}
    references = [j for j in judged if j.kind == "reference"]
    headroom = [j for j in references if (independent[j.task] or 0) >= 2.0]
    ratios = [j.speedup / independent[j.task] for j in references if j.speedup and independent[j.task]]
    mutants_judged = [j for j in judged if j.kind == "mutant"]
    seconds = {
        kind: statistics.median([j.seconds for j in judged if j.kind == kind])
        for kind in ("null", "comment", "reference", "mutant")
        if any(j.kind == kind for j in judged)
    }
    return {
        "tasks": len(results),
        "tasks_failed": [f"{f.task}: {f.error}" for f in results if f.error],
        "false_speedup": rate(sum(j.accepted for j in null_like), len(null_like)),
        "false_speedups": [f"{j.task} {j.kind} {j.reason}" for j in null_like if j.accepted],
        "detection_at_2x": rate(sum(j.accepted for j in headroom), len(headroom)),
        "missed_references": [
            f"{j.task} (independent {independent[j.task]:.2f}x): {j.reason}" for j in headroom if not j.accepted
        ],
        "median_reported_over_independent": round(statistics.median(ratios), 3) if ratios else None,
        "reported_over_independent_range": [round(min(ratios), 3), round(max(ratios), 3)] if ratios else None,
        "false_accept_mutants": rate(sum(j.accepted for j in mutants_judged), len(mutants_judged)),
        "accepted_mutants": [f"{j.task} {j.detail}: {j.reason}" for j in mutants_judged if j.accepted],
        "mutants_indistinguishable_skipped": sum(f.mutants_indistinguishable for f in results),
        "median_seconds_per_evaluation": {kind: round(value, 2) for kind, value in seconds.items()},
        "median_seconds_per_evaluation_all": round(statistics.median([j.seconds for j in judged]), 2)
        if judged
        else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suite", nargs="?", type=Path, default=DEFAULT_SUITE)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--tasks", help="comma-separated task ids")
    parser.add_argument("--sandbox", default="process")
    parser.add_argument("--mutants", type=int, default=3, help="distinguishable mutants judged per task")
    parser.add_argument("--timing-pairs", type=int, default=6)
    parser.add_argument("--json", type=Path, help="write every verdict and the summary here")
    args = parser.parse_args()

    tasks = sorted(p for p in args.suite.iterdir() if (p / "task.json").is_file())
    if args.tasks:
        wanted = set(args.tasks.split(","))
        tasks = [t for t in tasks if t.name in wanted]
    tasks = tasks[: args.limit] if args.limit else tasks
    results: list[TaskFigures] = []
    started = time.perf_counter()
    for number, task in enumerate(tasks, 1):
        figures = evaluate_task(task, args)
        results.append(figures)
        verdicts = ", ".join(
            f"{j.kind}:{'ACCEPTED' if j.accepted else 'rejected'}"
            + (f"({j.speedup:.2f}x [{j.ci[0]:.2f},{j.ci[1]:.2f}])" if j.speedup and j.ci else "")
            for j in figures.judged
        )
        independent = f"{figures.independent_speedup:.2f}x" if figures.independent_speedup else "?"
        print(
            f"[{number}/{len(tasks)}] {task.name}: independent {independent}; {verdicts}"
            + (f"; ERROR {figures.error}" if figures.error else ""),
            flush=True,
        )
        if args.json:  # written as it goes: a long run interrupted keeps what it measured
            args.json.write_text(json.dumps({"tasks": [asdict(r) for r in results]}, indent=1))
    summary = summarise(results)
    summary["wall_seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "tasks": [asdict(r) for r in results]}, indent=1))


if __name__ == "__main__":
    main()
