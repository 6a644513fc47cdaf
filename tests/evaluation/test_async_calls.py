"""Coroutine functions and async generators judged end to end in the process sandbox: recorded as the tests
await them through asyncio.run, a faster rewrite accepted with its speedup, a wrong one of each kind refused,
and a coroutine that waits on the event loop refused with that reason."""

from __future__ import annotations

import importlib.util

import pytest

from coderefine.errors import ExitCode

MODULE = """
import asyncio


def _slow(x):
    for _ in range(300):
        x = x + 0
    return x


async def _score(word):
    return _slow(len(word))


async def ranked(words):
    scored = []
    for word in words:
        scored.append((await _score(word), word))
    scored.sort()
    return [word for _, word in scored]


async def countdown(n):
    while n > 0:
        yield _slow(n)
        n -= 1


async def settled(values):
    await asyncio.sleep(0.01)
    return sum(values)
"""

TESTS = """
import asyncio

from asyncmod import countdown, ranked, settled

WORDS = ["delta", "be", "alpha", "omega", "charlie", "kappa", "gamma", "sigma"]


def test_ranked():
    for size in (4, 6, 8):
        assert asyncio.run(ranked(WORDS[:size] * 5))[0] == "be"


def test_countdown():
    async def taken(n):
        return [value async for value in countdown(n)]

    for n in (20, 30, 40):
        assert asyncio.run(taken(n))[0] == n


def test_settled():
    for n in (1, 2, 3):
        assert asyncio.run(settled(list(range(n)))) == n * (n - 1) // 2
"""

# Where anyio is installed its pytest plugin is too: a test awaiting the target on anyio's own runner.
ANYIO_TESTS = """
import pytest

from asyncmod import ranked


@pytest.mark.anyio
async def test_ranked_on_anyio():
    assert (await ranked(["gamma", "be", "alpha"] * 4))[0] == "be"
"""
ANYIO = importlib.util.find_spec("anyio") is not None

# Each async target without the wasted work.
FASTER = """
import asyncio


def _slow(x):
    for _ in range(300):
        x = x + 0
    return x


async def ranked(words):
    return sorted(words, key=lambda word: (len(word), word))


async def countdown(n):
    while n > 0:
        yield n
        n -= 1


async def settled(values):
    await asyncio.sleep(0.01)
    return sum(values)
"""

# Wrong in ways the tests miss: ties of the same length come back in their input order, not sorted; the last
# item (1) is never yielded.
WRONG = """
import asyncio


def _slow(x):
    for _ in range(300):
        x = x + 0
    return x


async def ranked(words):
    return sorted(words, key=len)


async def countdown(n):
    while n > 1:
        yield n
        n -= 1


async def settled(values):
    await asyncio.sleep(0.01)
    return sum(values)
"""


@pytest.mark.slow
def test_async_targets_are_recorded_wrong_rewrites_refused_and_a_faster_one_accepted(scripted, make_project):
    files = {"asyncmod.py": MODULE, "test_asyncmod.py": TESTS}
    if ANYIO:
        files["test_anyio.py"] = ANYIO_TESTS
    root = make_project(files)
    report = scripted("optimize", root / "asyncmod.py", [WRONG], ["try again"], [FASTER], "--timing-pairs", "3")
    evidence = report["baseline"]["evidence"]
    usable = {name: evidence[name]["usable"] for name in ("ranked", "countdown")}
    assert usable == {"ranked": 3 + ANYIO, "countdown": 3}
    reason = "the coroutine waits on the event loop (a timer such as asyncio.sleep, I/O or a thread)"
    assert evidence["settled"]["usable"] == 0
    assert [why for why in evidence["settled"]["unusable"]] == [
        f"{reason}: its time and result depend on more than its arguments"
    ]
    assert report["baseline"]["boundary"]["derived"] == 0  # async calls are not varied
    wrong, faster = report["iterations"]
    refused = [f["function"] for f in wrong["functions"] if f["verdict"] == "behaviour changed"]
    assert refused == ["ranked", "countdown"]
    assert faster["verdict"] == "accepted", faster["reason"]
    assert faster["behavior"]["calls_compared"] == 6 + ANYIO and faster["behavior"]["mismatches"] == 0
    # Timed on the event loop: a speedup with its interval (how large depends on the machine's load; that the
    # loop's own cost is out of both figures is checked in tests/sandbox_runner/timing/test_worker.py).
    assert faster["speedup"] > 1, faster["timing"]
    assert "ranked" in faster["timing"]["per_function"] and "countdown" in faster["timing"]["per_function"]
    assert faster["timing"]["plain_loop"] is False  # awaited on a loop of its own per pass: no plain loop to make


@pytest.mark.slow
def test_a_coroutine_waiting_on_the_loop_is_refused_with_its_reason(scripted, make_project):
    root = make_project({"asyncmod.py": MODULE, "test_asyncmod.py": TESTS})
    options = ("--function", "settled")
    data = scripted("optimize", root / "asyncmod.py", [MODULE], (), (), *options, expect=ExitCode.INSUFFICIENT_TESTS)
    assert data["stop_reason"].startswith("insufficient tests: 0 usable recorded calls of 3 (needs 3; 3: the corout")
    assert "waits on the event loop" in data["_stderr"]
