"""From a model message to a merged candidate module."""

from __future__ import annotations

import ast
import textwrap

import pytest

from coderefine.refine.candidate import build_candidate
from coderefine.refine.extract import CandidateRejected, extract_code
from coderefine.refine.merge import merge_definitions
from coderefine.source import ast_key, instructions_key

ORIGINAL = textwrap.dedent(
    '''
    """Inventory helpers."""
    import os

    LIMIT = 10


    # Keep this comment: it explains f.
    def f(a):
        return a + LIMIT


    class Store:
        kind = "shop"

        def total(self, items):
            return sum(items)

        def name(self):
            return "store"


    def g():
        return f(1)
    '''
).lstrip()


def test_first_fenced_block_is_taken():
    message = "Intro\n```python\ndef f():\n    return 1\n```\nthen\n```python\ndef g():\n    pass\n```"
    assert extract_code(message).code == "def f():\n    return 1\n"


def test_whole_message_without_fence():
    assert extract_code("def f():\n    return 2\n").code == "def f():\n    return 2\n"


@pytest.mark.parametrize("fence", ["```", "~~~"])
def test_untagged_and_tilde_fences(fence):
    assert extract_code(f"{fence}\nx = 1\n{fence}").code == "x = 1\n"


def test_other_language_is_rejected():
    with pytest.raises(CandidateRejected, match="javascript"):
        build_candidate("```javascript\nlet x = 1\n```", ORIGINAL, None, whole_module=False, origin="generate")


def test_unclosed_block_is_truncated():
    with pytest.raises(CandidateRejected, match="truncated"):
        build_candidate("```python\ndef f(a):\n    return a", ORIGINAL, None, whole_module=False, origin="generate")


@pytest.mark.parametrize("message", ["", "   \n"])
def test_empty_message(message):
    with pytest.raises(CandidateRejected, match="empty"):
        build_candidate(message, ORIGINAL, None, whole_module=False, origin="generate")


def test_syntax_error_names_the_line():
    with pytest.raises(CandidateRejected, match="line 2"):
        build_candidate(
            "```python\ndef f(a):\n    return (a\n```", ORIGINAL, None, whole_module=False, origin="generate"
        )


def test_replaces_same_named_definition_and_keeps_the_rest_byte_for_byte():
    merged = merge_definitions(ORIGINAL, "def f(a):\n    return a * 2 + LIMIT\n", None)
    assert merged.changed == ("f",)
    expected = ORIGINAL.replace("    return a + LIMIT", "    return a * 2 + LIMIT")
    assert merged.code == expected  # comment above f, class and g untouched


def test_new_imports_and_used_helpers_are_added_unused_ones_are_not():
    proposed = textwrap.dedent(
        """
        import functools
        import json

        def _double(a):
            return a * 2

        def _unused():
            return 0

        @functools.cache
        def f(a):
            return _double(a) + LIMIT
        """
    )
    merged = merge_definitions(ORIGINAL, proposed, None)
    tree = ast.parse(merged.code)
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert names == ["_double", "f", "g"]  # helper placed before its first user
    assert "import functools" in merged.code
    assert "import json" not in merged.code  # nothing changed uses it
    assert any("_unused" in note for note in merged.notes)


def test_method_replacement_and_new_method():
    proposed = (
        "class Store:\n"
        "    def total(self, items):\n"
        "        return items and sum(items)\n"
        "    def count(self, items):\n"
        "        return len(items)\n"
    )
    merged = merge_definitions(ORIGINAL, proposed, None)
    assert set(merged.changed) == {"Store.total", "Store.count"}
    assert 'kind = "shop"' in merged.code and "def name(self)" in merged.code
    namespace: dict = {}
    exec(compile(merged.code, "m", "exec"), namespace)
    assert namespace["Store"]().count([1, 2]) == 2


def test_bare_method_for_class_method_target():
    merged = merge_definitions(ORIGINAL, "def total(self, items):\n    return sum(items, 0)\n", ("Store.total",))
    assert merged.changed == ("Store.total",)
    assert "return sum(items, 0)" in merged.code


def test_function_restriction_ignores_other_changes_and_says_so():
    proposed = "def f(a):\n    return 0\n\ndef g():\n    return 2\n"
    merged = merge_definitions(ORIGINAL, proposed, ("g",))
    assert merged.changed == ("g",)
    assert "return a + LIMIT" in merged.code
    assert any("'f'" in note for note in merged.notes)


def test_statements_that_define_nothing_are_ignored():
    merged = merge_definitions(ORIGINAL, "def g():\n    return 3\n\nprint(g())\n", None)
    assert "print(g())" not in merged.code
    assert any("print(g())" in note for note in merged.notes)


def test_ast_key_ignores_comments_and_layout_only():
    base = "def f(a):\n    return a + 1\n"
    assert ast_key(base) == ast_key("# hello\ndef f(a):\n\n    return (a + 1)  # note\n")
    assert ast_key(base) != ast_key("def f(a):\n    return a + 2\n")


def test_whole_module_mode_takes_the_code_as_is():
    candidate = build_candidate(
        "```python\nprint(int(input()) * 2)\n```",
        "n = int(input())\nprint(n * 2)\n",
        None,
        whole_module=True,
        origin="generate",
    )
    assert candidate.code == "print(int(input()) * 2)\n"


def test_crlf_original_is_kept_crlf():
    original = "def f(a):\r\n    return a\r\n\r\n\r\ndef g():\r\n    return 1\r\n"
    merged = merge_definitions(original, "def f(a):\n    return a + 1\n", None)
    assert "\r\n" in merged.code and "\n" not in merged.code.replace("\r\n", "")


PAIRWISE = """
from itertools import chain, tee


def pairwise(iterable, cyclic=False):
    "s -> (s0, s1), (s1, s2), (s2, s3), ..."
    a, b = tee(iterable)
    first = next(b, None)
    if cyclic is True:
        return zip(a, chain(b, (first,)))
    return zip(a, b)
"""


@pytest.mark.parametrize(
    ("edit", "same"),
    [
        # locals renamed, and the layout changed: the same instructions
        (lambda c: c.replace("a, b", "left, right").replace("(b", "(right").replace("(a", "(left"), True),
        (lambda c: c.replace("return zip(a, b)", "return zip(\n        a,\n        b,\n    )"), True),
        # a parameter renamed: a keyword caller breaks
        (lambda c: c.replace("cyclic", "wrap"), False),
        # the docstring, a constant, the order of a test, a global called
        (lambda c: c.replace("s -> (s0, s1)", "pairs"), False),
        (lambda c: c.replace("None", "0"), False),
        (lambda c: c.replace("if cyclic is True:", "if True is cyclic:"), False),
        (lambda c: c.replace("zip(a, b)", "list(zip(a, b))"), False),
    ],
)
def test_instructions_key_is_equal_only_for_the_same_instructions_up_to_local_names(edit, same):
    assert (instructions_key(edit(PAIRWISE)) == instructions_key(PAIRWISE)) is same


def test_a_function_that_reads_its_locals_by_name_keeps_its_local_names():
    original = "def f(x):\n    total = x + 1\n    return sorted(locals())\n"
    assert instructions_key(original.replace("total", "result")) != instructions_key(original)
    assert instructions_key("def f(:\n") is None
