"""Reading the user's target file and naming the functions in it.

Everything here validates input before any work starts, so that bad input ends in one clear line and
a distinct exit code (see errors.py) rather than a traceback halfway through a run.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import types
from dataclasses import dataclass
from pathlib import Path

from coderefine.errors import (
    InputFileNotFound,
    InputIsDirectory,
    InputNotUtf8,
    InputSyntaxError,
    UnknownFunction,
)

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class SourceFile:
    path: Path  # absolute
    text: str  # decoded, newlines as in the file
    raw_sha256: str  # of the bytes on disk, to detect edits made while coderefine ran
    has_bom: bool


def read_source(path: Path) -> SourceFile:
    raw = read_bytes(path)
    text, has_bom = decode_source(path, raw)
    check_syntax(path, text)
    return SourceFile(path=path.resolve(), text=text, raw_sha256=hashlib.sha256(raw).hexdigest(), has_bom=has_bom)


def read_bytes(path: Path) -> bytes:
    """The file's bytes; a missing file, a folder or an unreadable file is bad input."""
    path = path.expanduser()
    if not path.exists():
        raise InputFileNotFound(f"{path}: no such file")
    if path.is_dir():
        raise InputIsDirectory(f"{path}: is a directory; give a Python file (e.g. {path}/module.py)")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InputFileNotFound(f"{path}: cannot read ({exc.strerror})") from None


def decode_source(path: Path, raw: bytes) -> tuple[str, bool]:
    """The text (a leading BOM removed) and whether there was one."""
    has_bom = raw.startswith(_BOM)
    try:
        # Decode without newline translation so that a file with CRLF endings is written back as CRLF.
        return raw[len(_BOM) if has_bom else 0 :].decode("utf-8"), has_bom
    except UnicodeDecodeError as exc:
        raise InputNotUtf8(f"{path}: not UTF-8 (invalid byte at offset {exc.start}); convert it first") from None


def check_syntax(path: Path, text: str) -> None:
    try:
        ast.parse(text, filename=str(path))
    except SyntaxError as exc:
        raise syntax_error(path, exc) from None
    except ValueError as exc:  # e.g. null bytes
        raise InputSyntaxError(f"{path}: cannot be parsed: {exc}") from None


def syntax_error(path: Path, exc: SyntaxError) -> InputSyntaxError:
    """The one-line error for source that does not parse, naming the line."""
    if exc.lineno is None:
        return InputSyntaxError(f"{path}: cannot be parsed: {exc.msg}")
    return InputSyntaxError(f"{path}:{exc.lineno}: syntax error: {exc.msg}")


def function_names(code: str) -> list[str]:
    """Top-level functions and methods of top-level classes, as `name` and `Class.method`."""
    names: list[str] = []
    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.append(node.name)
        elif isinstance(node, ast.ClassDef):
            names.extend(
                f"{node.name}.{item.name}"
                for item in node.body
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
            )
    return names


def is_script(code: str) -> bool:
    """True when the module does its work at top level (a script) rather than defining things.

    Such a module cannot be merged definition by definition: a candidate replaces it whole.
    """
    module = ast.parse(code)
    own = {node.name for node in module.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return not all(_defines_only(node, own) or _is_main_guard(node) for node in module.body)


# Statements that only bind or unbind names (an assignment's value may compute, as a constant table does).
_DEFINITIONS = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Import,
    ast.ImportFrom,
    ast.Assign,
    ast.AnnAssign,
    ast.AugAssign,
    ast.Delete,
    ast.Pass,
)
_TRY = (ast.Try, ast.TryStar) if hasattr(ast, "TryStar") else (ast.Try,)


def _defines_only(node: ast.stmt, own: set[str], guarded: bool = False) -> bool:
    """A definition, a docstring, a registration, or a block made only of them: real libraries choose
    definitions at import (`if PYPY:`, `if sys.version_info >= ...:`, `try: import x` / `except
    ImportError: x = None` or `raise`) and fill their tables through their own helpers, and such a module
    is still a module of definitions, not a script. `own`: the module's top-level functions."""
    if isinstance(node, _DEFINITIONS) or (guarded and isinstance(node, ast.Raise)):
        return True
    if isinstance(node, ast.Expr):  # a docstring or `...`; a call is work unless it registers
        return isinstance(node.value, ast.Constant) or _registers(node.value, own)
    if isinstance(node, ast.If) and not _is_main_guard(node):
        parts = [*node.body, *node.orelse]
    elif isinstance(node, _TRY):
        parts = [*node.body, *node.orelse, *node.finalbody, *(s for h in node.handlers for s in h.body)]
    elif isinstance(node, ast.With):
        parts = list(node.body)
    else:
        return False
    return all(_defines_only(part, own, guarded=True) for part in parts)


def _registers(expr: ast.expr, own: set[str]) -> bool:
    """`_irregular("person", "people")`: the module's own helper called with literal arguments only, as
    inflection fills its rules. Any other call (`print(...)`, a builtin, computed arguments) is work, and so
    is `main()`: a call without arguments is how a script starts."""
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in own):
        return False
    arguments = [*expr.args, *(keyword.value for keyword in expr.keywords)]
    return bool(arguments) and all(_is_literal(argument) for argument in arguments)


def _is_literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def runs_as_program(code: str) -> bool:
    """A script, or a module with an `if __name__ == "__main__":` block: something its tests may run as a
    program in another process, where its calls cannot be recorded."""
    return is_script(code) or any(_is_main_guard(node) for node in ast.parse(code).body)


def _is_main_guard(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Compare)
        and isinstance(node.test.left, ast.Name)
        and node.test.left.id == "__name__"
    )


def resolve_targets(code: str, function: str | None, path: Path) -> tuple[str, ...]:
    """The functions the run works on: the one asked for, else every function in the module."""
    names = function_names(code)
    if function is None:
        return tuple(names)
    if function in names:
        return (function,)
    hint = f"; functions here: {', '.join(names[:8])}" if names else "; the file defines no functions"
    if "." not in function:
        methods = [n for n in names if n.endswith(f".{function}")]
        if methods:
            hint = f"; did you mean {' or '.join(methods[:3])}?"
    raise UnknownFunction(f"{path}: no function named '{function}'{hint}")


def ast_key(code: str) -> str:
    """Equal keys mean the same program up to comments and layout."""
    dumped = ast.dump(ast.parse(code), annotate_fields=False, include_attributes=False)
    return hashlib.sha256(dumped.encode()).hexdigest()


# Names whose use lets a function read its own local variables by name: with one of them, a local renamed is a
# change of behaviour (`locals()`, a frame's f_locals, eval of a name), and instructions_key keeps every name.
_READS_LOCAL_NAMES = frozenset(
    {"locals", "vars", "dir", "eval", "exec", "_getframe", "currentframe", "f_locals", "getargvalues", "stack"}
)


def instructions_key(code: str) -> str | None:
    """Equal keys mean the same bytecode up to the names of local variables (parameters excepted: a caller may
    pass them by keyword) and the layout: the same instructions on the same constants, globals and attributes,
    so the same speed and the same behaviour. None where the code does not compile."""
    try:
        compiled = compile(code, "<module>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    return hashlib.sha256(repr(_shape(compiled)).encode()).hexdigest()


def _shape(code: types.CodeType) -> tuple[object, ...]:
    """What a code object executes, without where its lines are or what its non-parameter locals are called."""
    flags = code.co_flags
    params = code.co_argcount + code.co_kwonlyargcount
    params += bool(flags & inspect.CO_VARARGS) + bool(flags & inspect.CO_VARKEYWORDS)
    reads_names = not _READS_LOCAL_NAMES.isdisjoint(code.co_names)
    local_names = code.co_varnames if reads_names else (len(code.co_varnames), code.co_varnames[:params])
    return (
        code.co_code,
        code.co_names,
        tuple(_constant(value) for value in code.co_consts),
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        flags,
        code.co_stacksize,
        local_names,
        code.co_freevars,
        code.co_cellvars,
        code.co_name,
        getattr(code, "co_qualname", ""),
        getattr(code, "co_exceptiontable", b""),
    )


def _constant(value: object) -> object:
    if isinstance(value, types.CodeType):
        return ("code", _shape(value))
    if isinstance(value, tuple):
        return ("tuple", tuple(_constant(item) for item in value))
    if isinstance(value, frozenset):
        return ("frozenset", tuple(sorted(repr(_constant(item)) for item in value)))
    return (type(value).__name__, repr(value))
