"""Effective settings, and where each one came from.

Precedence: a command-line flag beats an environment variable, which beats `[tool.coderefine]` in the
nearest `pyproject.toml` that has that table, which beats the default. Every value remembers its source,
so `coderefine config` can show it and an error can name the place to fix.

API keys are never a setting: the key is read from the environment variable that `api_key_env` names,
and a key written into pyproject.toml is refused (it would end up in version control).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coderefine.errors import ConfigError, UsageError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


@dataclass(frozen=True)
class SettingSpec:
    name: str
    kind: type  # str, int, float, bool, Path, or tuple (of names: "a,b" in a flag or variable, a list in TOML)
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    also_env: tuple[str, ...] = ()  # variables other tools already use for the same thing
    panel: str = ""  # the help panel its option is shown in: Model, Cache, Loop, Sandbox, Verdict, Thresholds
    metavar: str = ""  # what the option's value is called in the help (unset: from the kind: N, F, NAME, ...)
    off_flag: str = ""  # a bool's flag that turns it off (unset: --no-<name>)

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def flags(self) -> tuple[str, ...]:
        """Every spelling of its option: a bool has one flag to turn it on and one to turn it off."""
        if self.kind is bool:
            return (self.flag, self.off_flag or "--no-" + self.flag.removeprefix("--"))
        return (self.flag,)

    @property
    def env(self) -> tuple[str, ...]:
        """Variables to read, first found wins: CODEREFINE_<NAME>, then the shared ones."""
        return (f"CODEREFINE_{self.name.upper()}", *self.also_env)


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "coderefine" / "responses"


_PROVIDER_HELP = "openai, offline or scripted; unset: openai when a key or base URL is configured, else offline"
_MODEL, _CACHE, _LOOP, _SANDBOX, _VERDICT, _THRESHOLDS = "Model", "Cache", "Loop", "Sandbox", "Verdict", "Thresholds"
# The capability kinds the sandbox's audit hook tells apart (coderefine_sandbox/audit.py), for --allow.
POWERS = ("network", "process", "file_write", "file_read", "native", "dynamic_code", "import", "thread", "clock")
_SWEEP = "Sweep"
SPECS: tuple[SettingSpec, ...] = (
    SettingSpec("provider", str, None, _PROVIDER_HELP, choices=("openai", "offline", "scripted"), panel=_MODEL),
    SettingSpec("model", str, "gpt-4o-mini", "model name the endpoint knows", panel=_MODEL),
    SettingSpec(
        "base_url",
        str,
        None,
        "OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (Ollama); unset: api.openai.com",
        also_env=("OPENAI_BASE_URL",),
        panel=_MODEL,
        metavar="URL",
    ),
    SettingSpec("api_key_env", str, "OPENAI_API_KEY", "environment variable holding the API key", panel=_MODEL),
    SettingSpec(
        "temperature", float, None, "sampling temperature (unset: the server's default)", 0.0, 2.0, panel=_MODEL
    ),
    SettingSpec("seed", int, None, "sampling seed, for endpoints that honour it", panel=_MODEL),
    SettingSpec("request_timeout", float, 120.0, "seconds to wait for one answer", 0.1, panel=_MODEL, metavar="S"),
    SettingSpec("max_retries", int, 2, "retries with backoff on 429, 5xx and connection errors", 0, 20, panel=_MODEL),
    SettingSpec("max_calls", int, None, "most model calls in a run", 1, panel=_MODEL),
    SettingSpec("max_tokens", int, None, "most tokens (prompt + answer) in a run", 1, panel=_MODEL),
    SettingSpec(
        "context_tokens", int, 16000, "prompt budget; older attempts are left out beyond it", 1000, panel=_MODEL
    ),
    SettingSpec(
        "cache", bool, True, "reuse answers (and check results) saved on disk for identical requests", panel=_CACHE
    ),
    SettingSpec(
        "cache_dir",
        Path,
        None,
        "where answers are saved (unset: ~/.cache/coderefine/responses)",
        panel=_CACHE,
        metavar="DIR",
    ),
    SettingSpec(
        "sandbox",
        str,
        "auto",
        "sandbox backend: auto (Docker when an engine answers, else process), docker, process or subprocess",
        choices=("auto", "docker", "process", "subprocess"),
        panel=_SANDBOX,
    ),
    SettingSpec(
        "image",
        str,
        None,
        "Docker image with its own Python (unset: an offline image of this interpreter)",
        panel=_SANDBOX,
        metavar="TAG",
    ),
    SettingSpec("min_speedup", float, 0.05, "speedup the interval's lower bound must clear", 0.0, 10.0, panel=_LOOP),
    SettingSpec("max_iterations", int, None, "most candidates (unset: the task's default)", 1, panel=_LOOP),
    SettingSpec(
        "patience", int, None, "rounds without improvement before stopping (unset: the task's)", 1, panel=_LOOP
    ),
    SettingSpec(
        "timeout", float, 300.0, "time limit in seconds for the original's test run", 0.1, panel=_SANDBOX, metavar="S"
    ),
    SettingSpec("memory_mb", int, 2048, "memory limit per sandboxed process, MiB", 64, panel=_SANDBOX),
    SettingSpec("timing_pairs", int, 6, "interleaved original/candidate process pairs per timing", 2, panel=_SANDBOX),
    SettingSpec(
        "timing_budget",
        float,
        0.5,
        "seconds one timing pass may take; beyond, a stratified sample of the recorded calls is timed",
        0.1,
        panel=_SANDBOX,
        metavar="S",
    ),
    SettingSpec("max_complexity", int, 10, "check: most cyclomatic complexity of one function", 1, panel=_THRESHOLDS),
    SettingSpec(
        "min_maintainability",
        float,
        10.0,
        "check: least maintainability index of a file",
        0.0,
        100.0,
        panel=_THRESHOLDS,
    ),
    SettingSpec(
        "min_readability",
        float,
        40.0,
        "check: least readability score of a file (0: off)",
        0.0,
        100.0,
        panel=_THRESHOLDS,
    ),
    SettingSpec(
        "rel_tol",
        float,
        1e-9,
        "relative tolerance when comparing floats in recorded calls",
        0.0,
        1.0,
        panel=_VERDICT,
    ),
    SettingSpec(
        "abs_tol", float, 0.0, "absolute tolerance when comparing floats in recorded calls", 0.0, panel=_VERDICT
    ),
    SettingSpec(
        "unordered",
        tuple,
        (),
        "targets whose returned list or tuple may come in any order (comma-separated names)",
        panel=_VERDICT,
        metavar="NAMES",
    ),
    SettingSpec(
        "min_calls",
        int,
        3,
        "fewest usable recorded calls to the targets that can judge a candidate",
        0,
        panel=_VERDICT,
    ),
    SettingSpec(
        "min_coverage",
        float,
        0.75,
        "least share of the targets' lines the tests must run",
        0.0,
        1.0,
        panel=_VERDICT,
    ),
    SettingSpec(
        "allow_insufficient_tests",
        bool,
        False,
        "judge candidates even when min_calls or min_coverage is not met",
        panel=_VERDICT,
        off_flag="--require-sufficient-tests",
    ),
    SettingSpec(
        "allow",
        tuple,
        (),
        "powers a candidate may gain over the original (comma-separated): network, process, file_write, "
        "file_read, native, dynamic_code, import, thread, clock; unset: none",
        choices=POWERS,
        panel=_VERDICT,
        metavar="KINDS",
    ),
    SettingSpec(
        "test_selection",
        str,
        "auto",
        "tests that judge a run without --tests: auto (those that call the targets, found once per project "
        "state and cached) or all (the whole suite)",
        choices=("auto", "all"),
        panel=_VERDICT,
    ),
    SettingSpec(
        "gen_inputs",
        bool,
        False,
        "also compare on inputs generated from type hints (needs hypothesis)",
        panel=_VERDICT,
    ),
    # Programs (a target its tests run as a process: coderefine.evaluation.programs)
    SettingSpec(
        "output_match",
        str,
        "exact",
        "programs: how a recorded run's stdout must match (whitespace: trailing blanks ignored; numeric: "
        "numbers within rel_tol/abs_tol)",
        choices=("exact", "whitespace", "numeric"),
        panel=_VERDICT,
    ),
    SettingSpec("compare_stderr", bool, False, "programs: compare stderr of each recorded run too", panel=_VERDICT),
    SettingSpec(
        "min_runs",
        int,
        1,
        "programs: fewest usable recorded runs of the program that can judge a candidate",
        0,
        panel=_VERDICT,
    ),
    SettingSpec(
        "timing_inputs",
        tuple,
        (),
        "programs: stdin files (globs under the project root, comma-separated) to time on instead of the recorded runs",
        panel=_LOOP,
        metavar="GLOBS",
    ),
)
SPECS += (
    SettingSpec(
        "engine",
        str,
        "local",
        "sweep: where refinements run: local (processes) or ray",
        choices=("local", "ray"),
        panel=_SWEEP,
    ),
    SettingSpec(
        "ray_address",
        str,
        None,
        "sweep --engine ray: the cluster, auto, HOST:PORT or ray://HOST:PORT (unset: auto)",
        panel=_SWEEP,
        metavar="ADDRESS",
    ),
    SettingSpec("workers", int, None, "sweep --engine local: worker processes (unset: one per CPU)", 1, panel=_SWEEP),
)
SPEC_BY_NAME = {spec.name: spec for spec in SPECS}
# Keys a later part of coderefine reads from [tool.coderefine] itself (tables, not single values).
_TABLES: frozenset[str] = frozenset()
_SECRET_KEYS = frozenset({"api_key", "key", "token", "openai_api_key"})


@dataclass(frozen=True)
class Value:
    value: Any
    source: str  # the flag ("--model"), the variable ("CODEREFINE_MODEL"), "pyproject.toml" or "default"


@dataclass(frozen=True)
class Settings:
    values: Mapping[str, Value]
    pyproject: Path | None  # the file [tool.coderefine] was read from, if any

    def __getitem__(self, name: str) -> Any:
        return self.values[name].value

    def source(self, name: str) -> str:
        return self.values[name].source

    def is_set(self, name: str) -> bool:
        return self.values[name].source != "default"


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml upward from `start` with a [tool.coderefine] table (as ruff does)."""
    folder = start.resolve()
    if not folder.is_dir():
        folder = folder.parent
    for candidate_dir in (folder, *folder.parents):
        path = candidate_dir / "pyproject.toml"
        if path.is_file() and "coderefine" in _read_toml(path).get("tool", {}):
            return path
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None


def _coerce(spec: SettingSpec, raw: Any, where: str, base: Path | None = None) -> Any:
    """Check and convert one value; `where` names the source in the error, `base` anchors relative paths."""
    # A flag or a variable names the setting itself; a file needs the key: "pyproject.toml [...]: seed".
    where = where if where in (spec.flag, *spec.env) else f"{where}: {spec.name}"
    value = raw
    if isinstance(raw, str) and spec.kind not in (str, Path, tuple):
        value = _parse_text(spec, raw.strip(), where)
    if spec.kind is tuple:
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not all(isinstance(item, str) for item in items):
            raise ConfigError(f"{where} must be names separated by commas (or a list of names), not {raw!r}")
        value = tuple(item.strip() for item in items if item.strip())
    elif spec.kind is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false, not {raw!r}")
    elif spec.kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where} must be a whole number, not {raw!r}")
    elif spec.kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where} must be a number, not {raw!r}")
        value = float(value)
    elif spec.kind is Path:
        if not isinstance(value, (str, Path)) or not str(value).strip():
            raise ConfigError(f"{where} must be a path, not {raw!r}")
        value = Path(value).expanduser()
        if base is not None and not value.is_absolute():
            value = base / value
    elif not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where} must be a non-empty string, not {raw!r}")
    if spec.kind is tuple and spec.choices:
        unknown = [item for item in value if item not in spec.choices]
        if unknown:
            raise ConfigError(f"{where}: unknown {', '.join(unknown)}; choose from {', '.join(spec.choices)}")
    elif spec.choices and value not in spec.choices:
        raise ConfigError(f"{where} must be one of {', '.join(spec.choices)}, not {raw!r}")
    if spec.minimum is not None and value < spec.minimum:
        raise ConfigError(f"{where} must be at least {spec.minimum:g}, not {raw!r}")
    if spec.maximum is not None and value > spec.maximum:
        raise ConfigError(f"{where} must be at most {spec.maximum:g}, not {raw!r}")
    return value


def _parse_text(spec: SettingSpec, text: str, where: str) -> Any:
    if spec.kind is bool:
        lowered = text.lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise ConfigError(f"{where} must be true or false, not {text!r}")
    try:
        return spec.kind(text)
    except ValueError:
        kind = "a whole number" if spec.kind is int else "a number"
        raise ConfigError(f"{where} must be {kind}, not {text!r}") from None


def _pyproject_values(path: Path) -> dict[str, Any]:
    table = _read_toml(path).get("tool", {}).get("coderefine", {})
    where = f"{path} [tool.coderefine]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table")
    for key in table:
        if key.lower() in _SECRET_KEYS or key.lower().endswith("_key"):
            raise ConfigError(
                f"{where}: '{key}' looks like a secret; keep keys out of pyproject.toml and name the "
                "environment variable that holds it with api_key_env"
            )
        if key not in SPEC_BY_NAME and key not in _TABLES:
            raise ConfigError(f"{where}: unknown setting '{key}'; known: {', '.join(SPEC_BY_NAME)}")
    return {
        key: _coerce(SPEC_BY_NAME[key], raw, where, path.parent) for key, raw in table.items() if key in SPEC_BY_NAME
    }


def resolve_settings(flags: Mapping[str, Any], start: Path, environ: Mapping[str, str] | None = None) -> Settings:
    """`flags` holds only the options given on the command line (None means not given)."""
    environ = os.environ if environ is None else environ
    pyproject = find_pyproject(start)
    from_file = _pyproject_values(pyproject) if pyproject is not None else {}
    values: dict[str, Value] = {}
    for spec in SPECS:
        if flags.get(spec.name) is not None:
            try:
                value = _coerce(spec, flags[spec.name], spec.flag, Path.cwd())
            except ConfigError as exc:
                raise UsageError(exc.message) from None  # a bad flag is a usage error (exit 2)
            values[spec.name] = Value(value, spec.flag)
            continue
        env_name = next((name for name in spec.env if environ.get(name, "").strip()), None)
        if env_name is not None:
            values[spec.name] = Value(_coerce(spec, environ[env_name], env_name, Path.cwd()), env_name)
        elif spec.name in from_file:
            values[spec.name] = Value(from_file[spec.name], "pyproject.toml")
        else:
            values[spec.name] = Value(spec.default, "default")
    unknown = sorted(set(flags) - set(SPEC_BY_NAME))
    if unknown:  # a programming error in a caller, not a user mistake
        raise ValueError(f"unknown settings: {unknown}")
    return Settings(values, pyproject)


def mask_secret(secret: str) -> str:
    """Enough to tell two keys apart, not enough to use one."""
    if len(secret) < 12:
        return "*" * len(secret)
    return f"{secret[:3]}...{secret[-4:]}"
