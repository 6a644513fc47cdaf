"""The resumable sweep state, the per-file merge of verified changes, and the placement trace's check."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from coderefine.errors import SweepStateError
from coderefine.sweep.jobs import FunctionOutcome, Placement
from coderefine.sweep.merge import merge_code
from coderefine.sweep.report import timing_overlaps
from coderefine.sweep.scan import ScanResult
from coderefine.sweep.state import SweepState

ORIGINAL = textwrap.dedent(
    """
    def f(xs):
        out = []
        for x in xs:
            out.append(x * 2)
        return out


    def g(xs):
        return len([x for x in xs if x in list(xs)])
    """
).lstrip()


def outcome(function, code=None, node="local", timing=(), status="improved"):
    return FunctionOutcome(
        key=f"m.py::{function}",
        file="m.py",
        function=function,
        status=status,
        stop_reason="done",
        original_sha256="abc",
        best_code=code,
        speedup=1.5 if code else None,
        ci=(1.2, 1.8) if code else None,
        reason="1.50x faster",
        evidence=("3 tests passed",),
        changed=(function,),
        error=None,
        wall_seconds=2.0,
        placement=Placement(node, "host", 1, 10.0, 12.0, tuple(timing)),
    )


def scan():
    return ScanResult(Path("/p"), ("pkg",), "tests", 3, 1.0, 2.0, (), "process", "sys.settrace")


def test_state_resumes_the_scan_and_finished_functions_and_ignores_a_torn_line(tmp_path):
    path = tmp_path / "state.jsonl"
    state = SweepState(path, {"root": "/p", "settings": {"a": 1}})
    state.start(fresh=False)
    state.save_scan(scan())
    done = outcome("f", "def f(xs):\n    return [x * 2 for x in xs]\n", timing=[(10.5, 11.0)])
    state.save(done)
    with path.open("a") as fh:
        fh.write('{"outcome": {"key": "m.py::g", "fi')  # cut short by a crash
    again = SweepState(path, {"root": "/p", "settings": {"a": 1}})
    again.load()
    assert again.scan == scan()
    assert again.outcomes == {"m.py::f": done}
    other = SweepState(path, {"root": "/p", "settings": {"a": 2}})
    with pytest.raises(SweepStateError, match="settings differ"):
        other.load()
    path.write_text("not json\n")
    with pytest.raises(SweepStateError, match="not a coderefine sweep state"):
        again.load()


def test_verified_changes_to_two_functions_of_a_file_merge_into_one_version():
    faster_f = ORIGINAL.replace(
        "    out = []\n    for x in xs:\n        out.append(x * 2)\n    return out\n",
        "    return [x * 2 for x in xs]\n",
    )
    faster_g = ORIGINAL.replace("if x in list(xs)", "if x in seen").replace(
        "def g(xs):\n", "def g(xs):\n    seen = set(xs)\n"
    )
    merged = merge_code(ORIGINAL, [outcome("f", faster_f), outcome("g", faster_g)])
    assert "return [x * 2 for x in xs]" in merged and "seen = set(xs)" in merged
    assert "out.append" not in merged and "list(xs)" not in merged
    namespace: dict = {}
    exec(merged, namespace)
    assert namespace["f"]([1, 2]) == [2, 4] and namespace["g"]([1, 2]) == 2


def test_timing_overlaps_are_found_per_node_only():
    apart = [
        outcome("f", node="n1", timing=[(0.0, 1.0), (5.0, 6.0)]).to_dict(),
        outcome("g", node="n1", timing=[(1.0, 2.0)]).to_dict(),
        outcome("h", node="n2", timing=[(0.5, 1.5)]).to_dict(),  # another node may time at the same moment
    ]
    assert timing_overlaps(apart) == []
    inside = outcome("k", node="n1", timing=[(5.5, 5.7)]).to_dict()  # within f's second hold, not next to it
    assert timing_overlaps([*apart, inside]) == [("n1", "m.py::f", "m.py::k")]
