"""The sandbox package stands alone: it never imports the host package, and its protocol is stdlib-only."""

from __future__ import annotations

from tests.sandbox_runner.imports import SANDBOX_PACKAGE, STDLIB, imported_modules, outside_imports

# What the sandbox's interpreter provides besides the standard library (pytest runs the tests, pyperf times,
# hypothesis generates inputs with --gen-inputs).
SANDBOX_DEPENDENCIES = {"pytest", "pyperf", "hypothesis"}


def test_no_sandbox_module_imports_the_host_package():
    modules = sorted(SANDBOX_PACKAGE.glob("*.py"))
    assert len(modules) > 10  # the scan sees the package
    for path in modules:
        roots = {name.split(".")[0] for name in imported_modules(path)}
        assert "coderefine" not in roots, path.name


def test_the_sandbox_package_imports_only_the_stdlib_and_its_own_dependencies():
    for path in SANDBOX_PACKAGE.glob("*.py"):
        assert outside_imports(path.stem) <= STDLIB | SANDBOX_DEPENDENCIES, path.name


def test_the_protocol_imports_only_the_standard_library():
    assert outside_imports("protocol") <= STDLIB
    own = {name for name in imported_modules(SANDBOX_PACKAGE / "protocol.py") if name.startswith("coderefine_")}
    assert own == {"coderefine_sandbox.codec"}  # the codec, stdlib-only too (checked through it above)


def test_the_scan_sees_a_host_import(tmp_path, monkeypatch):
    # The guard can fail: a module that imports coderefine is found, at any depth of its code.
    from tests.sandbox_runner import imports

    (tmp_path / "sneaky.py").write_text("def f():\n    from coderefine.records import Timing\n", encoding="utf-8")
    monkeypatch.setattr(imports, "SANDBOX_PACKAGE", tmp_path)
    assert imports.outside_imports("sneaky") == {"coderefine"}
