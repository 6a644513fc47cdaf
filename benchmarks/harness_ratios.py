"""Microsecond functions: the speedup coderefine reports against an independent one, pair by pair.

    .venv/bin/python benchmarks/harness_ratios.py [--repeat 3] [--pairs sum_squares,isnumber]
        [--tabulate /work/libs/tabulate-0.9.0] [--coderefine .venv/bin/coderefine] [--timing-pairs N]
        [--processes 10]

Each pair is an original function of about a microsecond and a faster rewrite of it, with a test file that
calls it on a few inputs. Per pair and repetition the script prints:

- independent: both versions timed in a plain loop over the test's inputs (timeit, the best of 30 short
  rounds, the two versions interleaved), in each of `--processes` fresh processes (10): the geometric mean of
  their ratios, and its 95% interval over the processes. One process is not enough: where a function's code
  and data land in memory differs from process to process and moves a microsecond function's time by a few
  percent, differently for the two versions, so one process's ratio of the same pair read 1.20x to 1.29x
  over four runs;
- coderefine: `coderefine optimize` with the scripted provider offering the rewrite, on a copy of the
  pair written into a temporary folder (process sandbox): the verdict, the speedup and its interval, the
  harness's per-call cost it took out (`timing.harness_seconds_per_call`, absent before issue 24), and
  the original's seconds per call it reports, and the pairs timed over both series (`timing.pairs`: a
  series still undecided at its planned pairs runs on).

At the end, per pair: in how many runs the rewrite was confirmed, and in how many its interval contained the
independent ratio (a 95% interval misses about one run in twenty even when nothing is wrong).

`uptime` is printed before each figure: the machine's load moves both.

Pairs: `sum_squares` (a HumanEval-like loop that also counts, ~1 us, its rewrite without the counter),
`isnumber` (tabulate 0.9.0's `_isnumber`, read from the unpacked sdist, and the same with `float()` called
once instead of three times, on the inputs tabulate's own doctests and a table of numbers give it).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import timeit
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "sandbox")]

from coderefine_sandbox.timing.stats import paired_speedup  # noqa: E402


@dataclass(frozen=True)
class Pair:
    name: str
    function: str
    original: str  # module source
    candidate: str
    inputs: list[object]  # one positional argument per call


SUM_SQUARES = Pair(
    name="sum_squares",
    function="sum_squares",
    original=textwrap.dedent(
        """\
        def sum_squares(values):
            total = 0
            count = 0
            for v in values:
                total += v * v
                count += 1
            return total if count else 0
        """
    ),
    candidate=textwrap.dedent(
        """\
        def sum_squares(values):
            total = 0
            for v in values:
                total += v * v
            return total
        """
    ),
    inputs=[list(range(n, n + 12)) for n in range(0, 120, 3)],  # 40 calls: ~30 us a pass (a 10 % floor)
)


def isnumber_pair(tabulate: Path) -> Pair:
    """tabulate's own `_isconvertible` and `_isnumber`, and the rewrite calling float() once."""
    source = (tabulate / "tabulate" / "__init__.py").read_text()
    tree = ast.parse(source)
    wanted = {"_isconvertible", "_isnumber"}
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in wanted]
    if len(functions) != 2:
        raise SystemExit(f"{tabulate}: _isconvertible and _isnumber not found")
    original = "import math\n\n\n" + "\n\n\n".join(ast.get_source_segment(source, f) for f in functions) + "\n"
    rewrite = textwrap.dedent(
        """\
        def _isnumber(string):
            try:
                value = float(string)
            except (ValueError, TypeError):
                return False
            if isinstance(string, (str, bytes)) and (math.isinf(value) or math.isnan(value)):
                return string.lower() in ["inf", "-inf", "nan"]
            return True
        """
    )
    candidate = original[: original.index("def _isnumber(")] + rewrite
    inputs: list[object] = ["123.45", "123", "spam", "123e45678", "inf", "-1.5e3", "0.001", "42", "3.14159", "1e-3"]
    inputs += [f"{n}.{n * 7 % 10}" for n in range(30)]  # a column of numbers: 40 calls, ~30 us a pass
    return Pair(name="isnumber", function="_isnumber", original=original, candidate=candidate, inputs=inputs)


def _load(source: str, name: str):  # noqa: ANN202 - a module's function
    namespace: dict[str, object] = {"__name__": name}
    exec(compile(source, name, "exec"), namespace)
    return namespace


def independent_in_process(pair: Pair, rounds: int = 30) -> tuple[float, float]:
    """(original, candidate) seconds per call in this process: plain loops, best of `rounds`, interleaved."""
    functions = [_load(pair.original, "original")[pair.function], _load(pair.candidate, "candidate")[pair.function]]
    best = [float("inf"), float("inf")]
    number = 100
    for _ in range(rounds):
        for side, func in enumerate(functions):
            seconds = timeit.timeit("for x in inputs: f(x)", globals={"f": func, "inputs": pair.inputs}, number=number)
            best[side] = min(best[side], seconds / number / len(pair.inputs))
    return best[0], best[1]


def independent(pair: Pair, processes: int) -> tuple[float, float, float, tuple[float, float]]:
    """(original seconds per call, candidate seconds per call, ratio, its 95% interval): the geometric means
    over `processes` fresh processes, each timing both versions as independent_in_process does."""
    payload = json.dumps(asdict(pair))
    readings = []
    for _ in range(processes):
        child = [sys.executable, str(Path(__file__).resolve()), "--child"]
        proc = subprocess.run(child, input=payload, capture_output=True, text=True, check=True)
        readings.append(json.loads(proc.stdout))
    originals, candidates = [o for o, _ in readings], [c for _, c in readings]
    ratio, low, high = paired_speedup(originals, candidates)  # the interval the tool's own pairs get
    return statistics.geometric_mean(originals), statistics.geometric_mean(candidates), ratio, (low, high)


def child() -> int:
    """One fresh process's reading (--child): the pair on standard input, (original, candidate) on output."""
    pair = Pair(**json.loads(sys.stdin.read()))
    print(json.dumps(independent_in_process(pair)))
    return 0


def write_project(pair: Pair, folder: Path) -> Path:
    module = folder / f"{pair.name}_mod.py"
    module.write_text(pair.original)
    (folder / f"test_{pair.name}_mod.py").write_text(
        f"import pytest\n\nfrom {pair.name}_mod import {pair.function}\n\n"
        f"INPUTS = {pair.inputs!r}\n\n\n"
        f"@pytest.mark.parametrize('value', INPUTS)\ndef test_it(value):\n"
        f"    result = {pair.function}(value)\n    assert result == result\n"
    )
    return module


def coderefine(pair: Pair, binary: str, timing_pairs: int | None) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix=f"harness-{pair.name}-") as tmp:
        folder = Path(tmp)
        module = write_project(pair, folder)
        script = folder / "script.json"
        fenced = f"Faster:\n```python\n{pair.candidate}\n```\n"
        script.write_text(json.dumps({"generate": [fenced], "feedback": ["VERDICT: STOP"], "refine": []}))
        report = folder / "report.json"
        command = [binary, "optimize", str(module), "--function", pair.function, "--provider", "scripted"]
        command += ["--script", str(script), "--sandbox", "process", "--report", str(report)]
        # The calls timed are the recorded ones alone, the inputs the independent loop makes: the boundary variants
        # (inputs the tests never tried) would add calls the loop does not make, with a ratio of their own.
        command += ["--boundary-inputs", "0"]
        if timing_pairs:
            command += ["--timing-pairs", str(timing_pairs)]
        env = {**os.environ, "NO_COLOR": "1"}
        proc = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=env, timeout=900)
        if not report.exists():
            return {"error": f"exit {proc.returncode}: {(proc.stderr or proc.stdout)[-400:]}"}
        data = json.loads(report.read_text())
    iteration = data["iterations"][0]
    timing = iteration.get("timing") or {}
    return {
        "verdict": iteration.get("verdict"),
        "reason": iteration.get("reason"),
        "speedup": iteration.get("speedup"),
        "ci": iteration.get("speedup_ci"),
        "basis": timing.get("basis"),
        "harness": timing.get("harness_seconds_per_call"),
        "original_seconds": timing.get("original_seconds"),
        "pairs": timing.get("pairs"),
        "calls": len(pair.inputs),
    }


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pairs", default="sum_squares,isnumber")
    parser.add_argument("--tabulate", type=Path, default=Path("/work/libs/tabulate-0.9.0"))
    parser.add_argument("--coderefine", default=str(Path(sys.executable).parent / "coderefine"))
    parser.add_argument("--timing-pairs", type=int, default=None)
    parser.add_argument("--processes", type=int, default=10, choices=range(2, 21), metavar="2..20")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child()
    known = {"sum_squares": lambda: SUM_SQUARES, "isnumber": lambda: isnumber_pair(args.tabulate)}
    for name in args.pairs.split(","):
        if name not in known:
            parser.error(f"unknown pair {name!r}: choose from {', '.join(known)}")
        pair = known[name]()
        confirmed = contained = 0
        for k in range(args.repeat):
            print(f"[{pair.name} #{k + 1}] {uptime()}", flush=True)
            original, candidate, ratio, (low, high) = independent(pair, args.processes)
            print(
                f"  independent: {original * 1e9:.0f} ns -> {candidate * 1e9:.0f} ns per call, {ratio:.2f}x"
                f" [{low:.2f}, {high:.2f}] over {args.processes} processes",
                flush=True,
            )
            found = coderefine(pair, args.coderefine, args.timing_pairs)
            if "error" in found:
                print(f"  coderefine: {found['error']}", flush=True)
                continue
            ci = found["ci"] or [None, None]
            harness = found["harness"]
            per_call = found["original_seconds"] / found["calls"] if found["original_seconds"] else None
            print(
                f"  coderefine: {found['verdict']} {found['speedup'] or 0:.2f}x [{ci[0] or 0:.2f}, {ci[1] or 0:.2f}]"
                f" basis {found['basis']}, {found['pairs'] or '-'} pairs,"
                f" harness {'-' if harness is None else f'{harness * 1e9:.0f} ns'}/call,"
                f" original {'-' if per_call is None else f'{per_call * 1e9:.0f} ns'}/call"
                f" ({found['reason'] or ''})"[:400],
                flush=True,
            )
            print(f"  after: {uptime()}", flush=True)
            confirmed += found["verdict"] == "accepted"
            contained += found["verdict"] == "accepted" and (ci[0] or 0) <= ratio <= (ci[1] or 0)
        print(
            f"{pair.name}: confirmed in {confirmed} of {args.repeat} runs, the interval containing the independent"
            f" ratio in {contained}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
