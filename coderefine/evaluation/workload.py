"""What a speedup is measured on: the calls the tests made to the targets, or a benchmark the user names.

    --bench bench/bench_routes.py               every top-level function named bench* in the file
    --bench bench/bench_routes.py::bench_large  that function only

The recorded calls are the default workload: they are what the tests exercise, and every one of them has
been replayed identically before it is timed. A user's benchmark is better when the tests use toy inputs
(a speedup at n=10 says little about n=10**6). Its functions are called with no arguments, from the
workspace copy being timed, so they import that copy's version of the target; behaviour is still judged
on the tests and the recorded calls, never on the benchmark.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from coderefine.errors import InputFileNotFound, InputIsDirectory, InputNotUtf8, InputSyntaxError, UsageError


@dataclass(frozen=True)
class UserBenchmark:
    file: Path  # relative to the project root: the same file in every workspace copy
    functions: tuple[str, ...]  # called once each per workload pass, in this order
    name: str | None = None  # the one function asked for with FILE::NAME

    @property
    def label(self) -> str:
        """How reports name the workload."""
        return f"{self.file.as_posix()}::{self.name}" if self.name else self.file.as_posix()


def parse_bench(value: str, root: Path) -> UserBenchmark:
    """Validate `--bench FILE[::NAME]` on the host, before any sandbox starts: one line per problem."""
    text, _, name = value.partition("::")
    path = Path(text).expanduser().resolve()
    if not path.exists():
        raise InputFileNotFound(f"--bench {text}: no such file")
    if path.is_dir():
        raise InputIsDirectory(f"--bench {text}: is a directory, not a Python file")
    if root not in path.parents:
        raise UsageError(f"--bench {text} is outside the project root {root}; it must be copied with the project")
    try:
        tree = ast.parse(path.read_bytes().decode("utf-8"), filename=str(path))
    except UnicodeDecodeError:
        raise InputNotUtf8(f"--bench {text}: not UTF-8") from None
    except SyntaxError as exc:
        raise InputSyntaxError(f"--bench {text}:{exc.lineno}: syntax error: {exc.msg}") from None
    callable_now = {
        node.name: _no_required_arguments(node)
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    if name:
        if name not in callable_now:
            raise UsageError(f"--bench {value}: {text} defines no top-level function {name}")
        wanted = [name]
    else:
        wanted = sorted(n for n in callable_now if n.startswith("bench"))
        if not wanted:
            raise UsageError(f"--bench {text}: no top-level function named bench*; name one with {text}::NAME")
    for function in wanted:
        if not callable_now[function]:
            raise UsageError(f"--bench {text}::{function}: a benchmark function must take no required arguments")
    return UserBenchmark(file=path.relative_to(root), functions=tuple(wanted), name=name or None)


def _no_required_arguments(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    if isinstance(node, ast.AsyncFunctionDef):
        return False  # a coroutine function returns without doing the work
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    required_positional = len(positional) - len(args.defaults)
    required_keyword = sum(1 for default in args.kw_defaults if default is None)
    return required_positional == 0 and required_keyword == 0
