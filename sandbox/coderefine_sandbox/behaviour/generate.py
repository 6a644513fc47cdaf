"""Generate extra inputs for the targets from their type hints (hypothesis), and record the ORIGINAL's
outcomes on them as a calls file, like the tests' recording (so replay.py compares candidates on them as well).

    python -m coderefine_sandbox.behaviour.generate STEP.json

STEP.json is a protocol.GenerateRequest (the original's workspace and module, the targets, inputs per target,
where the calls and the protocol.GeneratedReport go).

Only with `--gen-inputs`, and the only module here that imports something outside the standard library
and pytest/pyperf: hypothesis, when the sandbox's interpreter has it (the report says when it does not).
Generation is derandomized (the same inputs every run). Targets are skipped, with the reason, when they
are methods (they need an instance), take *args/**kwargs, or lack a usable hint on a parameter without
a default. An input on which the original raises is recorded like any other outcome (the exception is
behaviour); one on which it runs past PER_CALL_SECONDS or whose arguments cannot be pickled is dropped.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import pickle
import signal
import sys
import typing
from typing import Any

from coderefine_sandbox.pinning import pinned_call
from coderefine_sandbox.protocol import (
    CALLS_PICKLE,
    CallsHeader,
    GeneratedReport,
    GenerateRequest,
    read_json,
    write_calls,
    write_json,
)
from coderefine_sandbox.workload import add_import_paths, import_module, resolve

PER_CALL_SECONDS = 1.0


class _TooSlow(BaseException):
    """Not an Exception: a target's own `except Exception` must not swallow the time limit."""


def _strategy(func: Any) -> tuple[Any, str]:
    """(a hypothesis strategy of argument tuples, "") or (None, why not)."""
    from hypothesis import strategies as st

    if inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func):
        return None, "it is async (only the calls the tests await are judged)"
    try:
        hints = typing.get_type_hints(func)
        parameters = list(inspect.signature(func).parameters.values())
    except Exception as exc:
        return None, f"its hints cannot be resolved ({type(exc).__name__}: {exc})"
    parts = []
    for parameter in parameters:
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            return None, f"it takes {'*' if parameter.kind is parameter.VAR_POSITIONAL else '**'}{parameter.name}"
        if parameter.kind is parameter.KEYWORD_ONLY:
            if parameter.default is parameter.empty:
                return None, f"keyword-only parameter {parameter.name} has no default"
            continue
        hint = hints.get(parameter.name)
        if hint is None:
            if parameter.default is not parameter.empty:
                break  # leave this and the later parameters to their defaults
            return None, f"parameter {parameter.name} has no type hint"
        try:
            strategy = st.from_type(hint)
            strategy.validate()
        except Exception as exc:
            return None, f"no strategy for {parameter.name}: {hint!r} ({type(exc).__name__})"
        parts.append(strategy)
    if not parts and parameters:
        return None, "no parameter has a type hint"
    return st.tuples(*parts), ""


def _examples(strategy: Any, count: int) -> list[tuple]:
    from hypothesis import HealthCheck, Phase, given, settings

    found: list[tuple] = []

    @settings(
        max_examples=count,
        database=None,
        derandomize=True,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(args: tuple) -> None:
        found.append(args)

    collect()
    return found


def _record(target: str, func: Any, args: tuple) -> dict[str, Any] | None:
    try:
        blob = pickle.dumps((args, {}), protocol=CALLS_PICKLE)
    except Exception:
        return None
    call_args, call_kwargs = pickle.loads(blob)
    out = io.StringIO()
    record: dict[str, Any] = {"target": target, "args": blob, "test": "<generated>"}
    signal.setitimer(signal.ITIMER_REAL, PER_CALL_SECONDS)
    try:
        with contextlib.redirect_stdout(out), pinned_call():
            value = func(*call_args, **call_kwargs)
        record["outcome"] = "return"
        record["value"] = pickle.dumps(value, protocol=CALLS_PICKLE)
    except _TooSlow:
        return None
    except Exception as exc:
        record["outcome"] = "exception"
        record["exc_type"] = f"{type(exc).__module__}.{type(exc).__qualname__}"
        record["exc_message"] = str(exc)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    try:
        after = pickle.dumps((call_args, call_kwargs), protocol=CALLS_PICKLE)
    except Exception:
        return None
    record["args_after"] = after if after != blob else None
    record["stdout"] = out.getvalue()
    return record


def _too_slow(signum: int, frame: Any) -> None:
    raise _TooSlow


def main(argv: list[str]) -> int:
    request = read_json(GenerateRequest, argv[0])
    generated: dict[str, int] = {}
    skipped: dict[str, str] = {}
    error = None
    records: list[dict[str, Any]] = []
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        error = "hypothesis is not installed in the sandbox's interpreter"
    else:
        add_import_paths(request.workspace, request.import_root)
        module = import_module(request.module)
        signal.signal(signal.SIGALRM, _too_slow)
        for target in request.targets:
            if "." in target:
                skipped[target] = "a method: it needs an instance"
                continue
            func = resolve(module, target)
            strategy, why_not = _strategy(func)
            if strategy is None:
                skipped[target] = why_not
                continue
            try:
                examples = _examples(strategy, request.count)
            except Exception as exc:
                skipped[target] = f"generation failed ({type(exc).__name__}: {exc})"
                continue
            recorded = [r for r in (_record(target, func, example) for example in examples) if r is not None]
            generated[target] = len(recorded)
            records.extend(recorded)
    write_calls(request.out, CallsHeader(module=request.module, recording=None, folder=request.workspace), records)
    # unstable and usable are the runner's to find out: it replays these calls on the original
    report = GeneratedReport(generated=generated, skipped=skipped, unstable=0, usable=0, error=error)
    write_json(request.report, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
