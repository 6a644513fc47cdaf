"""The reach map's pure parts: what an update re-traces, how tables merge, the shares, the cache file."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from coderefine.evaluation.protocol import ReachTable
from coderefine.evaluation.reach_map import (
    ReachMap,
    apply_update,
    build_map,
    fingerprints,
    list_test_files,
    nearest_first,
    plan_update,
    project_hashes,
    python_files,
    read_map,
    round_robin,
    split_files,
    write_map,
)

HASHES = {"pkg/core.py": "a", "pkg/util.py": "b", "tests/test_core.py": "c", "tests/test_other.py": "d"}
TESTS = ("tests/test_core.py", "tests/test_other.py")


def _map() -> ReachMap:
    tests = {
        "tests/test_core.py::test_public": {"pkg/core.py::public", "pkg/util.py::helper"},
        "tests/test_core.py::test_nothing": set(),
        "tests/test_other.py::test_other": {"pkg/core.py::other"},
    }
    return build_map("/p", "then", "instrument", HASHES, TESTS, tests, {})


def test_no_map_traces_everything_and_no_change_traces_nothing():
    first = plan_update(None, HASHES, TESTS)
    assert first.full and first.test_files == TESTS
    same = plan_update(_map(), HASHES, TESTS)
    assert same.nothing and not same.full and same.test_files == () and same.node_ids == ()


def test_a_changed_source_file_retraces_only_the_tests_reaching_it():
    update = plan_update(_map(), {**HASHES, "pkg/util.py": "B"}, TESTS)
    assert not update.full and update.test_files == ()
    assert update.node_ids == ("tests/test_core.py::test_public",)
    assert update.changed == ("pkg/util.py",)


def test_a_changed_test_file_is_traced_whole_and_a_deleted_one_dropped():
    hashes = {**HASHES, "tests/test_core.py": "C", "tests/test_new.py": "e"}
    del hashes["tests/test_other.py"]
    update = plan_update(_map(), hashes, ("tests/test_core.py", "tests/test_new.py"))
    assert update.test_files == ("tests/test_core.py", "tests/test_new.py")
    assert update.dropped == ("tests/test_other.py::test_other",) and update.node_ids == ()


def test_a_deleted_source_file_counts_as_changed_and_a_config_change_retraces_everything():
    hashes = dict(HASHES)
    del hashes["pkg/util.py"]
    assert plan_update(_map(), hashes, TESTS).node_ids == ("tests/test_core.py::test_public",)
    config = plan_update(_map(), {**HASHES, "pyproject.toml": "x"}, TESTS)
    assert config.full and "pyproject.toml" in config.why


def test_an_update_keeps_the_untouched_entries_and_replaces_the_retraced_ones():
    old = _map()
    hashes = {**HASHES, "pkg/util.py": "B"}
    update = plan_update(old, hashes, TESTS)
    table = ReachTable(
        ("pkg/core.py::public", "pkg/core.py::extra"), {"tests/test_core.py::test_public": (0, 1)}, {}, "instrument"
    )
    new = apply_update(old, update, [table], root="/p", built_at="now", hashes=hashes, test_files=TESTS)
    assert new.reaching("pkg/core.py", ["extra"]) == ("tests/test_core.py::test_public",)
    assert new.reaching("pkg/util.py", ["helper"]) == ()  # the re-traced test no longer reaches it
    assert new.reaching("pkg/core.py", ["other"]) == ("tests/test_other.py::test_other",)  # kept as it was
    assert new.hashes["pkg/util.py"] == "B" and new.built_at == "now"


def test_tables_from_two_workers_merge_into_the_map_one_worker_gives():
    one = ReachTable(("a.py::f", "a.py::g"), {"t.py::x": (0,), "t.py::y": (0, 1)}, {}, "instrument")
    left = ReachTable(("a.py::g", "a.py::f"), {"t.py::y": (0, 1)}, {}, "instrument")
    right = ReachTable(("a.py::f",), {"t.py::x": (0,)}, {}, "instrument")
    update = plan_update(None, {"a.py": "1", "t.py": "2"}, ("t.py",))
    kwargs = {"root": "/p", "built_at": "now", "hashes": {"a.py": "1", "t.py": "2"}, "test_files": ("t.py",)}
    assert apply_update(None, update, [one], **kwargs) == apply_update(None, update, [right, left], **kwargs)


def test_a_nested_function_counts_as_its_target():
    reach = build_map("/p", "t", "i", {}, (), {"t.py::x": {"a.py::f.<locals>.g"}, "t.py::y": {"a.py::ff"}}, {})
    assert reach.reaching("a.py", ["f"]) == ("t.py::x",)


def test_shares_are_balanced_by_size_and_never_empty():
    sizes = {"a": 100, "b": 60, "c": 50, "d": 10}
    shares = split_files(("a", "b", "c", "d"), sizes, 2)
    assert sorted(shares) == [("a", "d"), ("b", "c")]  # 110 and 110
    assert split_files(("a",), sizes, 4) == [("a",)]


def test_the_project_files_and_the_cache_file(tmp_path: Path):
    root = tmp_path / "p"
    (root / "tests").mkdir(parents=True)
    (root / ".venv").mkdir()
    (root / "tox.ini").write_text("[pytest]\npython_files = check_*.py\n")
    (root / "tests/check_a.py").write_text("")
    (root / "tests/test_b.py").write_text("")
    (root / ".venv/skip.py").write_text("")
    hashes = project_hashes(root)
    assert sorted(hashes) == ["tests/check_a.py", "tests/test_b.py", "tox.ini"]
    assert python_files(root) == ("check_*.py",)
    assert list_test_files(hashes, python_files(root)) == ("tests/check_a.py",)
    path = tmp_path / "cache/map.json"
    write_map(path, _map())
    assert read_map(path) == _map()
    path.write_text("{not json")
    assert read_map(path) is None


def test_nearest_first_ranks_the_own_test_module_then_naming_then_importing_then_the_rest():
    texts = {
        "tests/test_zz_rest.py": "def test_x():\n    pass\n",
        "tests/test_format.py": "import pkg\n",
        "tests/test_calls.py": "from pkg.utils import split_lines\n",
        "tests/test_utils.py": "def test_nothing_named():\n    pass\n",
        "tests/test_b.py": "x = 'utils'\n",
    }
    ranked = nearest_first(texts, "pkg.utils", ("split_lines", "utils"), "pkg")
    assert ranked == (
        ("tests/test_utils.py", 0),
        ("tests/test_b.py", 1),
        ("tests/test_calls.py", 1),
        ("tests/test_format.py", 2),
        ("tests/test_zz_rest.py", 3),
    )
    assert round_robin(tuple(name for name, _ in ranked), 2) == [
        ("tests/test_utils.py", "tests/test_calls.py", "tests/test_zz_rest.py"),
        ("tests/test_b.py", "tests/test_format.py"),
    ]


def test_fingerprints_ignore_comments_and_tell_a_changed_function_from_a_changed_module():
    source = (
        "import re\n\n\nclass Box:\n    def open(self):\n        return 1\n\n\n"
        "def f():\n    def g():\n        return 2\n    return g()\n"
    )
    before = fingerprints(source)
    assert set(before) == {"Box.open", "f", "f.<locals>.g", "<module>"}
    assert fingerprints(source.replace("return 1", "return 1  # why")) == before
    inner = fingerprints(source.replace("return 2", "return 3"))
    assert {q for q in before if before[q] != inner[q]} == {"f", "f.<locals>.g"}  # the enclosing one too
    assert fingerprints(source.replace("import re", "import os"))["<module>"] != before["<module>"]
    assert fingerprints("def (") is None


def test_a_change_inside_one_function_retraces_only_the_tests_that_ran_it():
    old = replace(_map(), prints={"pkg/core.py": {"public": "p", "other": "o", "<module>": "m"}})
    hashes = {**HASHES, "pkg/core.py": "A"}
    changed = {"public": "P", "other": "o", "<module>": "m"}
    update = plan_update(old, hashes, TESTS, lambda name: changed)
    assert update.functions == ("pkg/core.py::public",) and update.node_ids == ("tests/test_core.py::test_public",)
    assert update.why == "1 file changed (1 function in them)"
    comment = plan_update(old, hashes, TESTS, lambda name: old.prints["pkg/core.py"])
    assert comment.node_ids == () and comment.functions == ()
    module = plan_update(old, hashes, TESTS, lambda name: {**changed, "<module>": "M"})  # an import, a constant
    assert set(module.node_ids) == {"tests/test_core.py::test_public", "tests/test_other.py::test_other"}
