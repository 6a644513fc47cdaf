"""Provider registry: each provider is registered by name behind the one `Provider` interface, and the
choice of provider, when the user makes none, is explained."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from coderefine.errors import BadScript, UsageError
from coderefine.providers.base import Provider
from coderefine.setting_specs import default_cache_dir
from coderefine.settings import Settings


@dataclass(frozen=True)
class ProviderChoice:
    name: str
    reason: str  # shown to the user: why this provider


@dataclass(frozen=True)
class ProviderSetup:
    settings: Settings
    script: Path | None
    environ: Mapping[str, str]


def _offline(setup: ProviderSetup) -> Provider:
    from coderefine.providers.offline.provider import OfflineProvider

    return OfflineProvider()


def _scripted(setup: ProviderSetup) -> Provider:
    from coderefine.providers.scripted import ScriptedProvider

    if setup.script is None:
        raise BadScript("--provider scripted needs --script FILE (a JSON file of messages per role)")
    return ScriptedProvider(setup.script)


def _openai(setup: ProviderSetup) -> Provider:
    from coderefine.providers.cache import ResponseCache
    from coderefine.providers.openai_provider import OpenAIConfig, OpenAIProvider

    settings = setup.settings
    cache = None
    if settings.cache:
        cache = ResponseCache(settings.cache_dir or default_cache_dir())
    config = OpenAIConfig(
        model=settings.model,
        base_url=settings.base_url,
        api_key=api_key(settings, setup.environ),
        api_key_env=settings.api_key_env,
        temperature=settings.temperature,
        seed=settings.seed,
        request_timeout=settings.request_timeout,
        max_retries=settings.max_retries,
        stream=settings.stream,
    )
    return OpenAIProvider(config, cache)


PROVIDERS: dict[str, Callable[[ProviderSetup], Provider]] = {
    "offline": _offline,
    "scripted": _scripted,
    "openai": _openai,
}


def api_key(settings: Settings, environ: Mapping[str, str]) -> str | None:
    return environ.get(settings.api_key_env, "").strip() or None


def choose_provider(
    settings: Settings, script: Path | None, environ: Mapping[str, str] | None = None
) -> ProviderChoice:
    """An explicit choice wins; else a script means `scripted`, a key or a base URL means `openai`, and
    with none of those the run stays offline (no network, no cost)."""
    environ = os.environ if environ is None else environ
    if settings.is_set("provider"):
        source = settings.source("provider")
        return ProviderChoice(
            settings.provider, f"set by {source}" if source != "pyproject.toml" else "set in pyproject.toml"
        )
    if script is not None:
        return ProviderChoice("scripted", "--script was given")
    key_env = settings.api_key_env
    if api_key(settings, environ):
        return ProviderChoice("openai", f"{key_env} is set")
    if settings.base_url is not None:
        return ProviderChoice("openai", f"base_url is set ({settings.source('base_url')})")
    return ProviderChoice("offline", f"no model configured; set {key_env} or base_url to use one")


def make_provider(
    name: str, settings: Settings, script: Path | None = None, environ: Mapping[str, str] | None = None
) -> Provider:
    try:
        factory = PROVIDERS[name]
    except KeyError:
        raise UsageError(f"unknown provider '{name}'; available: {', '.join(PROVIDERS)}") from None
    if script is not None and name != "scripted":
        raise UsageError("--script is only used with --provider scripted")
    return factory(ProviderSetup(settings, script, os.environ if environ is None else environ))
