"""pytest plugin loaded into every test run in the sandbox (`-p coderefine_sandbox.recording.pytest_plugin`).

It writes the outcome of every test (CODEREFINE_RESULTS, a protocol.PytestResults), the test currently
running (CODEREFINE_PROGRESS, so a timeout can name the test that hung), which file the target module was
imported from (to catch an installed copy shadowing the workspace), and, when CODEREFINE_CAPTURE (a
protocol.CaptureSpec) is set, the calls to the target functions and their line coverage as a calls file
(capture.py). `random` is reseeded before every test. With CODEREFINE_SELECT (a protocol.TestSelection in a
file) it keeps only some tests (selection.py); with CODEREFINE_ORDER (a protocol.FailFast in a file) it runs
the tests most likely to fail first and stops at the first failure (order.py).
"""

from __future__ import annotations

import os
import random
import sys
from typing import Any

import pytest

from coderefine_sandbox.pinning import SEED
from coderefine_sandbox.protocol import (
    CaptureSpec,
    FailFast,
    PytestResults,
    SelectionCounts,
    TestSelection,
    from_json,
    read_json,
    write_json,
)
from coderefine_sandbox.recording.capture import Recorder
from coderefine_sandbox.recording.order import ranked
from coderefine_sandbox.recording.selection import Selector

_MESSAGE_LIMIT = 1200


class _State:
    def __init__(self) -> None:
        self.outcomes: dict[str, str] = {}
        self.messages: dict[str, str] = {}
        self.recorder: Recorder | None = None
        self.selector: Selector | None = None
        self.fail_fast: FailFast | None = None
        self.session: pytest.Session | None = None
        self.durations: dict[str, float] = {}


_state = _State()


def _short_message(report: Any) -> str:
    """The assertion lines (`E  ...`) of a failure, else the tail of its report."""
    text = getattr(report, "longreprtext", "") or str(report.longrepr or "")
    lines = text.splitlines()
    error_lines = [line[1:].strip() for line in lines if line.startswith("E ")]
    location = next((line for line in reversed(lines) if ":" in line and line.split(":")[0].endswith(".py")), "")
    message = "\n".join(error_lines) if error_lines else "\n".join(lines[-15:])
    if location:
        message = f"{message}\n({location.strip()})"
    if len(message) > _MESSAGE_LIMIT:
        message = message[: _MESSAGE_LIMIT // 2] + "\n...\n" + message[-_MESSAGE_LIMIT // 2 :]
    return message


def pytest_configure(config: pytest.Config) -> None:
    selection_path = os.environ.get("CODEREFINE_SELECT")
    if selection_path:
        selection = read_json(TestSelection, selection_path)
        _state.selector = Selector(
            list(selection.names),
            list(selection.node_ids),
            config.getini("python_files"),
            list(selection.data_names),
            list(selection.import_names),
            selection.budget_seconds,
            str(config.rootpath),
        )
    order_path = os.environ.get("CODEREFINE_ORDER")
    if order_path:
        _state.fail_fast = read_json(FailFast, order_path)
    capture = os.environ.get("CODEREFINE_CAPTURE")
    if capture:
        spec = from_json(CaptureSpec, capture)
        _state.recorder = Recorder(spec.module, list(spec.targets), spec.max_calls, spec.max_bytes)
        _state.recorder.install()


# tryfirst: the hook stops at the first answer that is not None, and a conftest's own `pytest_ignore_collect`
# (registered later, so asked first) returning False would otherwise switch the selection off.
@pytest.hookimpl(tryfirst=True)
def pytest_ignore_collect(collection_path: Any, config: pytest.Config) -> bool | None:
    if _state.selector is not None and _state.selector.ignores(str(collection_path)):
        return True
    return None  # no opinion: pytest's own rules decide


@pytest.hookimpl(trylast=True)  # last: whatever a conftest added or reordered, the selection has the last word
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _select(config, items)
    fail_fast = _state.fail_fast
    if fail_fast is not None:  # what the selection kept, the tests most likely to fail first
        order = ranked([item.nodeid for item in items], fail_fast.first, fail_fast.files)
        items[:] = [items[index] for index in order]


def _select(config: pytest.Config, items: list[pytest.Item]) -> None:
    selector = _state.selector
    if selector is None:
        return
    kept, dropped = selector.keep([item.nodeid for item in items])
    if dropped:
        config.hook.pytest_deselected(items=[item for item in items if item.nodeid not in kept])
        items[:] = [item for item in items if item.nodeid in kept]
    if selector.importing:  # nearest first: the files naming the target, then those only importing its package
        items.sort(key=lambda item: selector.imports_only(str(item.path)))


def pytest_sessionstart(session: pytest.Session) -> None:
    _state.session = session


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: Any) -> Any:
    outcome = yield
    selector = _state.selector
    path = getattr(collector, "path", None) or getattr(collector, "fspath", None)
    if selector is None or path is None or not selector.imports_only(str(path)):
        return
    report = outcome.get_result()
    if report.failed:
        # A file kept only for importing the package that cannot be imported (a test dependency missing):
        # counted and left out, as the name filter would have left it, instead of failing the original.
        selector.unimportable.append(report.nodeid)
        outcome.force_result(pytest.CollectReport(report.nodeid, "passed", None, []))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> bool | None:
    selector = _state.selector
    if selector is not None and selector.imports_only(str(item.path)) and selector.spent():
        # Out of the tracing budget: this test (kept only for importing the package) is left untraced, not run.
        selector.tests_untraced += 1
        return True
    return None


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    if _state.recorder is not None:
        _state.recorder.current_test = nodeid
    progress = os.environ.get("CODEREFINE_PROGRESS")
    if progress:
        with open(progress, "w", encoding="utf-8") as fh:
            fh.write(nodeid)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    # Every test starts from the same random state, in the original's run and in each candidate's, so a
    # test drawing random inputs checks the same inputs on both (as pytest-randomly does per test).
    random.seed(SEED)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    nodeid = report.nodeid
    _state.durations[nodeid] = _state.durations.get(nodeid, 0.0) + float(report.duration or 0.0)
    if report.when == "call" or (report.when in ("setup", "teardown") and report.outcome != "passed"):
        previous = _state.outcomes.get(nodeid)
        outcome = "failed" if report.failed else report.outcome
        if previous == "failed":
            return
        if report.when == "call" and hasattr(report, "wasxfail"):
            outcome = "skipped"
        _state.outcomes[nodeid] = outcome
        if report.failed:
            _state.messages[nodeid] = _short_message(report)
            if _state.fail_fast is not None and _state.session is not None:
                # pytest's own stop (as -x): the session ends after this test's teardown
                _state.session.shouldfail = "stopped at the first failure (fail-fast)"


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _state.outcomes[report.nodeid or "<collection>"] = "failed"
        _state.messages[report.nodeid or "<collection>"] = _short_message(report)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = os.environ.get("CODEREFINE_RESULTS")
    module_name = os.environ.get("CODEREFINE_MODULE", "")
    module = sys.modules.get(module_name)
    selector = _state.selector
    results = PytestResults(
        collected=session.testscollected,
        exit_code=int(exitstatus),
        outcomes=_state.outcomes,
        messages=_state.messages,
        module_file=getattr(module, "__file__", None),
        selected=SelectionCounts(**selector.counts()) if selector is not None else None,
        stopped_early=bool(session.shouldfail) and len(_state.outcomes) < session.testscollected,
        durations={node: round(seconds, 4) for node, seconds in _state.durations.items()},
    )
    if path:
        write_json(path, results)
    if _state.recorder is not None:
        _state.recorder.dump(os.environ["CODEREFINE_CALLS_OUT"])
