"""Locate the data folders `tasks/` and `sandbox/` in a checkout and in an installed wheel, and load the
sandbox's package from there.

In the repository they sit beside the package; the wheel carries them inside the package as
`coderefine/_bundled/` (see `force-include` in pyproject.toml). Looking in both places keeps
`pip install .`, `pip install -e .` and a plain checkout working alike.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

_PACKAGE_DIR = Path(__file__).resolve().parent
SANDBOX_PACKAGE = "coderefine_sandbox"


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


def load_sandbox_package() -> ModuleType:
    """Make `import coderefine_sandbox...` in the host load the very files the sandbox runs (its protocol
    above all), from `sandbox_dir()`, whichever way coderefine is installed.

    The package is registered under its own name without putting the sandbox folder on sys.path, so
    nothing else in that folder becomes importable. Loading it a second time from elsewhere would give
    the host a protocol the runner does not speak: that fails here, loudly.
    """
    package_dir = (sandbox_dir() / SANDBOX_PACKAGE).resolve()
    loaded = sys.modules.get(SANDBOX_PACKAGE)
    if loaded is not None:
        where = [Path(entry).resolve() for entry in getattr(loaded, "__path__", [])]
        if package_dir not in where:
            raise ImportError(f"{SANDBOX_PACKAGE} is already imported from {where}, not from {package_dir}")
        return loaded
    spec = importlib.util.spec_from_file_location(
        SANDBOX_PACKAGE, package_dir / "__init__.py", submodule_search_locations=[str(package_dir)]
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {SANDBOX_PACKAGE} from {package_dir}")
    package = importlib.util.module_from_spec(spec)
    sys.modules[SANDBOX_PACKAGE] = package
    try:
        spec.loader.exec_module(package)
    except BaseException:
        del sys.modules[SANDBOX_PACKAGE]
        raise
    return package
