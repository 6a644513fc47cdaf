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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coderefine.errors import ConfigError, UsageError
from coderefine.setting_specs import SPEC_BY_NAME, SPECS, SettingSpec, SettingValues

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


# Keys a later part of coderefine reads from [tool.coderefine] itself (tables, not single values).
_TABLES: frozenset[str] = frozenset()
_SECRET_KEYS = frozenset({"api_key", "key", "token", "openai_api_key"})


@dataclass(frozen=True)
class Settings(SettingValues):
    """The effective value of every setting, read by attribute (`settings.rel_tol`), and where each came from."""

    # The flag ("--model"), the variable ("CODEREFINE_MODEL"), "pyproject.toml" or "default", per setting.
    sources: Mapping[str, str] = field(default_factory=dict)
    pyproject: Path | None = None  # the file [tool.coderefine] was read from, if any

    def source(self, name: str) -> str:
        return self.sources.get(name, "default")

    def is_set(self, name: str) -> bool:
        return self.source(name) != "default"

    def as_dict(self) -> dict[str, Any]:
        """Every setting's value by name, in the specs' order (for reports, state keys and traces)."""
        return {spec.name: getattr(self, spec.name) for spec in SPECS}


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
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for spec in SPECS:
        if flags.get(spec.name) is not None:
            try:
                value = _coerce(spec, flags[spec.name], spec.flag, Path.cwd())
            except ConfigError as exc:
                raise UsageError(exc.message) from None  # a bad flag is a usage error (exit 2)
            values[spec.name], sources[spec.name] = value, spec.flag
            continue
        env_name = next((name for name in spec.env if environ.get(name, "").strip()), None)
        if env_name is not None:
            values[spec.name] = _coerce(spec, environ[env_name], env_name, Path.cwd())
            sources[spec.name] = env_name
        elif spec.name in from_file:
            values[spec.name], sources[spec.name] = from_file[spec.name], "pyproject.toml"
    unknown = sorted(set(flags) - set(SPEC_BY_NAME))
    if unknown:  # a programming error in a caller, not a user mistake
        raise ValueError(f"unknown settings: {unknown}")
    return Settings(**values, sources=sources, pyproject=pyproject)


def mask_secret(secret: str) -> str:
    """Enough to tell two keys apart, not enough to use one."""
    if len(secret) < 12:
        return "*" * len(secret)
    return f"{secret[:3]}...{secret[-4:]}"
