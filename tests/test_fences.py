"""Code fences that the code inside cannot close: the offline provider's answers, the prompts, the cache key."""

from __future__ import annotations

from coderefine.fences import fence_for, fenced
from coderefine.providers.cache import mask_measurements
from coderefine.providers.offline.provider import _fenced as answer_block
from coderefine.refine.extract import extract_code

# A docstring written for mkdocs, as in humanize's number.py: it holds fences of its own.
DOCUMENTED = '''def intword(value):
    """Converts a large integer to a friendly text representation.

    Examples:
        ```pycon
        >>> intword(1000000)
        '1.0 million'
        ```
    """
    return str(value)
'''


def test_the_fence_outgrows_every_run_of_backticks_inside():
    assert fence_for("x = 1") == "```"
    assert fence_for(DOCUMENTED) == "````"
    assert fence_for("a ````` b") == "``````"
    assert fenced("x = 1", "python") == "```python\nx = 1\n```"


def test_code_whose_docstrings_hold_fences_comes_back_whole():
    assert extract_code(f"Here it is:\n\n{fenced(DOCUMENTED, 'python')}\n\nDone.").code == DOCUMENTED


def test_a_line_that_only_starts_like_a_fence_does_not_close_the_block():
    # ```pycon opens nothing inside a block: only a line holding the fence alone closes it.
    message = "```python\ndef f():\n    '''\n    ```pycon\n    '''\n    return 1\n```\n"
    assert extract_code(message).code == "def f():\n    '''\n    ```pycon\n    '''\n    return 1\n"


def test_the_offline_providers_answer_survives_extraction():
    assert (
        extract_code("No offline rewrite rule applies to this code.\n\n" + answer_block(DOCUMENTED)).code == DOCUMENTED
    )


def test_figures_inside_a_long_fence_are_code_and_are_not_masked():
    code = DOCUMENTED + "\nRATE = 1.25\n"
    text = f"speedup 1.92x\n{fenced(code, 'python')}\nafter 3.5%"
    masked = mask_measurements(text)
    assert "RATE = 1.25" in masked  # code must match exactly for a cached answer to be reused
    assert "1.92" not in masked and "3.5" not in masked
