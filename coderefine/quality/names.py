"""Identifier quality: the share of a module's bound names that are descriptive and have the PEP 8 case.

It is one of the three parts of the readability score (:mod:`coderefine.quality.readability`) and one of
the metrics (:mod:`coderefine.quality.metrics`); both import it from here. ``docs/readability-score.md``
holds the same description for users.

Rules
-----
``Q`` = (distinct good names) / (distinct bound names); 1.0 when the module binds no names. A name is
*bound* when the module's own code creates it: assignment targets (also augmented, annotated and
``:=``), ``for`` / ``with ... as`` / comprehension targets, ``except ... as`` names, ``match``
capture names, function and class names, and parameters (also ``*args``, ``**kwargs`` and lambda
parameters). Attributes (``self.x``), imported names (``import numpy as np``), ``global`` /
``nonlocal`` declarations and ``del`` targets are not counted. Each distinct name counts once, and a
name bound in several places is good only if every binding is good.

A binding is good when all of these hold:

1. *No builtin shadowing*: outside a class body the name is not a builtin function or type
   (``BUILTIN_NAMES``: ``sum``, ``max``, ``list``, ``input``, ...; ``id`` is allowed).
2. *PEP 8 case* (leading/trailing underscores ignored; ``__dunder__`` names always pass): functions
   ``snake_case``; classes ``CapWords`` (also ``X = namedtuple(...)`` / ``NamedTuple`` /
   ``NewType`` / ``TypedDict`` / ``Enum``); variables and parameters ``snake_case``, or ``UPPER_CASE``
   at module or class level, or ``CapWords`` at module level (type aliases). Type variables
   (``X = TypeVar(...)``, ``ParamSpec``, ``TypeVarTuple``, 3.12 type parameters) need only match
   ``[A-Z][A-Za-z0-9]*(_co|_contra)?`` and skip rule 3. Method names fixed by frameworks
   (``FRAMEWORK_METHOD_NAMES``: ``setUp``, ``tearDown``...; ``FRAMEWORK_METHOD_PATTERN``:
   ``visit_Name``, ``leave_Call``, ``do_GET``) are good as they are.
3. *Descriptive*: the name is in ``SHORT_NAMES`` (``i j k n x y z e f _ df db dt ex fn fp id io ip
   ok op os re tz``), is ``x0``..``z9``, is a ``__dunder__`` or only underscores; or, with the
   underscores at both ends removed, it is split into parts at underscores, lower-to-upper case
   changes and digits, and its letter parts (lower-cased) include no *junk* part and either at least
   one *word* part or two or more parts from ``SHORT_WORDS`` (``is``, ``to``, ``ok``, ... as in
   ``is_ok``). A word part has 3+ letters and is not in ``PLACEHOLDERS`` (``foo bar baz var tmp
   abc xyz``, ...). A part is junk if it repeats one letter (``aa``, ``bbbb``) or has a letter three
   times in a row; or -- for parts of 3+ letters that are not in ``ABBREVIATIONS`` (``cnt ctx src
   gcd dfs``, ...; plurals too) -- if it has no vowel (``aeiou``, or ``y`` after the first letter),
   6+ consonants in a row, a letter pair from ``IMPLAUSIBLE_LETTER_PAIRS`` (``qz``, ``xj``, ...), or
   is a 4+ letter run of the alphabet or a keyboard row (``abcd``, ``qwer``, ``asdf``).

So ``dp``, ``N``, ``ci0``, ``aaaa1``, ``bbbb2``, ``var1``, ``abc`` and ``sum`` are poor; ``count``,
``prev_i``, ``MOD``, ``INF``, ``dist2``, ``i``, ``x1``, ``cnt`` and ``is_ok`` are good.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from coderefine.quality.parsing import parse

# --- identifier rules ------------------------------------------------------------------------------

# Conventional short names that readers understand at once (loop indices, coordinates, exceptions,
# files, well-known library idioms).
SHORT_NAMES = frozenset(
    {"i", "j", "k", "n", "x", "y", "z", "e", "f", "_"}
    | {"df", "db", "dt", "ex", "fn", "fp", "id", "io", "ip", "ok", "op", "os", "re", "tz"}
)
# Coordinates: x0..x9, y0..y9, z0..z9 (x1, y1, x2, y2 is the clearest way to write a segment).
COORDINATE_NAME = re.compile(r"[xyz][0-9]")
# Two-letter English words that can form a readable name together (``is_ok``, ``to_do``).
SHORT_WORDS = frozenset(
    {"as", "at", "by", "do", "go", "if", "in", "is", "it", "no", "of", "on", "or", "to", "up"}
    | {"db", "df", "dt", "fn", "id", "io", "ip", "ok", "op", "os", "re", "tz"}
)
# Vowel-less abbreviations common enough that they read as words.
ABBREVIATIONS = frozenset(
    {"cls", "cmd", "cnt", "ctx", "cfg", "cwd", "dst", "src", "msg", "pkg", "pwd", "std", "str", "tmp"}
    | {"sql", "xml", "html", "http", "https", "ssh", "ssl", "tls", "tcp", "udp", "dns", "csv", "tsv"}
    | {"txt", "pdf", "png", "jpg", "svg", "rgb", "hsv", "pid", "ptr", "lst", "nxt", "prv", "dfs"}
    | {"bfs", "gcd", "lcm", "lcs", "lca", "mst", "bst", "fft", "rng", "mgr", "srv", "kwds", "rhs"}
    | {"lhs", "hdr", "fmt", "sfx", "pfx", "grp", "tbl", "crc", "stmt", "tmpl", "ttl", "css", "npm"}
    | {"vcs", "tld", "fd", "rpc", "cpp", "dll", "pth", "whl", "sdk", "cli", "gui", "api"}
)
# Placeholder words: a name made only of these (``foo``, ``var1``, ``tmp_2``) says nothing.
PLACEHOLDERS = frozenset(
    {"foo", "bar", "baz", "qux", "quux", "spam", "eggs", "hoge", "fuga", "piyo", "var", "tmp"}
    | {"blah", "stuff", "thing", "dummy", "junk", "whatever", "something", "xxx"}
    # Three-letter runs of the alphabet or a keyboard row (longer runs are junk, see _is_junk).
    | {"abc", "xyz", "qwe", "asd", "zxc"}
)
# Builtin functions and types: rebinding one (``sum = 0``, ``list = ...``) hides it from the rest of
# the scope. Spelled out, not read from ``builtins``, so the score is the same on every Python version.
# ``id`` is in SHORT_NAMES and stays allowed.
BUILTIN_NAMES = frozenset(
    {"abs", "aiter", "all", "anext", "any", "ascii", "bin", "bool", "breakpoint", "bytearray", "bytes"}
    | {"callable", "chr", "classmethod", "compile", "complex", "delattr", "dict", "dir", "divmod"}
    | {"enumerate", "eval", "exec", "filter", "float", "format", "frozenset", "getattr", "globals"}
    | {"hasattr", "hash", "help", "hex", "input", "int", "isinstance", "issubclass", "iter", "len"}
    | {"list", "locals", "map", "max", "memoryview", "min", "next", "object", "oct", "open", "ord"}
    | {"pow", "print", "property", "range", "repr", "reversed", "round", "set", "setattr", "slice"}
    | {"sorted", "staticmethod", "str", "sum", "super", "tuple", "type", "vars", "zip"}
)
# Letter pairs that no English word has: the pairs absent from every word (3+ letters) in the comments
# and docstrings of CPython 3.11's standard library, less "uy" (buy), "hh" (withhold) and "zu" (azure).
# About 40 % of random six-letter strings contain one, fewer than 1 % of the words in real identifiers
# (mostly run-together words such as envdir). Together with the other junk rules about half of all
# random letter strings are rejected; strings of repeated letters always are.
IMPLAUSIBLE_LETTER_PAIRS = frozenset(
    {"cj", "cx", "dq", "dz", "fh", "fj", "fk", "fx", "fz", "gj", "gk", "gq", "gx", "hj", "hq", "ij"}
    | {"iy", "jb", "jg", "jj", "jk", "jl", "jm", "jq", "jt", "jv", "jw", "jx", "jz", "kh", "km", "kv"}
    | {"kx", "kz", "lj", "mj", "mq", "mx", "mz", "pj", "pz", "qb", "qe", "qf", "qg", "qh", "qj", "qk"}
    | {"qp", "qq", "qv", "qx", "qy", "qz", "uj", "uq", "uv", "vd", "vj", "vx", "wj", "wq", "wy", "wz"}
    | {"xj", "xn", "xq", "yj", "yk", "yx", "yy", "zf", "zh", "zj", "zk", "zp", "zq", "zv", "zw", "zx"}
)
# Method names fixed by frameworks, which PEP 8 itself says to follow.
FRAMEWORK_METHOD_NAMES = frozenset(
    {"setUp", "tearDown", "setUpClass", "tearDownClass", "setUpModule", "tearDownModule"}
    | {"asyncSetUp", "asyncTearDown", "setUpTestData"}
)
FRAMEWORK_METHOD_PATTERN = re.compile(r"(visit|leave|depart)_[A-Z][A-Za-z0-9]*(_[a-z0-9_]+)?|do_[A-Z]+")

_SNAKE = re.compile(r"[a-z][a-z0-9_]*")
_UPPER = re.compile(r"[A-Z][A-Z0-9_]*")
_CAPWORDS = re.compile(r"[A-Z][A-Za-z0-9]*")
# PEP 484 names type variables T, AnyStr, KT, T_co, T_contra.
_TYPE_VARIABLE_NAME = re.compile(r"[A-Z][A-Za-z0-9]*(_co|_contra)?")
_DUNDER = re.compile(r"__[A-Za-z0-9_]+__")
_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_VOWELS = frozenset("aeiou")
_SEQUENCES = ("abcdefghijklmnopqrstuvwxyz", "qwertyuiop", "asdfghjkl", "zxcvbnm")
_TYPE_VARIABLE_FACTORIES = frozenset({"TypeVar", "ParamSpec", "TypeVarTuple"})
_CLASS_FACTORIES = frozenset({"NewType", "NamedTuple", "namedtuple", "TypedDict", "Enum", "IntEnum"})

# Roles and scopes of a binding.
_FUNCTION, _CLASS, _VARIABLE, _PARAMETER = "function", "class", "variable", "parameter"
_TYPE_VARIABLE = "typevar"
_MODULE_SCOPE, _CLASS_SCOPE, _FUNCTION_SCOPE = "module", "class", "function"


def identifier_quality(source: str) -> tuple[float, list[str]]:
    """Share (0..1) of distinct bound names that are good, and the poor names, sorted.

    Raises ``SyntaxError`` if unparsable.
    """
    return identifier_quality_of_tree(parse(source))


def identifier_quality_of_tree(tree: ast.AST) -> tuple[float, list[str]]:
    """:func:`identifier_quality` on an already parsed module."""
    verdicts: dict[str, bool] = {}
    for name, role, scope in _bindings(tree):
        # A name is good only if every place that binds it is good: one poor binding is enough to
        # confuse a reader, and it stops one good use from laundering a bad one.
        verdicts[name] = verdicts.get(name, True) and is_good_binding(name, role, scope)
    if not verdicts:
        return 1.0, []
    poor = sorted(name for name, good in verdicts.items() if not good)
    return (len(verdicts) - len(poor)) / len(verdicts), poor


def is_good_binding(name: str, role: str, scope: str) -> bool:
    """Whether ``name``, bound as ``role`` ("function", "class", "variable", "parameter", "typevar")
    in ``scope`` ("module", "class", "function"), is descriptive and has the PEP 8 case."""
    if role == _TYPE_VARIABLE:
        return bool(_TYPE_VARIABLE_NAME.fullmatch(name.strip("_")))
    if name in BUILTIN_NAMES and scope != _CLASS_SCOPE:
        # Methods and class attributes are reached through the instance and shadow nothing.
        return False
    if role == _FUNCTION and _is_framework_method(name):
        # The framework chose the name (visit_FunctionDef, setUp); the author could not.
        return True
    return _has_conventional_case(name, role, scope) and is_descriptive(name)


def _is_framework_method(name: str) -> bool:
    return name in FRAMEWORK_METHOD_NAMES or bool(FRAMEWORK_METHOD_PATTERN.fullmatch(name))


def is_descriptive(name: str) -> bool:
    """Whether a name says what it holds (the word heuristic in the module docstring)."""
    if name in SHORT_NAMES or _DUNDER.fullmatch(name):
        return True
    core = name.strip("_")
    if not core or core in SHORT_NAMES or COORDINATE_NAME.fullmatch(core):
        return True
    letter_parts = [part.lower() for part in _PARTS.findall(core) if part.isalpha()]
    if any(_is_junk(part) for part in letter_parts):
        return False
    if any(len(part) >= 3 and part not in PLACEHOLDERS for part in letter_parts):
        return True
    return len(letter_parts) >= 2 and all(part in SHORT_WORDS for part in letter_parts)


def _is_junk(part: str) -> bool:
    """Whether one lower-case letter part of a name looks like noise rather than a word."""
    if len(part) >= 2 and len(set(part)) == 1:
        return True
    if re.search(r"([a-z])\1\1", part):
        return True
    if len(part) < 3 or _is_abbreviation(part):
        return False
    has_vowel = any(letter in _VOWELS for letter in part) or "y" in part[1:]
    if not has_vowel or re.search(r"[^aeiouy]{6}", part):
        return True
    if any(part[index : index + 2] in IMPLAUSIBLE_LETTER_PAIRS for index in range(len(part) - 1)):
        return True
    return len(part) >= 4 and any(part in sequence for sequence in _SEQUENCES)


def _is_abbreviation(part: str) -> bool:
    # Plurals of abbreviations read as well as the abbreviations (pkgs, cmds, fds).
    return part in ABBREVIATIONS or (part.endswith("s") and part[:-1] in ABBREVIATIONS)


def _has_conventional_case(name: str, role: str, scope: str) -> bool:
    if _DUNDER.fullmatch(name):
        return True
    core = name.strip("_")
    if not core:
        return True
    if role == _FUNCTION:
        return bool(_SNAKE.fullmatch(core))
    if role == _CLASS:
        return bool(_CAPWORDS.fullmatch(core))
    if _SNAKE.fullmatch(core):
        return True
    if role == _VARIABLE and scope in (_MODULE_SCOPE, _CLASS_SCOPE) and _UPPER.fullmatch(core):
        return True
    return role == _VARIABLE and scope == _MODULE_SCOPE and bool(_CAPWORDS.fullmatch(core))


def _bindings(tree: ast.AST) -> Iterator[tuple[str, str, str]]:
    collector = _BindingCollector()
    collector.visit(tree)
    return iter(collector.bindings)


class _BindingCollector(ast.NodeVisitor):
    """Collects ``(name, role, scope)`` for every name the module's own code binds."""

    def __init__(self) -> None:
        self.bindings: list[tuple[str, str, str]] = []
        self._scopes: list[str] = [_MODULE_SCOPE]

    def _bind(self, name: str | None, role: str) -> None:
        if name:
            self.bindings.append((name, role, self._scopes[-1]))

    def _visit_in_scope(self, node: ast.AST, scope: str) -> None:
        self._scopes.append(scope)
        try:
            self.generic_visit(node)
        finally:
            self._scopes.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._bind(node.name, _FUNCTION)
        # Parameters, defaults and decorators are visited inside the function scope; only the
        # parameters bind names, and they belong to the function.
        self._visit_in_scope(node, _FUNCTION_SCOPE)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._visit_in_scope(node, _FUNCTION_SCOPE)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._bind(node.name, _CLASS)
        self._visit_in_scope(node, _CLASS_SCOPE)

    def _visit_comprehension(self, node: ast.AST) -> None:
        # Comprehension variables live in their own function-like scope, so UPPER_CASE is not
        # a constant there.
        self._visit_in_scope(node, _FUNCTION_SCOPE)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _visit_comprehension

    def visit_arg(self, node: ast.arg) -> None:
        self._bind(node.arg, _PARAMETER)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store):
            self._bind(node.id, _VARIABLE)

    def visit_Assign(self, node: ast.Assign) -> None:
        factory = _factory_name(node.value)
        single_target = node.targets[0] if len(node.targets) == 1 else None
        if isinstance(single_target, ast.Name) and factory in _TYPE_VARIABLE_FACTORIES:
            self._bind(single_target.id, _TYPE_VARIABLE)
            self.visit(node.value)
        elif isinstance(single_target, ast.Name) and factory in _CLASS_FACTORIES:
            # Point = namedtuple("Point", ...) creates a class and should be named like one.
            self._bind(single_target.id, _CLASS)
            self.visit(node.value)
        else:
            self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self._bind(node.name, _VARIABLE)
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        self._bind(node.name, _VARIABLE)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        self._bind(node.name, _VARIABLE)
        self.generic_visit(node)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        self._bind(node.rest, _VARIABLE)
        self.generic_visit(node)

    # Python 3.12 type parameters (``def f[T](...)``, ``class Box[T]``); harmless on older versions.
    def visit_TypeVar(self, node: ast.AST) -> None:
        self._bind(getattr(node, "name", None), _TYPE_VARIABLE)
        self.generic_visit(node)

    visit_ParamSpec = visit_TypeVarTuple = visit_TypeVar

    def visit_Import(self, node: ast.Import) -> None:
        # Imported names follow the exporting library's conventions (np, pd), not the author's.
        return

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        return


def _factory_name(value: ast.AST) -> str | None:
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None
