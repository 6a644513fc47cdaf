"""A file run end to end in the process sandbox: one verdict per function, the narrowed candidate verified
again in a workspace made of links, and the too-fast workload answered at once."""

from __future__ import annotations

import pytest

from coderefine.evaluation.verdicts import too_fast

MODULE = """
def total(n):
    s = 0
    for i in range(n):
        s += i
    return s


def double_all(values):
    return [v * 2 for v in values]
"""
TESTS = """
from mod import double_all, total


def test_total():
    for n in (20000, 50000, 30000):
        assert total(n) == n * (n - 1) // 2


def test_double():
    assert double_all([1, 2]) == [2, 4]
"""
# total made much faster; double_all changed in a way the tests miss (4.0 == 4) but the recorded call catches
CANDIDATE = """
def total(n):
    return n * (n - 1) // 2


def double_all(values):
    return [v + v for v in values] if values != [1, 2] else [2, 4.0]
"""


def test_a_workload_of_a_few_nanoseconds_a_call_is_too_fast_to_time():
    assert too_fast(None, 3) is None and too_fast(1e-3, 3) is None
    reason = too_fast(6e-7, 3)
    assert reason is not None and reason.startswith("too fast to measure reliably: the recorded calls take 200 ns")
    assert "below the 500 ns that timing can resolve" in reason  # no harness figure: the fixed limit


def test_the_shortest_calls_timed_are_four_times_what_timing_one_call_costs_on_the_machine():
    # 40 calls of 300 ns where timing one costs 65 ns: timed (the fixed limit of 500 ns would have refused them).
    assert too_fast(12e-6, 40, 65e-9) is None
    # 40 calls of 250 ns: under 4 x 65 ns.
    reason = too_fast(10e-6, 40, 65e-9)
    assert reason is not None and "take 250 ns each (10.0 us per pass over 40), below 4 times the 65 ns" in reason
    # A slower machine, whose timing costs 150 ns a call, does not time calls of 500 ns.
    assert too_fast(20e-6, 40, 150e-9) is not None


@pytest.mark.slow  # not `timed`: a 7x-1000x candidate holds under load (see timed_last.py)
def test_the_change_that_breaks_one_function_is_dropped_and_the_rest_verified_again(scripted, make_project):
    root = make_project({"mod.py": MODULE, "test_mod.py": TESTS})
    # total is ~40,000x faster: 2 pairs a series clear the floor (4 timed, not 6)
    report = scripted("optimize", root / "mod.py", [CANDIDATE], ["VERDICT: STOP"], (), "--timing-pairs", "2")
    (iteration,) = report["iterations"]
    assert iteration["verdict"] == "accepted", iteration["reason"]
    assert [(f["function"], f["verdict"], f["kept"]) for f in iteration["functions"]] == [
        ("total", "faster", True),
        ("double_all", "behaviour changed", False),
    ], (iteration["functions"], iteration["timing"])
    assert iteration["changed"] == ["total"]
    assert set(iteration["timing"]["per_function"]) == {"total", "double_all"}
    assert 0 < iteration["setup_seconds"] < 0.5
    assert not any("full copies" in warning for warning in report["warnings"])  # links were sound here


ROUTES = """
def total(n):
    s = 0
    for i in range(n):
        s += i
    return s


def pairs(n):
    count = 0
    for i in range(n):
        for _ in range(i):
            count += 1
    return count


def unique_stops(stops):
    seen = []
    for stop in stops:
        if stop not in seen:
            seen.append(stop)
    return len(seen)
"""
ROUTES_TESTS = """
from mod import pairs, total, unique_stops


def test_total():
    for n in (20000, 50000, 30000):
        assert total(n) == n * (n - 1) // 2


def test_pairs():
    for n in (150, 100, 120):
        assert pairs(n) == n * (n - 1) // 2


def test_unique_stops():
    for length in (240, 200, 160, 120):
        assert unique_stops(tuple(i % 40 for i in range(length))) == 40
"""
# total and pairs made much faster honestly; unique_stops, a few per cent of the pass, given a cache: its later
# passes are hits, its first pass the original's work. The whole clears on the other two alone.
CACHED_STOPS = """
def total(n):
    return n * (n - 1) // 2


def pairs(n):
    return n * (n - 1) // 2


_SEEN = {}


def unique_stops(stops):
    if stops not in _SEEN:
        seen = []
        for stop in stops:
            if stop not in seen:
                seen.append(stop)
        _SEEN[stops] = len(seen)
    return _SEEN[stops]
"""


# Not `timed`: the cache's first pass is the original's work (~1.0x, its interval from two pairs far too wide to
# clear the floor under any load) and its later passes hits; the honest pair is 100x-1000x faster.
@pytest.mark.slow
def test_a_cache_on_one_function_is_dropped_by_its_own_figures_and_the_honest_pair_accepted(scripted, make_project):
    root = make_project({"mod.py": ROUTES, "test_mod.py": ROUTES_TESTS})
    report = scripted("optimize", root / "mod.py", [CACHED_STOPS], ["VERDICT: STOP"], (), "--timing-pairs", "3")
    (iteration,) = report["iterations"]
    # The cache: judged on its own first pass, not faster there, dropped; the two honest changes verified again
    # without it, each faster on its own calls, and accepted.
    assert iteration["verdict"] == "accepted", iteration["reason"]
    total, pairs, stops = iteration["functions"]
    assert [(f["function"], f["verdict"], f["kept"]) for f in (total, pairs)] == [
        ("total", "faster", True),
        ("pairs", "faster", True),
    ], ([(f["function"], f.get("basis"), f.get("reason")) for f in iteration["functions"]], iteration["timing"])
    assert (stops["function"], stops["verdict"], stops["basis"], stops["kept"]) == (
        "unique_stops",
        "not faster",
        "first",
        False,
    )
    assert stops["reason"].startswith("faster only after the first pass (a cache):"), stops["reason"]
    assert "unique_stops: not faster, faster only after the first pass (a cache)" in iteration["reason"]
    assert sorted(iteration["changed"]) == ["pairs", "total"]
    assert "_SEEN" not in report["best"]["code"]
