"""User-facing errors: each carries a one-line message and a distinct, documented exit code.

`error_record` is the one place any exception becomes the one-line message and exit code a user sees: the
CLI's boundary prints it (`error: <message>` on stderr) and exits with its code, and a run that ends early
keeps it in its Result. Nothing else in the package prints or exits. Keep the table in the README's "Exit
codes" section in step.
"""

from __future__ import annotations

import traceback
from enum import IntEnum

from coderefine.records import RunError


class ExitCode(IntEnum):
    OK = 0
    INTERNAL = 1  # a bug in coderefine: please report it
    USAGE = 2  # bad command-line usage (unknown option, bad value); also what click uses
    FILE_NOT_FOUND = 3
    IS_A_DIRECTORY = 4
    NOT_UTF8 = 5
    SYNTAX_ERROR = 6
    NO_TESTS = 7
    UNKNOWN_FUNCTION = 8
    BAD_SCRIPT = 9
    BASELINE_FAILS = 10
    SANDBOX = 11
    PROVIDER = 12
    WRITE_CONFLICT = 13
    CONFIG = 14  # a bad value or unknown key in pyproject.toml [tool.coderefine] or a CODEREFINE_* variable
    PROVIDER_REJECTED = 15  # the endpoint refused the key, the model or the URL (401/403/404): fix the settings
    FINDINGS = 16  # `coderefine check` found code beyond a threshold (pre-commit: the hook fails)
    GITHUB_API = 17  # `review`: the GitHub REST API failed (not a read-only token: that is not a failure)
    ACTIONS_CONTEXT = 18  # `review`: no pull request to review in the Actions environment, or the wrong checkout
    BAD_SUITE = 19  # `coderefine bench`: SUITE_DIR is not a suite (no task folders, a task missing files)
    BENCH_STATE = 20  # `coderefine bench`: the state file of a resumable run is unreadable or from other arguments
    INSUFFICIENT_TESTS = 21  # the tests make too few calls or cover too little to judge candidates: nothing tried
    BASELINE_TIMEOUT = 22  # the original's tests did not finish within --timeout (not a failure of theirs)
    TESTS_NOT_IMPORTABLE = 23  # pytest could not import the test files: the project or a dependency is not installed
    TIMING_INPUTS = 26  # --timing-inputs names no file, or a file outside the project root
    SCAN_FAILED = 28  # `scan`/`sweep`: the profiled run failed (a test fails, the workload command exits non-zero)
    SWEEP_STATE = 29  # `sweep`: the state file of a resumable sweep is unreadable or from other arguments
    INTERRUPTED = 130


class CoderefineError(Exception):
    exit_code: ExitCode = ExitCode.INTERNAL

    def __init__(self, message: str) -> None:
        # One line, always: the message is what the user reads, so keep tracebacks and newlines out.
        super().__init__(" ".join(message.split()))

    @property
    def message(self) -> str:
        return str(self)

    def record(self) -> RunError:
        """This error as the record a Result and the reports carry."""
        return RunError(int(self.exit_code), self.exit_code.name.lower(), self.message)


class InputFileNotFound(CoderefineError):
    exit_code = ExitCode.FILE_NOT_FOUND


class InputIsDirectory(CoderefineError):
    exit_code = ExitCode.IS_A_DIRECTORY


class InputNotUtf8(CoderefineError):
    exit_code = ExitCode.NOT_UTF8


class InputSyntaxError(CoderefineError):
    exit_code = ExitCode.SYNTAX_ERROR


class NoTestsFound(CoderefineError):
    exit_code = ExitCode.NO_TESTS


class UnknownFunction(CoderefineError):
    exit_code = ExitCode.UNKNOWN_FUNCTION


class BadScript(CoderefineError):
    exit_code = ExitCode.BAD_SCRIPT


class BaselineFails(CoderefineError):
    exit_code = ExitCode.BASELINE_FAILS


class BaselineTimeout(CoderefineError):
    exit_code = ExitCode.BASELINE_TIMEOUT


class TestsNotImportable(CoderefineError):
    __test__ = False  # not a pytest test class

    exit_code = ExitCode.TESTS_NOT_IMPORTABLE


class SandboxError(CoderefineError):
    exit_code = ExitCode.SANDBOX


class ProviderError(CoderefineError):
    exit_code = ExitCode.PROVIDER


class ProviderRejected(CoderefineError):
    exit_code = ExitCode.PROVIDER_REJECTED


class ConfigError(CoderefineError):
    exit_code = ExitCode.CONFIG


class WriteConflict(CoderefineError):
    exit_code = ExitCode.WRITE_CONFLICT


class UsageError(CoderefineError):
    exit_code = ExitCode.USAGE


class GitHubApiError(CoderefineError):
    exit_code = ExitCode.GITHUB_API


class ActionsContextError(CoderefineError):
    exit_code = ExitCode.ACTIONS_CONTEXT


class InsufficientTests(CoderefineError):
    """Not raised by a run: the CLI's exit for a run that stopped after the baseline, its status
    `insufficient_tests`, so that scripts can tell "nothing was judged" from "nothing was better"."""

    exit_code = ExitCode.INSUFFICIENT_TESTS


class BadSuite(CoderefineError):
    exit_code = ExitCode.BAD_SUITE


class BenchStateError(CoderefineError):
    exit_code = ExitCode.BENCH_STATE


class RunFailed(CoderefineError):
    """The error that ended a run, raised again once its reports are written (the record keeps the traceback
    of an internal error, for --debug)."""

    def __init__(self, record: RunError) -> None:
        super().__init__(record.message)
        self.exit_code = ExitCode(record.code)
        self.run_error = record

    def record(self) -> RunError:
        return self.run_error


class BadTimingInputs(CoderefineError):
    exit_code = ExitCode.TIMING_INPUTS


class ScanFailed(CoderefineError):
    exit_code = ExitCode.SCAN_FAILED


class SweepStateError(CoderefineError):
    exit_code = ExitCode.SWEEP_STATE


def error_record(exc: BaseException) -> RunError:
    """What a user is told of `exc`, as a record: a CoderefineError is its own message and exit code, Ctrl-C
    is "interrupted" (130), anything else is a bug in coderefine: one line that says so (exit 1), with the
    traceback kept for --debug."""
    if isinstance(exc, CoderefineError):
        return exc.record()
    if isinstance(exc, KeyboardInterrupt):
        return RunError(int(ExitCode.INTERRUPTED), "interrupted", "interrupted")
    message = f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)"
    trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return RunError(int(ExitCode.INTERNAL), "internal", message, trace)
