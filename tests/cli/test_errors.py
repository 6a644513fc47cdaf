"""Bad input: one line on stderr, a distinct exit code, no traceback, nothing of the user's changed."""

from __future__ import annotations

import hashlib
import json

import pytest

from coderefine.errors import ExitCode
from tests.conftest import fenced, write_script

GOOD_MODULE = "def double(x):\n    return x * 2\n"
GOOD_TEST = "from mod import double\n\ndef test_double():\n    assert double(2) == 4\n"


def assert_clean_error(proc, code: ExitCode, fragment: str) -> None:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert fragment in lines[0]
    assert "Traceback" not in proc.stdout + proc.stderr


def tree_digest(root) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(root)).encode() + path.read_bytes())
    return digest.hexdigest()


def test_missing_file(cli, tmp_path):
    assert_clean_error(cli("optimize", tmp_path / "nope.py"), ExitCode.FILE_NOT_FOUND, "no such file")


def test_directory(cli, tmp_path):
    assert_clean_error(cli("optimize", tmp_path), ExitCode.IS_A_DIRECTORY, "is a directory")


def test_not_utf8(cli, tmp_path):
    path = tmp_path / "latin.py"
    path.write_bytes(b"name = '\xe9t\xe9'\n")
    assert_clean_error(cli("readability", path), ExitCode.NOT_UTF8, "not UTF-8")


def test_syntax_error(cli, tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("def f(:\n    pass\n")
    assert_clean_error(cli("optimize", path), ExitCode.SYNTAX_ERROR, "syntax error")


def test_no_tests(cli, make_project):
    root = make_project({"mod.py": GOOD_MODULE})
    assert_clean_error(cli("optimize", root / "mod.py"), ExitCode.NO_TESTS, "no tests found")


@pytest.mark.slow
def test_tests_folder_without_tests(cli, make_project):
    root = make_project({"mod.py": GOOD_MODULE, "checks/helper.py": "X = 1\n"})
    proc = cli("optimize", root / "mod.py", "--tests", root / "checks")
    assert_clean_error(proc, ExitCode.NO_TESTS, "collected no tests")


def test_unknown_function(cli, make_project):
    root = make_project({"mod.py": GOOD_MODULE, "test_mod.py": GOOD_TEST})
    assert_clean_error(cli("optimize", root / "mod.py", "--function", "triple"), ExitCode.UNKNOWN_FUNCTION, "triple")


@pytest.mark.parametrize("content", ["{not json", json.dumps(["list"]), json.dumps({"generate": "x"})])
def test_bad_script(cli, make_project, tmp_path, content):
    root = make_project({"mod.py": GOOD_MODULE, "test_mod.py": GOOD_TEST})
    script = tmp_path / "script.json"
    script.write_text(content)
    proc = cli("optimize", root / "mod.py", "--provider", "scripted", "--script", script)
    assert_clean_error(proc, ExitCode.BAD_SCRIPT, "script.json")


def test_scripted_without_script(cli, make_project):
    root = make_project({"mod.py": GOOD_MODULE, "test_mod.py": GOOD_TEST})
    assert_clean_error(cli("optimize", root / "mod.py", "--provider", "scripted"), ExitCode.BAD_SCRIPT, "--script")


def test_unknown_provider_and_bad_numbers(cli, make_project):
    root = make_project({"mod.py": GOOD_MODULE, "test_mod.py": GOOD_TEST})
    assert_clean_error(
        cli("optimize", root / "mod.py", "--provider", "gpt"), ExitCode.USAGE, "--provider must be one of"
    )
    assert_clean_error(cli("optimize", root / "mod.py", "--max-iterations", "0"), ExitCode.USAGE, "--max-iterations")
    assert_clean_error(cli("optimize", root / "mod.py", "--pass-env", "OPENAI_API_KEY"), ExitCode.USAGE, "secret")


@pytest.mark.slow
def test_original_failing_its_tests_stops_with_a_report(cli, make_project, tmp_path):
    root = make_project({"mod.py": GOOD_MODULE, "test_mod.py": GOOD_TEST.replace("== 4", "== 5")})
    before = tree_digest(root)
    report = tmp_path / "report.json"
    script = write_script(tmp_path / "s.json", [fenced("def double(x):\n    return x + x")])
    proc = cli(
        "optimize",
        root / "mod.py",
        "--provider",
        "scripted",
        "--script",
        script,
        "--report",
        report,
        "--write",
    )
    assert_clean_error(proc, ExitCode.BASELINE_FAILS, "fails its own tests")
    assert "test_mod.py::test_double" in proc.stderr
    data = json.loads(report.read_text())
    assert data["status"] == "failed" and data["error"]["kind"] == "baseline_fails" and data["best"] is None
    assert tree_digest(root) == before


def test_exit_codes_are_distinct():
    codes = [int(code) for code in ExitCode]
    assert len(codes) == len(set(codes))
