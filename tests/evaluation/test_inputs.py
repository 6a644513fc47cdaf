"""Reading input, finding the project, and parsing what providers return."""

from __future__ import annotations

import json

import pytest

from coderefine.errors import (
    BadScript,
    InputFileNotFound,
    InputIsDirectory,
    InputNotUtf8,
    InputSyntaxError,
    NoTestsFound,
    UnknownFunction,
)
from coderefine.evaluation.project import find_root, import_location, resolve_project
from coderefine.providers.base import feedback_says_stop
from coderefine.providers.scripted import load_script
from coderefine.source import is_script, read_source, resolve_targets


def test_read_source_errors(tmp_path):
    with pytest.raises(InputFileNotFound):
        read_source(tmp_path / "missing.py")
    with pytest.raises(InputIsDirectory):
        read_source(tmp_path)
    latin = tmp_path / "latin.py"
    latin.write_bytes("x = 'caf\xe9'\n".encode("latin-1"))
    with pytest.raises(InputNotUtf8, match="offset"):
        read_source(latin)
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n")
    with pytest.raises(InputSyntaxError, match=":1:"):
        read_source(broken)


def test_read_source_keeps_bom_and_crlf(tmp_path):
    path = tmp_path / "m.py"
    path.write_bytes(b"\xef\xbb\xbfx = 1\r\n")
    source = read_source(path)
    assert source.has_bom and source.text == "x = 1\r\n"


def test_targets_and_unknown_function_hint():
    code = "def alpha():\n    pass\n\nclass K:\n    def run(self):\n        pass\n"
    assert resolve_targets(code, None, "m.py") == ("alpha", "K.run")
    assert resolve_targets(code, "K.run", "m.py") == ("K.run",)
    with pytest.raises(UnknownFunction, match=r"did you mean K\.run"):
        resolve_targets(code, "run", "m.py")
    with pytest.raises(UnknownFunction, match="functions here: alpha"):
        resolve_targets(code, "beta", "m.py")


def test_script_detection():
    assert is_script("n = int(input())\nfor i in range(n):\n    print(i)\n")
    assert not is_script('"""Doc."""\nimport os\nX = 1\n\ndef f():\n    pass\n\nif __name__ == "__main__":\n    f()\n')


@pytest.mark.parametrize(
    "block",
    [
        "if PYPY:  # toolz's functoolz.py\n    _orig = f\n\n    def f():\n        return 2\nelse:\n    pass\n",
        "try:\n    import numpy\nexcept ImportError:\n    numpy = None\n",
        "try:\n    from fast import f\nexcept ImportError as exc:\n    raise ImportError('needs fast') from exc\n",
        "if sys.version_info >= (3, 11):\n    import tomllib\nelse:\n    try:\n        import tomli as tomllib\n"
        "    except ModuleNotFoundError:\n        tomllib = None\n",
        "__all__ += ['f']\ndel sys\n",
        "f('person', 'people')  # inflection's rules\nf('cow', kine=('kine', -1))\n",
    ],
)
def test_definitions_chosen_at_import_are_not_script_work(block):
    module = f"import sys\n\n\ndef f():\n    return 1\n\n\n{block}"
    assert not is_script(module)


@pytest.mark.parametrize(
    "block",
    [
        "try:\n    f()\nexcept Exception:\n    pass\n",  # a call is work, guarded or not
        "if PYPY:\n    print('pypy')\n",
        "if PYPY:\n    for name in ('a', 'b'):\n        globals()[name] = f\n",
        "raise SystemExit(f())\n",  # a raise only counts inside a guard
        "if PYPY:\n    if __name__ == '__main__':\n        f()\n",
        "f()\n",  # how a script starts its work
        "f(int(input()))\n",  # computed arguments
        "n = 3\nf(n)\n",
        "if PYPY:\n    print('pypy')\nelse:\n    print('cpython')\n",  # a builtin, literal arguments or not
        "g('a')\n",  # not the module's own function
        "f(*'ab')\n",
    ],
)
def test_work_inside_a_top_level_block_is_still_script_work(block):
    assert is_script(f"def f():\n    return 1\n\n\n{block}")


def test_project_root_and_package_import_location(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    package = tmp_path / "src" / "pkg" / "sub"
    package.mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    module = package / "mod.py"
    module.write_text("def f():\n    return 1\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mod.py").write_text("")
    assert find_root(module) == tmp_path
    assert import_location(module, tmp_path) == (
        "pkg.sub.mod",
        tmp_path.joinpath("src").relative_to(tmp_path),
    )
    # A package's __init__.py is the package (a module "pkg.sub.__init__" would be a second copy no test calls).
    src = tmp_path.joinpath("src").relative_to(tmp_path)
    assert import_location(package / "__init__.py", tmp_path) == ("pkg.sub", src)
    project = resolve_project(module)
    assert project.module_name == "pkg.sub.mod" and project.tests == ()


def test_root_falls_back_to_the_files_folder_and_no_tests_is_an_error(tmp_path):
    folder = tmp_path / "lonely"
    folder.mkdir()
    module = folder / "m.py"
    module.write_text("x = 1\n")
    assert find_root(module) == folder
    with pytest.raises(NoTestsFound):
        resolve_project(module)


@pytest.mark.parametrize(
    ("text", "stop"),
    [
        ("Looks good.\nVERDICT: STOP", True),
        ("Fix line 3.\nVERDICT: CONTINUE", False),
        ("**Verdict:** stop.", True),
        ("VERDICT: STOP\n...on second thought\nVERDICT: CONTINUE", False),
        ('{"feedback": "fine", "stop": true}', True),
        ("There is nothing left to improve in f, but g is quadratic; use a set.", False),
        ("All good.\nNothing left to improve.", True),
        ("Use a dict at line 4.", False),
    ],
)
def test_feedback_stop_signal(text, stop):
    assert feedback_says_stop(text) is stop


def test_script_validation(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"generate": ["a", {"content": "b", "usage": {"prompt_tokens": 3}}], "feedback": []}))
    script = load_script(good)
    assert [r.content for r in script["generate"]] == ["a", "b"] and script["generate"][1].prompt_tokens == 3
    bad_cases = {
        "notjson.json": "{generate: [",
        "list.json": "[]",
        "unknown.json": json.dumps({"generate": [], "critique": []}),
        "shape.json": json.dumps({"generate": "abc"}),
        "entry.json": json.dumps({"generate": [3]}),
    }
    for name, text in bad_cases.items():
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(BadScript):
            load_script(path)
    with pytest.raises(BadScript, match="not found"):
        load_script(tmp_path / "absent.json")


def test_every_offline_rule_a_task_names_exists():
    from coderefine.providers.offline.rewrites import all_rules
    from coderefine.refine.tasks import available_tasks, load_task

    known = all_rules()
    for name in available_tasks():
        task = load_task(name)
        assert task.offline_rules, name
        assert [rule for rule in task.offline_rules if rule not in known] == [], name
        assert all(name in known[rule].tasks for rule in task.offline_rules), name


def test_timing_values_and_noise_floor_adapt_to_the_workload():
    from coderefine.evaluation.timing_policy import values_per_process
    from coderefine.evaluation.verdicts import noise_floor

    assert [values_per_process(3, s) for s in (None, 0.01, 0.5, 2.0)] == [3, 3, 2, 1]
    assert [noise_floor(0.05, s) for s in (None, 5e-6, 5e-5, 0.1)] == [0.05, 0.20, 0.10, 0.05]
    assert noise_floor(0.3, 5e-6) == 0.3  # a stricter user setting is kept
