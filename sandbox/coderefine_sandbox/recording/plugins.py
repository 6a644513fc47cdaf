"""Options for the installed pytest plugins a project's test run must not use: coverage, and those it does not need.

Hypothesis's pytest plugin imports the whole hypothesis package at the end of every session (its terminal
summary reads `hypothesis.internal.observability`): about a second per pytest process on a 2-core machine
(1.2-1.6 s against 0.5 s for a one-test project), whether or not a test used hypothesis. coderefine starts
pytest once per candidate and more than once per baseline, so wherever hypothesis is installed that second
was paid again and again. Tests that use hypothesis run the same without the plugin (`@given` needs only the
package); what needs the plugin is its command-line options and settings profiles, which a project names in
its pytest configuration or a conftest.py: there the plugin stays.

anyio's plugin (installed wherever anyio is, which the `openai` client pulls in) imports anyio's networking
core at start-up: 0.2 s of a one-test run's 0.65 s on this machine. What needs it is a test marked
`anyio` or using its `anyio_backend` fixture, in a test file as often as in a conftest, so it stays where any
of the project's Python files or its configuration names anyio.
"""

from __future__ import annotations

import importlib.util
import os
import sys

CONFIG_FILES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini")
CONFTEST_DEPTH = 3  # folders below the root searched for a conftest.py: tests/, tests/unit/, src/pkg/tests/
SKIPPED_FOLDERS = frozenset({"node_modules", "site-packages", "__pycache__", "build", "dist"})
# Python files read looking for a plugin's name before giving up and loading the plugin: every pytest process of
# a run pays the search, which must stay well under what leaving the plugin out saves (networkx: ~600 files).
SEARCHED_FILES = 5000


def pytest_command(workspace: str, plugins: tuple[str, ...] = (), *, no_cov: bool = True) -> list[str]:
    """`python -m pytest` as the sandbox runs a project's tests (the test run, scan's passes, the reach map's run),
    before the tests to run: quiet, no cache written into the copy, the recording plugin and `plugins` loaded,
    coverage off (`no_cov`) and the plugins the project does not use left out, rooted at the workspace."""
    everyone = ("coderefine_sandbox.recording.pytest_plugin", *plugins)
    loaded = [option for plugin in everyone for option in ("-p", plugin)]
    return [
        sys.executable,  # the interpreter running us (inside an image, not the host path in a request)
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        *loaded,
        *(coverage_off() if no_cov else []),
        *unneeded_plugins(workspace),
        "--rootdir",
        workspace,
    ]


def unneeded_plugins(workspace: str) -> list[str]:
    """pytest options that leave out the plugins this project's tests do not use."""
    options = []
    if not _mentioned(workspace, b"hypothesis"):
        options += ["-p", "no:hypothesispytest"]
    if not _mentioned(workspace, b"anyio") and not _named_in_sources(workspace, b"anyio"):
        options += ["-p", "no:anyio"]
    return options


def coverage_off() -> list[str]:
    """`--no-cov` where pytest-cov is installed: a project's `--cov` in addopts would trace every line of every
    test run (and take sys.monitoring's coverage slot); the option only exists when the plugin does."""
    return ["--no-cov"] if importlib.util.find_spec("pytest_cov") is not None else []


def _mentioned(workspace: str, word: bytes) -> bool:
    return any(word in _read(path) for path in _configuration(workspace))


def _named_in_sources(workspace: str, word: bytes) -> bool:
    """Whether any Python file of the project (outside hidden folders, builds and virtual environments) has `word`;
    True, to be safe, for a project with more than SEARCHED_FILES of them."""
    searched = 0
    for folder, subfolders, files in os.walk(workspace):
        subfolders[:] = [name for name in subfolders if _searched(os.path.join(folder, name))]
        for name in files:
            if not name.endswith(".py"):
                continue
            searched += 1
            if searched > SEARCHED_FILES or word in _read(os.path.join(folder, name)):
                return True
    return False


def _searched(path: str) -> bool:
    name = os.path.basename(path)
    return (
        not name.startswith(".")
        and name not in SKIPPED_FOLDERS
        and not os.path.exists(os.path.join(path, "pyvenv.cfg"))  # a virtual environment
    )


def _configuration(workspace: str) -> list[str]:
    """The project's pytest configuration files at the root and its conftest.py files near it."""
    found = [os.path.join(workspace, name) for name in CONFIG_FILES]
    level = [workspace]
    for _ in range(CONFTEST_DEPTH + 1):
        below = []
        for folder in level:
            found.append(os.path.join(folder, "conftest.py"))
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            below += [entry.path for entry in entries if entry.is_dir(follow_symlinks=False) and _searched(entry.path)]
        level = below
    return found


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""
