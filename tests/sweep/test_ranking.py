"""Ranking the profiler's rows: names, folding, judgeability and the choice of a sweep (pure functions)."""

from __future__ import annotations

import textwrap

from coderefine_sandbox.protocol import ProfiledFunction

from coderefine.sweep.ranking import choose, definitions, is_test_file, rank

SOURCE = textwrap.dedent(
    """
    import functools


    def hot(xs):
        return [x * 2 for x in xs]


    @functools.cache
    def cached(n):
        return n + 1


    class Box:
        def total(self, xs):
            def inner(x):
                return x
            return sum(inner(x) for x in xs)


    def cold(x):
        if x:
            return 1
        return 0
    """
).lstrip()
SCRIPT = "import sys\nprint(sys.argv)\n\ndef main():\n    return 1\n"


def row(name, line, own, calls=5, lines=4, covered=4, file="pkg/mod.py", tests=("t::a",)):
    return ProfiledFunction(file, line, name, own, own, calls, calls, len(tests), tests, lines, covered)


def read(files):
    return lambda relative: files.get(relative)


def test_definitions_give_qualified_names_and_the_first_line_a_decorator_starts():
    found = {d.qualname: (d.first, d.last) for d in definitions(SOURCE)}
    assert found["hot"] == (4, 5)
    assert found["cached"] == (8, 10)  # the decorator's line: what the profiler's code object says
    assert found["Box.total"] == (14, 17)
    assert found["Box.total.<locals>.inner"] == (15, 16)


def test_rank_orders_by_own_time_folds_comprehensions_and_says_why_not():
    rows = [
        row("hot", 4, 0.2),
        row("<listcomp>", 5, 0.3),  # the comprehension's time is hot's own
        row("cached", 8, 0.1, calls=1),
        row("total", 14, 0.05),
        row("inner", 15, 0.25),
        row("cold", 20, 0.01, lines=4, covered=2),
        row("helper", 1, 0.9, file="tests/test_mod.py"),  # test code never counts
    ]
    entries = rank(rows, 2.0, read({"pkg/mod.py": SOURCE}), min_calls=3, min_coverage=0.75)
    assert [e.target for e in entries] == ["hot", "Box.total.<locals>.inner", "cached", "Box.total", "cold"]
    hot = entries[0]
    assert hot.own_seconds == 0.5 and hot.share == 0.25 and hot.judgeable and hot.rank == 1
    assert hot.location == "pkg/mod.py:4" and hot.tests == ("t::a",) and hot.coverage == 1.0
    why = {e.target: e.why_not for e in entries}
    assert why["Box.total.<locals>.inner"] == "nested function"
    assert why["cached"] == "1 call < min_calls 3"
    assert why["Box.total"] is None
    assert why["cold"] == "coverage < 75%"


def test_a_script_module_and_an_unmeasured_function_cannot_be_judged():
    rows = [row("main", 4, 0.1, file="run.py"), row("hot", 4, 0.1, lines=0, covered=0)]
    entries = rank(rows, 1.0, read({"run.py": SCRIPT, "pkg/mod.py": SOURCE}), min_calls=3, min_coverage=0.5)
    assert {e.target: e.why_not for e in entries} == {"main": "script module", "hot": "no coverage"}


def test_choose_takes_the_top_judgeable_or_those_above_a_share():
    rows = [row("hot", 4, 0.5), row("cached", 8, 0.3), row("total", 14, 0.15), row("cold", 20, 0.05, covered=1)]
    entries = rank(rows, 1.0, read({"pkg/mod.py": SOURCE}), min_calls=3, min_coverage=0.75)
    assert [e.target for e in choose(entries, 2, None)] == ["hot", "cached"]
    assert [e.target for e in choose(entries, None, 0.2)] == ["hot", "cached"]
    assert [e.target for e in choose(entries, None, None)] == ["hot", "cached", "Box.total"]


def test_test_files():
    assert is_test_file("tests/helpers.py") and is_test_file("pkg/test_x.py") and is_test_file("conftest.py")
    assert not is_test_file("pkg/testing_tools.py") and not is_test_file("pkg/contest.py")


def test_judgeable_counts_starts_and_usable_calls_as_optimize_gate_does():
    def measured(name, line, starts, usable, unusable):
        base = row(name, line, 0.1, calls=60)  # cProfile's calls: a generator's resumptions counted too
        return ProfiledFunction(
            *(getattr(base, f) for f in ("file", "line", "name", "own_seconds", "cumulative_seconds")),
            calls=60, primitive_calls=60, test_count=1, tests=("t::a",), lines=4, covered=4,
            starts=starts, usable_calls=usable, unusable=unusable,
        )  # fmt: skip

    rows = [
        measured("hot", 4, starts=2, usable=2, unusable={}),  # 60 call events, 2 calls
        measured("cached", 8, starts=12, usable=1, unusable={"argument 1 is a lock (cannot be kept)": 11}),
        measured("cold", 20, starts=12, usable=12, unusable={}),
    ]
    entries = {e.target: e for e in rank(rows, 1.0, read({"pkg/mod.py": SOURCE}), min_calls=3, min_coverage=0.5)}
    assert entries["hot"].calls == 2 and entries["hot"].why_not == "2 calls < min_calls 3"
    cached = entries["cached"]
    assert cached.why_not == "about 1 usable of 12 calls < min_calls 3 (argument 1 is a lock (cannot be kept))"
    assert cached.usable_calls == 1 and cached.unusable == {"argument 1 is a lock (cannot be kept)": 11}
    assert entries["cold"].judgeable and entries["cold"].to_dict()["usable_calls"] == 12
