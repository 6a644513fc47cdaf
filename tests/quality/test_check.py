"""`coderefine check`: deterministic thresholds, one actionable line per finding, exit codes, settings, cache."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from coderefine.errors import ExitCode
from coderefine.quality.check import COMPLEXITY, MAINTAINABILITY, READABILITY, CheckThresholds, check_file
from tests.cli.test_errors import assert_clean_error

# Complexity 12: eleven decision points in one function.
COMPLEX = '''
def classify(value, flags):
    """Sort a value into a bucket."""
    if value < 0:
        return "negative"
    if value == 0:
        return "zero"
    for flag in flags:
        if flag == "skip":
            continue
        if flag == "stop":
            break
    if value < 10 and "small" in flags:
        return "small"
    elif value < 100:
        return "medium"
    elif value < 1000:
        return "large"
    while value > 10000:
        value //= 10
    try:
        return str(int(value))
    except ValueError:
        return "other"
'''
CLEAN = '''
def double(value):
    """Twice the value."""
    return value * 2
'''
# Poor names and a complex function: readability well below 60.
POORLY_NAMED = """
def f(a, b, c, dd, ee):
    ll = []
    for qq in a:
        if qq and b:
            if c or dd:
                ll.append(qq)
            elif ee and qq > 3:
                ll.append(-qq)
        elif qq < 0 or qq > 100:
            ll.append(0)
    return ll
"""


@pytest.fixture
def check(cli, tmp_path):
    """The real CLI, with the check cache in a private folder."""
    cache = tmp_path / "cache-home"

    def run(*args, cwd=None, env=None):
        return cli("check", *args, cwd=cwd, env={"XDG_CACHE_HOME": str(cache), **(env or {})})

    run.cache = cache / "coderefine" / "check"
    return run


def write(folder, name, text):
    path = folder / name
    path.write_text(text.lstrip("\n"))
    return path


def test_check_file_reports_each_metric_with_its_location(tmp_path):
    path = write(tmp_path, "mod.py", COMPLEX + "\n\n" + POORLY_NAMED)
    findings = check_file(path, CheckThresholds(max_complexity=10, min_maintainability=90, min_readability=90))
    by_metric = {finding.metric: finding for finding in findings}
    complexity = by_metric[COMPLEXITY]
    assert (complexity.function, complexity.line, complexity.value, complexity.threshold) == ("classify", 1, 12, 10)
    assert complexity.end_line == 23  # the function's last line, for SARIF regions and review comments
    assert by_metric[MAINTAINABILITY].value < 90 and by_metric[MAINTAINABILITY].function is None
    assert "rename unclear names (a, b, c, dd, ee, ...)" in by_metric[READABILITY].message
    assert check_file(path, CheckThresholds(max_complexity=12, min_maintainability=0, min_readability=0)) == []


def test_too_complex_function_fails_with_one_actionable_line(check, tmp_path):
    path = write(tmp_path, "mod.py", COMPLEX)
    proc = check(path, "--min-readability", "0")
    assert proc.returncode == ExitCode.FINDINGS == 16, proc.stdout + proc.stderr
    first, summary = proc.stdout.strip().splitlines()
    assert first == (
        f"{path}:1: cyclomatic-complexity 12 > 10: split `classify` into smaller functions (move nested "
        "branches and loop bodies into helpers, return early instead of nesting)"
    )
    assert summary.startswith("1 file checked: 1 finding in 1 file")
    assert proc.stderr == ""


def test_clean_files_exit_zero(check, tmp_path):
    proc = check(write(tmp_path, "a.py", CLEAN), write(tmp_path, "b.py", COMPLEX), "--max-complexity", "12")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "2 files checked: no findings"


def test_readability_finding_names_what_to_fix(check, tmp_path):
    path = write(tmp_path, "poor.py", POORLY_NAMED)
    proc = check(path, "--min-readability", "60")
    assert proc.returncode == 16
    line = next(line for line in proc.stdout.splitlines() if "readability-score" in line)
    assert re.match(rf"{re.escape(str(path))}:1: readability-score \d+\.\d < 60: rename unclear names", line), line
    assert f"`coderefine readability {path}` proposes a verified rewrite" in line


def test_thresholds_come_from_pyproject_env_and_flags(check, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    path = write(project, "mod.py", COMPLEX)
    (project / "pyproject.toml").write_text("[tool.coderefine]\nmax_complexity = 12\nmin_readability = 0\n")
    assert check(path).returncode == 0
    assert check(path, env={"CODEREFINE_MAX_COMPLEXITY": "11"}).returncode == 16
    assert check(path, "--max-complexity", "5", env={"CODEREFINE_MAX_COMPLEXITY": "20"}).returncode == 16
    (project / "pyproject.toml").write_text("[tool.coderefine]\nmax_complexity = 0\n")
    assert_clean_error(check(path), ExitCode.CONFIG, "max_complexity must be at least 1")


def test_config_shows_the_check_thresholds(cli, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.coderefine]\nmin_readability = 55\n")
    proc = cli("config", tmp_path, "--json", "--max-complexity", "7")
    assert proc.returncode == 0, proc.stderr
    rows = {row["name"]: row for row in json.loads(proc.stdout)["settings"]}
    assert (rows["max_complexity"]["value"], rows["max_complexity"]["source"]) == ("7", "--max-complexity")
    assert (rows["min_readability"]["value"], rows["min_readability"]["source"]) == ("55.0", "pyproject.toml")
    assert (rows["min_maintainability"]["value"], rows["min_maintainability"]["source"]) == ("10.0", "default")


@pytest.mark.parametrize(
    ("setup", "code", "fragment"),
    [
        (lambda folder: folder / "missing.py", ExitCode.FILE_NOT_FOUND, "no such file"),
        (lambda folder: folder, ExitCode.IS_A_DIRECTORY, "is a directory"),
        (lambda folder: write_bytes(folder / "latin.py", b"name = '\xe9t\xe9'\n"), ExitCode.NOT_UTF8, "not UTF-8"),
        (lambda folder: write(folder, "broken.py", "def f(:\n    pass\n"), ExitCode.SYNTAX_ERROR, ":1: syntax error"),
    ],
)
def test_bad_input_is_one_line_with_its_code(check, tmp_path, setup, code, fragment):
    assert_clean_error(check(setup(tmp_path)), code, fragment)


def write_bytes(path, data):
    path.write_bytes(data)
    return path


def test_one_broken_file_among_several_is_reported_and_the_others_still_checked(check, tmp_path):
    broken = write(tmp_path, "broken.py", "x = (\n")
    complex_file = write(tmp_path, "mod.py", COMPLEX)
    proc = check(complex_file, broken, write(tmp_path, "clean.py", CLEAN), "--format", "json")
    assert proc.returncode == ExitCode.SYNTAX_ERROR, proc.stdout + proc.stderr
    assert proc.stderr.strip().splitlines() == [f"error: {broken}:1: syntax error: '(' was never closed"]
    data = json.loads(proc.stdout)
    assert data["files"] == 3
    assert [(f["path"], f["metric"]) for f in data["findings"]] == [(str(complex_file), COMPLEXITY)]
    assert data["errors"] == [
        {
            "path": str(broken),
            "code": 6,
            "kind": "syntax_error",
            "message": f"{broken}:1: syntax error: '(' was never closed",
        }
    ]


def test_json_output_file_and_the_text_on_stdout(check, tmp_path):
    path = write(tmp_path, "mod.py", COMPLEX)
    out = tmp_path / "out" / "findings.json"
    out.parent.mkdir()
    proc = check(path, "--format", "json", "--output", out, "--min-readability", "0")
    assert proc.returncode == 16
    data = json.loads(out.read_text())
    assert data["thresholds"] == {"max_complexity": 10, "min_maintainability": 10.0, "min_readability": 0.0}
    (finding,) = data["findings"]
    assert finding == {
        "path": str(path),
        "line": 1,
        "end_line": 23,
        "function": "classify",
        "metric": COMPLEXITY,
        "value": 12.0,
        "threshold": 10.0,
        "message": finding["message"],
    }
    assert proc.stdout.startswith(f"{path}:1: cyclomatic-complexity 12 > 10")
    assert_clean_error(check(path, "--format", "xml"), ExitCode.USAGE, "--format must be one of text, json, sarif")


def test_results_are_cached_by_content_and_thresholds(check, tmp_path):
    path = write(tmp_path, "mod.py", COMPLEX)

    def cached(*args):
        proc = check(path, "--format", "json", *args)
        assert proc.returncode == 16, proc.stderr
        return json.loads(proc.stdout)["cached"]

    assert cached() == 0
    assert cached() == 1
    assert len(list(check.cache.rglob("*.json"))) == 1
    assert cached("--max-complexity", "9") == 0  # other thresholds: another entry
    assert cached("--no-cache") == 0
    path.write_text(COMPLEX.lstrip("\n") + "\nX = 1\n")  # edited: a miss
    assert cached() == 0
    for entry in check.cache.rglob("*.json"):
        entry.write_text("{not json")  # a damaged entry is a miss, not an error
    assert cached() == 0
    assert cached() == 1


def test_fast_path_and_typer_take_the_same_options():
    import typer.main

    from coderefine.cli.app import app
    from coderefine.cli.fast_check import fast_parser

    command = typer.main.get_command(app).commands["check"]
    typer_options = {
        opt
        for param in command.params
        if param.param_type_name == "option"
        for opt in (*param.opts, *param.secondary_opts)
    }
    fast_options = {opt for action in fast_parser()._actions for opt in action.option_strings}
    assert typer_options - {"--help"} == fast_options


def test_check_imports_no_model_sandbox_or_rewrite_machinery(tmp_path):
    """A warm check must stay at interpreter start-up: none of the heavy libraries on its path."""
    path = write(tmp_path, "mod.py", CLEAN)
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "coderefine", "check", path, "--no-cache"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "radon" in imported  # the check did run
    for heavy in ("openai", "docker", "libcst", "typer", "rich", "pydantic", "coderefine.refine.run"):
        assert heavy not in imported, heavy


def test_an_output_file_that_cannot_be_written_is_one_line(check, tmp_path):
    path = write(tmp_path, "mod.py", CLEAN)
    proc = check(path, "--format", "json", "--output", tmp_path / "no" / "such" / "folder" / "out.json")
    assert proc.returncode == ExitCode.WRITE_CONFLICT
    assert proc.stderr.startswith("error: cannot write ") and len(proc.stderr.strip().splitlines()) == 1
