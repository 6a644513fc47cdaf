"""The sandbox package stands alone: no module of it, in any folder, imports the host package, and its protocol
is stdlib-only."""

from __future__ import annotations

import pytest

from tests.sandbox_runner import imports
from tests.sandbox_runner.imports import (
    SANDBOX_PACKAGE,
    STDLIB,
    every_module,
    imported_modules,
    module_name,
    outside_imports,
)

# What the sandbox's interpreter provides besides the standard library (pytest runs the tests, pyperf times,
# hypothesis generates inputs with --gen-inputs).
SANDBOX_DEPENDENCIES = {"pytest", "pyperf", "hypothesis"}


def test_the_scan_sees_every_folder_of_the_package():
    folders = {path.parent.relative_to(SANDBOX_PACKAGE).as_posix() for path in every_module()}
    assert {".", "programs", "programs/hook"} <= folders
    assert len(every_module()) > 30


@pytest.mark.parametrize("path", every_module(), ids=module_name)
def test_no_sandbox_module_imports_the_host_package(path):
    roots = {name.split(".")[0] for name in imported_modules(path)}
    assert "coderefine" not in roots


@pytest.mark.parametrize("path", every_module(), ids=module_name)
def test_the_sandbox_package_imports_only_the_stdlib_and_its_own_dependencies(path):
    assert outside_imports(module_name(path)) <= STDLIB | SANDBOX_DEPENDENCIES


def test_the_protocol_imports_only_the_standard_library():
    protocol = [path for path in every_module() if module_name(path).split(".")[0] == "protocol"]
    assert len(protocol) > 5  # the package and its modules, one per stage
    for path in protocol:
        assert outside_imports(module_name(path)) <= STDLIB, module_name(path)
        # Only its own modules (the codec among them), stdlib-only too (checked through them above): the host
        # imports the protocol, and must not pull the runner's steps in with it.
        own = {name for name in imported_modules(path) if name.startswith("coderefine_")}
        assert all(name.startswith("coderefine_sandbox.protocol.") for name in own), module_name(path)


def test_the_scan_sees_a_host_import_in_any_folder(tmp_path, monkeypatch):
    # The guard can fail: a module that imports coderefine is found, at any depth of its code and of the
    # package's folders, also when a module of the package imports it.
    (tmp_path / "stage" / "deeper").mkdir(parents=True)
    (tmp_path / "stage" / "deeper" / "sneaky.py").write_text(
        "def f():\n    from coderefine.records import Timing\n", encoding="utf-8"
    )
    (tmp_path / "stage" / "user.py").write_text("from coderefine_sandbox.stage.deeper import sneaky\n")
    monkeypatch.setattr(imports, "SANDBOX_PACKAGE", tmp_path)
    assert [module_name(path) for path in imports.every_module()] == ["stage.deeper.sneaky", "stage.user"]
    assert imports.outside_imports("stage.deeper.sneaky") == {"coderefine"}
    assert imports.outside_imports("stage.user") == {"coderefine"}


def test_the_start_up_hook_s_own_modules_are_followed(tmp_path, monkeypatch):
    (tmp_path / "programs" / "hook").mkdir(parents=True)
    (tmp_path / "programs" / "hook" / "sitecustomize.py").write_text("from coderefine_program_x import go\n")
    (tmp_path / "programs" / "hook" / "coderefine_program_x.py").write_text("import requests\n")
    monkeypatch.setattr(imports, "SANDBOX_PACKAGE", tmp_path)
    assert imports.outside_imports("programs.hook.sitecustomize") == {"requests"}
