"""Microsecond calls judged end to end in the process sandbox: their figures are plain loops' (the calls timed
one by one scaled to each worker process's plain-loop passes, timing/worker.py PLAIN), and a workload the plain
loop cannot make (calls drawing random numbers) keeps its per-call figures, on both sides alike."""

from __future__ import annotations

import pytest

MODULE = """
import random


def squares(values):
    total = 0
    for v in values:
        total = total + int(str(v * v))
    return total


def jitter(values):
    return [v + random.random() for v in values]
"""

TESTS = """
import random

import pytest

from plainmod import jitter, squares


@pytest.mark.parametrize("start", range(0, 60, 3))
def test_squares(start):
    assert squares(list(range(start, start + 12))) >= 0


@pytest.mark.parametrize("start", range(3))
def test_jitter(start):
    random.seed(start)
    assert len(jitter([start, start + 1])) == 2
"""

FASTER = """
import random


def squares(values):
    total = 0
    for v in values:
        total = total + v * v
    return total


def jitter(values):
    return [v + random.random() for v in values]
"""

# The same squares; jitter looks random.random up once (a little faster, and still drawing from `random`).
RANDOM_FASTER = MODULE.replace(
    "    return [v + random.random() for v in values]",
    "    draw = random.random\n    return [v + draw() for v in values]",
)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("function", "candidate", "plain"), [("squares", FASTER, True), ("jitter", RANDOM_FASTER, False)]
)
def test_microsecond_calls_are_read_as_a_plain_loop_reads_them_where_it_can_make_them(
    scripted, make_project, function, candidate, plain
):
    root = make_project({"plainmod.py": MODULE, "test_plainmod.py": TESTS})
    report = scripted(
        "optimize",
        root / "plainmod.py",
        [candidate],
        ["VERDICT: STOP"],
        (),
        "--function",
        function,
        "--timing-pairs",
        "2",
        "--boundary-inputs",
        "0",
        "--allow-insufficient-tests",
    )
    (only,) = report["iterations"]
    assert only["timing"]["plain_loop"] is plain, only["timing"]
    if plain:  # no round trip through str for each of 12 values: ~3x
        assert only["verdict"] == "accepted", (only["reason"], only["timing"])
        assert only["speedup_ci"][0] > 1.1, only["timing"]
