"""Answers in every shape real models write, each with the outcome it must have.

The shapes come from genuine public model outputs (an Ollama `deepseek-r1:1.5b` answer with its `<think>`
block in `content`; llama.cpp serving Qwen3 with `reasoning_content`; DeepSeek's API reporting
`completion_tokens_details.reasoning_tokens`; gpt-oss's harmony channels; gpt-3.5-turbo answers whose
closing fence a stop sequence ate) and from the shapes agents answer in (unified diffs, whole files,
alternatives). The texts are written for this module, so that each one's right outcome is known: either
the code it holds (`code`: a marker the candidate must contain) or a rejection (`reason`: words the
reason must contain). Every thinking block holds a draft marked `THOUGHT_DRAFT`: none may be taken.

NoFunEval's generations and SWE-fficiency's sympy predictions are deliberately not here: they are kept
aside to check this work independently.
"""

from __future__ import annotations

from dataclasses import dataclass

ORIGINAL = """import math


def total(n):
    s = 0
    for i in range(n):
        s += i
    return s


def is_prime(k):
    if k < 2:
        return False
    for d in range(2, k):
        if k % d == 0:
            return False
    return True


class Store:
    def count(self, items, wanted):
        hits = 0
        for item in items:
            if item == wanted:
                hits += 1
        return hits
"""
TARGETS = ("total", "is_prime", "Store.count")

FAST_TOTAL = "def total(n):\n    return n * (n - 1) // 2 if n > 0 else 0\n"
FAST_PRIME = (
    "def is_prime(k):\n    if k < 2:\n        return False\n    for d in range(2, math.isqrt(k) + 1):\n"
    "        if k % d == 0:\n            return False\n    return True\n"
)
# What a model drafts while thinking: plausible, different from the answer, and marked.
THOUGHT = "def total(n):\n    return sum(range(n))  # THOUGHT_DRAFT\n"
MARK = "n * (n - 1) // 2"
PRIME_MARK = "math.isqrt(k) + 1"


@dataclass(frozen=True)
class Answer:
    name: str
    content: str
    code: str | None = None  # a marker the candidate's module must contain (None: it must be rejected)
    reason: str | None = None  # words the rejection reason must contain
    finish_reason: str | None = "stop"
    reasoning: str = ""  # thinking sent apart from the content (reasoning_content / reasoning)
    also: str | None = None  # a second marker the candidate must contain
    diff_bases: tuple[tuple[str, str], ...] = ()


def py(code: str, tag: str = "python") -> str:
    return f"```{tag}\n{code}```"


def _diff(old: str, new: str, start: int = 4, headers: bool = True) -> str:
    """A unified diff of one hunk replacing `old` lines with `new` lines at `start` (1-based)."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    head = "--- a/mod.py\n+++ b/mod.py\n" if headers else ""
    body = "".join(f"-{line}\n" for line in old_lines) + "".join(f"+{line}\n" for line in new_lines)
    return f"{head}@@ -{start},{len(old_lines)} +{start},{len(new_lines)} @@\n{body}"


TOTAL_BODY = "def total(n):\n    s = 0\n    for i in range(n):\n        s += i\n    return s\n"
R1_THINK = (
    "<think>\nOkay, I need to make `total` faster. Let me think about how to approach this.\n\n"
    "First, the loop adds every number below n. Maybe I could write:\n\n" + py(THOUGHT) + "\n\n"
    "Wait, that still walks the range. The sum of 0..n-1 has a closed form, n*(n-1)/2, but for n <= 0 "
    "the loop returns 0, so I must keep that.\n</think>\n\n"
)

ANSWERS: tuple[Answer, ...] = (
    # ------------------------------------------------------------------ reasoning: thinking never taken
    Answer(
        "r1-ollama-inline-think",
        R1_THINK + "Here's a faster version:\n\n" + py(FAST_TOTAL) + "\n\n### Explanation:\n"
        "- **Closed form**: no loop.\n\nYou can call it like:\n\n```python\nprint(total(10))  # 45\n```\n",
        MARK,
    ),
    Answer("r1-distill-template-opened-think", R1_THINK.removeprefix("<think>\n") + py(FAST_TOTAL), MARK),
    Answer("qwen3-empty-think", "<think>\n\n</think>\n\n" + py(FAST_TOTAL), MARK),
    Answer(
        "qwen3-llama-cpp-reasoning-content",
        "Use the closed form:\n\n" + py(FAST_TOTAL),
        MARK,
        reasoning="The user wants speed. Draft:\n" + py(THOUGHT) + "\nBetter: the closed form.",
    ),
    Answer("gpt-oss-ollama-reasoning-field", py(FAST_TOTAL), MARK, reasoning="We need faster. " + THOUGHT),
    Answer(
        "gpt-oss-harmony-raw",
        "<|channel|>analysis<|message|>We need to speed up total. Maybe\n"
        + py(THOUGHT)
        + "\nBut closed form is better.<|end|><|start|>assistant<|channel|>final<|message|>"
        + py(FAST_TOTAL),
        MARK,
    ),
    Answer(
        "gpt-oss-harmony-analysis-only",
        "<|channel|>analysis<|message|>Let me try\n" + py(THOUGHT),
        reason="still thinking",
        finish_reason="length",
    ),
    Answer(
        "think-cut-at-length",
        "<think>\nLet me draft it:\n" + py(THOUGHT) + "\nHmm, but n <= 0 ...",
        reason="still thinking",
        finish_reason="length",
    ),
    Answer(
        "reasoning-field-cut-at-length",
        "",
        reason="still thinking",
        finish_reason="length",
        reasoning="Draft:\n" + py(THOUGHT) + "\nNow the edge cases, n <= 0 gives",
    ),
    Answer(
        "think-only-no-answer", "<think>\nDraft:\n" + py(THOUGHT) + "\nThat is it.\n</think>\n", reason="only thought"
    ),
    Answer("reasoning-field-only", "", reason="only thought", reasoning="Draft:\n" + py(THOUGHT)),
    Answer(
        "think-draft-then-prose-answer", R1_THINK + "Use the closed form n*(n-1)/2 for positive n.", reason="not Python"
    ),
    Answer("thinking-tag-variant", "<thinking>\n" + py(THOUGHT) + "\n</thinking>\n" + py(FAST_TOTAL), MARK),
    Answer(
        "think-with-unclosed-fence-inside",
        "<think>\nDraft:\n```python\n" + THOUGHT + "hmm\n</think>\n\n" + py(FAST_TOTAL),
        MARK,
    ),
    Answer(
        "think-holding-a-diff-draft", "<think>\n" + _diff(TOTAL_BODY, THOUGHT) + "</think>\n" + py(FAST_TOTAL), MARK
    ),
    Answer("think-then-diff-answer", R1_THINK + py(_diff(TOTAL_BODY, FAST_TOTAL), "diff"), MARK),
    # ------------------------------------------------------------------ shapes of the code
    Answer("whole-file", py(ORIGINAL.replace(TOTAL_BODY, FAST_TOTAL)), MARK),
    Answer("one-function", py(FAST_TOTAL), MARK),
    Answer(
        "one-method-bare",
        py("def count(self, items, wanted):\n    return items.count(wanted)\n"),
        "return items.count(wanted)",
    ),
    Answer(
        "one-method-in-class",
        py("class Store:\n    def count(self, items, wanted):\n        return items.count(wanted)\n"),
        "return items.count(wanted)",
    ),
    Answer(
        "function-with-import-and-helper",
        py(
            "from functools import lru_cache\n\n\n@lru_cache(maxsize=None)\n"
            "def _closed(n):\n    return n * (n - 1) // 2\n\n\ndef total(n):\n    return _closed(n) if n > 0 else 0\n"
        ),
        "from functools import lru_cache",
    ),
    Answer("original-quoted-then-new", "Your code:\n\n" + py(TOTAL_BODY) + "\n\nFaster:\n\n" + py(FAST_TOTAL), MARK),
    Answer("code-then-usage-example", py(FAST_TOTAL) + "\n\nUsage:\n\n" + py("print(total(5))\n"), MARK),
    Answer(
        "two-alternatives",
        "Option 1:\n" + py(FAST_TOTAL) + "\nOption 2:\n" + py("def total(n):\n    return sum(range(n))\n"),
        MARK,
    ),
    Answer("one-block-per-function", py(FAST_PRIME) + "\n" + py(FAST_TOTAL), PRIME_MARK, also=MARK),
    Answer("prose-around", "Sure! The loop is O(n).\n\n" + py(FAST_TOTAL) + "\n\nThis is O(1) and keeps n <= 0.", MARK),
    Answer("no-fence-plain-code", FAST_TOTAL, MARK),
    Answer("no-fence-prose-then-code", "Here is the faster version:\n" + FAST_TOTAL + "\nIt avoids the loop.", MARK),
    Answer("py-tag", py(FAST_TOTAL, "py"), MARK),
    Answer("python3-tag", py(FAST_TOTAL, "python3"), MARK),
    Answer("tilde-fence", "~~~python\n" + FAST_TOTAL + "~~~", MARK),
    Answer(
        "four-backtick-fence-around-backticks",
        "````python\n"
        + FAST_TOTAL.replace(
            "def total(n):\n",
            'def total(n):\n    """Sum below n.\n\n    ```pycon\n    >>> total(3)\n    3\n    ```\n    """\n',
        )
        + "````",
        MARK,
    ),
    Answer("crlf-line-endings", py(FAST_TOTAL).replace("\n", "\r\n"), MARK),
    # ------------------------------------------------------------------ diffs
    Answer("diff-fenced", "Patch:\n\n" + py(_diff(TOTAL_BODY, FAST_TOTAL), "diff"), MARK),
    Answer("diff-wrong-line-numbers", py(_diff(TOTAL_BODY, FAST_TOTAL, start=40), "diff"), MARK),
    Answer("diff-bare", _diff(TOTAL_BODY, FAST_TOTAL), MARK),
    Answer(
        "diff-git-header",
        "diff --git a/mod.py b/mod.py\nindex 3b18e51..a9c2f07 100644\n" + _diff(TOTAL_BODY, FAST_TOTAL),
        MARK,
    ),
    Answer("diff-patch-tag", py(_diff(TOTAL_BODY, FAST_TOTAL), "patch"), MARK),
    Answer("diff-mis-tagged-python", py(_diff(TOTAL_BODY, FAST_TOTAL)), MARK),
    Answer(
        "diff-bare-hunk-header",
        py("@@\n-    for d in range(2, k):\n+    for d in range(2, math.isqrt(k) + 1):\n", "diff"),
        PRIME_MARK,
    ),
    Answer(
        "diff-context-lines",
        py(
            "--- a/mod.py\n+++ b/mod.py\n@@ -12,5 +12,5 @@ def is_prime(k):\n"
            "     if k < 2:\n         return False\n-    for d in range(2, k):\n"
            "+    for d in range(2, math.isqrt(k) + 1):\n         if k % d == 0:\n",
            "diff",
        ),
        PRIME_MARK,
    ),
    Answer(
        "diff-blank-context-without-space",
        py(
            "--- a/mod.py\n+++ b/mod.py\n@@ -8,4 +8,4 @@\n     return s\n\n\n"
            "-def is_prime(k):\n+def is_prime(k):  # faster below\n",
            "diff",
        ),
        "# faster below",
    ),
    Answer(
        "diff-two-files-takes-mod",
        "--- a/other.py\n+++ b/other.py\n@@ -1,1 +1,1 @@\n-x = 1\n+x = 2\n" + _diff(TOTAL_BODY, FAST_TOTAL),
        MARK,
    ),
    Answer(
        "diff-against-the-best",
        py(
            _diff(
                "    return n * (n - 1) // 2 if n > 0 else 0\n", "    return (n * (n - 1)) >> 1 if n > 0 else 0\n", 5
            ),
            "diff",
        ),
        "(n * (n - 1)) >> 1",
        diff_bases=(("attempt 0", ORIGINAL.replace(TOTAL_BODY, FAST_TOTAL)),),
    ),
    Answer(
        "diff-does-not-apply",
        py(_diff("def total(n):\n    acc = 0\n", "def total(n):\n    return 0\n"), "diff"),
        reason="hunk 1 (@@ -4,2 +4,2 @@) does not apply: its line `acc = 0` is not in the module",
    ),
    Answer("diff-without-hunk", py("--- a/mod.py\n+++ b/mod.py\n", "diff"), reason="no hunk"),
    # ------------------------------------------------------------------ unclosed blocks
    Answer("gpt35-stop-ate-closing-fence", "Here is the optimized code:\n\n```python\n" + FAST_TOTAL, MARK),
    Answer("unclosed-stop-not-parsing", "```python\ndef total(n):\n    return n * (n - 1", reason="truncated"),
    Answer("unclosed-at-length", "```python\n" + FAST_TOTAL, reason="length limit", finish_reason="length"),
    Answer("unclosed-unknown-finish", "```python\n" + FAST_TOTAL, reason="truncated", finish_reason=None),
    Answer("unclosed-diff-at-stop", "```diff\n" + _diff(TOTAL_BODY, FAST_TOTAL), MARK),
    # ------------------------------------------------------------------ rules of the run
    Answer(
        "renamed-target",
        py("def total_fast(n):\n    return n * (n - 1) // 2 if n > 0 else 0\n"),
        reason="`total_fast`, which the module does not have",
    ),
    Answer(
        "added-parameter",
        py("def total(n, start=0):\n    return n * (n - 1) // 2 if n > 0 else 0\n"),
        reason="changes the signature of `total` from (n) to (n, start=0)",
    ),
    Answer(
        "changed-default",
        py("def is_prime(k=2):\n    return k > 1 and all(k % d for d in range(2, k))\n"),
        reason="signature of `is_prime`",
    ),
    Answer(
        "keyword-only-added",
        py("def total(n, *, fast=True):\n    return n * (n - 1) // 2 if n > 0 else 0\n"),
        reason="signature of `total`",
    ),
    Answer(
        "renamed-positional-parameter",
        py("def total(count):\n    return count * (count - 1) // 2 if count > 0 else 0\n"),
        "count * (count - 1) // 2",
    ),
    Answer(
        "dropped-import",
        py("@lru_cache(maxsize=None)\ndef total(n):\n    return n * (n - 1) // 2 if n > 0 else 0\n"),
        reason="`lru_cache`, which nothing in the module defines or imports",
    ),
    Answer("uses-the-module-import", py(FAST_PRIME), PRIME_MARK),
    # ------------------------------------------------------------------ garbage
    Answer("empty", "", reason="empty"),
    Answer("prose-only", "I would use the closed form of the arithmetic series here.", reason="not Python"),
    Answer("another-language", "```javascript\nconst total = n => n * (n - 1) / 2;\n```", reason="'javascript'"),
    Answer("syntax-error", py("def total(n)\n    return n * (n - 1) // 2\n"), reason="syntax error at line 1"),
    Answer("refusal", "(the model refused: I can't help with that)", reason="not Python"),
    Answer(
        "small-model-repetition", "def def def total total total (n n n) return return return " * 5, reason="not Python"
    ),
    Answer("identical-to-original", py(TOTAL_BODY), "s += i"),
    Answer("only-usage-example", py("print(total(10))\n"), "for i in range(n)"),
)
