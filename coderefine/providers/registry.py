"""Provider registry: each provider is registered by name behind the one `Provider` interface."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from coderefine.errors import BadScript, UsageError
from coderefine.providers.base import Provider


def _offline(script: Path | None) -> Provider:
    from coderefine.providers.offline import OfflineProvider

    return OfflineProvider()


def _scripted(script: Path | None) -> Provider:
    from coderefine.providers.scripted import ScriptedProvider

    if script is None:
        raise BadScript("--provider scripted needs --script FILE (a JSON file of messages per role)")
    return ScriptedProvider(script)


PROVIDERS: dict[str, Callable[[Path | None], Provider]] = {
    "offline": _offline,
    "scripted": _scripted,
}


def make_provider(name: str, script: Path | None = None) -> Provider:
    try:
        factory = PROVIDERS[name]
    except KeyError:
        raise UsageError(f"unknown provider '{name}'; available: {', '.join(PROVIDERS)}") from None
    if script is not None and name != "scripted":
        raise UsageError("--script is only used with --provider scripted")
    return factory(script)
