"""Recording sees a target's calls through any reference, not only through its module's attribute."""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

from coderefine_sandbox.recording.capture import Recorder

UTILS = """
import functools

def split_lines(text, sep="\\n"):
    if not text:
        return []
    return split_lines_inner(text, sep)

def split_lines_inner(text, sep):
    return text.split(sep)

def counted(func):
    @functools.wraps(func)
    def inner(*args, **kwargs):
        return func(*args, **kwargs)
    return inner

@counted
def shout(text, *, bang="!"):
    return text.upper() + bang

def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)
"""


def test_calls_through_a_reference_bound_at_import_are_recorded(tmp_path: Path, monkeypatch) -> None:
    package = tmp_path / "recpkg"
    package.mkdir()
    (package / "utils.py").write_text(UTILS)
    init = "from .utils import split_lines, shout, fact\nTABLE = {'split': split_lines}\n"
    (package / "__init__.py").write_text(init)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        pkg = importlib.import_module("recpkg")  # imported before recording starts, as a conftest would
        recorder = Recorder("recpkg.utils", ["split_lines", "shout", "fact"], max_calls=50, max_bytes=1 << 20)
        recorder.install()
        assert recorder.patched == ["split_lines", "shout", "fact"]
        recorder.current_test = "tests/test_x.py::test_a"
        assert pkg.split_lines("a\nb") == ["a", "b"]  # the package's own reference
        assert pkg.TABLE["split"]("a;b", sep=";") == ["a", "b"]  # a table built at import
        assert pkg.shout("hi", bang="?") == "HI?"  # a decorated function: a closure of one cell
        assert pkg.fact(5) == 120  # recursion: only the outermost call
        assert str(inspect.signature(pkg.split_lines)) == "(text, sep='\\n')"
        assert pkg.split_lines.__name__ == "split_lines"
    finally:
        for name in ("recpkg", "recpkg.utils"):
            sys.modules.pop(name, None)
    assert recorder.counts == {"split_lines": 2, "shout": 1, "fact": 1}
    assert [record["target"] for record in recorder.records] == ["split_lines", "split_lines", "shout", "fact"]
    assert recorder.reached == {"tests/test_x.py::test_a"}
