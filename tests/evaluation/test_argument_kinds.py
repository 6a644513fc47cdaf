"""Async generator arguments and function arguments judged end to end in the process sandbox: recorded as the
tests pass them (an async generator of the test's, a lambda closing over a test's local), a rewrite taking one item
too many from the async generator or calling the predicate twice per item refused, a faster one accepted."""

from __future__ import annotations

import pytest

MODULE = """
def _slow(x):
    for _ in range(300):
        x = x + 0
    return x


async def first_over(numbers, limit):
    async for number in numbers:
        if _slow(number) > limit:
            return number
    return None


def partition(pred, items):
    yes, no = [], []
    for item in items:
        (yes if pred(_slow(item)) else no).append(item)
    return yes, no
"""

TESTS = """
import asyncio

from argmod import first_over, partition


async def numbers(n):
    for number in range(n):
        yield number


def test_first_over():
    for n in (10, 20, 30):
        assert asyncio.run(first_over(numbers(n), n // 2)) == n // 2 + 1


def test_partition():
    for n in (10, 20, 30):
        limit = n // 2
        yes, no = partition(lambda x: x > limit, list(range(n)))
        assert (len(yes), len(no)) == (n - limit - 1, limit + 1)
"""

# Wrong in ways the tests miss: the async generator is read one item past the answer (a look-ahead), and the
# predicate is called twice per item (once per list).
WRONG = """
async def first_over(numbers, limit):
    found = None
    async for number in numbers:
        if found is not None:
            break
        if number > limit:
            found = number
    return found


def partition(pred, items):
    return [item for item in items if pred(item)], [item for item in items if not pred(item)]
"""

FASTER = """
async def first_over(numbers, limit):
    async for number in numbers:
        if number > limit:
            return number
    return None


def partition(pred, items):
    yes, no = [], []
    for item in items:
        (yes if pred(item) else no).append(item)
    return yes, no
"""


@pytest.mark.slow
def test_async_generator_and_lambda_arguments_are_judged(scripted, make_project):
    root = make_project({"argmod.py": MODULE, "test_argmod.py": TESTS})
    report = scripted("optimize", root / "argmod.py", [WRONG], ["try again"], [FASTER], "--timing-pairs", "3")
    evidence = report["baseline"]["evidence"]
    assert {name: evidence[name]["usable"] for name in ("first_over", "partition")} == {"first_over": 3, "partition": 3}
    wrong, faster = report["iterations"]
    refused = {f["function"]: f for f in wrong["functions"] if f["verdict"] == "behaviour changed"}
    assert sorted(refused) == ["first_over", "partition"], wrong
    examples = {e["function"]: e for e in wrong["behavior"]["examples"]}
    taken = examples["first_over"]
    assert taken["kind"] == "consumption" and taken["got"] == taken["expected"] + " and asked for more", taken
    called = examples["partition"]
    count = int(called["expected"].split()[3])  # "argument 1: called 10 times"
    assert called["kind"] == "consumption" and called["got"] == f"argument 1: called {2 * count} times", called
    assert faster["verdict"] == "accepted", faster["reason"]
    assert faster["behavior"]["calls_compared"] == 6 and faster["behavior"]["mismatches"] == 0
    assert faster["speedup"] > 1, faster["timing"]
