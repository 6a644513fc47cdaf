"""pytest plugin of `coderefine scan` (`-p coderefine_sandbox.profile_plugin`, beside pytest_plugin.py).

Profile pass: one cProfile profiler per test, from its setup to its teardown, merged per function with
the test's name (profile_collect.Profiles). Coverage pass: the chosen functions' lines, over the session.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from coderefine_sandbox.profile_collect import from_environment

_profiles, _coverage, _out = from_environment()


def pytest_sessionstart(session: pytest.Session) -> None:
    if _coverage is not None:
        _coverage.start()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, Any, None]:
    if _profiles is not None:
        _profiles.start()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, Any, None]:
    yield
    if _profiles is not None:
        _profiles.stop(item.nodeid)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _coverage is not None:
        _coverage.stop()
        _coverage.dump(_out)
    if _profiles is not None:
        _profiles.dump(_out)
