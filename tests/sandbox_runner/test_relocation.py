"""Recorded calls read as if recorded in the folder they are replayed in (relocation.py), and the replay's
comparison of a working-folder-dependent function made in another workspace than the recording's."""

from __future__ import annotations

import collections
import os
import pickle
from pathlib import Path, PurePosixPath

from coderefine_sandbox.behaviour.replay import compare_call
from coderefine_sandbox.protocol import CallsHeader, write_calls
from coderefine_sandbox.relocation import Relocation, relocation
from coderefine_sandbox.workload import load_calls

Pair = collections.namedtuple("Pair", "path size")


class Holder:
    def __init__(self, path: str) -> None:
        self.path = path
        self.me = self


def test_the_recording_folder_becomes_the_replaying_one_wherever_a_value_names_it():
    moved = Relocation("/run/original", "/run/cand-1")
    assert moved.active
    assert moved.text("/run/original/docs/a.txt") == "/run/cand-1/docs/a.txt"
    assert moved.text("no such file: '/run/original'") == "no such file: '/run/cand-1'"
    # Another folder that only starts or ends like it is left alone.
    assert moved.text("/run/original-wide/a") == "/run/original-wide/a"
    assert moved.text("/x/run/original/a") == "/x/run/original/a"
    assert moved.data(b"/run/original/a") == b"/run/cand-1/a"
    # A boundary variant's repeated separators are found and kept; a deeper folder is written as it is.
    assert moved.text("//run//original//a") == "//run//cand-1//a"
    assert Relocation("/run/original", "/run/x/cand").text("//run//original//a") == "/run/x/cand//a"
    holder = Holder("/run/original/h")
    value = {
        "/run/original/key": [Pair("/run/original/p", 3), (1, "plain"), frozenset({"/run/original/f"})],
        "path": PurePosixPath("/run/original/docs"),
        "holder": holder,
    }
    moved_value = moved.value(value)
    assert moved_value == {
        "/run/cand-1/key": [Pair("/run/cand-1/p", 3), (1, "plain"), frozenset({"/run/cand-1/f"})],
        "path": PurePosixPath("/run/cand-1/docs"),
        "holder": holder,
    }
    assert holder.path == "/run/cand-1/h" and holder.me is holder  # in place, the cycle kept
    # The timing worker's form: pickled again only when something changed.
    blob = pickle.dumps((("/run/original/a",), {}))
    assert pickle.loads(moved.blob(blob)) == (("/run/cand-1/a",), {})
    untouched = pickle.dumps((("elsewhere",), {}))
    assert moved.blob(untouched) is untouched


def test_no_relocation_where_the_calls_are_replayed_in_their_own_folder(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert not Relocation(str(tmp_path / "real"), str(tmp_path / "real")).active
    assert not Relocation(str(tmp_path / "link"), str(tmp_path / "real")).active  # the same folder by another name
    assert not Relocation(None, str(tmp_path)).active
    same = Relocation(str(tmp_path / "real"), str(tmp_path / "real"))
    value = ["%s/a" % (tmp_path / "real")]
    assert same.value(value) is value and same.value(value) == [f"{tmp_path / 'real'}/a"]
    # A resolved recording folder is found in either form.
    resolved = Relocation(str(tmp_path / "link"), str(tmp_path / "cand"))
    assert resolved.text(f"{tmp_path / 'real'}/x") == f"{tmp_path / 'cand'}/x"
    assert resolved.text(f"{tmp_path / 'link'}/x") == f"{tmp_path / 'cand'}/x"


def test_each_call_keeps_the_folder_it_was_recorded_in(tmp_path):
    calls = tmp_path / "calls.pkl"
    records = [
        {"target": "f", "args": pickle.dumps(((), {}))},
        {"target": "f", "args": pickle.dumps(((1,), {})), "folder": "/run/share-2"},  # merged from a worker
    ]
    write_calls(str(calls), CallsHeader(module="m", recording=None, folder="/run/original"), records)
    assert [call.origin for call in load_calls(str(calls), None)] == ["/run/original", "/run/share-2"]


def relative(path: str) -> str:
    """Where `path` is from the working folder; a missing file says which."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {path}")
    return os.path.relpath(path)


def relative_fast(path: str) -> str:  # the same, written otherwise
    if os.path.exists(path):
        return os.path.relpath(path, os.getcwd())
    raise FileNotFoundError(f"no such file: {path}")


def absolute(path: str) -> str:  # a real change: absolute where the original is relative
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {path}")
    return os.path.abspath(path)


def _record(args: tuple, outcome: str, value: object = None, message: str = "") -> dict:
    record = {
        "target": "relative",
        "args": pickle.dumps((args, {})),
        "args_after": None,
        "outcome": outcome,
        "value": pickle.dumps(value),
        "stdout": "",
    }
    if outcome == "exception":
        record.update(exc_type="builtins.FileNotFoundError", exc_message=message)
    return record


def test_a_working_folder_dependent_call_replayed_in_another_workspace_is_judged_as_recorded(tmp_path, monkeypatch):
    original, candidate = tmp_path / "original", tmp_path / "cand-1"
    for workspace in (original, candidate):
        (workspace / "docs").mkdir(parents=True)
        (workspace / "docs" / "a.txt").write_text("a")
    # Recorded in the original's workspace, as the tests ran there.
    monkeypatch.chdir(original)
    records = [
        _record((str(original / "docs" / "a.txt"),), "return", relative(str(original / "docs" / "a.txt"))),
        _record((str(original / "gone.txt"),), "exception", message=f"no such file: {original / 'gone.txt'}"),
    ]
    assert [compare_call(relative, r, 1e-9, 0.0) for r in records] == [None, None]
    # Replayed in the candidate's.
    monkeypatch.chdir(candidate)
    moved = relocation(str(original), str(candidate))
    assert [compare_call(relative_fast, r, 1e-9, 0.0, relocation=moved) for r in records] == [None, None]
    # Without it, the same correct function reads the original's folder from another one: refused.
    unmoved = compare_call(relative_fast, records[0], 1e-9, 0.0)
    assert unmoved is not None and unmoved["got"] == repr(os.path.join("..", "original", "docs", "a.txt"))
    # A candidate that really changes the result is still refused.
    changed = compare_call(absolute, records[0], 1e-9, 0.0, relocation=moved)
    assert changed is not None and changed["kind"] == "return"
    assert changed["got"] == repr(str(candidate / "docs" / "a.txt")) and changed["expected"] == repr("docs/a.txt")


def test_a_path_resolved_through_a_layered_workspace_link_matches_the_recording_as_it_was(tmp_path, monkeypatch):
    original, candidate = tmp_path / "original", tmp_path / "cand-1"
    (original / "docs").mkdir(parents=True)
    (original / "docs" / "a.txt").write_text("a")
    candidate.mkdir()
    (candidate / "docs").symlink_to(original / "docs")  # as layered.py makes a candidate's workspace
    path = str(original / "docs" / "a.txt")
    record = _record((path,), "return", str(Path(path).resolve()))
    monkeypatch.chdir(candidate)
    moved = relocation(str(original), str(candidate))

    def resolved(p: str) -> str:
        return str(Path(p).resolve())

    assert compare_call(resolved, record, 1e-9, 0.0, relocation=moved) is None


def test_text_that_only_mentions_the_folder_is_judged_as_recorded(tmp_path, monkeypatch):
    # docutils' column_indices counts the columns of a line of a message that names a source file: relocated,
    # the line is as long as the candidate's folder name makes it; made again as recorded, it matches.
    original, candidate = tmp_path / "original", tmp_path / "cand-1"
    candidate.mkdir(parents=True)
    line = f"|  {original}/docs/a.txt  |"
    record = _record((line,), "return", list(range(len(line))))

    def columns(text: str) -> list[int]:
        return list(range(len(text)))

    def columns_wrong(text: str) -> list[int]:
        return list(range(len(text) - 1))

    monkeypatch.chdir(candidate)
    moved = relocation(str(original), str(candidate))
    assert compare_call(columns, record, 1e-9, 0.0, relocation=moved) is None
    wrong = compare_call(columns_wrong, record, 1e-9, 0.0, relocation=moved)
    assert wrong is not None and wrong["kind"] == "return"


def test_a_call_is_made_again_only_when_relocation_changed_something_in_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    moved = relocation("/run/original", str(tmp_path))
    made = []

    def counted(text: str) -> int:
        made.append(text)
        return len(text) + 1  # wrong

    assert compare_call(counted, _record(("plain",), "return", 5), 1e-9, 0.0, relocation=moved) is not None
    assert made == ["plain"]  # nothing relocated: judged once, as it was made
    made.clear()
    assert compare_call(counted, _record(("/run/original/a",), "return", 99), 1e-9, 0.0, relocation=moved)
    assert made == [f"{tmp_path}/a", "/run/original/a"]  # relocated, then as recorded
    # A pickle inside a recorded value (a lazy result's items) is left whole: its strings are length-prefixed.
    inner = pickle.dumps("/run/original/a")
    assert moved.data(inner) is inner and pickle.loads(moved.value([inner])[0]) == "/run/original/a"
