"""Import time judged on readings: the modules both versions import are imported untimed on both sides, and
the candidate's extra import time is an interval over the paired processes."""

from __future__ import annotations

import sys

from coderefine_sandbox.timing.imports import import_extra, module_file, preload, shared_imports

ORIGINAL = """
import json
import os.path
from collections import abc

try:
    import colorsys
except ImportError:
    colorsys = None


def f(x):
    import csv  # runs inside the timed calls, not at import
    return x
"""
CANDIDATE = """
import json
import re
from collections import abc
from . import sibling


def f(x):
    import csv
    return x
"""


def test_only_the_module_level_imports_both_versions_make_are_shared(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    original = tmp_path / "pkg" / "mod.py"
    original.write_text(ORIGINAL)
    candidate = tmp_path / "candidate.py"
    candidate.write_text(CANDIDATE + "import pkg.other\n")
    assert module_file(str(tmp_path), ".", "pkg.mod") == str(original)
    assert module_file(str(tmp_path), ".", "pkg.missing") is None
    # os.path only in the original, re only in the candidate, csv inside a function, pkg is the module's own
    assert shared_imports(str(original), str(candidate), "pkg.mod") == ("collections", "json")
    assert shared_imports(str(original), None, "pkg.mod") == ()


def test_preload_imports_what_lies_outside_the_workspace_only(tmp_path, monkeypatch):
    (tmp_path / "local_helper.py").write_text("LOADED = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("local_helper", "colorsys"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    preload(("local_helper", "colorsys", "no_such_module_anywhere"), str(tmp_path))
    assert "colorsys" in sys.modules  # the stdlib's: the same on both sides
    assert "local_helper" not in sys.modules  # the project's own: the candidate's to change


def test_the_extra_import_time_is_an_interval_over_the_pairs():
    # The same import read with noise: the interval straddles zero.
    mean, low, high = import_extra([0.190, 0.205, 0.188, 0.199], [0.205, 0.187, 0.201, 0.192]) or (0, 0, 0)
    assert low < 0 < high and abs(mean) < 0.01
    # A table filled at import, in every reading: the lower bound is well above zero.
    mean, low, high = import_extra([0.001, 0.0012, 0.0009], [0.020, 0.0205, 0.0198]) or (0, 0, 0)
    assert 0.018 < low < mean < high < 0.021
    assert import_extra([0.001], [0.02]) is None  # one reading of each side says nothing about noise
