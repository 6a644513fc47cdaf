"""The boundary step: its per-variant limit holds in C code too (the variant runs in a child that is killed), and
iterator and function arguments reach a variant as replay supplies them."""

from __future__ import annotations

import pickle
import sys
import time
import types

from coderefine_sandbox.behaviour import boundary
from coderefine_sandbox.behaviour.replay import compare_call
from coderefine_sandbox.behaviour.variants import Variant, derive
from coderefine_sandbox.protocol import read_calls
from coderefine_sandbox.recording.capture import Recorder
from coderefine_sandbox.workload import resolve

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


# Iterator and function arguments reach a variant as replay supplies them, never as the recording's placeholders.
SUPPLIED = """
def count_kept(pred, items):
    return sum(1 for item in items if pred(item))


def total(numbers, scale):
    return sum(numbers) * scale
"""
# Calls the predicate twice per item: the same counts, another log of calls.
TWICE = SUPPLIED.replace("if pred(item))", "if pred(item) and pred(item))")


def _loaded(name: str, source: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(source, module.__dict__)
    return module


def _recording(name: str, source: str, targets: list[str], monkeypatch) -> tuple[types.ModuleType, Recorder]:
    """The module, importable by name, and a recorder of its targets' calls (as the pytest plugin records)."""
    module = _loaded(name, source)
    monkeypatch.setitem(sys.modules, name, module)
    recorder = Recorder(name, targets, 100, 10**7)
    recorder.install()
    return module, recorder


def _calls(recorder: Recorder, tmp_path) -> list[tuple]:
    """The recorded calls as the boundary step derives variants from them: (index, target, args, kwargs)."""
    recorder.dump(str(tmp_path / "calls"))
    _, records = read_calls(str(tmp_path / "calls"))
    return [(index, record["target"], *pickle.loads(record["args"])) for index, record in enumerate(records)]


def _recorded(tmp_path, monkeypatch):
    module, recorder = _recording("supplied_sample", SUPPLIED, ["count_kept", "total"], monkeypatch)
    floor = 1
    assert module.count_kept(lambda n: n > floor, [1, 2]) == 1
    assert module.total(iter([1, 2, 3]), 2) == 12
    assert module.total((n for n in (4, 5)), 3) == 27
    return module, _calls(recorder, tmp_path)


def test_variants_of_calls_with_function_and_iterator_arguments_run_on_what_replay_supplies(tmp_path, monkeypatch):
    module, calls = _recorded(tmp_path, monkeypatch)
    variants = derive(calls, 50)
    changes = {(variant.target, variant.change) for variant in variants}
    # an empty and a one-element iterator of the recorded kind; the function argument itself is never varied
    assert {
        ("total", "argument 1: empty list_iterator"),
        ("total", "argument 1: one-element list_iterator"),
        ("total", "argument 1: empty generator"),
        ("total", "argument 1: one-element generator"),
        ("count_kept", "argument 2: empty list"),
        ("count_kept", "argument 2: one-element list"),
    } <= changes
    assert not any(change.startswith("argument 1") for target, change in changes if target == "count_kept")
    wrong = _loaded("supplied_wrong", TWICE)
    refused = 0
    for variant in variants:
        verdict, record = boundary._keep(module, variant, None, 0.5)
        # with the recording's placeholders the original raised (a FunctionArgument is not callable, an
        # IteratorArgument not iterable) or was kept with the source call's log, which its own replay contradicts
        assert verdict == "kept" and record is not None, variant.change
        args, _ = pickle.loads(record["args"])
        if variant.target == "count_kept":
            items = args[1]
            # the calls the original made to the predicate on the variant, not the recorded call's two
            assert [pickle.loads(call) for call in args[0].calls] == [((item,), {}) for item in items]
        else:
            fed = args[0]
            expected = [pickle.loads(blob) for blob in variant.args[0].items]
            assert ([pickle.loads(blob) for blob in fed.items], fed.exhausted) == (expected, True)
        assert compare_call(resolve(module, variant.target), record, 0.0, 0.0) is None
        refused += compare_call(resolve(wrong, variant.target), record, 0.0, 0.0) is not None
    # the predicate called twice on a kept item: refused on every count_kept variant keeping one (a duplicate,
    # the one-element list [1] keeps none)
    assert refused == sum(1 for v in variants if v.target == "count_kept" and any(n > 1 for n in v.args[1]))
    assert refused >= 1


LAZY = """
def running(values):
    total = 0
    for value in values:
        total += value
        yield total


def split(values):
    return iter([v for v in values if v % 2 == 0]), (v for v in values if v % 2)
"""
# Drops the last running total; yields the odd values first.
LAZY_WRONG = LAZY.replace("for value in values:", "for value in values[:-1]:").replace(
    "return iter([v for v in values if v % 2 == 0]), (v for v in values if v % 2)",
    "return (v for v in values if v % 2), iter([v for v in values if v % 2 == 0])",
)


def test_a_variant_whose_result_is_lazy_is_kept_as_consumed_to_its_end(tmp_path, monkeypatch):
    module, recorder = _recording("lazy_variants", LAZY, ["running", "split"], monkeypatch)
    assert list(module.running([1, 2])) == [1, 3]
    evens, odds = module.split([1, 2, 3])
    assert (list(odds), list(evens)) == ([1, 3], [2])
    calls = _calls(recorder, tmp_path)
    variants = derive(calls, 50)
    wrong = _loaded("lazy_variants_wrong", LAZY_WRONG)
    refused = set()
    for variant in variants:
        # a generator is not "not deterministic" for being another object on each run: its items are compared
        verdict, record = boundary._keep(module, variant, None, 0.5)
        assert verdict == "kept" and record is not None and record["lazy"], variant.change
        assert compare_call(resolve(module, variant.target), record, 0.0, 0.0) is None
        if compare_call(resolve(wrong, variant.target), record, 0.0, 0.0) is not None:
            refused.add(variant.target)
    assert {variant.target for variant in variants} == {"running", "split"}
    assert refused == {"running", "split"}
