"""A whole project swept: scan ranks its functions, sweep refines the hottest with the offline provider,
sequentially, with `--engine local` and with `--engine ray` on a two-node local cluster; same verdicts?

    .venv/bin/python benchmarks/sweep.py [--modules 50] [--top 6] [--engines sequential,local,ray]
                                         [--timing-pairs 3] [--json FILE] [--keep DIR]
                                         [--project DIR --paths PKG]

The project is built from ../shared/bench/optimize: each task's solution.py becomes a module of one package
(`sweepbench/he_<n>.py`), each test file a test of one test tree (`tests/test_he_<n>.py`, importing the
module from the package, its cases under tests/data/). The cheapest tasks by the suite's own timing are
taken first, plus the ones with the most headroom, up to --modules modules. `--project DIR --paths PKG`
sweeps a copy of a real project instead (e.g. an sdist unpacked by benchmarks/real_projects.py, its test
dependencies installed), PKG being what scan and sweep get as PATHS.

Figures: the scan's wall time, functions found, judgeable, and the top of the ranking; per engine: the
sweep's wall time, functions improved, each function's verdict (status and the verified code's hash), and
for Ray the placement trace (functions per node, timing overlaps per node: must be none). The load average
is printed before and after: on a shared machine the figures are only as good as it was quiet.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SUITE = Path(os.environ.get("CODEREFINE_BENCH") or REPO.parent / "shared" / "bench") / "optimize"
HOT = ("HumanEval_63", "HumanEval_59", "HumanEval_10", "HumanEval_150")


def choose_tasks(count: int) -> list[Path]:
    tasks = [p for p in sorted(SUITE.iterdir()) if (p / "task.json").is_file()]
    info = {p.name: json.loads((p / "task.json").read_text()) for p in tasks}
    hot = [p for p in tasks if p.name in HOT]
    cheap = sorted((p for p in tasks if p.name not in HOT), key=lambda p: info[p.name]["slow_s"])
    return (hot + cheap)[:count]


def build_project(tasks: list[Path], root: Path) -> Path:
    package, tests, data = root / "sweepbench", root / "tests", root / "tests" / "data"
    for folder in (package, data):
        folder.mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "sweepbench"\nversion = "0"\n')
    (package / "__init__.py").write_text("")
    (tests / "__init__.py").write_text("")
    for task in tasks:
        name = "he_" + task.name.split("_", 1)[1]
        (package / f"{name}.py").write_text((task / "solution.py").read_text())
        shutil.copy(task / "cases.pkl", data / f"{name}.pkl")
        test = (task / "test_solution.py").read_text()
        test = test.replace("from solution import", f"from sweepbench.{name} import")
        test = test.replace('_HERE / "cases.pkl"', f'_HERE / "data" / "{name}.pkl"')
        (tests / f"test_{name}.py").write_text(test)
    return root


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def coderefine(*args: str, cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CODEREFINE_"))}
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "coderefine", *args],
        cwd=cwd,
        env={**env, "COLUMNS": "160"},
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"coderefine {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr}")
    return elapsed, proc


def verdicts(report: dict[str, Any]) -> dict[str, str]:
    return {
        o["key"]: o["status"]
        + (" " + hashlib.sha256(o["best_code"].encode()).hexdigest()[:10] if o["best_code"] else "")
        for o in report["functions"]
    }


def sweep(root: Path, engine: str, args: argparse.Namespace, scan_report: Path, extra: list[str]) -> dict[str, Any]:
    report = root.parent / f"sweep-{engine}.json"
    options = ["sweep", args.paths, "--top", str(args.top), "--provider", "offline", "--fresh"]
    options += ["--timing-pairs", str(args.timing_pairs), "--sandbox", args.sandbox, "--report", str(report)]
    options += ["--state", str(root.parent / f"state-{engine}.jsonl"), "--from-scan", str(scan_report)]
    options += ["--max-iterations", str(args.max_iterations), *extra]
    before = load()
    wall, _ = coderefine(*options, cwd=root)
    data = json.loads(report.read_text())
    return {
        "engine": engine,
        "description": data["engine_description"],
        "wall_seconds": round(wall, 1),
        "improved": data["summary"]["improved"],
        "finished": data["summary"]["finished"],
        "functions_per_node": data["summary"]["functions_per_node"],
        "timing_overlaps": data["summary"]["timing_overlaps"],
        "verdicts": verdicts(data),
        "load_before": before,
        "load_after": load(),
        "trace": [
            {
                "function": o["key"],
                "node": o["placement"]["node"][:12],
                "pid": o["placement"]["pid"],
                "start": round(o["placement"]["started"], 2),
                "end": round(o["placement"]["ended"], 2),
                "timing": [[round(a, 2), round(b, 2)] for a, b in o["placement"]["timing"]],
            }
            for o in data["functions"]
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--modules", type=int, default=50)
    parser.add_argument("--top", type=int, default=4)
    parser.add_argument("--engines", default="sequential,local,ray")
    parser.add_argument("--timing-pairs", type=int, default=3)
    parser.add_argument("--max-iterations", type=int, default=2)
    parser.add_argument("--sandbox", default="process")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep", type=Path, help="build the project here and keep it")
    parser.add_argument("--project", type=Path, help="sweep a copy of this project instead of building one")
    parser.add_argument("--paths", default="sweepbench", help="what scan and sweep look under (with --project)")
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="coderefine-sweep-bench-"))
    root = base / "project"
    if root.exists():  # --keep DIR of an earlier run: the same project (and its scan) again
        pass
    elif args.project:
        shutil.copytree(args.project, root, ignore=shutil.ignore_patterns(".git", "__pycache__", ".tox"))
    else:
        build_project(choose_tasks(args.modules), root)
    results: dict[str, Any] = {"modules": args.modules, "top": args.top, "load_start": load()}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=root, capture_output=True)
    results["plain_tests_seconds"] = round(time.perf_counter() - started, 1)  # the suite alone, for scale
    scan_report = base / "scan.json"
    if not scan_report.exists():
        coderefine("scan", args.paths, "--sandbox", args.sandbox, "--report", str(scan_report), cwd=root)
    scan = json.loads(scan_report.read_text())
    wall = scan["wall_seconds"]
    results["scan"] = {
        "wall_seconds": round(wall, 1),
        "functions": len(scan["functions"]),
        "judgeable": sum(e["judgeable"] for e in scan["functions"]),
        "top": [(e["target"], e["file"], e["share"], e["judgeable"] or e["why_not"]) for e in scan["functions"][:8]],
    }
    print(json.dumps(results["scan"], indent=1), flush=True)
    runs = []
    for engine in args.engines.split(","):
        if engine == "sequential":
            runs.append(sweep(root, engine, args, scan_report, ["--workers", "1"]))
        elif engine == "local":
            runs.append(sweep(root, engine, args, scan_report, ["--workers", str(os.cpu_count() or 2)]))
        elif engine == "ray":
            from ray.cluster_utils import Cluster

            cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
            try:
                cluster.add_node(num_cpus=1)
                cluster.wait_for_nodes()
                runs.append(
                    sweep(root, engine, args, scan_report, ["--engine", "ray", "--ray-address", cluster.address])
                )
            finally:
                cluster.shutdown()
        print(json.dumps({k: v for k, v in runs[-1].items() if k != "trace"}, indent=1), flush=True)
    results["runs"] = runs
    first = runs[0]["verdicts"] if runs else {}
    results["identical_verdicts"] = all(run["verdicts"] == first for run in runs)
    sequential = next((r for r in runs if r["engine"] == "sequential"), None)
    for run in runs:
        if sequential is not None and run is not sequential:
            run["speedup_vs_sequential"] = round(sequential["wall_seconds"] / run["wall_seconds"], 2)
    results["load_end"] = load()
    summary = {k: v for k, v in results.items() if k != "runs"}
    summary["runs"] = [{k: v for k, v in r.items() if k not in ("trace", "verdicts")} for r in runs]
    print(json.dumps(summary, indent=1))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
