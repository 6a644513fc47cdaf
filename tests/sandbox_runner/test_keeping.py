"""Keeping recorded values: the project's module-level constants compared by identity survive as themselves."""

from __future__ import annotations

import importlib
import pickle
import sys

import pytest
from coderefine_sandbox import keeping

MODULE = """
class _Missing:
    def __repr__(self):
        return "MISSING"


class Kind(tuple):
    pass


class Holder:
    def __init__(self):
        self.items = []


PROCESS_AS_KEYWORD = object()
MISSING = _Missing()
KEYWORD = Kind(("Keyword",))
TABLE = [1, 2, 3]
HOLDER = Holder()


def action(token):
    return "keyword" if token is PROCESS_AS_KEYWORD else "other"
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "consts_mod.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(keeping, "_references", None)
    module = importlib.import_module("consts_mod")
    yield module
    sys.modules.pop("consts_mod", None)


def test_sentinels_and_immutable_constants_are_kept_by_reference_state_is_copied(project):
    value = (project.PROCESS_AS_KEYWORD, project.MISSING, project.KEYWORD, project.TABLE, project.HOLDER)
    sentinel, missing, keyword, table, holder = pickle.loads(keeping.dumps(value, 4))
    assert sentinel is project.PROCESS_AS_KEYWORD and project.action(sentinel) == "keyword"
    assert missing is project.MISSING and keyword is project.KEYWORD
    # state: a replay sharing these would change the module between calls
    assert table == project.TABLE and table is not project.TABLE
    assert holder is not project.HOLDER


def test_a_constant_that_gains_state_is_copied_again(project):
    project.MISSING.seen = True
    assert pickle.loads(keeping.dumps(project.MISSING, 4)) is not project.MISSING


def test_without_project_constants_it_is_plain_pickle(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(keeping, "_references", None)
    value = {"a": [1, 2.5, "x"], "b": ValueError("boom")}
    assert keeping.dumps(value, 4) == pickle.dumps(value, protocol=4)


def test_a_global_whose_attributes_raise_is_copied_and_breaks_nothing(project):
    class Proxy:
        def __getattribute__(self, name):
            raise RuntimeError("not loaded yet")

    project.LAZY = Proxy()
    project.EXTRA = 1  # the module's globals changed: rescanned
    assert pickle.loads(keeping.dumps((1, "x"), 4)) == (1, "x")


def _recursive_with_closure(offset):
    import math

    def depth(n):  # reaches itself through its closure
        return 0 if n <= 1 else 1 + depth(n // 2)

    return lambda n, scale=2: depth(n) * scale + offset + math.floor(0.5)


def test_function_arguments_are_kept_by_code_with_their_closure_globals_and_defaults():
    func = _recursive_with_closure(10)
    blob = keeping.dumps(func, 4, functions=True)
    assert blob == keeping.dumps(func, 4, functions=True)  # the same bytes each time: a state check compares them
    made = pickle.loads(blob)
    assert made is not func and [made(n) for n in (1, 8, 1000)] == [func(n) for n in (1, 8, 1000)] == [10, 16, 28]
    assert made.__qualname__ == func.__qualname__ and made.__defaults__ == (2,)
    assert not keeping.by_reference(func) and not keeping.by_reference(_recursive_with_closure)  # a test module's
    assert keeping.by_reference(importlib.import_module)  # a library's function: kept by name, as pickle keeps it
    assert keeping.dumps(importlib.import_module, 4, functions=True) == pickle.dumps(importlib.import_module, 4)
