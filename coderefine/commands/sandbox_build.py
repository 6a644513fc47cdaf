"""`coderefine sandbox build`: build sandbox/Dockerfile into an image to use with --image TAG."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.console import Console


@dataclass(frozen=True)
class SandboxBuildArgs:
    tag: str
    requirements: Path | None = None  # the project's test dependencies (pip -r) to install into the image
    python_version: str | None = None  # unset: this interpreter's
    base: str | None = None  # unset: python:<version>-slim


def sandbox_build(args: SandboxBuildArgs, console: Console) -> int:
    from coderefine.sandboxes.images import build_image

    def say(line: str) -> None:
        console.print(line, markup=False, highlight=False)

    built = build_image(
        args.tag,
        requirements=args.requirements,
        python_version=args.python_version,
        base=args.base,
        progress=say,
    )
    say(f"built {built}; use it with --sandbox docker --image {built}")
    return 0
