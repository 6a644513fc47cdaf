"""The README's quick start is the contract with new users: CI must run exactly those commands."""

from __future__ import annotations

import re

from tests.conftest import REPO


def quick_start_commands() -> list[str]:
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, re.DOTALL)]


def test_quick_start_has_two_commands_and_ci_runs_both():
    commands = quick_start_commands()
    assert len(commands) == 2 and all("\n" not in c for c in commands)
    assert "coderefine optimize examples/" in commands[0] and "pip install ." in commands[0]
    assert "pytest" in commands[1] and ".[test]" in commands[1]
    ci_lines = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    for command in commands:
        assert command in ci_lines, command


def test_quick_start_example_exists():
    example = quick_start_commands()[0].split("coderefine optimize ", 1)[1].split()[0]
    assert (REPO / example).is_file()


def test_every_exit_code_is_documented():
    from coderefine.errors import ExitCode

    readme = (REPO / "README.md").read_text()
    table = readme.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    documented = {int(code) for code in re.findall(r"^\| (\d+) \|", table, re.MULTILINE)}
    assert documented == {int(code) for code in ExitCode}


def test_every_setting_is_documented():
    from coderefine.setting_specs import SPECS

    readme = (REPO / "README.md").read_text()
    table = readme.split("#### Settings", 1)[1].split("\n#### ", 1)[0]
    for spec in SPECS:
        assert f"`{spec.name}`" in table, spec.name
