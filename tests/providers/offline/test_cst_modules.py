"""Direct tests of the libcst frame the codemods share: cst_functions, cst_session, cst_locals, cst_patterns.

The codemods' own tests (test_rewrites.py) exercise these through whole rewrites; here each piece is
asked its one question on a small module, so a wrong answer points at the piece, not at a codemod.
"""

from __future__ import annotations

import libcst as cst

from coderefine.providers.offline.rewrites.cst_functions import (
    FunctionInfo,
    all_nodes,
    functions_in,
    names_in,
    own_nodes,
    uses_dynamic_scope,
)
from coderefine.providers.offline.rewrites.cst_locals import confined, in_loop, local_var
from coderefine.providers.offline.rewrites.cst_patterns import (
    builtin_call_arg,
    code_of,
    is_str_literal,
    membership_test,
    method_call,
    simple_assignment,
)
from coderefine.providers.offline.rewrites.cst_session import Session, run_codemod
from coderefine.providers.offline.rewrites.facts import module_facts

MODULE = """\
def f(xs):
    total = 0
    seen = []
    for x in xs:
        if x in seen:
            continue
        seen.append(x)
        total += len(xs)
    def inner():
        return total
    return total


class C:
    def m(self):
        return locals()


def g():
    return 1
"""


def session_of(code: str) -> Session:
    return Session(source=code, module=cst.parse_module(code), facts=module_facts(code))


def function(session: Session, name: str) -> cst.FunctionDef:
    return next(func for func, info in functions_in(session.module, None) if info.qualname == name)


def names(root: cst.CSTNode, value: str) -> list[cst.Name]:
    return [node for node in all_nodes(root) if isinstance(node, cst.Name) and node.value == value]


def test_functions_in_yields_the_targets_and_their_nested_functions():
    module = cst.parse_module(MODULE)
    found = [info for _, info in functions_in(module, ["f", "C.m"])]
    assert found == [
        FunctionInfo("f", is_method=False, nested=False),
        FunctionInfo("f.<inner>", is_method=False, nested=True),
        FunctionInfo("C.m", is_method=True, nested=False),
    ]
    assert [info.qualname for _, info in functions_in(module, None)] == ["f", "f.<inner>", "C.m", "g"]


def test_own_nodes_stop_at_nested_functions_and_all_nodes_do_not():
    func = function(session_of(MODULE), "f")
    # the nested def is yielded, its inside is not
    assert [node.name.value for node in own_nodes(func.body) if isinstance(node, cst.FunctionDef)] == ["inner"]
    own_returns = [node for node in own_nodes(func.body) if isinstance(node, cst.Return)]
    all_returns = [node for node in all_nodes(func.body) if isinstance(node, cst.Return)]
    assert (len(own_returns), len(all_returns)) == (1, 2)
    assert {"seen", "append", "len"} <= names_in(func.body)


def test_dynamic_scope_is_seen_only_where_it_is_used():
    session = session_of(MODULE)
    assert uses_dynamic_scope(function(session, "C.m"))
    assert not uses_dynamic_scope(function(session, "f"))


def test_local_var_finds_bindings_and_uses_and_what_escapes():
    session = session_of(MODULE)
    func = function(session, "f")
    seen = local_var(session, func, "seen")
    assert seen is not None and not seen.escapes
    assert (len(seen.bindings), len(seen.uses)) == (1, 2)  # `seen = []`; `x in seen`, `seen.append`
    total = local_var(session, func, "total")
    assert total is not None and total.escapes  # read by `inner`
    assert local_var(session, func, "len") is None  # a builtin, not a local


def test_a_loop_variable_is_confined_unless_read_after_the_loop():
    read_after = "def h(xs):\n    for x in xs:\n        pass\n    return x\n"
    for code, expected in ((MODULE, True), (read_after, False)):
        session = session_of(code)
        func = next(func for func, _ in functions_in(session.module, None))
        loop = next(node for node in own_nodes(func.body) if isinstance(node, cst.For))
        var = local_var(session, func, "x")
        assert var is not None and confined(session, var, loop, func) is expected


def test_in_loop_counts_the_body_but_not_the_iterable():
    session = session_of(MODULE)
    func = function(session, "f")
    loop = next(node for node in own_nodes(func.body) if isinstance(node, cst.For))
    in_body = names(loop.body, "seen")[0]
    in_iterable = loop.iter  # the Name `xs`
    assert in_loop(session, in_body, func) is loop
    assert in_loop(session, in_iterable, func) is None


def test_patterns_answer_how_one_name_is_used():
    session = session_of(MODULE)
    func = function(session, "f")
    binding, test_use, call_use = names(func.body, "seen")
    assert simple_assignment(session, binding) is not None
    assert membership_test(session, test_use) is not None and method_call(session, test_use) is None
    meth = method_call(session, call_use)
    assert meth is not None and meth[0] == "append" and code_of(session, meth[1]) == "seen.append(x)"
    len_arg = names(func.body, "xs")[-1]
    assert builtin_call_arg(session, len_arg, frozenset({"len"})) == "len"
    assert builtin_call_arg(session, len_arg, frozenset({"sorted"})) is None
    assert is_str_literal(cst.parse_expression("'a' 'b'")) and not is_str_literal(cst.parse_expression("b'a'"))


def test_run_codemod_edits_only_the_targets_and_adds_imports():
    def one_to_pi(session: Session, func: cst.FunctionDef, info: FunctionInfo) -> None:
        for node in own_nodes(func.body):
            if isinstance(node, cst.Integer) and node.value == "1":
                reference = session.import_name("math", "pi")
                session.replace(node, lambda _, reference=reference: cst.parse_expression(reference))

    code = '"""Doc."""\n\n\ndef a():\n    return 1  # one\n\n\ndef b():\n    return 1\n'
    result = run_codemod(code, ["a"], one_to_pi)
    assert result == '"""Doc."""\nimport math\n\n\ndef a():\n    return math.pi  # one\n\n\ndef b():\n    return 1\n'
    assert run_codemod(code, None, one_to_pi, hint=r"\bno_such_text\b") is code
