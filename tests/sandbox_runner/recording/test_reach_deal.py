"""A first run's trace whose workers take the test files as they go (ReachRequest.claims): real pytest runs of the
runner's `reach` mode on a small project, each worker on its own copy, sharing one claims folder."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from coderefine_sandbox.protocol import ReachRequest, ReachTable
from coderefine_sandbox.recording.reach_run import reach

pytestmark = pytest.mark.slow  # real pytest processes

TESTS = {
    "tests/test_near.py": "import time\nfrom pkg import a, b\n\n\n"
    + "".join(f"def test_n{i}():\n    time.sleep(0.3)\n    assert a() + b() == 3\n\n\n" for i in range(3)),
    "tests/test_middle.py": "from pkg import b\n\n\ndef test_m0():\n    assert b() == 2\n",
    "tests/test_far.py": "from pkg import a\n\n\n" + "".join(f"def test_f{i}():\n    assert a() == 1\n\n\n" for i in range(2)),
}
# nearest first: the share's order, not the files' names
ORDER = ("tests/test_near.py", "tests/test_middle.py", "tests/test_far.py")


def _trace(tmp_path: Path, label: str, claims: Path, deadline: float = 300.0) -> ReachTable:
    """One worker's table, traced on a copy of its own."""
    root, io_dir = tmp_path / label / "copy", tmp_path / label / "io"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/__init__.py").write_text("def a():\n    return 1\n\n\ndef b():\n    return 2\n")
    for name, text in TESTS.items():
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text(text)
    io_dir.mkdir()
    request = ReachRequest(
        mode="reach",
        workspace=str(root),
        io_dir=str(io_dir),
        import_roots=(".",),
        test_files=ORDER,
        node_ids=(),
        universe=ORDER,
        others=True,
        test_patterns=("test_*.py",),
        deadline=deadline,
        timeout=120.0,
        hash_seed=0,
        claims=str(claims),
    )
    report = reach(request)
    assert report.table is not None, report
    return report.table


def _files(table: ReachTable) -> set[str]:
    return {test.split("::")[0] for test in table.tests}


def test_workers_take_the_test_files_as_they_go_each_file_traced_once_and_whole(tmp_path: Path):
    claims = tmp_path / "claims"
    claims.mkdir()
    with ThreadPoolExecutor(2) as pool:  # side by side, as a first run's trace runs them
        first, second = pool.map(lambda label: _trace(tmp_path, label, claims), ("first", "second"))
    assert set(first.tests) | set(second.tests) == {
        *(f"tests/test_near.py::test_n{i}" for i in range(3)),
        "tests/test_middle.py::test_m0",
        *(f"tests/test_far.py::test_f{i}" for i in range(2)),
    }
    assert not _files(first) & _files(second)  # a file's tests all in the worker that claimed it
    assert not first.untraced_files and not second.untraced_files
    # A worker coming after every file was claimed runs nothing and names nothing as untraced: it is not its own.
    late = _trace(tmp_path, "late", claims)
    assert not late.tests and not late.untraced_files and late.tests_untraced == 0
    # Past the deadline, the files a worker claims are named as not traced (by it alone).
    fresh = tmp_path / "fresh-claims"
    fresh.mkdir()
    expired = _trace(tmp_path, "expired", fresh, deadline=1e-9)
    assert not expired.tests and set(expired.untraced_files) == set(ORDER)
    assert _trace(tmp_path, "after", fresh).untraced_files == ()
