"""Every command's --help reads like a well-kept CLI's, and its setting options come from the specs."""

from __future__ import annotations

import re

import pytest
import typer.main
from typer.core import TyperArgument, TyperOption
from typer.testing import CliRunner

from coderefine.cli.app import app
from coderefine.cli.options import ALL_SETTINGS, CHECK_SETTINGS, RUN_SETTINGS, help_text
from coderefine.setting_specs import SPEC_BY_NAME

# Each command and the settings it takes.
COMMANDS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("optimize",): RUN_SETTINGS,
    ("readability",): RUN_SETTINGS,
    ("refine",): RUN_SETTINGS,
    ("bench",): RUN_SETTINGS,
    ("replay",): ("sandbox", "image"),
    ("config",): ALL_SETTINGS,
    ("review",): ALL_SETTINGS,
    ("check",): CHECK_SETTINGS,
    ("sandbox", "build"): (),
    ("scan",): ("sandbox", "image", "timeout", "memory_mb", "min_calls", "min_coverage"),
    ("sweep",): (*RUN_SETTINGS, "engine", "ray_address", "workers"),
}
USAGE = {
    ("optimize",): "Usage: coderefine optimize [OPTIONS] FILE",
    ("readability",): "Usage: coderefine readability [OPTIONS] FILE",
    ("refine",): "Usage: coderefine refine [OPTIONS] FILES...",
    ("bench",): "Usage: coderefine bench [OPTIONS] SUITE_DIR",
    ("replay",): "Usage: coderefine replay [OPTIONS] DIR",
    ("config",): "Usage: coderefine config [OPTIONS] [PATH]",
    ("review",): "Usage: coderefine review [OPTIONS]",
    ("check",): "Usage: coderefine check [OPTIONS] FILES...",
    ("sandbox", "build"): "Usage: coderefine sandbox build [OPTIONS]",
    ("scan",): "Usage: coderefine scan [OPTIONS] [PATHS...]",
    ("sweep",): "Usage: coderefine sweep [OPTIONS] [PATHS...]",
}
METAVAR = re.compile(r"^(\[[a-z|]+\]|[A-Z][A-Z_.\[\]:]*|X\.Y)$")


def render_help(*words: str) -> str:
    """The help as a user sees it, wide enough that no line wraps, without the boxes' frames."""
    result = CliRunner().invoke(app, [*words, "--help"], env={"COLUMNS": "400"}, prog_name="coderefine")
    assert result.exit_code == 0, result.output
    return "\n".join(" ".join(line.strip(" │╭╮╰╯─").split()) for line in result.output.splitlines())


def command_of(words: tuple[str, ...]):
    command = typer.main.get_command(app)
    for word in words:
        command = command.commands[word]
    return command


@pytest.mark.parametrize("words", list(COMMANDS), ids=" ".join)
def test_help_reads_well(words):
    text = render_help(*words)
    assert USAGE[words] in text.splitlines()
    assert "<bool>" not in text and "{" not in text.split("\n\n", 1)[0]
    for line in text.splitlines():
        assert not line.startswith("--help ") or line == "--help Show this message and exit."


@pytest.mark.parametrize("words", list(COMMANDS), ids=" ".join)
def test_every_setting_option_is_there_with_its_specs_help(words):
    text = render_help(*words)
    command = command_of(words)
    options = {param.name: param for param in command.params if isinstance(param, TyperOption)}
    for name in COMMANDS[words]:
        spec = SPEC_BY_NAME[name]
        assert options[name].help == help_text(spec)
        assert spec.help[1:] in text, (name, spec.help)
        row = next(line for line in text.splitlines() if line.startswith(f"{spec.flag} "))
        assert spec.panel, name
        if spec.kind is bool:  # a flag: both spellings, no value
            assert row.split()[:2] == list(spec.flags), row
        else:
            assert row.split()[1] == options[name].metavar, row
    assert not {name for name in options if name in SPEC_BY_NAME} - set(COMMANDS[words])


@pytest.mark.parametrize("words", list(COMMANDS), ids=" ".join)
def test_every_option_has_help_and_a_sensible_metavar(words):
    for param in command_of(words).params:
        if getattr(param, "hidden", False):
            continue
        assert param.help, param.name
        if isinstance(param, TyperArgument) or not param.is_flag:
            assert param.metavar is not None and METAVAR.match(param.metavar), (param.name, param.metavar)


def test_the_app_help_has_no_types_on_its_flags():
    text = render_help()
    assert "<bool>" not in text
    assert "--version Show the version and exit." in text.splitlines()


def test_defaults_come_from_the_spec():
    text = render_help("optimize").splitlines()
    assert any(line.startswith("--timeout S ") and line.endswith("[default: 300]") for line in text)
    assert any(line.endswith("[default: --require-sufficient-tests]") for line in text)
    assert any(line.startswith("--cache --no-cache ") and line.endswith("[default: --cache]") for line in text)


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--allow-insufficient-tests"], {"allow_insufficient_tests": "True"}),
        (["--require-sufficient-tests"], {"allow_insufficient_tests": "False"}),
        (["--no-cache", "--gen-inputs"], {"cache": "False", "gen_inputs": "True"}),
        (["--timeout", "12.5", "--unordered", "a,b"], {"timeout": "12.5", "unordered": "a,b"}),
    ],
)
def test_every_flag_spelling_reaches_the_settings(flags, expected, tmp_path):
    import json

    result = CliRunner().invoke(app, ["config", str(tmp_path), "--json", *flags], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.output)["settings"]}
    for name, value in expected.items():
        assert rows[name]["value"] == value and rows[name]["source"] == SPEC_BY_NAME[name].flag
