"""Every rule: its public description, the task(s) it serves, and the code that applies it.

Optimisation rules are chosen for CPython speed, not style: each ruff code below was checked to offer a
fix with the pinned ruff and to remove work (a call, a copy, a Python-level loop or a sort). Left out on
purpose: SIM110/SIM111 (`any()`/`all()` over a generator is slower than the loop), C419 (for `sum`/`min`/
`max`, a generator is slower than the list), FURB136 and PLR1730 (`max(a, b)` is a call, slower than
the comparison) and FURB163 (changes results in the last bits).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from coderefine.providers.offline.rewrites.base import RewriteRule
from coderefine.providers.offline.rewrites.codemods_accumulate import find_append_loop, find_str_concat
from coderefine.providers.offline.rewrites.codemods_calls import (
    find_filter_lambda,
    find_join_generator,
    find_map_builtin,
)
from coderefine.providers.offline.rewrites.codemods_containers import (
    find_iadd_append,
    find_membership_in_loop,
    find_pop_front,
    find_seen_list,
)
from coderefine.providers.offline.rewrites.codemods_hoist import hoist_loop_invariants
from coderefine.providers.offline.rewrites.codemods_loops import find_trial_division
from coderefine.providers.offline.rewrites.codemods_memo import find_memoize
from coderefine.providers.offline.rewrites.codemods_programs import print_batching, stdin_readline
from coderefine.providers.offline.rewrites.cst_module_level import run_codemod_anywhere
from coderefine.providers.offline.rewrites.cst_session import Finder
from coderefine.providers.offline.rewrites.ruff_fixes import RuffFix, apply_fix_rule, apply_format

OPT = frozenset({"optimize"})
READ = frozenset({"readability"})
BOTH = OPT | READ


@dataclass(frozen=True)
class Entry:
    rule: RewriteRule
    apply: Callable[[str, Sequence[str] | None], str]
    ruff: RuffFix | None = None  # set for ruff lint rules, so the engine can screen them in one run


def _ruff(select: str, tasks: frozenset[str], description: str, *, unsafe: bool = True) -> Entry:
    fix = RuffFix(select=select, unsafe=unsafe)
    return Entry(
        RewriteRule(f"ruff:{select}", description, tasks),
        lambda source, targets: apply_fix_rule(source, fix, targets),
        fix,
    )


def _codemod(rule_id: str, tasks: frozenset[str], description: str, finder: Finder, hint: str) -> Entry:
    return Entry(
        RewriteRule(rule_id, description, tasks),
        lambda source, targets: run_codemod_anywhere(source, targets, finder, hint),
    )


_OPTIMIZE_RUFF = [
    _ruff("C408", OPT, "Replace `dict()`, `list()` and `tuple()` calls with literals."),
    _ruff("C409", OPT, "Write `tuple([1, 2])` as the tuple literal `(1, 2)`."),
    _ruff("C410", OPT, "Drop `list()` around a list literal."),
    _ruff("C418", OPT, "Drop `dict()` around a dict literal."),
    _ruff("C405", OPT, "Write `set([1, 2])` as the set literal `{1, 2}`."),
    _ruff("C406", OPT, "Write `dict([(k, v)])` as the dict literal `{k: v}`."),
    _ruff("C411", OPT, "Drop `list()` around a list comprehension."),
    _ruff("C413", OPT, "Drop `list()` around `sorted()`, which already returns a new list.", unsafe=False),
    _ruff(
        "C414",
        OPT,
        "Drop a needless inner `list()`/`tuple()`/`sorted()` call inside `sorted()`, `set()`, `list()` "
        "or `tuple()` (never `sorted(reversed(x))`, which orders ties differently).",
    ),
    _ruff("C416", OPT, "Replace an identity comprehension such as `[x for x in y]` with `list(y)`."),
    _ruff("C400", OPT, "Rewrite `list(<generator>)` as a list comprehension (or `list(y)`)."),
    _ruff("C401", OPT, "Rewrite `set(<generator>)` as a set comprehension (or `set(y)`)."),
    _ruff("C402", OPT, "Rewrite `dict((k, v) for ...)` as a dict comprehension."),
    _ruff("C403", OPT, "Rewrite `set([... for ...])` as a set comprehension."),
    _ruff("C404", OPT, "Rewrite `dict([(k, v) for ...])` as a dict comprehension."),
    _ruff("C417", OPT, "Rewrite `map(lambda ...)` as a comprehension (no lambda call per item)."),
    _ruff("C420", OPT, "Replace `{k: CONST for k in y}` with `dict.fromkeys(y, CONST)`."),
    _ruff("SIM118", OPT, "Test `key in d` instead of `key in d.keys()`."),
    _ruff(
        "PERF102",
        OPT,
        "Loop over `d.keys()` or `d.values()` instead of unpacking `d.items()` when half is unused.",
    ),
    _ruff("PLR1733", OPT, "Use the loop's value instead of `d[key]` inside `for key, value in d.items()`."),
    _ruff("PLR1736", OPT, "Use the loop's value instead of `seq[i]` inside `for i, value in enumerate(seq)`."),
    _ruff("FURB148", OPT, "Drop `enumerate()` when the index or the value is unused."),
    _ruff("FURB168", OPT, "Replace `isinstance(x, type(None))` with `x is None`."),
    _ruff("FURB169", OPT, "Replace `type(x) is type(None)` with `x is None`."),
    _ruff("FURB161", OPT, "Replace `bin(x).count('1')` with `x.bit_count()`."),
    _ruff("FURB129", OPT, "Iterate over a file directly instead of over `f.readlines()`."),
    _ruff("FURB132", OPT, "Replace `if x in s: s.remove(x)` on a set with `s.discard(x)`."),
    _ruff("FURB142", OPT, "Replace a loop of `s.add(...)` with one `s.update(...)`."),
    _ruff(
        "FURB192",
        OPT,
        "Replace `sorted(x)[0]` with `min(x)`: O(n) instead of O(n log n) (an empty x raises ValueError, "
        "not IndexError).",
    ),
    _ruff("PLW3301", OPT, "Flatten nested `min()`/`max()` calls into one call."),
    _ruff(
        "PLR1714",
        BOTH,
        "Merge `x == 1 or x == 2` into `x in {1, 2}` when all values are constants (an unhashable x then "
        "raises TypeError).",
    ),
    _ruff(
        "PLR6201",
        OPT,
        "Test membership in a set of constants instead of a list or tuple literal (an unhashable value "
        "then raises TypeError).",
    ),
    _ruff("FURB118", OPT, "Replace lambdas such as `lambda x: x[1]` with `operator.itemgetter(1)` and friends."),
    _ruff("FURB140", OPT, "Replace `[f(*args) for args in it]` with `itertools.starmap(f, it)`."),
    _ruff("PERF401", OPT, "Turn a loop that appends to a list into a list comprehension (or one `extend`)."),
    _ruff("PERF403", OPT, "Turn a loop that fills a dict into a dict comprehension."),
]

_CODEMODS = [
    _codemod(
        "join-genexp-to-listcomp",
        OPT,
        "Pass `str.join` a list comprehension instead of a generator (join builds a list anyway).",
        find_join_generator,
        r"\.join\(",
    ),
    _codemod(
        "builtin-comprehension-to-map",
        OPT,
        "Replace `f(x) for x in y` with `map(f, y)` for a builtin f such as len, int or abs.",
        find_map_builtin,
        r"\b(?:abs|bin|bool|chr|float|frozenset|hex|int|len|list|max|min|oct|ord|repr|round|set|sorted|sum|tuple)\(\s*(\w+)\s*\)\s+for\s+\1\b",
    ),
    _codemod(
        "filter-lambda-to-comprehension",
        BOTH,
        "Rewrite `list(filter(lambda v: cond, it))` as `[v for v in it if cond]`.",
        find_filter_lambda,
        r"\bfilter\(\s*lambda\b",
    ),
    _codemod(
        "list-iadd-to-append",
        BOTH,
        "Replace `lst += [x]` with `lst.append(x)` on a local list.",
        find_iadd_append,
        r"\+=\s*\[",
    ),
    _codemod(
        "str-concat-to-join",
        OPT,
        "Build a string with one `''.join([...])` instead of `+=` in a loop (a non-str item raises "
        "TypeError after the loop rather than at that item).",
        find_str_concat,
        r"\+=",
    ),
    _codemod(
        "append-loop-to-comprehension",
        OPT,
        "Replace `out = []` and a loop of `out.append(...)` under if/elif/else with one list comprehension.",
        find_append_loop,
        r"\.append\(",
    ),
    _codemod(
        "seen-list-to-set",
        OPT,
        "Keep a set beside a local list that is only appended to, so `x in seen` is O(1) (items must be hashable).",
        find_seen_list,
        r"\.append\(",
    ),
    _codemod(
        "membership-in-loop-to-set",
        OPT,
        "Build `set(items)` once before a loop that tests `x in items` on a list nothing changes (items "
        "must be hashable).",
        find_membership_in_loop,
        r"\bin\s+[A-Za-z_]\w*\b(?!\s*[.(\[])",
    ),
    _codemod(
        "pop-front-deque",
        OPT,
        "Use `collections.deque` and `popleft()` for a local list used as a FIFO queue with `pop(0)`.",
        find_pop_front,
        r"\.pop\(\s*0\s*\)",
    ),
    _codemod(
        "trial-division-sqrt",
        OPT,
        "Stop a trial-division loop `for i in range(2, n): if n % i == 0: ...` at `math.isqrt(n)`.",
        find_trial_division,
        r"\brange\(\s*2\s*,",
    ),
    _codemod(
        "memoize-recursion",
        OPT,
        "Cache a pure tree-recursive function with `@functools.cache` (arguments must be hashable; very "
        "deep recursion reaches the recursion limit sooner).",
        find_memoize,
        r"\bdef\b",
    ),
]

# Programs (scripts reading stdin, writing stdout): whole-module rewrites (codemods_programs.py).
_PROGRAMS = [
    Entry(
        RewriteRule(
            "stdin-readline",
            "In a program, read lines with `sys.stdin.readline()` instead of `input()` (which flushes stdout "
            "before every line; at end of input readline returns '' where input() raises EOFError).",
            OPT,
        ),
        stdin_readline,
    ),
    Entry(
        RewriteRule(
            "print-batching",
            "In a program, replace a loop whose whole body is one `print(...)` with one write of the joined lines.",
            OPT,
        ),
        print_batching,
    ),
    Entry(
        RewriteRule(
            "hoist-loop-invariants",
            "In a program, compute a pure builtin call on values a loop never changes (`len(s)`, `max(xs)`, "
            "`x in set(xs)`) and look up a bound method such as `out.append` once, before the loop.",
            OPT,
        ),
        hoist_loop_invariants,
    ),
]

_READABILITY_RUFF = [
    _ruff("UP", READ, "Modernise syntax for Python 3.10 (pyupgrade): f-strings, builtin generics, `super()`."),
    _ruff("C4", READ, "Simplify needless `list()`/`dict()`/`set()` calls and comprehensions."),
    _ruff("SIM", READ, "Simplify conditionals, boolean returns and nested `if`/`with` statements."),
    _ruff("RET", READ, "Tidy returns: no `else` after `return`, no assignment just to return it."),
    _ruff("PIE", READ, "Remove needless `pass`, spreads, `range(0, n)` starts and similar clutter."),
    _ruff("FURB", READ, "Use modern idioms (refurb): `removeprefix`, `max()`, `dict.fromkeys` and the like."),
]

_FORMAT = Entry(RewriteRule("ruff-format", "Format the code with `ruff format`.", READ), apply_format)

ENTRIES: dict[str, Entry] = {
    e.rule.id: e for e in [*_OPTIMIZE_RUFF, *_CODEMODS, *_PROGRAMS, *_READABILITY_RUFF, _FORMAT]
}

DEFAULT_ORDER: dict[str, list[str]] = {
    "optimize": [e.rule.id for e in [*_OPTIMIZE_RUFF, *_CODEMODS, *_PROGRAMS] if "optimize" in e.rule.tasks],
    "readability": [
        "filter-lambda-to-comprehension",  # first: ruff's C4/SIM rules may simplify what they produce
        "list-iadd-to-append",
        *(e.rule.id for e in _READABILITY_RUFF),
        "ruff:PLR1714",
        "ruff-format",  # last: formats whatever the other rules produced
    ],
}
