"""The offline provider's rewrites for programs: stdin through readline, prints batched."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from coderefine.providers.offline.rewrites import apply_rules
from coderefine.providers.offline.rewrites.codemods_programs import print_batching, stdin_readline

PROGRAM = textwrap.dedent(
    '''\
    """Sum pairs."""
    n = int(input())
    rows = [list(map(int, input().split())) for _ in range(n)]
    name = input()
    for a, b in rows:
        print(a + b)
    for row in rows:
        print(name, row[0] * 2)
    '''
)
STDIN = "2\n1 2\n3 4\nzed\n"


def _run(code: str, stdin: str) -> str:
    return subprocess.run([sys.executable, "-c", code], input=stdin, capture_output=True, text=True, check=True).stdout


def test_readline_keeps_what_input_returned() -> None:
    code = stdin_readline(PROGRAM, None)
    assert "input(" not in code and "import sys\n" in code
    assert 'name = sys.stdin.readline().rstrip("\\n")' in code  # the newline matters here
    assert "n = int(sys.stdin.readline())" in code  # not here
    assert _run(code, STDIN) == _run(PROGRAM, STDIN)


def test_prints_are_batched_into_one_write() -> None:
    code = print_batching(PROGRAM, None)
    assert code.count("print(") == 2 and 'print(end="".join([f"{a + b}\\n" for a, b in rows]))' in code
    assert _run(code, STDIN) == _run(PROGRAM, STDIN)
    assert _run(code, "0\nzed\n") == _run(PROGRAM, "0\nzed\n") == ""  # an empty loop still prints nothing


def test_left_alone_when_names_are_rebound_or_not_a_program() -> None:
    assert stdin_readline("input = lambda: '1'\nprint(int(input()))\n", None).startswith("input =")
    assert print_batching("for x in range(3):\n    print(x)\nprint(x)\n", None).count("print(") == 2  # x is read after
    library = "def read():\n    return input()\n"
    assert stdin_readline(library, None) == library


def test_the_rules_are_in_the_optimize_task() -> None:
    result = apply_rules(PROGRAM, ["stdin-readline", "print-batching"])
    assert result.applied == ("stdin-readline", "print-batching")


SCRIPT = '''"""Distinct words."""
n = int(input())
seen = []
for _ in range(n):
    w = input()
    if w not in seen:
        seen.append(w)
print(len(seen))
'''


def test_function_codemods_reach_a_scripts_top_level_code() -> None:
    result = apply_rules(SCRIPT, ["seen-list-to-set"])
    assert result.applied == ("seen-list-to-set",)
    assert result.code.startswith('"""Distinct words."""\nn = int(input())\nseen = []\nseen_set = set()\n')
    assert "__coderefine_module__" not in result.code
    assert _run(result.code, "3\na\nb\na\n") == _run(SCRIPT, "3\na\nb\na\n") == "2\n"
    assert apply_rules("global seen\n" + SCRIPT, ["seen-list-to-set"]).applied == ()
    assert apply_rules(SCRIPT, ["seen-list-to-set"], targets=["main"]).applied == ()  # --function: not the script
