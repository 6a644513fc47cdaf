"""The options several commands share (their own, not settings), each declared once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

File = Annotated[Path, typer.Argument(metavar="FILE", help="The Python file to refine.", show_default=False)]
Tests = Annotated[Path | None, typer.Option(metavar="PATH", help="Test file or folder (default: the project's tests).")]
Root = Annotated[
    Path | None,
    typer.Option(
        metavar="DIR",
        help="Project root (default: nearest folder with pyproject.toml, setup.cfg, pytest.ini, tox.ini or .git).",
    ),
]
Write = Annotated[bool, typer.Option("--write", help="Apply the best verified candidate to FILE (atomically).")]
Report = Annotated[Path | None, typer.Option(metavar="FILE", help="Write the JSON report to this file.")]
Sarif = Annotated[
    Path | None,
    typer.Option(metavar="FILE", help="Write a SARIF 2.1.0 log of the verified improvement to this file."),
]
Script = Annotated[
    Path | None, typer.Option(metavar="FILE", help="JSON messages for --provider scripted.", rich_help_panel="Model")
]
PassEnv = Annotated[
    list[str] | None,
    typer.Option(
        "--pass-env",
        metavar="NAME",
        help="Environment variable the tests need (repeatable).",
        rich_help_panel="Sandbox",
    ),
]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Only the final summary.")]
Debug = Annotated[bool, typer.Option("--debug", hidden=True, help="Show tracebacks of internal errors.")]
