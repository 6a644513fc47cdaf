"""`coderefine sandbox ...`: the Docker sandbox's image."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from coderefine.cli.options import Command, Group
from coderefine.cli.params import Debug
from coderefine.cli.running import in_boundary, stdout
from coderefine.sandboxes.images import BUILD_TAG

sandbox_app = typer.Typer(cls=Group, help="The Docker sandbox's image.", no_args_is_help=True)


@sandbox_app.command("build", cls=Command)
@in_boundary
def sandbox_build_command(
    tag: Annotated[str, typer.Option(metavar="TAG", help="Tag of the image to build.")] = BUILD_TAG,
    requirements: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="The project's test dependencies (pip -r) to install into the image."),
    ] = None,
    python_version: Annotated[
        str | None, typer.Option(metavar="X.Y", help="Python version of the base image (default: this interpreter's).")
    ] = None,
    base: Annotated[
        str | None, typer.Option(metavar="IMAGE", help="Base image (default: python:<version>-slim).")
    ] = None,
    debug: Debug = False,
) -> int:
    """Build sandbox/Dockerfile (needs a registry for the base image); use the result with --image TAG.

    Without a registry, nothing needs building: the offline image is made on the spot."""
    from coderefine.commands.sandbox_build import sandbox_build

    return sandbox_build(tag, stdout, requirements, python_version, base)
