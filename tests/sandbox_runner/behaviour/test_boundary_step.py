"""The boundary step's per-variant limit holds in C code too: the variant runs in a child that is killed."""

from __future__ import annotations

import time
import types

from coderefine_sandbox.behaviour import boundary
from coderefine_sandbox.behaviour.variants import Variant

SOURCE = "def total(n):\n    return sum(range(n))\n"  # a loop in C: the alarm cannot stop it


def _module() -> types.ModuleType:
    module = types.ModuleType("calc_for_boundary")
    exec(SOURCE, module.__dict__)
    return module


def test_a_variant_stuck_in_c_code_is_left_out_as_slow_within_its_limit():
    module = _module()
    started = time.monotonic()
    verdict, record = boundary._keep(module, Variant("total", (2**64 + 1,), {}, 0, "argument 1: large"), None, 0.05)
    assert (verdict, record) == ("slow", None)
    assert time.monotonic() - started < 5  # two runs' limits and the grace, not the step's time-out


def test_a_variant_the_original_answers_is_kept_with_its_outcome():
    verdict, record = boundary._keep(_module(), Variant("total", (0,), {}, 0, "argument 1: 0"), None, 0.05)
    assert verdict == "kept" and record is not None
    assert record["target"] == "total" and record["outcome"] == "return"
    assert record["test"] == "<boundary: argument 1: 0>"
