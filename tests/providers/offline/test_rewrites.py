"""Tests for the offline rewrite engine (coderefine.providers.offline.rewrites): real ruff subprocesses, no mocks.

Every rule has a positive case (exact output for codemods, same AST for ruff fixes), a negative case
where it must not fire, and every codemod is also run on inputs to compare its behaviour.
"""

from __future__ import annotations

import ast
import copy
import glob
import os
import textwrap
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from coderefine.providers.offline.rewrites import (
    RewriteResult,
    RewriteRule,
    all_rules,
    applicable_rules,
    apply_rules,
    rules_for,
)
from coderefine.providers.offline.rewrites.targets import outside_unchanged
from tests.conftest import BENCH, require


def _src(code: str) -> str:
    return textwrap.dedent(code).lstrip("\n")


def _apply(code: str, rule: str, targets: Sequence[str] | None = None) -> RewriteResult:
    return apply_rules(_src(code), [rule], targets)


def _same_ast(a: str, b: str) -> None:
    assert ast.dump(ast.parse(a)) == ast.dump(ast.parse(b)), f"\n--- got:\n{a}\n--- expected:\n{b}"


def _run(code: str, name: str, args: tuple[Any, ...]) -> tuple[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(code, "<test>", "exec"), namespace)  # our own test snippets
    try:
        return "ok", namespace[name](*copy.deepcopy(args))
    except Exception as exc:
        return "raised", type(exc).__name__


def _behaves_same(before: str, after: str, name: str, inputs: Sequence[tuple[Any, ...]]) -> None:
    for args in inputs:
        assert _run(before, name, args) == _run(after, name, args), args


# -- the registry -------------------------------------------------------------------------------------


def test_rules_registry_is_consistent() -> None:
    rules = all_rules()
    assert rules, "no rules registered"
    for rule_id, rule in rules.items():
        assert isinstance(rule, RewriteRule) and rule.id == rule_id
        assert rule.tasks and rule.tasks <= {"optimize", "readability"}
        assert rule.description and "\n" not in rule.description
    for task in ("optimize", "readability"):
        ordered = rules_for(task)
        assert len({r.id for r in ordered}) == len(ordered)
        assert all(task in r.tasks for r in ordered)
    optimize = {r.id for r in rules_for("optimize")}
    assert "ruff:SIM110" not in optimize and "ruff:SIM111" not in optimize  # any()/all() are slower
    assert "ruff-format" in {r.id for r in rules_for("readability")}


def test_unknown_rule_raises_key_error() -> None:
    with pytest.raises(KeyError, match="no-such-rule"):
        apply_rules("x = 1\n", ["ruff:C408", "no-such-rule"])
    with pytest.raises(KeyError):
        applicable_rules("x = 1\n", ["no-such-rule"])
    with pytest.raises(KeyError):
        rules_for("faster")


def test_syntax_error_raises() -> None:
    with pytest.raises(SyntaxError):
        apply_rules("def f(:\n    pass\n", ["ruff:C408"])
    with pytest.raises(SyntaxError):
        apply_rules("x = 1\0\n", ["memoize-recursion"])


def test_no_rules_and_empty_module() -> None:
    assert apply_rules("x = 1\n", []) == RewriteResult("x = 1\n", ())
    everything = list(all_rules())
    assert apply_rules("", everything) == RewriteResult("", ())


# -- ruff rules ---------------------------------------------------------------------------------------

# (rule, source, expected after the rule, a source where the rule must not fire)
RUFF_CASES: list[tuple[str, str, str, str]] = [
    (
        "ruff:C408",
        "def f():\n    return dict(), list(), tuple()\n",
        "def f():\n    return {}, [], ()\n",
        "def f(x):\n    return dict(x)\n",
    ),
    (
        "ruff:C409",
        "def f():\n    return tuple([1, 2])\n",
        "def f():\n    return (1, 2)\n",
        "def f(x):\n    return tuple(x)\n",
    ),
    (
        "ruff:C410",
        "def f():\n    return list([1, 2])\n",
        "def f():\n    return [1, 2]\n",
        "def f(x):\n    return list(x)\n",
    ),
    (
        "ruff:C418",
        "def f():\n    return dict({})\n",
        "def f():\n    return {}\n",
        "def f(x):\n    return dict(x)\n",
    ),
    (
        "ruff:C405",
        "def f():\n    return set([1, 2])\n",
        "def f():\n    return {1, 2}\n",
        "def f(x):\n    return set(x)\n",
    ),
    (
        "ruff:C406",
        "def f():\n    return dict([(1, 2)])\n",
        "def f():\n    return {1: 2}\n",
        "def f(x):\n    return dict(x)\n",
    ),
    (
        "ruff:C411",
        "def f(y):\n    return list([x + 1 for x in y])\n",
        "def f(y):\n    return [x + 1 for x in y]\n",
        "def f(y):\n    return list(y)\n",
    ),
    # reversed(sorted(x)) -> sorted(x, reverse=True) orders equal elements differently: never applied
    (
        "ruff:C413",
        "def f(y):\n    return list(sorted(y))\n",
        "def f(y):\n    return sorted(y)\n",
        "def f(y):\n    return reversed(sorted(y))\n",
    ),
    (
        "ruff:C414",
        "def f(y):\n    return sorted(list(y))\n",
        "def f(y):\n    return sorted(y)\n",
        "def f(y):\n    return sorted(reversed(y))\n",
    ),
    (
        "ruff:C416",
        "def f(y):\n    return [x for x in y]\n",
        "def f(y):\n    return list(y)\n",
        "def f(y):\n    return [x + 1 for x in y]\n",
    ),
    (
        "ruff:C400",
        "def f(y):\n    return list(x + 1 for x in y)\n",
        "def f(y):\n    return [x + 1 for x in y]\n",
        "def f(y):\n    return list(y)\n",
    ),
    (
        "ruff:C401",
        "def f(y):\n    return set(x + 1 for x in y)\n",
        "def f(y):\n    return {x + 1 for x in y}\n",
        "def f(y):\n    return set(y)\n",
    ),
    (
        "ruff:C402",
        "def f(y):\n    return dict((x, 1) for x in y)\n",
        "def f(y):\n    return {x: 1 for x in y}\n",
        "def f(y):\n    return dict(y)\n",
    ),
    (
        "ruff:C403",
        "def f(y):\n    return set([x + 1 for x in y])\n",
        "def f(y):\n    return {x + 1 for x in y}\n",
        "def f(y):\n    return set(y)\n",
    ),
    (
        "ruff:C404",
        "def f(y):\n    return dict([(x, 0) for x in y])\n",
        "def f(y):\n    return {x: 0 for x in y}\n",
        "def f(y):\n    return dict(y)\n",
    ),
    (
        "ruff:C417",
        "def f(y):\n    return list(map(lambda v: v + 1, y))\n",
        "def f(y):\n    return [v + 1 for v in y]\n",
        "def f(y, g):\n    return list(map(g, y))\n",
    ),
    # a mutable value would be shared by every key with dict.fromkeys
    (
        "ruff:C420",
        "def f(y):\n    return {x: 0 for x in y}\n",
        "def f(y):\n    return dict.fromkeys(y, 0)\n",
        "def f(y):\n    return {x: [] for x in y}\n",
    ),
    (
        "ruff:SIM118",
        "def f(k, d):\n    return k in d.keys()\n",
        "def f(k, d):\n    return k in d\n",
        "def f(k, d):\n    return k in d.values()\n",
    ),
    (
        "ruff:PERF102",
        "def f(d):\n    for _, v in d.items():\n        print(v)\n",
        "def f(d):\n    for v in d.values():\n        print(v)\n",
        "def f(d):\n    for k, v in d.items():\n        print(k, v)\n",
    ),
    (
        "ruff:PLR1733",
        "def f(d):\n    for k, v in d.items():\n        print(d[k])\n",
        "def f(d):\n    for k, v in d.items():\n        print(v)\n",
        "def f(d):\n    for k, v in d.items():\n        d[k] = 1\n        print(d[k])\n",
    ),
    (
        "ruff:PLR1736",
        "def f(s):\n    for i, v in enumerate(s):\n        print(s[i])\n",
        "def f(s):\n    for i, v in enumerate(s):\n        print(v)\n",
        "def f(s):\n    for i, v in enumerate(s):\n        s[i] = 0\n        print(s[i])\n",
    ),
    (
        "ruff:FURB148",
        "def f(y):\n    for _, v in enumerate(y):\n        print(v)\n",
        "def f(y):\n    for v in y:\n        print(v)\n",
        "def f(y):\n    for i, v in enumerate(y):\n        print(i, v)\n",
    ),
    (
        "ruff:FURB168",
        "def f(x):\n    return isinstance(x, type(None))\n",
        "def f(x):\n    return x is None\n",
        "def f(x):\n    return isinstance(x, int)\n",
    ),
    (
        "ruff:FURB169",
        "def f(x):\n    return type(x) is type(None)\n",
        "def f(x):\n    return x is None\n",
        "def f(x):\n    return type(x) is int\n",
    ),
    (
        "ruff:FURB161",
        "def f(x):\n    return bin(x).count('1')\n",
        "def f(x):\n    return x.bit_count()\n",
        "def f(x):\n    return bin(x).count('0')\n",
    ),
    (
        "ruff:FURB129",
        "def f(p):\n    with open(p) as fh:\n        for line in fh.readlines():\n            print(line)\n",
        "def f(p):\n    with open(p) as fh:\n        for line in fh:\n            print(line)\n",
        "def f(p):\n    with open(p) as fh:\n        return fh.readlines()\n",
    ),
    (
        "ruff:FURB132",
        "def f(x):\n    s = {1}\n    if x in s:\n        s.remove(x)\n    return s\n",
        "def f(x):\n    s = {1}\n    s.discard(x)\n    return s\n",
        "def f(x, s):\n    if x in s:\n        s.remove(x)\n    return s\n",
    ),
    (
        "ruff:FURB142",
        "def f(y):\n    s = set()\n    for v in y:\n        s.add(v)\n    return s\n",
        "def f(y):\n    s = set()\n    s.update(y)\n    return s\n",
        "def f(y):\n    s = set()\n    for v in y:\n        s.add(v)\n        print(v)\n    return s\n",
    ),
    # sorted(y)[-1] -> max(y) would return the first of equal maxima, sorted() the last
    (
        "ruff:FURB192",
        "def f(y):\n    return sorted(y)[0]\n",
        "def f(y):\n    return min(y)\n",
        "def f(y):\n    return sorted(y)[-1]\n",
    ),
    (
        "ruff:PLW3301",
        "def f(a, b, c):\n    return max(a, max(b, c))\n",
        "def f(a, b, c):\n    return max(a, b, c)\n",
        "def f(a, b, c):\n    return max(a, min(b, c))\n",
    ),
    # with names, x in (a, b) is slower than the == chain: only constant sets
    (
        "ruff:PLR1714",
        "def f(x):\n    return x == 1 or x == 2\n",
        "def f(x):\n    return x in {1, 2}\n",
        "def f(x, a, b):\n    return x == a or x == b\n",
    ),
    (
        "ruff:PLR6201",
        "def f(x):\n    return x in [1, 2, 3]\n",
        "def f(x):\n    return x in {1, 2, 3}\n",
        "def f(x, a, b):\n    return x in [a, b]\n",
    ),
    (
        "ruff:FURB118",
        "def f(y):\n    return sorted(y, key=lambda v: v[1])\n",
        "import operator\ndef f(y):\n    return sorted(y, key=operator.itemgetter(1))\n",
        "def f(y):\n    return sorted(y, key=lambda v: v[1] + 1)\n",
    ),
    (
        "ruff:FURB140",
        "def f(g, y):\n    return [g(*a) for a in y]\n",
        "from itertools import starmap\ndef f(g, y):\n    return list(starmap(g, y))\n",
        "def f(g, y):\n    return [g(*a, 1) for a in y]\n",
    ),
    (
        "ruff:PERF401",
        "def f(y):\n    out = []\n    for v in y:\n        if v:\n            out.append(v * 2)\n    return out\n",
        "def f(y):\n    out = [v * 2 for v in y if v]\n    return out\n",
        "def f(y):\n    out = []\n    for v in y:\n        out.append(v * 2)\n    print(v)\n    return out\n",
    ),
    (
        "ruff:PERF403",
        "def f(y):\n    out = {}\n    for k, v in y:\n        out[k] = v\n    return out\n",
        "def f(y):\n    out = {k: v for k, v in y}\n    return out\n",
        "def f(y):\n    out = {}\n    for k, v in y:\n        out[k] = v\n        print(k)\n    return out\n",
    ),
    # readability groups
    (
        "ruff:UP",
        "def f(x):\n    return '{}'.format(x)\n",
        "def f(x):\n    return f'{x}'\n",
        "def f(x):\n    return f'{x}'\n",
    ),
    (
        "ruff:C4",
        "def f(y):\n    return list(x for x in y)\n",
        "def f(y):\n    return list(y)\n",
        "def f(y):\n    return reversed(sorted(y))\n",
    ),
    (
        "ruff:SIM",
        "def f(a, b):\n    if a:\n        if b:\n            return 1\n    return 2\n",
        "def f(a, b):\n    if a and b:\n        return 1\n    return 2\n",
        "def f(a, b):\n    if a:\n        print(a)\n        if b:\n            return 1\n    return 2\n",
    ),
    (
        "ruff:RET",
        "def f(a):\n    x = a + 1\n    return x\n",
        "def f(a):\n    return a + 1\n",
        "def f(a):\n    x = a + 1\n    print(x)\n    return x\n",
    ),
    (
        "ruff:PIE",
        "def f(n):\n    return list(range(0, n))\n",
        "def f(n):\n    return list(range(n))\n",
        "def f(n):\n    return list(range(1, n))\n",
    ),
    # FURB152 (3.14 -> math.pi) changes the value: never applied
    (
        "ruff:FURB",
        "def f(s):\n    if s.startswith('ab'):\n        s = s[2:]\n    return s\n",
        "def f(s):\n    s = s.removeprefix('ab')\n    return s\n",
        "def f(r):\n    return 3.14 * r * r\n",
    ),
]


@pytest.mark.parametrize(("rule", "before", "after", "negative"), RUFF_CASES, ids=[c[0] for c in RUFF_CASES])
def test_ruff_rule(rule: str, before: str, after: str, negative: str) -> None:
    assert rule in all_rules()
    result = apply_rules(before, [rule])
    assert result.applied == (rule,)
    _same_ast(result.code, after)
    assert apply_rules(result.code, [rule]).code == result.code  # idempotent
    assert apply_rules(negative, [rule]) == RewriteResult(negative, ())


def test_every_ruff_rule_has_a_case() -> None:
    tested = {case[0] for case in RUFF_CASES}
    listed = {r.id for r in rules_for("optimize") + rules_for("readability") if r.id.startswith("ruff:")}
    assert listed <= tested


def test_ruff_fix_that_would_drop_a_comment_is_skipped() -> None:
    code = "def f(y):\n    return [\n        x  # keep me\n        for x in y\n    ]\n"
    assert apply_rules(code, ["ruff:C416"]) == RewriteResult(code, ())
    # a fix that only edits around the comment keeps it, and is applied
    kept = apply_rules("def f(y):\n    return list(\n        x + 1 for x in y  # keep me\n    )\n", ["ruff:C400"])
    assert kept.applied == ("ruff:C400",) and "# keep me" in kept.code


def test_ruff_format() -> None:
    code = "def f( a ):\n    return [ a,2 ]\ndef g( a ):\n    return [ a,2 ]\n"
    result = apply_rules(code, ["ruff-format"])
    assert result.code == "def f(a):\n    return [a, 2]\n\n\ndef g(a):\n    return [a, 2]\n"
    # with targets only the target definition is formatted, the rest stays byte for byte
    only_g = apply_rules(code, ["ruff-format"], targets=["g"])
    assert only_g.code == "def f( a ):\n    return [ a,2 ]\ndef g(a):\n    return [a, 2]\n"
    assert apply_rules(result.code, ["ruff-format"]) == RewriteResult(result.code, ())


def test_ruff_keeps_crlf_line_endings() -> None:
    code = "def f():\r\n    return dict()\r\n\r\ndef g( a ):\r\n    return [ a ]\r\n"
    result = apply_rules(code, ["ruff:C408", "ruff-format"])
    assert result.applied == ("ruff:C408", "ruff-format")
    assert "\r\n" in result.code and "\n" not in result.code.replace("\r\n", "")


# -- targets ------------------------------------------------------------------------------------------

TWO_FUNCTIONS = """\
import os

def f():
    return dict()   # the same pattern twice


def g():
    return dict()   # must stay exactly as written
class C:
  def m(self, y):
      return list(x for x in y)
  def n(self, y):
      return list(x for x in y)
"""


def test_targets_limit_ruff_fixes() -> None:
    result = apply_rules(TWO_FUNCTIONS, ["ruff:C408", "ruff:C400"], targets=["f", "C.n"])
    assert result.applied == ("ruff:C408", "ruff:C400")
    assert "def f():\n    return {}   # the same pattern twice" in result.code
    assert "def g():\n    return dict()   # must stay exactly as written" in result.code
    assert "  def m(self, y):\n      return list(x for x in y)\n" in result.code
    assert "  def n(self, y):\n      return list(y)\n" in result.code


def test_targets_limit_codemods_and_keep_other_bytes() -> None:
    code = _src(
        """
        def a(n):
            if n < 2:   # base case
                return n
            return a(n - 1) + a(n - 2)

        def b(n):
            if n < 2:   # base case
                return n
            return b(n - 1) + b(n - 2)
        """
    )
    result = apply_rules(code, ["memoize-recursion"], targets=["b"])
    assert result.applied == ("memoize-recursion",)
    # the import is the one line a target may add outside itself; everything else is untouched
    memoized_b = (
        "def b(n):\n"
        "    @functools.cache\n"
        "    def b(n):\n"
        "        if n < 2:   # base case\n"
        "            return n\n"
        "        return b(n - 1) + b(n - 2)\n"
        "\n"
        "    return b(n)\n"
    )
    plain_b = code[code.index("def b(n):") :]
    assert result.code == "import functools\n\n\n" + code.replace(plain_b, memoized_b)
    assert apply_rules(code, ["memoize-recursion"], targets=["nope"]) == RewriteResult(code, ())


def test_outside_guard() -> None:
    before = "import os\n\ndef f():\n    return 1\n\ndef g():\n    return 2\n"
    assert outside_unchanged(before, before.replace("return 1", "return 10"), ["f"])
    assert not outside_unchanged(before, before.replace("return 2", "return 20"), ["f"])
    assert not outside_unchanged(before, before.replace("import os", "import sys"), ["f"])
    # a new import line (and blank lines) may appear outside the targets; nothing else
    assert outside_unchanged(before, "import math\n" + before.replace("return 1", "return 10"), ["f"])
    assert outside_unchanged(before, "import math\n\n\n" + before, ["f"])
    assert not outside_unchanged(before, "x = 1\n" + before, ["f"])
    assert not outside_unchanged(before, "def f(:\n", ["f"])


def test_applicable_rules_judges_each_rule_alone() -> None:
    code = "def f(y):\n    return dict([(x, 0) for x in y]), list()\n"
    rules = ["ruff:C420", "ruff:C404", "ruff:C408", "memoize-recursion"]
    # C420 applies only after C404 has made the dict comprehension, so alone it does nothing
    assert applicable_rules(code, rules) == ["ruff:C404", "ruff:C408"]
    assert applicable_rules(code, rules, targets=["g"]) == []
    chained = apply_rules(code, ["ruff:C404", "ruff:C420"])
    assert chained == RewriteResult("def f(y):\n    return dict.fromkeys(y, 0), list()\n", ("ruff:C404", "ruff:C420"))


# -- codemods -----------------------------------------------------------------------------------------


def _check_codemod(
    rule: str, before: str, after: str, name: str, inputs: Sequence[tuple[Any, ...]], negatives: Sequence[str]
) -> None:
    result = _apply(before, rule)
    assert result.applied == (rule,), result.code
    assert result.code == _src(after)
    assert apply_rules(result.code, [rule]) == RewriteResult(result.code, ())  # idempotent
    _behaves_same(_src(before), result.code, name, inputs)
    for negative in negatives:
        assert _apply(negative, rule) == RewriteResult(_src(negative), ()), negative


def test_join_genexp_to_listcomp() -> None:
    _check_codemod(
        "join-genexp-to-listcomp",
        """
        def f(a, b):
            sep = ", "
            return "".join(x + y for x, y in zip(a, b)) + sep.join(str(c) for c in a)
        """,
        """
        def f(a, b):
            sep = ", "
            return "".join([x + y for x, y in zip(a, b)]) + sep.join([str(c) for c in a])
        """,
        "f",
        [("abc", "xyz"), ("", ""), ("ab", "x")],
        [
            "def f(sep, a):\n    return sep.join(x for x in a)\n",  # sep might be anything with .join
            "async def f(a):\n    return ''.join([x async for x in a])\n",
        ],
    )


def test_builtin_comprehension_to_map() -> None:
    _check_codemod(
        "builtin-comprehension-to-map",
        """
        def f(words, digits):
            longest = max(len(w) for w in words)
            total = sum(int(d) for d in digits)
            values = [abs(d) for d in range(-3, 3)]
            checked = any([int(d) for d in digits])
            return longest, total, values, checked, sorted([ord(c) for c in digits])
        """,
        """
        def f(words, digits):
            longest = max(map(len, words))
            total = sum(map(int, digits))
            values = list(map(abs, range(-3, 3)))
            checked = any(list(map(int, digits)))
            return longest, total, values, checked, sorted(map(ord, digits))
        """,
        "f",
        [(["a", "bcd"], "123"), (["x"], "9a"), ([], "1")],
        [
            "def f(words):\n    return max(str(w) for w in words)\n",  # str is faster as a generator
            "def f(words):\n    return (len(w) for w in words)\n",  # a generator object escapes
            "len = print\ndef f(words):\n    return max(len(w) for w in words)\n",  # len is not the builtin
            "def f(words):\n    return max(len(w) for w in words if w)\n",
        ],
    )


def test_filter_lambda_to_comprehension() -> None:
    _check_codemod(
        "filter-lambda-to-comprehension",
        """
        def f(xs):
            neg = list(filter(lambda x: x < 0, xs))
            odd = set(filter(lambda v: v % 2, xs))
            top = sorted(filter(lambda v: v > 1 if v else False, xs), reverse=True)
            return neg, odd, top
        """,
        """
        def f(xs):
            neg = [x for x in xs if x < 0]
            odd = {v for v in xs if v % 2}
            top = sorted([v for v in xs if (v > 1 if v else False)], reverse=True)
            return neg, odd, top
        """,
        "f",
        [([-2, -1, 0, 1, 2, 3],), ([],), ([5, 5, -5],)],
        [
            "def f(xs, pred):\n    return list(filter(pred, xs))\n",
            "def f(xs):\n    return list(filter(lambda x, y=1: x, xs))\n",
            "def f(xs):\n    return list(filter(lambda x: (y := x), xs))\n",  # walrus scope differs
            "filter = print\ndef f(xs):\n    return list(filter(lambda x: x, xs))\n",
        ],
    )


def test_list_iadd_to_append() -> None:
    _check_codemod(
        "list-iadd-to-append",
        """
        def f(n):
            ans = []
            for i in range(n):
                if i % 3 == 0:
                    ans += [(i, i * i)]  # keep this comment
            return ans
        """,
        """
        def f(n):
            ans = []
            for i in range(n):
                if i % 3 == 0:
                    ans.append((i, i * i))  # keep this comment
            return ans
        """,
        "f",
        [(0,), (10,)],
        [
            "def f(ans, x):\n    ans += [x]\n    return ans\n",  # a parameter: could be a tuple
            "def f(x):\n    ans = []\n    ans += [x, x]\n    return ans\n",
            "def f(x):\n    ans = ()\n    ans += [x]\n    return ans\n",
        ],
    )


def test_str_concat_to_join() -> None:
    _check_codemod(
        "str-concat-to-join",
        """
        def encrypt(s):
            d = 'abcdefghijklmnopqrstuvwxyz'
            out = ''
            for c in s:
                if c in d:
                    out += d[(d.index(c) + 4) % 26]
                else:
                    out += c
            return out

        def copy(chars):
            s = 'x'
            for ch in chars:
                s += ch
            return s
        """,
        """
        def encrypt(s):
            d = 'abcdefghijklmnopqrstuvwxyz'
            out = ''.join([d[(d.index(c) + 4) % 26] if c in d else c for c in s])
            return out

        def copy(chars):
            s = 'x' + ''.join(chars)
            return s
        """,
        "encrypt",
        [("hello, world",), ("",), ("xyz!",)],
        [
            "def f(t):\n    s = ''\n    for c in t:\n        s += c\n    return s, c\n",  # c read after
            "def f(t):\n    s = ''\n    for c in t:\n        s += s[-1:] + c\n    return s\n",
            "def f(t):\n    try:\n        s = ''\n        for c in t:\n"
            "            s += c\n    except TypeError:\n"
            "        pass\n    return s\n",
            "def f(t):\n    s = ''\n    for c in t:\n        s += c\n        print(c)\n    return s\n",
            "def f(t):\n    s = []\n    for c in t:\n        s += c\n    return s\n",  # list, not str
            # c is read before the loop, but in the next round of the outer loop: after it
            "def f(rows):\n    out = []\n    for r in rows:\n"
            "        out.append(c if out else 0)\n        s = ''\n"
            "        for c in r:\n            s += c\n        out.append(s)\n    return out\n",
        ],
    )
    # a non-str item still raises TypeError (after the loop instead of at the item)
    concat = "def f(t):\n    s = ''\n    for c in t:\n        s += c\n    return s\n"
    _behaves_same(concat, _apply(concat, "str-concat-to-join").code, "f", [(["a", 1],), ("ok",)])


def test_append_loop_to_comprehension() -> None:
    _check_codemod(
        "append-loop-to-comprehension",
        """
        def grades(points):
            for p in points:
                print(p)
            out = []
            for p in points:
                if p >= 90:
                    out.append('A')
                elif p >= 50:
                    out.append('B')
                else:
                    out.append(str(p))
            return out
        """,
        """
        def grades(points):
            for p in points:
                print(p)
            out = ['A' if p >= 90 else 'B' if p >= 50 else str(p) for p in points]
            return out
        """,
        "grades",
        [([95, 60, 10],), ([],)],
        [
            # no else at the end of the chain: not every item is appended
            "def f(y):\n    out = []\n    for v in y:\n        if v > 1:\n            out.append(1)\n"
            "        elif v:\n            out.append(2)\n    return out\n",
            "def f(y):\n    out = []\n    for v in y:\n        out.append(v)\n    return out, v\n",
            "def f(y):\n    out = []\n    for v in y:\n        out.append(len(out))\n    return out\n",
        ],
    )


def test_append_loop_long_comprehension_is_split_over_lines() -> None:
    code = _src(
        """
        def f(values):
            result = []
            for value in values:
                if value > 1000:
                    result.append('a very long label for large values')
                else:
                    result.append('another long label for the small ones')
            return result
        """
    )
    result = apply_rules(code, ["append-loop-to-comprehension"])
    assert result.code == _src(
        """
        def f(values):
            result = [
                'a very long label for large values' if value > 1000
                else 'another long label for the small ones'
                for value in values
            ]
            return result
        """
    )
    _behaves_same(code, result.code, "f", [([1, 5000],)])


def test_seen_list_to_set() -> None:
    _check_codemod(
        "seen-list-to-set",
        """
        def dedupe(items):
            seen = []
            for x in items:
                if x not in seen:
                    seen.append(x)
            return seen

        def firsts(pairs):
            seen = []
            out = [a for a, b in pairs if a in seen]
            for a, b in pairs:
                if a not in seen: seen.append(a)
            return out, len(seen), sorted(seen)
        """,
        """
        def dedupe(items):
            seen = []
            seen_set = set()
            for x in items:
                if x not in seen_set:
                    seen.append(x)
                    seen_set.add(x)
            return seen

        def firsts(pairs):
            seen = []
            seen_set = set()
            out = [a for a, b in pairs if a in seen_set]
            for a, b in pairs:
                if a not in seen_set: seen.append(a); seen_set.add(a)
            return out, len(seen), sorted(seen)
        """,
        "dedupe",
        [([3, 1, 3, 2, 1],), ([],), (["a", "b", "a"],)],
        [
            "def f(items, g):\n    seen = []\n    for x in items:\n        if x not in seen:\n"
            "            seen.append(x)\n    g(seen)\n    return seen\n",  # escapes to unknown code
            "def f(items):\n    seen = []\n    for x in items:\n        if x[0] not in seen:\n"
            "            seen.append(x[0])\n    return seen\n",  # argument evaluated twice
            "def f(items):\n    seen = []\n    for x in items:\n        if x not in seen:\n"
            "            seen.append(x)\n            seen.pop()\n    return seen\n",
            "def f(items):\n    seen = [0]\n    for x in items:\n        if x not in seen:\n"
            "            seen.append(x)\n    return seen\n",
        ],
    )
    firsts = (
        "def firsts(pairs):\n    seen = []\n    out = [a for a, b in pairs if a in seen]\n"
        "    for a, b in pairs:\n        if a not in seen: seen.append(a)\n    return out, len(seen)\n"
    )
    after = _apply(firsts, "seen-list-to-set").code
    _behaves_same(firsts, after, "firsts", [([(1, 2), (1, 3), (2, 2)],)])


def test_membership_in_loop_to_set() -> None:
    _check_codemod(
        "membership-in-loop-to-set",
        """
        def keep(words, stop):
            banned = [w.lower() for w in stop]
            out = []
            # the loop that tests membership
            for w in words:
                if w.lower() not in banned:
                    out.append(w)
            return out, len(banned)

        def common(xs: list[int], ys: list[int]) -> list[int]:
            return [y for y in ys if y in xs]
        """,
        """
        def keep(words, stop):
            banned = [w.lower() for w in stop]
            out = []
            # the loop that tests membership
            banned_set = set(banned)
            for w in words:
                if w.lower() not in banned_set:
                    out.append(w)
            return out, len(banned)

        def common(xs: list[int], ys: list[int]) -> list[int]:
            xs_set = set(xs)
            return [y for y in ys if y in xs_set]
        """,
        "keep",
        [(["A", "b", "c"], ["a"]), ([], []), (["x"], [])],
        [
            "def f(xs, ys):\n    return [y for y in ys if y in xs]\n",  # xs may be a str: substring test
            "def f(ys):\n    xs = [1, 2]\n    for y in ys:\n        xs.append(y)\n        if y in xs:\n"
            "            return y\n",
            "def f(y):\n    xs = [1, 2]\n    return y in xs\n",  # not in a loop
            "def f(ys, g):\n    xs = [1, 2]\n    g(xs)\n    return [y for y in ys if y in xs]\n",
        ],
    )


def test_pop_front_deque() -> None:
    _check_codemod(
        "pop-front-deque",
        """
        def bfs(tree, root):
            queue = [root]
            order = []
            while queue:
                node = queue.pop(0)
                order.append(node)
                queue.extend(tree.get(node, ()))
            return order

        def fib4(n):
            results = [0, 0, 2, 0]
            if n < 4:
                return results[n]
            for _ in range(4, n + 1):
                results.append(results[-1] + results[-2] + results[-3] + results[-4])
                results.pop(0)
            return results[-1]
        """,
        """
        from collections import deque


        def bfs(tree, root):
            queue = deque([root])
            order = []
            while queue:
                node = queue.popleft()
                order.append(node)
                queue.extend(tree.get(node, ()))
            return order

        def fib4(n):
            results = deque([0, 0, 2, 0])
            if n < 4:
                return results[n]
            for _ in range(4, n + 1):
                results.append(results[-1] + results[-2] + results[-3] + results[-4])
                results.popleft()
            return results[-1]
        """,
        "bfs",
        [({1: [2, 3], 2: [4]}, 1), ({}, 0)],
        [
            "def f(xs):\n    q = list(xs)\n    while q:\n        q.pop(0)\n    return q\n",  # returned
            "def f(xs):\n    q = list(xs)\n    while q:\n        q.pop(0)\n        print(q[1:])\n",  # slice
            "def f(xs):\n    q = list(xs)\n    for x in q:\n        q.pop(0)\n",  # iterated
            "def f(xs):\n    q = list(xs)\n    q.pop(0)\n    return len(q)\n",  # not in a loop
            "def f(xs):\n    q = list(xs)\n    while q:\n        q.sort()\n        q.pop(0)\n",
        ],
    )
    fib4 = (
        "def fib4(n):\n    r = [0, 0, 2, 0]\n    if n < 4:\n        return r[n]\n"
        "    for _ in range(4, n + 1):\n        r.append(r[-1] + r[-2] + r[-3] + r[-4])\n"
        "        r.pop(0)\n    return r[-1]\n"
    )
    result = _apply(fib4, "pop-front-deque")
    assert result.applied == ("pop-front-deque",)
    _behaves_same(fib4, result.code, "fib4", [(n,) for n in range(-5, 30)])


def test_trial_division_sqrt() -> None:
    _check_codemod(
        "trial-division-sqrt",
        """
        def is_prime(n):
            if n < 2:
                return False
            for i in range(2, n):
                if n % i == 0:
                    return False
            return True

        def prime_words(sentence):
            out = []
            for word in sentence.split():
                flag = 0
                for i in range(2, len(word)):
                    if len(word) % i == 0:
                        flag = 1
                if flag == 0:
                    out.append(word)
            return out
        """,
        """
        import math


        def is_prime(n):
            if n < 2:
                return False
            for i in range(2, math.isqrt(max(n, 0)) + 1):
                if n % i == 0:
                    return False
            return True

        def prime_words(sentence):
            out = []
            for word in sentence.split():
                flag = 0
                for i in range(2, math.isqrt(len(word)) + 1):
                    if len(word) % i == 0:
                        flag = 1
                if flag == 0:
                    out.append(word)
            return out
        """,
        "is_prime",
        [(n,) for n in range(-3, 400)] + [(7.0,), ("x",)],
        [
            "def f(n):\n    for i in range(3, n):\n        if n % i == 0:\n            return False\n    return True\n",
            "def f(n):\n    for i in range(2, n):\n        if n % i == 0:\n            return False\n    return i\n",
            "def f(n):\n    c = 0\n    for i in range(2, n):\n        if n % i == 0:\n            c += 1\n"
            "    return c\n",  # counts divisors: all of them matter
            "def f(n):\n    for i in range(2, n):\n"
            "        if n % i == 0:\n            n = 1\n            break\n"
            "    return n\n",
            "math = 3\ndef f(n):\n    for i in range(2, n):\n        if n % i == 0:\n            return False\n",
            # the for-else reads the loop variable's final value
            "def f(n):\n    for i in range(2, n):\n        if n % i == 0:\n            break\n    else:\n"
            "        return i\n    return 0\n",
        ],
    )
    flags = (
        "def f(n):\n    flag = 0\n    for i in range(2, n - 1):\n        if not n % i:\n"
        "            flag = 1\n    return flag\n"
    )
    result = _apply(flags, "trial-division-sqrt")
    assert result.applied == ("trial-division-sqrt",)
    _behaves_same(flags, result.code, "f", [(n,) for n in range(-3, 200)])


def test_codemod_on_a_method_target() -> None:
    code = _src(
        """
        class Primes:
            def check(self, n):
                for i in range(2, n):
                    if n % i == 0:
                        return False
                return n > 1

            def other(self, n):
                for i in range(2, n):
                    if n % i == 0:
                        return False
                return n > 1
        """
    )
    result = apply_rules(code, ["trial-division-sqrt"], targets=["Primes.check"])
    assert result.applied == ("trial-division-sqrt",)
    assert result.code.count("math.isqrt") == 1 and result.code.startswith("import math\n")
    assert result.code.endswith(code[code.index("    def other") :])


def test_trial_division_reuses_existing_import() -> None:
    code = "from math import isqrt\n\n\ndef f(n):\n    for i in range(2, n):\n        if n % i == 0:\n"
    code += "            return i\n    return None\n"
    result = apply_rules(code, ["trial-division-sqrt"])
    assert "range(2, isqrt(max(n, 0)) + 1)" in result.code
    assert result.code.count("import") == 1


def test_memoize_recursion() -> None:
    _check_codemod(
        "memoize-recursion",
        '''
        """Numbers."""
        from functools import reduce

        LIMIT = 3


        def fibfib(n: int):
            if n < LIMIT:
                return [0, 0, 1][n]
            return fibfib(n - 1) + fibfib(n - 2) + fibfib(n - 3)
        ''',
        '''
        """Numbers."""
        from functools import reduce
        import functools

        LIMIT = 3


        def fibfib(n: int):
            @functools.cache
            def fibfib(n: int):
                if n < LIMIT:
                    return [0, 0, 1][n]
                return fibfib(n - 1) + fibfib(n - 2) + fibfib(n - 3)

            return fibfib(n)
        ''',
        "fibfib",
        [(n,) for n in range(25)],
        [
            "def f(n):\n    print(n)\n    return n if n < 2 else f(n - 1) + f(n - 2)\n",  # I/O
            "def f(n):\n    return 1 if n < 2 else n * f(n - 1)\n",  # linear recursion: no reuse
            "calls = []\ndef f(n):\n    calls.append(n)\n    return n if n < 2 else f(n - 1) + f(n - 2)\n",
            "def f(n):\n    return [n] if n < 2 else f(n - 1) + f(n - 2)\n",  # returns a list
            "def f(xs: list, n):\n    return n if n < 2 else f(xs, n - 1) + f(xs, n - 2)\n",
            "class C:\n    def f(self, n):\n        return n if n < 2 else self.f(n - 1) + self.f(n - 2)\n",
            "import random\ndef f(n):\n    return random.random() if n < 2 else f(n - 1) + f(n - 2)\n",
            "scale = [1]\ndef f(n):\n    return scale[0] if n < 2 else f(n - 1) + f(n - 2)\n",  # global state
            "def f(n, acc=[]):\n    return n if n < 2 else f(n - 1) + f(n - 2)\n",  # mutable default
        ],
    )


def test_memoize_uses_existing_cache_import() -> None:
    code = "from functools import cache\n\n\ndef f(n):\n    return n if n < 2 else f(n - 1) + f(n - 2)\n"
    memoized = (
        "def f(n):\n    @cache\n    def f(n):\n        return n if n < 2 else f(n - 1) + f(n - 2)\n\n    return f(n)\n"
    )
    assert apply_rules(code, ["memoize-recursion"]).code == code.replace(code[code.index("def f") :], memoized)


def test_memoize_keeps_the_docstring_outside_and_passes_keyword_only_arguments() -> None:
    code = (
        "def paths(rows, *, cols=3):\n"
        '    """Grid paths."""\n'
        "    if rows == 0 or cols == 0:\n"
        "        return 1\n"
        "    return paths(rows - 1, cols=cols) + paths(rows, cols=cols - 1)\n"
    )
    result = apply_rules(code, ["memoize-recursion"])
    assert result.applied == ("memoize-recursion",)
    assert '    """Grid paths."""\n    @functools.cache\n' in result.code
    assert result.code.rstrip().endswith("return paths(rows, cols=cols)")
    original: dict = {}
    rewritten: dict = {}
    exec(code, original)
    exec(result.code, rewritten)
    assert [rewritten["paths"](r, cols=c) for r in range(6) for c in range(6)] == [
        original["paths"](r, cols=c) for r in range(6) for c in range(6)
    ]
    assert rewritten["paths"].__doc__ == "Grid paths."


# -- engine-wide properties -----------------------------------------------------------------------------

ODD_BUT_VALID = [
    "",
    "# only a comment\n",
    "x = 1",  # no final newline
    "def f():\n\tif True:\n\t\treturn [x for x in range(3)]\n",  # tabs
    "def f(x):\n    match x:\n        case [a, *rest]:\n            return list(rest)\n        case _:\n"
    "            return dict()\n",
    "async def f(y):\n    out = []\n    async for v in y:\n        out.append(v)\n    return out\n",
    "class A:\n    @property\n    def p(self):\n        return list(x for x in self)\n",
    "def f():\n    s = 'é€😀'; y = dict()\n    return s, y\n",
    "from os import *\ndef f(n):\n    return n if n < 2 else f(n - 1) + f(n - 2)\n",
    "def f(n):\n    global g\n    g = []\n    for i in range(2, n):\n        if n % i == 0:\n            return i\n",
    "lambda: 0\n",
    "def f(*, a, b=2, **kw): return [x for x in a]\n",
]


@pytest.mark.parametrize("code", ODD_BUT_VALID)
def test_odd_but_valid_input_never_raises(code: str) -> None:
    everything = list(all_rules())
    result = apply_rules(code, everything)
    ast.parse(result.code)
    again = apply_rules(result.code, everything)
    ast.parse(again.code)


def test_deterministic_and_idempotent_on_a_mixed_module() -> None:
    code = _src(
        """
        def f(y, n):
            out = []
            for v in y:
                if v in [1, 2]:
                    out.append(v)
            s = ''
            for c in str(n):
                s += c
            return out, s, max(len(w) for w in map(str, y)), list(filter(lambda v: v, y))
        """
    )
    ids = [r.id for r in rules_for("optimize")]
    first = apply_rules(code, ids)
    assert first.applied
    assert apply_rules(code, ids) == first
    assert apply_rules(first.code, ids).code == first.code
    _behaves_same(code, first.code, "f", [([1, 2, 3, 0], 4051), ([], 0)])


def test_codemods_keep_crlf() -> None:
    code = "def f(n):\r\n    for i in range(2, n):\r\n        if n % i == 0:\r\n            return False\r\n"
    result = apply_rules(code, ["trial-division-sqrt"])
    assert result.applied == ("trial-division-sqrt",)
    assert "\n" not in result.code.replace("\r\n", "")


# -- the benchmark suites -------------------------------------------------------------------------------


def _bench_files(suite: str) -> list[str]:
    files = sorted(glob.glob(os.path.join(BENCH, suite, "*", "solution.py")))
    require(bool(files), f"benchmark suite {BENCH / suite} not found (set CODEREFINE_BENCH)")
    return files


def test_optimize_rules_on_bench_solutions() -> None:
    ids = [r.id for r in rules_for("optimize")]
    fired: Counter[str] = Counter()
    for path in _bench_files("optimize"):
        with open(path, encoding="utf-8") as handle:
            code = handle.read()
        result = apply_rules(code, ids)
        ast.parse(result.code)
        task = os.path.basename(os.path.dirname(path))
        if result.applied:
            print(f"{task}: {', '.join(result.applied)}")
        fired.update(result.applied)
    print("rule counts:", dict(sorted(fired.items())))


def test_readability_rules_on_bench_solutions() -> None:
    ids = [r.id for r in rules_for("readability")]
    fired: Counter[str] = Counter()
    for path in _bench_files("readability"):
        with open(path, encoding="utf-8") as handle:
            code = handle.read()
        result = apply_rules(code, ids)
        ast.parse(result.code)
        fired.update(result.applied)
    print("rule counts:", dict(sorted(fired.items())))
