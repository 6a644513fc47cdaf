"""A vectorised numpy rewrite: the speedup coderefine reports against an independent steady-state one.

    .venv/bin/python benchmarks/numpy_speedup.py [--repeat 3] [--coderefine .venv/bin/coderefine]
        [--sizes 100,1000,10000,50000]

The original loops over an array element by element (`clipped_total`: each value capped at a limit,
summed); the rewrite is one `np.minimum(...).sum()`. A test file calls it on int64 arrays of a few sizes.
Per repetition the script prints (with `uptime` before each):

- independent: both versions timed in this process on the test's inputs, steady state (timeit, best of 7
  rounds after a warm-up call), and their ratio;
- coderefine: `coderefine optimize --provider scripted` offering the rewrite (process sandbox) on a copy
  written into a temporary folder: the verdict, the reported speedup and interval, the basis that decided
  (`steady` or `first`), the steady figure when the first pass decided, and the reported figure over the
  independent one (the target: within 1.5x).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import timeit
from pathlib import Path

ORIGINAL = textwrap.dedent(
    """\
    import numpy as np


    LIMIT = 50


    def clipped_total(values):
        total = np.int64(0)
        for v in values:
            if v > LIMIT:
                total += LIMIT
            else:
                total += v
        return int(total)
    """
)
CANDIDATE = textwrap.dedent(
    """\
    import numpy as np


    LIMIT = 50


    def clipped_total(values):
        return int(np.minimum(values, LIMIT).sum())
    """
)


def test_source(sizes: list[int]) -> str:
    return textwrap.dedent(
        f"""\
        import numpy as np
        import pytest

        from clipped import clipped_total


        @pytest.mark.parametrize("size", {sizes!r})
        def test_clipped_total(size):
            values = np.arange(size, dtype=np.int64) % 97
            assert clipped_total(values) == sum(min(int(v), 50) for v in values)
        """
    )


def independent(sizes: list[int]) -> tuple[float, float, float]:
    """(original seconds per pass, candidate seconds per pass, ratio), steady state: best of 7 rounds."""
    import numpy as np

    inputs = [np.arange(size, dtype=np.int64) % 97 for size in sizes]
    functions = []
    for source in (ORIGINAL, CANDIDATE):
        namespace: dict[str, object] = {}
        exec(source, namespace)
        functions.append(namespace["clipped_total"])
    best = [float("inf"), float("inf")]
    for func in functions:
        for values in inputs:  # warm-up: numpy's first calls, the allocator
            func(values)
    for _ in range(7):
        for side, func in enumerate(functions):
            number = 3 if side == 0 else 300
            seconds = timeit.timeit("for x in I: f(x)", globals={"f": func, "I": inputs}, number=number)
            best[side] = min(best[side], seconds / number)
    return best[0], best[1], best[0] / best[1]


def coderefine(binary: str, sizes: list[int]) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="numpy-speedup-") as tmp:
        folder = Path(tmp)
        module = folder / "clipped.py"
        module.write_text(ORIGINAL)
        (folder / "test_clipped.py").write_text(test_source(sizes))
        script = folder / "script.json"
        fenced = f"Vectorised:\n```python\n{CANDIDATE}\n```\n"
        script.write_text(json.dumps({"generate": [fenced], "feedback": ["VERDICT: STOP"], "refine": []}))
        report = folder / "report.json"
        command = [binary, "optimize", str(module), "--provider", "scripted", "--script", str(script)]
        command += ["--sandbox", "process", "--report", str(report)]
        proc = subprocess.run(command, cwd=folder, capture_output=True, text=True, env={**os.environ}, timeout=1800)
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
        "steady": timing.get("steady_speedup_ci"),
        "original_seconds": timing.get("original_seconds"),
        "candidate_seconds": timing.get("candidate_seconds"),
    }


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--coderefine", default=str(Path(sys.executable).parent / "coderefine"))
    parser.add_argument("--sizes", default="100,1000,10000,50000")
    args = parser.parse_args(argv)
    try:
        sizes = [int(size) for size in args.sizes.split(",")]
    except ValueError:
        parser.error(f"--sizes: a comma-separated list of integers, not {args.sizes!r}")
    for k in range(args.repeat):
        print(f"[#{k + 1}] {uptime()}", flush=True)
        original, candidate, ratio = independent(sizes)
        print(f"  independent: {original * 1e3:.3f} ms -> {candidate * 1e6:.1f} us per pass, {ratio:.1f}x", flush=True)
        found = coderefine(args.coderefine, sizes)
        if "error" in found:
            print(f"  coderefine: {found['error']}", flush=True)
            continue
        if found["original_seconds"] is None:  # not timed: refused before
            print(f"  coderefine: {found['verdict']}: {found['reason']}", flush=True)
            continue
        ci = found["ci"] or [0, 0]
        steady = found["steady"]
        speedup = found["speedup"] or 0.0
        print(
            f"  coderefine: {found['verdict']} {speedup:.1f}x [{ci[0]:.1f}, {ci[1]:.1f}] basis {found['basis']}"
            + (f", steady {steady[0]:.1f}x [{steady[1]:.1f}, {steady[2]:.1f}]" if steady else "")
            + f"; passes {found['original_seconds'] * 1e3:.3f} ms -> {found['candidate_seconds'] * 1e6:.1f} us"
            + f"; reported/independent {speedup / ratio:.2f}",
            flush=True,
        )
        print(f"  after: {uptime()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
