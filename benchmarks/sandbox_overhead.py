"""What a sandbox costs per candidate evaluation, against running the same tests once outside any sandbox.

    python benchmarks/sandbox_overhead.py [TASK_DIR] [--runs 7] [--backends process,docker,subprocess]

TASK_DIR is a project whose `solution.py` is the target (default: ../shared/bench/optimize/HumanEval_10).
For each backend it starts one Evaluator (one container per run for Docker, as in a real run), takes the
baseline, then evaluates the same candidate (the original with a comment added: a full evaluation —
tests in a fresh workspace copy plus the replay of every recorded call — but no timing, which would
dominate and is the same work in every backend) `--runs` times. "bare" is `python -m pytest -q` in a
copy of the project, outside any sandbox. Runs are interleaved (bare, then each backend, repeated), so
the machine's load changing over time hits every column alike. Medians are printed, with the overhead.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from coderefine.evaluation.evaluator import SandboxEvaluator  # noqa: E402
from coderefine.evaluation.project import resolve_project  # noqa: E402
from coderefine.evaluation.settings import EvaluationSettings  # noqa: E402
from coderefine.refine.candidate import original_candidate  # noqa: E402
from coderefine.sandboxes.registry import make_sandbox  # noqa: E402
from coderefine.source import resolve_targets  # noqa: E402

DEFAULT_TASK = REPO.parent / "shared" / "bench" / "optimize" / "HumanEval_10"


def bare_seconds(project: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project, check=True, capture_output=True
    )
    return time.perf_counter() - started


def start_backend(project: Path, backend: str) -> tuple[SandboxEvaluator, float]:
    """An evaluator with its baseline taken, and the seconds that took (sandbox start included)."""
    target = project / "solution.py"
    code = target.read_text(encoding="utf-8")
    started = time.perf_counter()
    evaluator = SandboxEvaluator(
        resolve_project(target),
        resolve_targets(code, None, target),
        make_sandbox(backend),
        EvaluationSettings(measure_speed=False),
    )
    evaluator.baseline(code)
    return evaluator, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task", nargs="?", type=Path, default=DEFAULT_TASK)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--backends", default="process,docker,subprocess")
    args = parser.parse_args()
    backends = args.backends.split(",")
    with tempfile.TemporaryDirectory() as scratch:
        project = Path(scratch) / args.task.name
        shutil.copytree(args.task, project)
        candidate = original_candidate((project / "solution.py").read_text(encoding="utf-8") + "# a no-op edit\n")
        evaluators: dict[str, SandboxEvaluator] = {}
        startup: dict[str, float] = {}
        times: dict[str, list[float]] = {name: [] for name in ["bare", *backends]}
        try:
            for backend in backends:
                evaluators[backend], startup[backend] = start_backend(project, backend)
            # Interleaved, so that a change in the machine's load affects every column alike.
            for _ in range(args.runs):
                times["bare"].append(bare_seconds(project))
                for backend, evaluator in evaluators.items():
                    evaluation = evaluator.evaluate(candidate)
                    if evaluation.error or evaluation.tests is None or not evaluation.tests.all_passed:
                        raise SystemExit(f"{backend}: the unchanged candidate did not pass: {evaluation.error}")
                    times[backend].append(evaluation.wall_seconds)
        finally:
            for evaluator in evaluators.values():
                evaluator.close()
    bare = statistics.median(times["bare"])
    print(f"task {args.task.name}, {args.runs} interleaved runs, medians")
    print(f"{'bare pytest':<32} {bare:7.3f} s")
    for backend in backends:
        median = statistics.median(times[backend])
        print(
            f"{backend + ' candidate evaluation':<32} {median:7.3f} s   overhead {median - bare:+.3f} s "
            f"({median / bare:.2f}x bare; min {min(times[backend]):.3f}, max {max(times[backend]):.3f}); "
            f"sandbox start + baseline {startup[backend]:.2f} s"
        )


if __name__ == "__main__":
    main()
