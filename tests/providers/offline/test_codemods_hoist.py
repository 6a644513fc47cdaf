"""`hoist-loop-invariants`: before/after sources, and the same output from both (real interpreters)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

from coderefine.providers.offline.rewrites import apply_rules
from coderefine.providers.offline.rewrites.codemods_hoist import hoist_loop_invariants

PROGRAM = textwrap.dedent(
    """\
    import sys

    s = sys.stdin.readline().strip()
    xs = list(map(int, sys.stdin.readline().split()))
    out = []
    i = 0
    while i < len(s):
        out.append(s[i] * 2)
        i += 1
    count = 0
    for x in range(50):
        if x in set(xs):
            count += 1
        count += max(xs) + len(xs)
    print(count, "".join(out))
    """
)
HOISTED = textwrap.dedent(
    """\
    import sys

    s = sys.stdin.readline().strip()
    xs = list(map(int, sys.stdin.readline().split()))
    out = []
    i = 0
    len_s = len(s)
    out_append = out.append
    while i < len_s:
        out_append(s[i] * 2)
        i += 1
    count = 0
    set_xs = set(xs)
    max_xs = max(xs)
    len_xs = len(xs)
    for x in range(50):
        if x in set_xs:
            count += 1
        count += max_xs + len_xs
    print(count, "".join(out))
    """
)


def _run(code: str, stdin: str) -> str:
    return subprocess.run([sys.executable, "-c", code], input=stdin, capture_output=True, text=True, check=True).stdout


def test_invariant_calls_and_method_lookups_are_hoisted() -> None:
    assert hoist_loop_invariants(PROGRAM, None) == HOISTED
    assert _run(HOISTED, "abc\n3 1 2\n") == _run(PROGRAM, "abc\n3 1 2\n")


def test_hoisted_before_the_outermost_loop_it_is_invariant_in() -> None:
    nested = (
        "n = int(input())\nrows = [input() for _ in range(n)]\n"
        "for r in rows:\n    for j in range(3):\n        print(len(rows), len(r), j)\n"
    )
    code = hoist_loop_invariants(nested, None)
    assert code.index("len_rows = len(rows)") < code.index("for r in rows:") < code.index("len_r = len(r)")
    assert code.index("len_r = len(r)") < code.index("for j in range(3):")


def test_what_a_loop_may_change_stays_in_it() -> None:
    cases = {
        "mutated": "xs = [1]\ni = 0\nwhile i < len(xs):\n    xs.append(i) if i < 3 else None\n    i += 1\nprint(i)\n",
        "assigned": "xs = [1]\nfor i in range(3):\n    print(len(xs))\n    xs = xs + [i]\n",
        "stored into": "xs = [3, 1]\nfor i in range(2):\n    print(sorted(xs)[0])\n    xs[i] = 0\n",
        "handed on": "xs = [3]\ndef f(v):\n    v.append(1)\nfor i in range(2):\n    f(xs)\n    print(len(xs))\n",
        "a program function may change a global": (
            "xs = [3]\ndef g():\n    xs.append(1)\nfor i in range(2):\n    g()\n    print(len(xs))\n"
        ),
        "may raise where the original did not": "xs = []\nfor i in range(2):\n    if xs:\n        print(max(xs))\n",
        "a fresh list kept": "xs = [2, 1]\nfor i in range(2):\n    ys = sorted(xs)\n    ys.append(i)\n    print(ys)\n",
        "a rebound builtin": "def len(v):\n    return 0\nxs = [1]\nfor i in range(2):\n    print(len(xs))\n",
        "global": "xs = [1]\ndef h():\n    global xs\n    xs = []\nfor i in range(2):\n    print(len(xs))\n",
        "rebound owner": "out = []\nfor i in range(2):\n    out.append(i)\n    out = [out]\nprint(out)\n",
    }
    for name, code in cases.items():
        hoisted = hoist_loop_invariants(code, None)
        # Only a method lookup on a name the loop never rebinds may still move (xs.append in "mutated").
        assert not re.search(r"^\w+ = (len|max|sorted)\(", hoisted, re.MULTILINE), name
        assert "out_append" not in hoisted, name


def test_only_programs_and_in_the_optimize_task() -> None:
    library = "def f(xs):\n    return [len(xs) for _ in xs]\n\ndef g(xs):\n    for x in xs:\n        print(len(xs))\n"
    assert hoist_loop_invariants(library, None) == library  # not a program: its calls are judged one by one
    assert apply_rules(PROGRAM, ["hoist-loop-invariants"]).applied == ("hoist-loop-invariants",)
