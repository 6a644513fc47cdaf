"""`coderefine config`: the effective settings, where each comes from, and the provider a run would use.

The API key is shown masked, with the variable it came from; nothing here prints a secret.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from coderefine.errors import InputFileNotFound
from coderefine.providers.registry import api_key, choose_provider
from coderefine.setting_specs import SPECS, default_cache_dir
from coderefine.settings import Settings, mask_secret, resolve_settings


def show_config(path: Path | None, flags: Mapping[str, Any], as_json: bool, console: Console) -> int:
    """Print the effective settings at `path` (the file or folder whose pyproject.toml applies; None:
    here), where each comes from, and which provider a run would use."""
    start = path or Path.cwd()
    if not start.exists():
        raise InputFileNotFound(f"{start}: no such file or folder")
    view = describe_settings(resolve_settings(flags, start))
    if as_json:
        console.print_json(data=view)
    else:
        render_settings(console, view)
    return 0


def describe_settings(settings: Settings, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    environ = os.environ if environ is None else environ
    choice = choose_provider(settings, None, environ)
    key = api_key(settings, environ)
    rows = []
    values = settings.as_dict()
    for spec in SPECS:
        value = values[spec.name]
        if spec.name == "cache_dir" and value is None:
            value = default_cache_dir()
        if isinstance(value, tuple):
            value = ",".join(value) or None
        rows.append(
            {
                "name": spec.name,
                "value": str(value) if value is not None else None,
                "source": settings.source(spec.name),
                "help": spec.help,
            }
        )
    return {
        "provider": {"name": choice.name, "reason": choice.reason},
        "api_key": {
            "variable": settings.api_key_env,
            "value": mask_secret(key) if key else None,
        },
        "pyproject": str(settings.pyproject) if settings.pyproject else None,
        "settings": rows,
    }


def render_settings(console: Console, view: dict[str, Any]) -> None:
    provider = view["provider"]
    console.print(f"provider: {provider['name']} ({provider['reason']})", markup=False, highlight=False, soft_wrap=True)
    key = view["api_key"]
    shown = key["value"] if key["value"] else "not set"
    console.print(f"API key: {shown} (from {key['variable']})", markup=False, highlight=False)
    console.print(f"pyproject.toml: {view['pyproject'] or 'none with [tool.coderefine]'}", markup=False)
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    table.add_column("setting")
    table.add_column("value")
    table.add_column("from")
    for row in view["settings"]:
        table.add_row(row["name"], row["value"] if row["value"] is not None else "-", row["source"])
    console.print(table)
