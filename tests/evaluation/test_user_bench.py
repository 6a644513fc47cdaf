"""`--bench FILE[::NAME]`: the speedup is measured on the user's own benchmark instead of the recorded calls.

The tests here call the target with toy inputs, where a quadratic and a linear version take the same
time; the benchmark calls it with a large one, where they do not. Behaviour is still judged by the tests
and the recorded calls.
"""

from __future__ import annotations

import json

import pytest

SLOW = """
def dedupe(items):
    out = []
    for item in items:
        if item not in out:
            out.append(item)
    return out
"""

FAST = """
def dedupe(items):
    seen = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out
"""

# Behaves like the original on the tests' small inputs, raises on the benchmark's large one.
FAILS_ON_LARGE = """
def dedupe(items):
    if len(items) > 1000:
        raise ValueError("too many")
    return list(dict.fromkeys(items))
"""

TESTS = """
import pytest

from mod import dedupe


@pytest.mark.parametrize("items", [[], [1], [1, 1], [3, 1, 3, 2], ["b", "a", "b"], [2, 2, 2, 1], list("hello")])
def test_dedupe(items):
    assert dedupe(items) == [x for i, x in enumerate(items) if x not in items[:i]]
"""

BENCH = """
from mod import dedupe

DATA = list(range(3000)) * 2


def bench_large():
    dedupe(DATA)


def helper_not_a_benchmark(n):
    return n
"""


@pytest.fixture
def project(make_project):
    return make_project({"mod.py": SLOW, "test_mod.py": TESTS, "bench_mod.py": BENCH})


@pytest.mark.slow  # not `timed`: the benchmark's candidate is ~100x faster (3 of 3 passed at load 7-8)
def test_the_benchmark_is_the_timing_workload(scripted, project, tmp_path):
    trace = tmp_path / "trace"
    data = scripted(
        "optimize",
        project / "mod.py",
        [FAST],
        (),
        (),
        "--bench",
        project / "bench_mod.py",
        "--sandbox",
        "process",
        "--timing-pairs",
        "3",
        "--trace",
        trace,
    )
    (only,) = data["iterations"]
    assert only["verdict"] == "accepted", only["reason"]
    assert only["timing"]["workload"] == "bench bench_mod.py"
    assert only["timing"]["plain_loop"] is False  # the user's benchmark is their own loop
    assert only["speedup_ci"][0] > 1.05
    # Confirmed by a second series of pairs, and the figure is over both series.
    assert only["timing"]["confirmation_speedup_ci"][1] > 1.05 and only["timing"]["pairs"] == 6
    # Behaviour was still checked on the tests' calls, not on the benchmark.
    assert only["behavior"]["calls_compared"] == 7 and only["behavior"]["mismatches"] == 0
    assert "timing workload: bench_large from bench_mod.py (--bench)" in data["_stdout"]
    assert json.loads((trace / "run.json").read_text())["bench"] == str(project / "bench_mod.py")


@pytest.mark.slow
def test_a_candidate_whose_benchmark_raises_is_rejected_not_fast(scripted, project):
    data = scripted(
        "optimize",
        project / "mod.py",
        [FAILS_ON_LARGE],
        (),
        (),
        "--bench",
        f"{project / 'bench_mod.py'}::bench_large",
        "--sandbox",
        "process",
        "--timing-pairs",
        "2",
    )
    (only,) = data["iterations"]
    assert only["tests"]["failed"] == 0 and only["behavior"]["mismatches"] == 0  # the tests cannot tell
    assert only["verdict"] == "rejected" and "timing failed" in only["reason"] and "too many" in only["reason"]
    assert data["status"] == "unchanged" and data["best"] is None


@pytest.mark.parametrize(
    ("argument", "code", "message"),
    [
        ("missing.py", 3, "--bench missing.py: no such file"),
        (".", 4, "is a directory"),
        ("mod.py", 2, "no top-level function named bench*"),
        ("bench_mod.py::nothing", 2, "defines no top-level function nothing"),
        ("bench_mod.py::helper_not_a_benchmark", 2, "must take no required arguments"),
        ("../elsewhere.py", 2, "is outside the project root"),
    ],
)
def test_a_bad_benchmark_is_one_line_before_any_sandbox(cli, project, argument, code, message):
    (project.parent / "elsewhere.py").write_text("def bench():\n    pass\n")
    proc = cli("optimize", project / "mod.py", "--bench", argument, cwd=project)
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def test_bench_needs_a_task_that_measures_speed(cli, project):
    proc = cli("readability", project / "mod.py", "--bench", project / "bench_mod.py")
    assert proc.returncode == 2 and "measures no speed" in proc.stderr, proc.stderr
