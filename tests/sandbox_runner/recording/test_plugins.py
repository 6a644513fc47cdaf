"""Which installed pytest plugins a project's test run leaves unloaded."""

from __future__ import annotations

from coderefine_sandbox.recording.plugins import unneeded_plugins

WITHOUT_HYPOTHESIS = ["-p", "no:hypothesispytest"]
WITHOUT_ANYIO = ["-p", "no:anyio"]


def test_a_project_that_names_no_hypothesis_option_runs_without_its_plugin(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -ra\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text("import pytest\n")
    # @given in a test file needs only the package, not the plugin
    (tmp_path / "tests" / "test_x.py").write_text("from hypothesis import given\n")
    assert unneeded_plugins(str(tmp_path)) == WITHOUT_HYPOTHESIS + WITHOUT_ANYIO


def test_hypothesis_named_in_the_configuration_keeps_the_plugin(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = "--hypothesis-profile=ci"\n')
    assert unneeded_plugins(str(tmp_path)) == WITHOUT_ANYIO


def test_hypothesis_named_in_a_conftest_below_the_root_keeps_the_plugin(tmp_path):
    deep = tmp_path / "src" / "pkg" / "tests"
    deep.mkdir(parents=True)
    (deep / "conftest.py").write_text("from hypothesis import settings\nsettings.register_profile('ci')\n")
    assert unneeded_plugins(str(tmp_path)) == WITHOUT_ANYIO


def test_conftests_of_hidden_folders_and_virtual_environments_do_not_count(tmp_path):
    for folder in (".tox/py311", "venv/lib"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "conftest.py").write_text("import hypothesis\n")
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    assert unneeded_plugins(str(tmp_path)) == WITHOUT_HYPOTHESIS + WITHOUT_ANYIO


def test_anyio_named_in_a_test_file_keeps_its_plugin(tmp_path):
    # anyio's marker and fixture are used in test files, not only in conftests: any Python file counts
    deep = tmp_path / "tests" / "unit" / "io"
    deep.mkdir(parents=True)
    (deep / "test_fetch.py").write_text("import pytest\n\n\n@pytest.mark.anyio\nasync def test_fetch():\n    pass\n")
    assert unneeded_plugins(str(tmp_path)) == WITHOUT_HYPOTHESIS


def test_anyio_in_a_virtual_environment_or_a_hidden_folder_does_not_keep_its_plugin(tmp_path):
    for folder in (".tox/py311/lib", "venv/lib/anyio"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "_backends.py").write_text("import anyio\n")
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    assert unneeded_plugins(str(tmp_path)) == WITHOUT_HYPOTHESIS + WITHOUT_ANYIO


def test_a_project_too_large_to_search_keeps_the_anyio_plugin(tmp_path, monkeypatch):
    from coderefine_sandbox.recording import plugins

    monkeypatch.setattr(plugins, "SEARCHED_FILES", 3)
    for index in range(3):
        (tmp_path / f"test_{index}.py").write_text("def test_x():\n    pass\n")
    assert unneeded_plugins(str(tmp_path)) == WITHOUT_HYPOTHESIS + WITHOUT_ANYIO
    (tmp_path / "test_3.py").write_text("def test_x():\n    pass\n")  # one more than is searched
    assert unneeded_plugins(str(tmp_path)) == WITHOUT_HYPOTHESIS
