"""What the audit hook (issue 13), or the reading of peak memory per call (issue 24, `--switch memory`),
costs the replay of recorded calls.

    python benchmarks/audit_cost.py [SUITE] [--every 8] [--repeats 9] [--switch audit|memory] [--json out.json]

For every chosen task of SUITE (default ../shared/bench/optimize, every 8th task in natural order), the
baseline is taken once (the tests run and their calls to the target are recorded, as `coderefine optimize`
does), then the replay step (`python -m coderefine_sandbox.behaviour.replay`) runs on the original
`--repeats` times with the audit hook and as many times without it (the step request's `audit` off),
alternating. Reported per task: the median of the replay's own figure (the first pass over the calls, the
audit windows included) and of the whole step's wall time, with and without, and their ratio. A last line
does the same for a synthetic worst case: 500 recorded calls of a function that does almost nothing, where
the per-call audit window weighs most. With `--switch memory` the audit hook stays on and the step
request's `memory` (the peak memory readings, behaviour/memory.py) is what is switched off and on.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(REPO)]

from coderefine.evaluation.evaluator import SandboxEvaluator  # noqa: E402
from coderefine.evaluation.project import resolve_project  # noqa: E402
from coderefine.evaluation.settings import EvaluationSettings  # noqa: E402
from coderefine.resources import load_sandbox_package, sandbox_dir  # noqa: E402
from coderefine.sandboxes.registry import make_sandbox  # noqa: E402
from coderefine.source import resolve_targets  # noqa: E402

load_sandbox_package()  # the sandbox's protocol, from the folder the sandbox runs it from
from coderefine_sandbox.protocol import BehaviorTolerances, ReplayRequest, write_json  # noqa: E402

DEFAULT_SUITE = REPO.parent / "shared" / "bench" / "optimize"
TINY = "def f(x):\n    return x + 1\n"
TINY_TEST = "from tiny import f\n\n\ndef test_f():\n    for n in range(500):\n        assert f(n) == n + 1\n"


def _replay(run_dir: Path, module: str, audit: bool, memory: bool = True) -> tuple[float, float]:
    """(the replay's first-pass seconds, the step's wall seconds) of one replay of the original."""
    io = run_dir / "io"
    out = io / f"cost-{audit}-{memory}.json"
    request = io / f"cost-{audit}-{memory}.request.json"
    step = ReplayRequest(
        workspace=str(run_dir / "original"),
        module=module,
        import_root="",
        calls=str(io / "calls.pkl"),
        exclude=str(io / "unstable.json"),
        out=str(out),
        tolerances=BehaviorTolerances(rel_tol=1e-9, abs_tol=0.0, unordered=()),
        profile=False,
        original_workspace=None,
        audit=audit,
        memory=memory,
    )
    write_json(str(request), step)
    argv = [sys.executable, "-m", "coderefine_sandbox.behaviour.replay", str(request)]
    tmp = io / "tmp"
    tmp.mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(sandbox_dir()), "TMPDIR": str(tmp), "PYTHONDONTWRITEBYTECODE": "1"}
    started = time.perf_counter()
    subprocess.run(argv, cwd=run_dir / "original", env=env, check=True, capture_output=True, timeout=300)
    wall = time.perf_counter() - started
    return float(json.loads(out.read_text())["seconds"]), wall


def measure(folder: Path, module_file: str, repeats: int, switch: str = "audit") -> dict[str, float]:
    target = folder / module_file
    code = target.read_text(encoding="utf-8")
    settings = EvaluationSettings(measure_speed=False, keep_workspaces=True)
    targets = resolve_targets(code, None, target)
    evaluator = SandboxEvaluator(resolve_project(target), targets, make_sandbox("process"), settings)
    try:
        evaluator.baseline(code)
        figures: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        for _ in range(repeats):
            for on in (False, True):
                audit, memory = (on, True) if switch == "audit" else (True, on)
                figures[on].append(_replay(evaluator.run_dir, target.stem, audit, memory))
    finally:
        evaluator.close()
        shutil.rmtree(evaluator.run_dir, ignore_errors=True)
    found = {}
    for index, name in enumerate(("replay", "wall")):
        without = statistics.median(f[index] for f in figures[False])
        with_hook = statistics.median(f[index] for f in figures[True])
        found[f"{name}_without"] = round(without, 6)
        found[f"{name}_with"] = round(with_hook, 6)
        found[f"{name}_ratio"] = round(with_hook / without, 3)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suite", nargs="?", type=Path, default=DEFAULT_SUITE)
    parser.add_argument("--every", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--switch", choices=("audit", "memory"), default="audit", help="what is switched off and on")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    tasks = sorted(
        (p for p in args.suite.iterdir() if (p / "task.json").is_file()),
        key=lambda p: [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", p.name)],
    )[:: args.every]
    results: dict[str, dict[str, float]] = {}
    for task in tasks:
        with tempfile.TemporaryDirectory() as scratch:
            copy = Path(scratch) / task.name
            shutil.copytree(task, copy, ignore=shutil.ignore_patterns("reference.py"))
            results[task.name] = measure(copy, "solution.py", args.repeats, args.switch)
        print(task.name, results[task.name], flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "tiny"
        folder.mkdir()
        (folder / "tiny.py").write_text(TINY)
        (folder / "test_tiny.py").write_text(TINY_TEST)
        results["worst case: 500 calls of x + 1"] = measure(folder, "tiny.py", args.repeats, args.switch)
    print("worst case", results["worst case: 500 calls of x + 1"])
    tasks_only = [v for k, v in results.items() if not k.startswith("worst")]
    summary = {
        name: round(statistics.median(v[name] for v in tasks_only), 3) for name in ("replay_ratio", "wall_ratio")
    }
    print("median over the tasks:", summary)
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "tasks": results}, indent=1))


if __name__ == "__main__":
    main()
