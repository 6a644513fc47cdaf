"""The programs suite (../shared/bench/programs) measured without coderefine, and scripts for its bench.

python benchmarks/programs_suite.py headroom SUITE [TASK ...] [--rounds 15] [--out FILE]
    An independent measurement of each reference's speedup, hyperfine-style: every round runs every
    case of the task as a fresh process (`python solution.py < case`, `python reference.py < case`),
    the two versions alternating case by case, the order flipping each round; per version the round's
    figure is the sum over the cases; the speedup is the median of the rounds' ratios. Nothing of
    coderefine is used, so it can check what `coderefine bench --oracle` confirms.
python benchmarks/programs_suite.py null-scripts SUITE DIR
    Write DIR/<task id>.json for `coderefine bench --script-dir DIR`: each offers the original with a
    statement that does nothing appended (`pass`: a different AST, so it is evaluated and timed, the
    same program). A bench of these must call none of them faster.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _time(program: Path, stdin: bytes, cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, program.name],
        input=stdin,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return time.perf_counter() - started


def headroom(folder: Path, rounds: int) -> dict[str, object]:
    cases = [case["stdin"].encode() for case in json.loads((folder / "cases.json").read_text(encoding="utf-8"))]
    versions = [folder / "solution.py", folder / "reference.py"]
    ratios, slow, fast = [], [], []
    for k in range(rounds):
        totals = {path: 0.0 for path in versions}
        for stdin in cases:
            for path in versions if k % 2 == 0 else versions[::-1]:
                totals[path] += _time(path, stdin, folder)
        slow.append(totals[versions[0]])
        fast.append(totals[versions[1]])
        ratios.append(totals[versions[0]] / totals[versions[1]])
    return {
        "id": folder.name,
        "speedup": round(statistics.median(ratios), 3),
        "solution_s": round(statistics.median(slow), 4),
        "reference_s": round(statistics.median(fast), 4),
        "rounds": rounds,
    }


def same_output(folder: Path, candidate: str) -> dict[str, object]:
    cases = [case["stdin"].encode() for case in json.loads((folder / "cases.json").read_text(encoding="utf-8"))]
    differ = []
    for index, stdin in enumerate(cases):
        outcomes = [
            subprocess.run([sys.executable, name], input=stdin, cwd=folder, capture_output=True, check=False)
            for name in ("solution.py", candidate)
        ]
        if (outcomes[0].returncode, outcomes[0].stdout) != (outcomes[1].returncode, outcomes[1].stdout):
            differ.append(index)
    return {"id": folder.name, "cases": len(cases), "differ": differ}


def null_scripts(suite: Path, out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    for folder in sorted(p for p in suite.iterdir() if (p / "solution.py").is_file()):
        code = (folder / "solution.py").read_text(encoding="utf-8").rstrip("\n") + "\npass\n"
        message = "The same program:\n```python\n" + code + "```\n"
        (out / f"{folder.name}.json").write_text(json.dumps({"generate": [message], "feedback": ["VERDICT: STOP"]}))
        count += 1
    return count


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    measure = sub.add_parser("headroom")
    measure.add_argument("suite", type=Path)
    measure.add_argument("tasks", nargs="*")
    measure.add_argument("--rounds", type=int, default=15)
    measure.add_argument("--out", type=Path)
    same = sub.add_parser("same-output")
    same.add_argument("suite", type=Path)
    same.add_argument("tasks", nargs="*")
    same.add_argument("--candidate", default="reference.py")
    scripts = sub.add_parser("null-scripts")
    scripts.add_argument("suite", type=Path)
    scripts.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    if args.command == "null-scripts":
        print(f"{null_scripts(args.suite, args.out)} scripts in {args.out}")
        return 0
    names = args.tasks or sorted(p.name for p in args.suite.iterdir() if (p / "reference.py").is_file())
    if args.command == "same-output":
        for name in names:
            print(json.dumps(same_output(args.suite / name, args.candidate)), flush=True)
        return 0
    results = []
    for name in names:
        result = headroom(args.suite / name, args.rounds)
        results.append(result)
        print(json.dumps(result), flush=True)
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
