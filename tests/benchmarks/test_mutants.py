"""benchmarks/mutants.py: each operator makes the mutation it names, only inside the chosen function."""

from __future__ import annotations

import ast
import importlib.util
import sys

import pytest

from tests.conftest import REPO


def _load_mutants():
    spec = importlib.util.spec_from_file_location("mutants", REPO / "benchmarks" / "mutants.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutants"] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


mutants_module = _load_mutants()

SOURCE = '''\
import math

# a comment outside the function survives
def other(n):
    return n + 1


def window(values, n, flag=False):
    """Docstring: not mutated."""
    total = 0
    for i in range(n):
        if values[i] < 0 and not flag:
            continue
        elif values[i] == 0:
            total += 10
        total += values[i]
    rest = values[:n]
    return total


class Box:
    def size(self, k):
        return k * 2
'''


def _by_operator(found):
    result: dict[str, list] = {}
    for mutant in found:
        result.setdefault(mutant.name.split("@")[0], []).append(mutant)
    return result


def test_every_operator_applies_once_per_site_and_only_inside_the_function():
    found = mutants_module.mutants(SOURCE, "window")
    ops = _by_operator(found)
    expected = {
        "const+1",
        "const-1",
        "range+1",
        "range-1",
        "compare",
        "bool-op",
        "drop-branch",
        "slice+1",
        "return-var",
    }
    assert set(ops) == expected
    assert len(ops["compare"]) == 2 and len(ops["drop-branch"]) == 2 and len(ops["bool-op"]) == 1
    assert {m.description for m in ops["range+1"]} == {"line 11: `range(n)` -> `range(n + 1)`"}
    assert {m.description for m in ops["slice+1"]} == {"line 17: `values[:n]` -> `values[:n + 1]`"}
    assert "`values[i] < 0` -> `values[i] <= 0`" in ops["compare"][0].description
    assert "`return total` -> `return values`" in ops["return-var"][0].description
    names = [m.name for m in found]
    assert len(names) == len(set(names))
    for mutant in found:
        tree = ast.parse(mutant.code)  # every mutant is a valid module
        assert mutant.code != SOURCE
        # everything outside the function is kept byte for byte
        assert mutant.code.startswith(SOURCE.split("def window")[0])
        assert mutant.code.endswith(SOURCE.split("    return total\n")[1])
        assert '"""Docstring: not mutated."""' in mutant.code or "'Docstring: not mutated.'" in mutant.code
        assert [n.name for n in tree.body if isinstance(n, ast.FunctionDef)] == ["other", "window"]


def test_methods_and_bad_names():
    found = mutants_module.mutants(SOURCE, "Box.size")
    assert {m.description for m in found} == {"line 23: `2` -> `3`", "line 23: `2` -> `1`"}
    assert all("    def size(self, k):\n        return k * " in m.code for m in found)
    with pytest.raises(LookupError):
        mutants_module.mutants(SOURCE, "missing")
    with pytest.raises(LookupError):
        mutants_module.mutants(SOURCE, "Nope.size")


def test_the_dropped_branch_of_an_elif_runs_the_else_part():
    code = (
        "def sign(x):\n    if x > 0:\n        return 1\n"
        "    elif x < 0:\n        return -1\n    else:\n        return 0\n"
    )
    dropped = [m for m in mutants_module.mutants(code, "sign") if m.name.startswith("drop-branch")]
    assert len(dropped) == 2
    results = []
    for mutant in dropped:
        namespace: dict = {}
        exec(mutant.code, namespace)
        results.append([namespace["sign"](v) for v in (5, -5, 0)])
    assert results == [[0, -1, 0], [1, 0, 0]]
