"""What `coderefine scan` checks before any sandbox starts: the workload command, the paths, the tests."""

from __future__ import annotations

import pytest

from coderefine.errors import InputFileNotFound, NoTestsFound, UsageError
from coderefine.settings import resolve_settings
from coderefine.sweep.profiling import parse_command
from coderefine.sweep.scan import ScanOptions, validate


def test_a_workload_command_is_a_python_program():
    assert parse_command("python bench.py --size 10") == ("bench.py", "--size", "10")
    assert parse_command("python3 -m pkg.bench 'two words'") == ("-m", "pkg.bench", "two words")
    for bad in ("ls -la", "python", "python -m", "python -X dev bench.py", "python 'unclosed"):
        with pytest.raises(UsageError):
            parse_command(bad)


def test_paths_tests_and_command_are_checked_up_front(make_project, tmp_path):
    root = make_project({"pkg/__init__.py": "", "pkg/m.py": "def f():\n    return 1\n", "bench.py": ""})
    settings = resolve_settings({}, root)
    (root / "tests").mkdir()
    (root / "tests" / "test_m.py").write_text("def test_f():\n    pass\n")
    assert validate(ScanOptions((root / "pkg",), settings)) == (root, ("pkg",), (), None)
    assert validate(ScanOptions((), settings, command="python bench.py 3", root=root))[3] == ("bench.py", "3")
    cases = [
        (ScanOptions((root / "nope",), settings), InputFileNotFound),
        (ScanOptions((tmp_path,), settings, root=root), UsageError),  # outside the root
        (ScanOptions((), settings, tests=root / "tests", command="python bench.py", root=root), UsageError),
        (ScanOptions((), settings, command="python missing.py", root=root), InputFileNotFound),
        (ScanOptions((), settings, pass_env=("API_TOKEN",), root=root), UsageError),
    ]
    for options, error in cases:
        with pytest.raises(error):
            validate(options)


def test_a_project_without_tests_is_refused_unless_a_command_is_the_workload(make_project):
    root = make_project({"pkg/m.py": "def f():\n    return 1\n", "run.py": ""})
    settings = resolve_settings({}, root)
    with pytest.raises(NoTestsFound):
        validate(ScanOptions((root / "pkg",), settings))
    assert validate(ScanOptions((root / "pkg",), settings, command="python run.py"))[3] == ("run.py",)
