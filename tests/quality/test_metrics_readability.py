"""Tests for coderefine.quality.metrics, coderefine.quality.names and coderefine.quality.readability."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from radon.metrics import mi_visit

from coderefine.quality import metrics, readability
from coderefine.quality.metrics import block_complexities, code_metrics
from coderefine.quality.names import identifier_quality, is_descriptive
from coderefine.quality.parsing import parse
from coderefine.quality.readability import complexity_score_for, readability_components, readability_score
from tests.conftest import BENCH, require

# CodeNet p01138 s409826221 (Apache-2.0, via PIE), one of the readability benchmark programs.
ORIGINAL = """\
import re

while True:
    n = int(input())
    if n == 0:
        break
    l = [0] * (24*60*60+1)
    for _ in range(n):
        h1,m1,s1,h2,m2,s2 = list(map(int, re.split(':| ', input())))
        l[h1*60*60 + m1*60 + s1] += 1
        l[h2*60*60 + m2*60 + s2] -= 1
    r = 0
    for i in range(24*60*60):
        l[i+1] += l[i]
        r = max(r, l[i+1])
    print(r)
"""

# The same behaviour written to be read: functions, names that say what they hold, a docstring.
GOOD_REWRITE = '''\
"""Count the trains a timetable needs: the largest number of trips under way at one moment.

Each dataset lists departure and arrival times; a line with 0 ends the input.
"""

import re

SECONDS_PER_DAY = 24 * 60 * 60


def to_seconds(hours, minutes, seconds):
    return hours * 60 * 60 + minutes * 60 + seconds


def peak_overlap(trips):
    """Sweep over the day: +1 at each departure, -1 at each arrival; return the highest total."""
    changes = [0] * (SECONDS_PER_DAY + 1)
    for departure, arrival in trips:
        changes[departure] += 1
        changes[arrival] -= 1
    running = 0
    peak = 0
    for second in range(SECONDS_PER_DAY):
        running += changes[second]
        peak = max(peak, running)
    return peak


def read_trip():
    fields = list(map(int, re.split(":| ", input())))
    return to_seconds(*fields[:3]), to_seconds(*fields[3:])


def main():
    while True:
        count = int(input())
        if count == 0:
            break
        trips = [read_trip() for _ in range(count)]
        print(peak_overlap(trips))


main()
'''

# The original with every name replaced by long junk, as a model gaming the score might do.
JUNK_RENAME = """\
import re

while True:
    nnnn1 = int(input())
    if nnnn1 == 0:
        break
    llll2 = [0] * (24*60*60+1)
    for _ in range(nnnn1):
        hhhh1,mmmm1,ssss1,hhhh2,mmmm2,ssss2 = list(map(int, re.split(':| ', input())))
        llll2[hhhh1*60*60 + mmmm1*60 + ssss1] += 1
        llll2[hhhh2*60*60 + mmmm2*60 + ssss2] -= 1
    rrrr3 = 0
    for iiii4 in range(24*60*60):
        llll2[iiii4+1] += llll2[iiii4]
        rrrr3 = max(rrrr3, llll2[iiii4+1])
    print(rrrr3)
"""

READABILITY_SUITE = BENCH / "readability"

METRIC_KEYS = {
    "mi",
    "cc_max",
    "cc_mean",
    "loc",
    "sloc",
    "comments",
    "halstead_volume",
    "halstead_difficulty",
    "halstead_effort",
    "identifier_quality",
}

NESTED = """\
def outer(values):
    def inner(item):
        if item > 0 and item < 10:
            return 1
        return 0
    return sum(inner(value) for value in values)


class Parser:
    def parse(self, text):
        if text:
            return text
        return None

    class Token:
        def kind(self):
            return "word"


for element in range(3):
    if element:
        print(element)
"""


# --- metrics ---------------------------------------------------------------------------------------


def test_code_metrics_keys_rounding_and_radon_agreement():
    values = code_metrics(ORIGINAL)
    assert set(values) == METRIC_KEYS
    assert all(isinstance(value, float) for value in values.values())
    assert all(round(value, 2) == value for value in values.values())
    assert values["mi"] == round(mi_visit(ORIGINAL, multi=True), 2)
    # Figures recorded by the benchmark for this program (task.json).
    assert values["mi"] == 56.01
    assert values["cc_max"] == 5
    assert values["sloc"] == 15
    assert values["cc_mean"] == 5  # no functions: the module-level figure


def test_code_metrics_match_benchmark_task_records():
    tasks = sorted(READABILITY_SUITE.glob("*/task.json"))
    require(bool(tasks), f"readability suite not found at {READABILITY_SUITE}")
    for task_file in tasks:
        task = json.loads(task_file.read_text(encoding="utf-8"))
        values = code_metrics((task_file.parent / "solution.py").read_text(encoding="utf-8"))
        assert values["mi"] == pytest.approx(task["mi"], abs=0.006), task["id"]
        assert values["cc_max"] == task["cc_max"], task["id"]
        assert values["sloc"] == task["loc"], task["id"]


def test_block_complexities_qualified_names_and_cc_max():
    blocks = block_complexities(NESTED)
    assert blocks == [
        ("outer", 1, 2),  # the generator expression is a decision point
        ("outer.inner", 2, 3),
        ("Parser.parse", 10, 2),
        ("Parser.Token.kind", 16, 1),
    ]
    values = code_metrics(NESTED)
    # The nested function is the most complex block; the module level has for + if = 3.
    assert values["cc_max"] == 3
    assert values["cc_mean"] == 2.0  # (2 + 3 + 2 + 1) / 4


def test_module_level_complexity_counts_when_larger_than_blocks():
    source = textwrap.dedent(
        """\
        def tiny():
            return 1

        for number in range(3):
            if number:
                if number > 1:
                    print(number)
        """
    )
    assert code_metrics(source)["cc_max"] == 4


def test_empty_module():
    values = code_metrics("")
    assert values["mi"] == 100.0
    assert values["cc_max"] == 1.0
    assert values["cc_mean"] == 1.0
    assert values["loc"] == values["sloc"] == values["comments"] == 0.0
    assert values["halstead_volume"] == 0.0
    assert values["identifier_quality"] == 1.0
    assert block_complexities("") == []
    assert identifier_quality("") == (1.0, [])
    assert readability_score("") == 100.0


@pytest.mark.parametrize("source", ["def broken(:\n    pass\n", "x = (1,\n", "a = 1\x00\n", "  indented = 1\n"])
@pytest.mark.parametrize("function", [parse, code_metrics, block_complexities, readability_score, identifier_quality])
def test_unparsable_source_raises_syntax_error(function, source):
    with pytest.raises(SyntaxError):
        function(source)


def test_raw_counter_failure_falls_back_instead_of_raising(monkeypatch):
    expected = code_metrics(GOOD_REWRITE)

    def broken_analyze(source):
        raise RuntimeError("tokenizer disagreement")

    monkeypatch.setattr(metrics, "analyze", broken_analyze)
    values = code_metrics(GOOD_REWRITE)
    assert set(values) == METRIC_KEYS
    assert values["loc"] == expected["loc"]
    assert values["sloc"] == expected["sloc"]
    assert values["mi"] == pytest.approx(expected["mi"], abs=3)


def test_metrics_on_modern_syntax():
    source = textwrap.dedent(
        """\
        import asyncio

        async def fetch(queue, *, limit=3):
            async with asyncio.timeout(1):
                while (item := await queue.get()) is not None:
                    match item:
                        case {"kind": kind, **rest} if rest:
                            yield f"{kind!r:>{limit}}"
                        case [first, *others]:
                            yield first, others
                        case _:
                            pass
            try:
                pass
            except ValueError as error:
                raise error
        """
    )
    if sys.version_info >= (3, 11):  # exception groups are 3.11 syntax
        source = source.replace("except ValueError as error", "except* ValueError as error")
    values = code_metrics(source)
    assert values["cc_max"] >= 4  # while, two guarded cases, except
    assert [name for name, _, _ in block_complexities(source)] == ["fetch"]


# --- readability score -----------------------------------------------------------------------------


def test_score_is_deterministic_across_processes():
    script = (
        "import json, sys\n"
        "from coderefine.quality.readability import readability_components\n"
        "from coderefine.quality.names import identifier_quality\n"
        "from coderefine.quality.metrics import code_metrics\n"
        "source = sys.stdin.read()\n"
        "results = [readability_components(source), identifier_quality(source), code_metrics(source)]\n"
        "print(json.dumps(results))\n"
    )
    outputs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        completed = subprocess.run(
            [sys.executable, "-c", script],
            input=ORIGINAL + GOOD_REWRITE,
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        outputs.add(completed.stdout)
    assert len(outputs) == 1
    assert readability_score(GOOD_REWRITE) == readability_score(GOOD_REWRITE)


def test_good_rewrite_beats_original_and_junk_rename():
    original = readability_score(ORIGINAL)
    good = readability_score(GOOD_REWRITE)
    junk = readability_score(JUNK_RENAME)
    assert good >= original + 10
    assert good >= junk + 10
    # Renaming to junk must not be rewarded at all.
    assert junk <= original


def test_components_add_up():
    parts = readability_components(GOOD_REWRITE)
    expected = (
        readability.WEIGHT_MI * parts["mi_capped"]
        + readability.WEIGHT_COMPLEXITY * parts["complexity_score"]
        + readability.WEIGHT_IDENTIFIERS * 100 * parts["identifier_quality"]
    )
    assert parts["score"] == pytest.approx(expected, abs=0.05)
    assert parts["score"] == readability_score(GOOD_REWRITE)


def test_comment_padding_gains_little():
    bare = textwrap.dedent(
        """\
        def total(values):
            result = 0
            for value in values:
                result += value
            return result
        """
    )
    padded = "\n".join(f"# note {number}" for number in range(40)) + "\n" + bare
    gain = readability_score(padded) - readability_score(bare)
    assert 0 < gain <= 7.2


def test_complexity_score_is_linear_and_clamped():
    assert complexity_score_for(1) == 100
    assert complexity_score_for(11) == 50
    assert complexity_score_for(21) == 0
    assert complexity_score_for(40) == 0
    assert complexity_score_for(0) == 100


def test_scores_on_benchmark_are_in_range():
    solutions = sorted(READABILITY_SUITE.glob("*/solution.py"))
    require(bool(solutions), f"readability suite not found at {READABILITY_SUITE}")
    for solution in solutions:
        score = readability_score(solution.read_text(encoding="utf-8"))
        assert 0 <= score <= 100
        assert score < 75  # they were chosen for being hard to read


# --- identifier quality ----------------------------------------------------------------------------


def test_poor_names_are_listed_sorted_and_distinct():
    quality, poor = identifier_quality(ORIGINAL)
    assert poor == ["h1", "h2", "l", "m1", "m2", "r", "s1", "s2"]
    # Bound names: n, l, _, h1, m1, s1, h2, m2, s2, r, i -> 3 good of 11.
    assert quality == pytest.approx(3 / 11)
    assert identifier_quality(GOOD_REWRITE) == (1.0, [])
    _, junk_poor = identifier_quality(JUNK_RENAME)
    assert "nnnn1" in junk_poor and junk_poor == sorted(set(junk_poor))


@pytest.mark.parametrize(
    "name",
    [
        *("count", "prev_i", "dist2", "i", "x1", "y0", "cnt", "is_ok", "_", "__", "df", "total_cost"),
        *("strength", "lengths", "http_client", "pkgs", "_private_helper", "tmp_cost", "max_value"),
        "abc_total",
    ],
)
def test_descriptive_names(name):
    assert is_descriptive(name)


@pytest.mark.parametrize(
    "name",
    [
        *("dp", "ab", "ci0", "aaaa1", "bbbb2", "var1", "foo", "tmp", "abc", "xyz", "qzxv", "bcdfgh_total"),
        *("zzzap", "asdf", "abcd_list", "s1", "xs", "a_b", "h"),
    ],
)
def test_non_descriptive_names(name):
    assert not is_descriptive(name)


def test_case_rules_depend_on_role_and_scope():
    source = textwrap.dedent(
        """\
        from typing import NamedTuple, TypeVar
        import numpy as np

        MAX_SIZE = 10
        Vector = list
        T_co = TypeVar("T_co", covariant=True)
        Point = NamedTuple("Point", [("left", int)])


        class Shape:
            DEFAULT_COLOUR = "red"
            list = None

            def area(self, scale):
                LOCAL_LIMIT = 3
                self.cachedValue = scale
                return LOCAL_LIMIT

            def setUp(self):
                pass

            def visit_FunctionDef(self, node):
                pass

            def getArea(self):
                pass


        class shape_helper:
            pass


        def run(badParam, *args, **kwargs):
            BadLocal = [Inner for Inner in args]
            return np, BadLocal
        """
    )
    _, poor = identifier_quality(source)
    assert poor == ["BadLocal", "Inner", "LOCAL_LIMIT", "badParam", "getArea", "shape_helper"]


def test_builtin_shadowing_is_poor_outside_class_bodies():
    _, poor = identifier_quality("sum = 0\nid = 1\n\ndef total(max):\n    return max\n")
    assert poor == ["max", "sum"]


def test_a_name_is_poor_if_any_binding_is_poor():
    # LIMIT is a fine module constant but not a local: the one poor binding makes the name poor.
    source = "LIMIT = 3\n\ndef clip(value):\n    LIMIT = 4\n    return min(value, LIMIT)\n"
    quality, poor = identifier_quality(source)
    assert poor == ["LIMIT"]
    assert quality == pytest.approx(2 / 3)
    # The same good name bound as a parameter and as a method counts once.
    shared = "def first(count):\n    return count\n\nclass Box:\n    def count(self):\n        return 1\n"
    assert identifier_quality(shared) == (1.0, [])


def test_attributes_imports_and_globals_are_not_counted():
    source = textwrap.dedent(
        """\
        import os as o
        from collections import defaultdict as dd

        def configure(settings):
            global STATE
            settings.x = 1
            settings.ab.cd = 2
            del settings
        """
    )
    assert identifier_quality(source) == (1.0, [])


def test_match_except_and_walrus_bindings_are_counted():
    source = textwrap.dedent(
        """\
        def handle(message):
            try:
                pass
            except ValueError as ve:
                pass
            match message:
                case {"id": ident, **rs}:
                    pass
                case [head, *tl] if (sz := len(tl)):
                    pass
        """
    )
    _, poor = identifier_quality(source)
    assert poor == ["rs", "sz", "tl", "ve"]
