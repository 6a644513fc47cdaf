"""`--drafts 3` against `--drafts 1` on the optimize suite, with scripted drafts: wall time per run and the
best verified speedup after each round.

Per task (the first --tasks of ../shared/bench/optimize in natural order, of --category "headroom": those
whose reference is measurably faster), two rounds (generate, refine):

- `--drafts 1`: round 0 answers with the task's reference solution, round 1 with it again, a statement
  added (a new program, so it is run again);
- `--drafts 3`: each round adds two drafts before that one: a wrong one (the reference's result wrapped
  in a tuple: every test fails) and one no faster than the original (the original with a statement
  added: correct, timed, not faster).

Each run is a real `coderefine optimize` (process sandbox, no cache) in a private copy of the task without
reference.py. Timing stays one at a time (the drafts' timing steps share the run's lock); tests and
replay of the three drafts run on `--workers` processes side by side. Prints a table and writes JSON.

    python benchmarks/drafts.py [--suite ../shared/bench/optimize] [--tasks 5] [--workers 2] [--out drafts.json]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CONTINUE = "Keep the behaviour; look for a better algorithm.\nVERDICT: CONTINUE"


@dataclass(frozen=True)
class RunFigures:
    task: str
    drafts: int
    wall_seconds: float
    status: str
    best_by_round: list[float | None]  # the best verified speedup once each round was judged
    drafts_by_round: list[list[str]]  # each draft's verdict and figure
    error: str | None


def natural(name: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _call(args: ast.arguments) -> str:
    """The arguments that pass a function's own parameters on, as written in its signature."""
    parts = [a.arg for a in (*args.posonlyargs, *args.args)]
    if args.vararg:
        parts.append(f"*{args.vararg.arg}")
    parts += [f"{a.arg}={a.arg}" for a in args.kwonlyargs]
    if args.kwarg:
        parts.append(f"**{args.kwarg.arg}")
    return ", ".join(parts)


def _function(code: str, name: str) -> ast.FunctionDef:
    return next(n for n in ast.parse(code).body if isinstance(n, ast.FunctionDef) and n.name == name)


def wrong_draft(reference: str, entry: str) -> str:
    """The reference under another name, and the entry point returning its result in a tuple."""
    renamed = re.sub(rf"\bdef {entry}\(", f"def _{entry}_reference(", reference, count=1)
    renamed = re.sub(rf"\b{entry}\(", f"_{entry}_reference(", renamed)
    node = _function(reference, entry)
    return (
        f"{renamed}\n\ndef {entry}({ast.unparse(node.args)}):\n    return (_{entry}_reference({_call(node.args)}),)\n"
    )


def with_statement(code: str, entry: str, statement: str) -> str:
    """`code` with `statement` first in the entry point's body: another program, the same behaviour."""
    node = _function(code, entry)
    first = node.body[0]
    lines = code.splitlines()
    at = first.lineno - 1
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        at = first.end_lineno  # after the docstring
    indent = " " * first.col_offset
    return "\n".join([*lines[:at], f"{indent}{statement}", *lines[at:]]) + "\n"


def fence(code: str) -> str:
    return f"```python\n{code}```"


def script(task: Path, drafts: int) -> dict[str, list[str]]:
    entry = json.loads((task / "task.json").read_text()).get("entry_point")
    original = (task / "solution.py").read_text()
    reference = (task / "reference.py").read_text()
    good = [reference, with_statement(reference, entry, "_unused = 1")]
    if drafts == 1:
        return {"generate": [fence(good[0])], "feedback": [CONTINUE], "refine": [fence(good[1])]}
    wrong = [wrong_draft(reference, entry), wrong_draft(with_statement(reference, entry, "_unused = 2"), entry)]
    same = [with_statement(original, entry, f"_unused = {k}") for k in (3, 4)]
    rounds = [[fence(wrong[k]), fence(same[k]), fence(good[k])] for k in range(2)]
    return {"generate": rounds[0], "feedback": [CONTINUE], "refine": rounds[1]}


def run(task: Path, drafts: int, workers: int, scratch: Path) -> RunFigures:
    work = scratch / f"{task.name}-{drafts}"
    shutil.copytree(task, work, ignore=shutil.ignore_patterns("reference.py", "__pycache__"))
    (work / "script.json").write_text(json.dumps(script(task, drafts)))
    report = work / "report.json"
    command = [
        sys.executable, "-m", "coderefine", "optimize", str(work / "solution.py"), "--provider", "scripted",
        "--script", str(work / "script.json"), "--drafts", str(drafts),
        "--max-iterations", "2", "--patience", "2", "--sandbox", "process", "--no-cache", "--report", str(report),
        "--quiet",
    ]  # fmt: skip
    started = time.perf_counter()
    env = {**os.environ, "CODEREFINE_WORKERS": str(workers)}  # `workers` is no flag of the refine commands
    proc = subprocess.run(command, capture_output=True, text=True, cwd=work, timeout=1800, env=env)
    wall = time.perf_counter() - started
    if not report.is_file():
        return RunFigures(task.name, drafts, wall, "failed", [], [], proc.stderr.strip()[-300:])
    data = json.loads(report.read_text())
    best = [r["best_speedup"] for r in data["rounds"]]
    shown = [
        [f"{d['verdict']}{' ' + format(d['speedup'], '.2f') + 'x' if d['speedup'] else ''}" for d in r["drafts"]]
        for r in data["rounds"]
    ]
    error = data["error"]["message"] if data.get("error") else None
    return RunFigures(task.name, drafts, round(wall, 2), data["status"], best, shown, error)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", type=Path, default=REPO.parent / "shared" / "bench" / "optimize")
    parser.add_argument("--tasks", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--category", default="headroom", help="tasks of this category only ('' for all)")
    parser.add_argument("--out", type=Path, default=Path("drafts.json"))
    options = parser.parse_args()
    tasks = sorted(
        (p for p in options.suite.iterdir() if (p / "reference.py").is_file()), key=lambda p: natural(p.name)
    )
    figures: list[RunFigures] = []
    with tempfile.TemporaryDirectory(prefix="coderefine-drafts-bench-") as scratch:
        for task in tasks[: options.tasks]:
            for drafts in (1, 3):
                result = run(task, drafts, options.workers, Path(scratch))
                figures.append(result)
                best = ", ".join("-" if b is None else f"{b:.2f}x" for b in result.best_by_round)
                error = f"  error: {result.error}" if result.error else ""
                line = f"{task.name:14} drafts={drafts} {result.wall_seconds:7.1f}s {result.status:9}"
                print(f"{line} best by round: {best}  drafts: {result.drafts_by_round}{error}", flush=True)
    one = sum(f.wall_seconds for f in figures if f.drafts == 1)
    three = sum(f.wall_seconds for f in figures if f.drafts == 3)
    summary = {"tasks": options.tasks, "workers": options.workers, "wall_drafts_1": round(one, 1),
               "wall_drafts_3": round(three, 1), "ratio": round(three / one, 3) if one else None}  # fmt: skip
    print(json.dumps(summary))
    options.out.write_text(json.dumps({"summary": summary, "runs": [asdict(f) for f in figures]}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
