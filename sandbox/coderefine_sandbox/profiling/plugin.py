"""pytest plugin of `coderefine scan` (`-p coderefine_sandbox.profiling.plugin`, beside recording/pytest_plugin.py).

Profile pass: one cProfile profiler per test, from its setup to its teardown, merged per function with
the test's name (profile_collect.Profiles). Coverage pass: the chosen functions' lines, traced only during
the tests that reach a function whose coverage is not settled yet (the others run untraced: a trace
function costs a Python call on every call of every function).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from coderefine_sandbox.profiling.collect import from_environment

_profiles, _coverage, _out, _reaches = from_environment()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, None]:
    coverage = _coverage
    keys = _reaches.get(item.nodeid, ())
    traced = coverage is not None and not all(coverage.settled(key) for key in keys)
    if traced:
        coverage.start()  # type: ignore[union-attr]
    try:
        yield
    finally:
        if traced:
            coverage.stop()  # type: ignore[union-attr]


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
        _coverage.dump(_out)
    if _profiles is not None:
        _profiles.dump(_out)
