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
