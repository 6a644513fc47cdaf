"""From the proposed code to a complete module: the proposal merged into the original.

Top-level definitions in the proposed code replace the same-named ones in the original module; new imports
and helpers are added when changed code uses them; everything else in the original is kept, byte for byte
(libcst preserves the formatting and comments of untouched parts, which keeps the diff a user reviews
small). With --function, only the named functions and methods may change; what the merge ignores is noted
for the feedback step.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
import libcst.helpers

from coderefine.cst_nodes import is_docstring


@dataclass(frozen=True)
class MergeResult:
    code: str
    changed: tuple[str, ...]
    notes: tuple[str, ...]


def _statement_name(stmt: cst.CSTNode) -> str | None:
    """The name a top-level statement defines, if it defines exactly one."""
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return stmt.name.value
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        small = stmt.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            target = small.targets[0].target
            if isinstance(target, cst.Name):
                return target.value
        if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
            return small.target.value
    return None


def _is_import(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
    )


def _is_future_import(stmt: cst.CSTNode) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.ImportFrom)
        and isinstance(stmt.body[0].module, cst.Name)
        and stmt.body[0].module.value == "__future__"
    )


def _code_of(module: cst.Module, node: cst.CSTNode) -> str:
    return module.code_for_node(node).strip()


class _Merger:
    def __init__(
        self, original: str, proposed: str, allowed: tuple[str, ...] | None, methods: tuple[str, ...] = ()
    ) -> None:
        self.module = cst.parse_module(original)
        self.proposed = cst.parse_module(proposed)
        # None: every definition may change. Otherwise only the named functions and methods (--function).
        self.restricted = allowed is not None
        targets = allowed or ()
        self.targets = set(targets)
        self.target_functions = {t for t in targets if "." not in t}
        self.target_classes = {t.split(".", 1)[0] for t in targets if "." in t}
        # The run's methods (`Class.method`), where a bare `def method(self, ...)` belongs
        self.methods = {t for t in (*targets, *methods) if "." in t}
        self.body = list(self.module.body)
        self.index = {name: i for i, stmt in enumerate(self.body) if (name := _statement_name(stmt))}
        self.changed: list[str] = []
        self.notes: list[str] = []
        self.new_helpers: list[cst.CSTNode] = []
        self.new_imports: list[cst.CSTNode] = []
        self.first_replaced: int | None = None
        self.replaced_positions: set[int] = set()

    # -- top level

    def merge(self) -> MergeResult:
        existing_imports = {_code_of(self.module, s) for s in self.body if _is_import(s)}
        for position, stmt in enumerate(self.proposed.body):
            if _is_import(stmt):
                if _code_of(self.proposed, stmt) not in existing_imports:
                    self.new_imports.append(stmt)
                    existing_imports.add(_code_of(self.proposed, stmt))
                continue
            if position == 0 and is_docstring(stmt):
                continue
            name = _statement_name(stmt)
            if name is None:
                self.notes.append(
                    f"ignored a top-level statement that defines nothing: {_first_line(self.proposed, stmt)}"
                )
                continue
            if isinstance(stmt, cst.FunctionDef) and name not in self.index and self._place_bare_method(stmt):
                continue
            if name in self.index:
                self._replace(name, stmt)
            else:
                self.new_helpers.append(stmt)
        self._keep_used_additions()
        return self._assemble()

    def _keep_used_additions(self) -> None:
        """Add a new helper or import only if changed code uses it (directly or through another helper).

        A model often re-emits a whole module; an unused helper or import would be dead code in the
        user's file, and a helper beside a change that was ignored (outside --function) is noise.
        """
        helper_names = {_statement_name(h): h for h in self.new_helpers}
        used = set()
        for stmt in self.body:
            if stmt is not None and self._is_changed_statement(stmt):
                used |= _names_used(stmt)
        pending = [n for n in helper_names if n in used]
        kept: set[str] = set()
        while pending:
            name = pending.pop()
            if name in kept:
                continue
            kept.add(name)
            names = _names_used(helper_names[name])
            used |= names
            pending.extend(n for n in helper_names if n in names and n not in kept)
        dropped = [n for n in helper_names if n not in kept]
        if dropped:
            self.notes.append(f"did not add {', '.join(sorted(n for n in dropped if n))}: no changed code uses it")
        self.new_helpers = [h for h in self.new_helpers if _statement_name(h) in kept]
        self.changed[:0] = [n for n in helper_names if n in kept]
        self.new_imports = [s for s in self.new_imports if _is_future_import(s) or _names_bound(s) & used]

    def _is_changed_statement(self, stmt: cst.CSTNode) -> bool:
        return any(stmt is self.body[i] for i in self.replaced_positions)

    def _allowed(self, name: str) -> bool:
        return not self.restricted or name in self.target_functions

    def _method_allowed(self, qualified: str) -> bool:
        return not self.restricted or qualified in self.targets

    def _replace(self, name: str, stmt: cst.CSTNode) -> None:
        i = self.index[name]
        old = self.body[i]
        if _code_of(self.module, old) == _code_of(self.proposed, stmt):
            return  # unchanged copy of the original definition
        if isinstance(old, cst.ClassDef) and isinstance(stmt, cst.ClassDef):
            self._merge_class(i, old, stmt)
            return
        if not self._allowed(name):
            self.notes.append(f"ignored the change to '{name}': only {', '.join(sorted(self.targets))} may change")
            return
        if type(old) is not type(stmt):
            self.notes.append(f"ignored '{name}': it would turn a {_kind(old)} into a {_kind(stmt)}")
            return
        self.body[i] = stmt.with_changes(leading_lines=old.leading_lines) if hasattr(old, "leading_lines") else stmt
        self._mark(i, name)

    def _mark(self, i: int, name: str) -> None:
        self.changed.append(name)
        self.replaced_positions.add(i)
        if self.first_replaced is None or i < self.first_replaced:
            self.first_replaced = i

    # -- classes

    def _merge_class(self, i: int, old: cst.ClassDef, new: cst.ClassDef) -> None:
        """Replace the targeted methods and add new ones; keep every other line of the class."""
        if self.restricted and old.name.value not in self.target_classes:
            self.notes.append(f"ignored the change to class '{old.name.value}': no method of it is a target")
            return
        old_body = list(old.body.body)
        positions = {s.name.value: k for k, s in enumerate(old_body) if isinstance(s, cst.FunctionDef)}
        changed_here = False
        for stmt in new.body.body:
            if not isinstance(stmt, cst.FunctionDef):
                if isinstance(stmt, cst.SimpleStatementLine) and (is_docstring(stmt) or _is_pass(stmt)):
                    continue
                known = {_code_of(self.module, s) for s in old_body}
                if _code_of(self.proposed, stmt) not in known:
                    self.notes.append(
                        f"ignored a class-level statement in '{old.name.value}': {_first_line(self.proposed, stmt)}"
                    )
                continue
            qualified = f"{old.name.value}.{stmt.name.value}"
            if stmt.name.value in positions:
                k = positions[stmt.name.value]
                if _code_of(self.module, old_body[k]) == _code_of(self.proposed, stmt):
                    continue
                if not self._method_allowed(qualified):
                    self.notes.append(
                        f"ignored the change to '{qualified}': only {', '.join(sorted(self.targets))} may change"
                    )
                    continue
                old_body[k] = stmt.with_changes(leading_lines=old_body[k].leading_lines)
            else:
                old_body.append(_with_blank_lines(stmt, 1))
            self.changed.append(qualified)
            changed_here = True
        if changed_here:
            self.body[i] = old.with_changes(body=old.body.with_changes(body=old_body))
            self.replaced_positions.add(i)
            if self.first_replaced is None or i < self.first_replaced:
                self.first_replaced = i

    def _place_bare_method(self, stmt: cst.FunctionDef) -> bool:
        """A model asked for `Class.method` often answers with a bare `def method(self, ...)`."""
        matches = [t for t in self.methods if t.split(".", 1)[1] == stmt.name.value]
        if len(matches) != 1:
            return False
        class_name = matches[0].split(".", 1)[0]
        i = self.index.get(class_name)
        if i is None or not isinstance(self.body[i], cst.ClassDef):
            return False
        wrapper = self.body[i].with_changes(body=self.body[i].body.with_changes(body=[stmt]))
        self._merge_class(i, self.body[i], wrapper)
        return True

    # -- output

    def _assemble(self) -> MergeResult:
        body = self.body
        if self.new_helpers:
            at = self.first_replaced if self.first_replaced is not None else len(body)
            helpers = [
                _with_blank_lines(h, 2 if isinstance(h, (cst.FunctionDef, cst.ClassDef)) else 1)
                for h in self.new_helpers
            ]
            body = body[:at] + helpers + body[at:]
        if self.new_imports:
            futures = [s for s in self.new_imports if _is_future_import(s)]
            plain = [s for s in self.new_imports if not _is_future_import(s)]
            body = _insert_imports(body, futures, plain)
        return MergeResult(
            code=self.module.with_changes(body=body).code,
            changed=tuple(dict.fromkeys(self.changed)),
            notes=tuple(self.notes),
        )


def _insert_imports(body: list[cst.CSTNode], futures: list[cst.CSTNode], plain: list[cst.CSTNode]) -> list[cst.CSTNode]:
    head = 1 if body and is_docstring(body[0]) else 0
    last_future = max((k + 1 for k, s in enumerate(body) if _is_future_import(s)), default=head)
    body = body[:last_future] + [_with_blank_lines(s, 0) for s in futures] + body[last_future:]
    last_import = max((k + 1 for k, s in enumerate(body) if _is_import(s)), default=None)
    if last_import is None:
        last_import = head + len(futures) if futures or head else 0
    return body[:last_import] + [_with_blank_lines(s, 0) for s in plain] + body[last_import:]


def _with_blank_lines(stmt: cst.CSTNode, count: int) -> cst.CSTNode:
    lines = [cst.EmptyLine(indent=False)] * count
    comments = [line for line in getattr(stmt, "leading_lines", ()) if line.comment is not None]
    return stmt.with_changes(leading_lines=lines + comments) if hasattr(stmt, "leading_lines") else stmt


def _names_used(node: cst.CSTNode) -> set[str]:
    found: set[str] = set()

    class _Collect(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.add(name.value)

    node.visit(_Collect())
    return found


def _names_bound(stmt: cst.CSTNode) -> set[str]:
    """Names an import statement binds (`import a.b` binds `a`; `from x import y as z` binds `z`)."""
    bound: set[str] = set()
    for small in getattr(stmt, "body", ()):
        if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
            for alias in small.names:
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    bound.add(alias.asname.name.value)
                else:
                    bound.add(cst.helpers.get_full_name_for_node(alias.name).split(".")[0])
        elif isinstance(small, cst.ImportFrom):
            bound.add("*")
    return bound


def _is_pass(stmt: cst.SimpleStatementLine) -> bool:
    return len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Pass)


def _kind(stmt: cst.CSTNode) -> str:
    return {cst.FunctionDef: "function", cst.ClassDef: "class"}.get(type(stmt), "assignment")


def _first_line(module: cst.Module, stmt: cst.CSTNode) -> str:
    line = _code_of(module, stmt).splitlines()[0] if _code_of(module, stmt) else ""
    return line[:80]


def merge_definitions(
    original: str, proposed: str, allowed: tuple[str, ...] | None, methods: tuple[str, ...] = ()
) -> MergeResult:
    """`methods`: the run's target methods, where a bare `def method(self, ...)` of the answer is placed
    (with `allowed`, its own methods)."""
    return _Merger(original, proposed, allowed, methods).merge()
