"""Peak memory per call: the resident high-water mark's rise during the call, read for the calls with the
largest arguments."""

from __future__ import annotations

import pickle

import pytest
from coderefine_sandbox.behaviour.memory import MEMORY_CALLS, PeakMeter, chosen_calls
from coderefine_sandbox.workload import Call

MIB = 1024 * 1024


def _table(size: int) -> int:
    table = [str(i) for i in range(size)]  # what a call that materialises a table per call allocates
    return len(table)


def test_the_peak_of_a_call_is_its_rise_above_what_was_resident_before():
    meter = PeakMeter()
    if not meter.available:
        pytest.skip("the resident high-water mark cannot be reset here (not Linux, or /proc read-only)")
    with meter.reading(1, True):
        _table(500_000)  # ~30 MiB of str objects and the list, freed when the call returns
    with meter.reading(2, True):
        _table(10)
    with meter.reading(3, False):
        _table(500_000)
    assert meter.peaks[1] >= 16 * MIB, meter.peaks
    assert meter.peaks[2] < 2 * MIB, meter.peaks
    assert 3 not in meter.peaks  # not wanted: not read


def test_the_calls_read_are_those_with_the_largest_arguments():
    calls = [
        Call(index=i, target="f", record={"args": pickle.dumps(((list(range(i % 5 * 100)),), {}))})
        for i in range(6 * MEMORY_CALLS)
    ]
    chosen = chosen_calls(calls)
    assert len(chosen) == MEMORY_CALLS
    assert chosen == {i for i in range(6 * MEMORY_CALLS) if i % 5 == 4 and i < 5 * MEMORY_CALLS}  # largest, earliest
    assert chosen == chosen_calls(list(reversed(calls)))  # the same on both sides, whatever the order
