"""Why the original's test run did not pass, said exactly: a time limit, test files pytest could not
import (the project or a test dependency not installed), or tests that really fail.

"The original fails its own tests" is only said of tests that ran and failed: a run stopped by its time
limit, or test modules that could not even be imported, are problems of the set-up, with their own exit
codes and the fix in the message.
"""

from __future__ import annotations

import re

from coderefine.errors import BaselineFails, BaselineTimeout, CoderefineError, TestsNotImportable
from coderefine.records import TestFailure, TestReport

_NO_METADATA = re.compile(r"PackageNotFoundError: No package metadata was found for (?P<name>[\w.\-]+)")
_NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '(?P<name>[\w.]+)'")
_EXCEPTION_LINE = re.compile(r"^(?:[\w.]+\.)?(?P<type>\w*(?:Error|Exception|Exit))\b:?(?P<rest>.*)$")


def baseline_failure(
    tests: TestReport, *, timeout: float, python: str, module_name: str, what_ran: str
) -> CoderefineError:
    """The error for an original whose test run did not pass (`tests.all_passed` is false)."""
    if tests.timed_out:
        return _timeout(tests, timeout, what_ran)
    collection = [failure for failure in tests.failures if _is_collection_error(failure)]
    if collection and len(collection) == len(tests.failures):
        return _not_importable(collection, python, module_name)
    first = tests.failures[0] if tests.failures else None
    detail = f"{first.nodeid}: {first.message.splitlines()[0] if first.message else ''}" if first else ""
    example = f", e.g. {detail}" if detail else ""
    return BaselineFails(f"the original fails its own tests ({tests.failed} failing{example}); fix them first")


def _timeout(tests: TestReport, timeout: float, what_ran: str) -> BaselineTimeout:
    running = tests.failures[0].nodeid if tests.failures else "<session>"
    where = f" while running {running}" if running != "<session>" else ""
    return BaselineTimeout(
        f"the original's tests did not finish within the time limit: stopped after {tests.duration:.0f}s "
        f"(--timeout {timeout:g}){where}; {what_ran}. Pass --tests PATH to run only the tests of this code, "
        "or a larger --timeout"
    )


def _is_collection_error(failure: TestFailure) -> bool:
    """A test file (or the session) that failed before any test in it ran: no `::` in its node id."""
    return "::" not in failure.nodeid and failure.nodeid != "<session>"


def _not_importable(failures: list[TestFailure], python: str, module_name: str) -> TestsNotImportable:
    count = f"{len(failures)} test file{'s' if len(failures) != 1 else ''}"
    messages = "\n".join(failure.message for failure in failures)
    top = module_name.split(".")[0]
    metadata = _NO_METADATA.search(messages)
    missing = sorted({match["name"] for match in _NO_MODULE.finditer(messages)})
    if metadata is not None:
        also = f"; the tests also need {', '.join(missing)}" if missing else ""
        return TestsNotImportable(
            f"pytest could not import {count}: the project reads its installed package metadata "
            f"(importlib.metadata: no package metadata for {metadata['name']}), and it is not installed in "
            f"{python}{also}: run `{python} -m pip install -e .` in the project root, with its test dependencies"
        )
    own = [name for name in missing if name.split(".")[0] == top]
    if own:
        return TestsNotImportable(
            f"pytest could not import {count}: No module named '{own[0]}', the project's own package; the tests "
            "import it from another folder than coderefine found (pass --root, or install the project with "
            f"`{python} -m pip install -e .`)"
        )
    if missing:
        names = ", ".join(name.split(".")[0] for name in missing)
        return TestsNotImportable(
            f"pytest could not import {count}: missing module{'s' if len(missing) > 1 else ''} {names}; "
            f"install the project's test dependencies into {python} (e.g. `{python} -m pip install "
            f"{' '.join(dict.fromkeys(name.split('.')[0] for name in missing))}`)"
        )
    first = failures[0]
    return TestsNotImportable(
        f"pytest could not import {count} (e.g. {first.nodeid}: {_exception_line(first.message)}); "
        "fix that import error first (the tests did not run)"
    )


def _exception_line(message: str) -> str:
    """The last line of a message that names an exception, else its first line."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    for line in reversed(lines):
        if _EXCEPTION_LINE.match(line):
            return line
    return lines[0] if lines else "no message"
