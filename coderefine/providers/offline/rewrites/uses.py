"""How a local container is used, one occurrence at a time.

The container codemods (seen-list-to-set, membership-in-loop-to-set, pop-front-deque) may only act on
a list that nothing can change or see behind their back, so every single use of the name must be one of
the shapes recognised here; any other use makes them decline.
"""

from __future__ import annotations

import libcst as cst

from coderefine.providers.offline.rewrites.cst_patterns import builtin_call_arg, membership_test, method_call
from coderefine.providers.offline.rewrites.cst_session import Session

# Builtins that read a container without changing it or keeping a reference to it past the call.
READING_BUILTINS = frozenset(
    {"len", "sorted", "list", "tuple", "set", "frozenset", "sum", "min", "max", "any", "all", "enumerate",
     "reversed", "zip", "str", "repr", "print", "bool"}
)  # fmt: skip
READING_METHODS = frozenset({"count", "index"})


def read_only_use(session: Session, name: cst.Name) -> bool:
    """A use that reads the container and lets no reference to it escape (so it cannot change)."""
    if membership_test(session, name) is not None:
        return True
    if builtin_call_arg(session, name, READING_BUILTINS) is not None:
        return True
    call = method_call(session, name)
    if call is not None:
        return call[0] in READING_METHODS
    parent = session.parent(name)
    if isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is name:
        return True
    if isinstance(parent, cst.Return) and parent.value is name:
        return True  # the function is done with it
    return index_load(session, name) is not None or is_truth_test(session, name)


def index_load(session: Session, name: cst.Name) -> cst.Subscript | None:
    """`name[i]` or `name[a:b]` being read (not assigned to, not deleted)."""
    subscript = session.parent(name)
    if not isinstance(subscript, cst.Subscript) or subscript.value is not name:
        return None
    holder = session.parent(subscript)
    if isinstance(holder, (cst.AssignTarget, cst.Del)):
        return None
    if isinstance(holder, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor)) and holder.target is subscript:
        return None
    if isinstance(holder, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
        return None  # possibly part of an unpacking target: be safe
    return subscript


def index_store(session: Session, name: cst.Name) -> cst.Subscript | None:
    """`name[i] = v` or `name[i] += v`."""
    subscript = session.parent(name)
    if not isinstance(subscript, cst.Subscript) or subscript.value is not name:
        return None
    holder = session.parent(subscript)
    if isinstance(holder, cst.AssignTarget) or (isinstance(holder, cst.AugAssign) and holder.target is subscript):
        return subscript
    return None


def is_truth_test(session: Session, name: cst.Name) -> bool:
    """`name` is only tested for truth: `if q:`, `while q and x:`, `not q`, `x if q else y`."""
    child: cst.CSTNode = name
    parent = session.parent(child)
    while isinstance(parent, cst.BooleanOperation):
        child, parent = parent, session.parent(parent)
    if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
        return True
    if isinstance(parent, (cst.If, cst.While, cst.Assert)) and parent.test is child:
        return True
    return isinstance(parent, cst.IfExp) and parent.test is child


def is_simple_index(node: cst.BaseSlice) -> bool:
    """An index that is a small integer literal such as `0` or `-1` (not a slice)."""
    if not isinstance(node, cst.Index):
        return False
    value = node.value
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        value = value.expression
    return isinstance(value, cst.Integer)


def pure_argument(node: cst.BaseExpression) -> bool:
    """Evaluating it twice gives the same object and has no effect: a name or a literal."""
    return isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.SimpleString))
