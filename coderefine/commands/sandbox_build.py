"""`coderefine sandbox build`: build sandbox/Dockerfile into an image to use with --image TAG."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console


def sandbox_build(
    tag: str,
    console: Console,
    requirements: Path | None = None,  # the project's test dependencies (pip -r) to install into the image
    python_version: str | None = None,  # unset: this interpreter's
    base: str | None = None,  # unset: python:<version>-slim
) -> int:
    from coderefine.sandboxes.images import build_image

    def say(line: str) -> None:
        console.print(line, markup=False, highlight=False)

    built = build_image(tag, requirements=requirements, python_version=python_version, base=base, progress=say)
    say(f"built {built}; use it with --sandbox docker --image {built}")
    return 0
