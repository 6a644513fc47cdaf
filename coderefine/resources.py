"""Locate the data folders `tasks/` and `sandbox/` in a checkout and in an installed wheel.

In the repository they sit beside the package; the wheel carries them inside the package as
`coderefine/_bundled/` (see `force-include` in pyproject.toml). Looking in both places keeps
`pip install .`, `pip install -e .` and a plain checkout working alike.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    for candidate in (_PACKAGE_DIR / "_bundled" / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"coderefine is incompletely installed: its '{name}' folder is missing")


def tasks_dir() -> Path:
    return _find("tasks")


def sandbox_dir() -> Path:
    """The folder to put on PYTHONPATH inside the sandbox (it holds the `coderefine_sandbox` package)."""
    return _find("sandbox")
