"""Settings: flag > environment > pyproject.toml > default, each value with its source; `coderefine config`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coderefine.errors import ConfigError, ExitCode, UsageError
from coderefine.providers.cache import cache_key, mask_measurements
from coderefine.providers.registry import choose_provider
from coderefine.settings import mask_secret, resolve_settings
from tests.conftest import run_cli


def project(tmp_path: Path, table: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(f"[project]\nname = 'x'\n\n[tool.coderefine]\n{table}\n")
    (tmp_path / "pkg").mkdir()
    return tmp_path / "pkg"


def test_precedence_flag_env_pyproject_default(tmp_path):
    start = project(tmp_path, 'model = "from-file"\ntemperature = 0.5\nseed = 3\nmax_retries = 4')
    environ = {"CODEREFINE_MODEL": "from-env", "CODEREFINE_SEED": "9"}
    settings = resolve_settings({"model": "from-flag"}, start, environ)
    assert (settings.model, settings.source("model")) == ("from-flag", "--model")
    assert (settings.seed, settings.source("seed")) == (9, "CODEREFINE_SEED")
    assert (settings.temperature, settings.source("temperature")) == (0.5, "pyproject.toml")
    assert (settings.max_retries, settings.source("max_retries")) == (4, "pyproject.toml")
    assert (settings.request_timeout, settings.source("request_timeout")) == (120.0, "default")
    assert settings.pyproject == tmp_path / "pyproject.toml"

    without_flag = resolve_settings({}, start, environ)
    assert (without_flag.model, without_flag.source("model")) == ("from-env", "CODEREFINE_MODEL")
    assert resolve_settings({}, start, {}).model == "from-file"


def test_the_nearest_pyproject_with_a_coderefine_table_applies(tmp_path):
    start = project(tmp_path, 'model = "outer"')
    (start / "pyproject.toml").write_text("[project]\nname = 'inner'\n")  # no [tool.coderefine]: skipped
    assert resolve_settings({}, start / "mod.py", {}).model == "outer"


def test_openai_base_url_is_honoured_below_coderefine_base_url(tmp_path):
    environ = {"OPENAI_BASE_URL": "http://a/v1"}
    assert resolve_settings({}, tmp_path, environ).source("base_url") == "OPENAI_BASE_URL"
    both = resolve_settings({}, tmp_path, {**environ, "CODEREFINE_BASE_URL": "http://b/v1"})
    assert both.base_url == "http://b/v1"


def test_relative_cache_dir_in_pyproject_is_relative_to_it(tmp_path):
    start = project(tmp_path, 'cache_dir = ".llm-cache"\ncache = false')
    settings = resolve_settings({}, start, {})
    assert settings.cache_dir == tmp_path / ".llm-cache" and settings.cache is False
    assert resolve_settings({}, start, {"CODEREFINE_CACHE": "yes"}).cache is True


@pytest.mark.parametrize(
    ("table", "environ", "message"),
    [
        ('api_key = "sk-abc"', {}, "'api_key' looks like a secret"),
        ('modle = "x"', {}, "unknown setting 'modle'"),
        ('temperature = "hot"', {}, "temperature must be a number, not 'hot'"),
        ("temperature = 3.5", {}, "temperature must be at most 2"),
        ("max_calls = 0", {}, "max_calls must be at least 1"),
        ('provider = "gpt"', {}, "provider must be one of openai, offline, scripted"),
        ("cache = 1", {}, "cache must be true or false"),
        ("", {"CODEREFINE_SEED": "seven"}, "CODEREFINE_SEED must be a whole number, not 'seven'"),
        ("[broken", {}, "not valid TOML"),
    ],
)
def test_bad_configuration_names_the_place_to_fix(tmp_path, table, environ, message):
    if table == "[broken":
        (tmp_path / "pyproject.toml").write_text("[tool.coderefine\n")
        start = tmp_path
    else:
        start = project(tmp_path, table)
    with pytest.raises(ConfigError) as caught:
        resolve_settings({}, start, environ)
    assert message in caught.value.message


def test_a_bad_flag_is_a_usage_error():
    with pytest.raises(UsageError, match="--temperature must be at most 2"):
        resolve_settings({"temperature": 9.0}, Path.cwd(), {})


@pytest.mark.parametrize(
    ("flags", "environ", "script", "expected"),
    [
        ({}, {}, None, ("offline", "no model configured; set OPENAI_API_KEY or base_url to use one")),
        ({}, {"OPENAI_API_KEY": "sk-1"}, None, ("openai", "OPENAI_API_KEY is set")),
        ({"api_key_env": "MY_KEY"}, {"MY_KEY": "k", "OPENAI_API_KEY": ""}, None, ("openai", "MY_KEY is set")),
        ({"base_url": "http://localhost:11434/v1"}, {}, None, ("openai", "base_url is set (--base-url)")),
        ({"provider": "offline"}, {"OPENAI_API_KEY": "sk-1"}, None, ("offline", "set by --provider")),
        ({}, {"OPENAI_API_KEY": "sk-1"}, Path("s.json"), ("scripted", "--script was given")),
    ],
)
def test_provider_choice_and_its_reason(tmp_path, flags, environ, script, expected):
    choice = choose_provider(resolve_settings(flags, tmp_path, environ), script, environ)
    assert (choice.name, choice.reason) == expected


def test_masking():
    assert mask_secret("sk-proj-abcdefghijklmnop") == "sk-...mnop"
    assert mask_secret("short") == "*****"


def test_cache_key_ignores_measurement_noise_but_not_code_or_words():
    def key(text: str, **parameters: float) -> str:
        return cache_key("http://x/v1", "m", [{"role": "user", "content": text}], parameters)

    facts = "- Speed: {}x, 95% interval [{}, 2.10] ({} s)\n```python\nx = 0.5\n```"
    assert key(facts.format("1.92", "1.80", "0.31")) == key(facts.format("1.95", "1.79", "0.29"))
    assert key(facts.format("1.92", "1.80", "0.31")) != key(facts.format("1.92", "1.80", "0.31").replace("0.5", "0.25"))
    assert key("Tests: 3 passed") != key("Tests: 4 passed")
    assert key("a") != key("a", temperature=0.2) and key("a", seed=1) != key("a", seed=2)
    assert mask_measurements("line 12, 40% of 1.5 s") == "line 12, #% of # s"


def test_config_command_shows_sources_and_masks_the_key(tmp_path):
    start = project(tmp_path, 'model = "from-file"\ntemperature = 0.5')
    key = "sk-proj-abcdefghijklmnop"
    env = {"OPENAI_API_KEY": key, "CODEREFINE_SEED": "9"}
    proc = run_cli("config", start, "--model", "from-flag", env=env)
    assert proc.returncode == 0, proc.stderr
    assert key not in proc.stdout and "sk-...mnop (from OPENAI_API_KEY)" in proc.stdout
    assert "provider: openai (OPENAI_API_KEY is set)" in proc.stdout
    rows = {line.split()[0]: line.split()[1:] for line in proc.stdout.splitlines() if line.strip()}
    assert rows["model"] == ["from-flag", "--model"]
    assert rows["temperature"] == ["0.5", "pyproject.toml"] and rows["seed"] == ["9", "CODEREFINE_SEED"]

    as_json = json.loads(run_cli("config", start, "--json", env=env).stdout)
    settings = {row["name"]: row for row in as_json["settings"]}
    assert settings["model"]["source"] == "pyproject.toml" and as_json["api_key"]["value"] == "sk-...mnop"
    assert as_json["pyproject"] == str(tmp_path / "pyproject.toml")


@pytest.mark.parametrize("command", ["config", "optimize"])
def test_bad_configuration_is_one_line_and_exit_code_14(tmp_path, command):
    start = project(tmp_path, 'api_key = "sk-proj-abcdefghijklmnop"')
    (start / "mod.py").write_text("def f():\n    return 1\n")
    args = [start] if command == "config" else [start / "mod.py"]
    proc = run_cli(command, *args)
    assert proc.returncode == ExitCode.CONFIG, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "looks like a secret" in lines[0] and "sk-proj" not in lines[0]
