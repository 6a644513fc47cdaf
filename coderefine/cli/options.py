"""Option groups generated from the settings specs, and the command classes that carry them.

Every setting option (its flag spellings, help, panel, metavar, default and bounds) comes from its
`SettingSpec`; nothing is retyped here. A command names the settings it takes (`settings_command(...)`),
and its class appends their options to the ones typer built from the function's signature. The values
are handed to the command through the context, never through the function's signature: the options are
made at run time from data, which a signature cannot say without being rebuilt.

Why a command class and not only typer: typer reads options from a function's signature, so options made
from data need either a spliced `__signature__` (what this replaces) or its click layer. The class is
also where the help is made to read like a well-kept CLI's: `Usage: ... [OPTIONS] FILE` rather than
`{file}`, and no type shown for a flag (`--write`, `--help`), which takes no value.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption
from typer.main import _get_param  # typer's own maker of an option from a declared parameter
from typer.models import ParamMeta

from coderefine.setting_specs import SPECS, SettingSpec

_GIVEN_SETTINGS = "coderefine.settings"
# The type each kind of setting is parsed as on the command line; settings.resolve_settings checks it.
_PARSED_AS: dict[type, type] = {str: str, int: int, float: float, bool: bool, Path: Path, tuple: str}
_METAVARS: dict[type, str] = {str: "NAME", int: "N", float: "F", Path: "PATH", tuple: "NAMES"}


def settings_in(*panels: str) -> tuple[str, ...]:
    """The names of the settings shown in these panels, in the specs' order."""
    return tuple(spec.name for spec in SPECS if spec.panel in panels)


ALL_SETTINGS = tuple(spec.name for spec in SPECS)
RUN_SETTINGS = settings_in("Model", "Cache", "Loop", "Sandbox", "Verdict")  # what a refine run reads
CHECK_SETTINGS = (*settings_in("Thresholds"), "cache")


def _shown(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def help_text(spec: SettingSpec) -> str:
    """The spec's help as a sentence, with its bounds and default:
    'Seconds to wait for one answer; at least 0.1. [default: 120]'."""
    first_word = spec.help.split(",", 1)[0].split(" ", 1)[0]
    text = spec.help if first_word in spec.choices else spec.help[0].upper() + spec.help[1:]  # "openai, ..."
    if spec.minimum is not None and spec.maximum is not None:
        text += f"; {_shown(spec.minimum)} to {_shown(spec.maximum)}"
    elif spec.minimum is not None:
        text += f"; at least {_shown(spec.minimum)}"
    elif spec.maximum is not None:
        text += f"; at most {_shown(spec.maximum)}"
    default = default_text(spec)
    # Written here, not by typer: the option's own default is None ("not given"), so that the environment
    # and pyproject.toml can still apply; the value it stands for is the spec's.
    return escape(f"{text}." + (f" [default: {default}]" if default else ""))  # the help is rich markup


def default_text(spec: SettingSpec) -> str:
    """The default as the help shows it ("": none to show; the help says what "unset" means)."""
    if spec.kind is bool:
        return spec.flags[0 if spec.default else 1]
    if spec.default is None or spec.default == ():
        return ""
    return _shown(spec.default)


def metavar(spec: SettingSpec) -> str:
    if spec.kind is bool:
        return ""  # a flag takes no value: no type to show
    if spec.choices and spec.kind is not tuple:  # a list of names shows its metavar; the help lists them
        return "[" + "|".join(spec.choices) + "]"
    return spec.metavar or _METAVARS[spec.kind]


def setting_option(spec: SettingSpec) -> TyperOption:
    """The option of one setting; its value is None when not given, so that a lower source can apply."""
    declaration = "/".join(spec.flags)
    info = typer.Option(
        None,
        declaration,
        help=help_text(spec),
        metavar=metavar(spec),
        show_default=False,
        rich_help_panel=spec.panel,
    )
    return _get_param(ParamMeta(name=spec.name, default=info, annotation=_PARSED_AS[spec.kind] | None))


def given_settings(ctx: typer.Context) -> dict[str, Any]:
    """The setting options of this command as given on the command line (None: not given)."""
    return dict(ctx.meta.get(_GIVEN_SETTINGS, {}))


def _show_no_type_for_flags(params: Iterable[Any]) -> None:
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag and param.metavar is None:
            param.metavar = ""  # what the help shows as the value's type


class Group(TyperGroup):
    """The app and its sub-apps: `--help` and `--version` are flags, shown without a type."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _show_no_type_for_flags(self.params)

    def get_help_option(self, ctx: typer.Context) -> TyperOption | None:
        option = super().get_help_option(ctx)
        _show_no_type_for_flags([option])
        return option


class Command(TyperCommand):
    """A command with the setting options named by `settings` and help that reads like a well-kept CLI's."""

    settings: tuple[str, ...] = ()

    def __init__(self, *, params: list[Any], **kwargs: Any) -> None:
        by_name = {spec.name: spec for spec in SPECS}
        generated = [setting_option(by_name[name]) for name in self.settings]
        super().__init__(params=[*params, *generated], **kwargs)
        _show_no_type_for_flags(self.params)

    def invoke(self, ctx: typer.Context) -> Any:
        # The settings go to the command through the context: typer calls the function with its own options.
        ctx.meta[_GIVEN_SETTINGS] = {name: ctx.params.pop(name) for name in self.settings}
        return super().invoke(ctx)

    def get_help_option(self, ctx: typer.Context) -> TyperOption | None:
        option = super().get_help_option(ctx)
        _show_no_type_for_flags([option])
        return option

    def collect_usage_pieces(self, ctx: typer.Context) -> list[str]:
        """`[OPTIONS] FILE`, `FILES...`, `[PATH]`: each argument by its metavar, as click writes it."""
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                name = (param.metavar or param.name or "").upper() + ("..." if param.nargs == -1 else "")
                pieces.append(name if param.required else f"[{name}]")
        return pieces


def settings_command(*names: str) -> type[Command]:
    """The command class that adds these settings' options (`cls=` of `app.command`)."""
    return type("SettingsCommand", (Command,), {"settings": names})
