"""The start-up hook records a run of the target program, however it reads stdin (real interpreters)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from coderefine_sandbox.programs import HOOK_DIR

sys.path.insert(0, HOOK_DIR)
from coderefine_program_record import parse_argv

READERS = {
    "sys.stdin": "import sys\ndata = sys.stdin.read()\nprint(len(data))\n",
    "input()": "n = int(input())\nrows = [input() for _ in range(n)]\nprint(len(rows))\n",
    "open(0)": "data = open(0).read()\nprint(len(data))\n",
    "sys.stdin.buffer": "import sys\ndata = sys.stdin.buffer.read()\nprint(len(data))\n",
}
STDIN = "2\nab\ncd\n"


def _run(folder: Path, argv: list[str], stdin: str, file: str, module: str = "prog") -> list[dict]:
    out = folder / "out"
    out.mkdir(exist_ok=True)
    spec = {"out": str(out), "max_bytes": 10_000, "file": str((folder / file).resolve()), "module": module}
    env = {**os.environ, "PYTHONPATH": HOOK_DIR, "CODEREFINE_PROGRAM_RECORD": json.dumps(spec)}
    proc = subprocess.run([sys.executable, *argv], input=stdin, text=True, capture_output=True, cwd=folder, env=env)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(path.read_text()) for path in sorted(out.glob("run-*.json"))]


@pytest.mark.parametrize("reader", sorted(READERS))
def test_stdin_is_recorded_whatever_reads_it(tmp_path: Path, reader: str) -> None:
    (tmp_path / "prog.py").write_text(READERS[reader])
    (record,) = _run(tmp_path, ["prog.py"], STDIN, "prog.py")
    assert base64.b64decode(record["stdin"]).decode() == STDIN
    assert record["stdin_complete"] and record["kind"] == "file" and not record["problems"]
    assert "lines" not in record  # traced in a replay, not in the test's own run


def test_files_read_args_and_module_runs(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text("import sys\nprint(open(sys.argv[1]).read().upper())\n")
    (tmp_path / "data.txt").write_text("hello")
    (record,) = _run(tmp_path, ["-u", "-m", "prog", "data.txt"], "", "prog.py")
    assert (record["kind"], record["target"], record["flags"], record["args"]) == (
        "module",
        "prog",
        ["-u"],
        ["data.txt"],
    )
    assert {path: base64.b64decode(data) for path, data in record["files"].items()} == {"data.txt": b"hello"}


def test_other_programs_are_not_recorded(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text("print(1)\n")
    (tmp_path / "other.py").write_text("print(2)\n")
    assert _run(tmp_path, ["other.py"], "", "prog.py") == []
    assert _run(tmp_path, ["-c", "print(3)"], "", "prog.py") == []


def test_parse_argv() -> None:
    assert parse_argv(["-X", "utf8", "-B", "a.py", "x"]) == ("file", "a.py", ["-X", "utf8", "-B"], ["x"])
    assert parse_argv(["-mpkg.mod", "--flag"]) == ("module", "pkg.mod", [], ["--flag"])
    assert parse_argv(["-c", "pass"]) is None
    assert parse_argv(["-"]) is None
    assert parse_argv([]) is None


def test_runpy_in_the_test_process_is_recorded(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(READERS["input()"])
    driver = (
        "import io, runpy, sys\n"
        "sys.stdin = io.StringIO('9\\n' + " + repr(STDIN) + ")\n"
        "sys.stdin.readline()\n"  # the test consumed a line itself: the program sees the rest
        "sys.argv = ['prog.py', '--fast']\n"
        "runpy.run_path('prog.py', run_name='__main__')\n"
    )
    (tmp_path / "driver.py").write_text(driver)
    (record,) = _run(tmp_path, ["driver.py"], "", "prog.py")
    assert (record["kind"], record["args"], base64.b64decode(record["stdin"]).decode()) == ("file", ["--fast"], STDIN)
    assert not record["problems"]


WRAPPER = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys
from pkg.mod import main
if __name__ == "__main__":
    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])
    sys.exit(main())
"""


def _package(folder: Path) -> Path:
    (folder / "pkg").mkdir()
    (folder / "pkg" / "__init__.py").write_text("")
    (folder / "pkg" / "mod.py").write_text(
        "import sys\n\ndef main():\n    print(sum(map(int, sys.stdin.read().split())))\n"
    )
    bin_dir = folder.parent / f"{folder.name}-bin"
    bin_dir.mkdir()
    tool = bin_dir / "tool"
    tool.write_text(WRAPPER.format(python=sys.executable))
    tool.chmod(0o755)
    return tool


def _spec(folder: Path, file: Path) -> dict:
    out = folder / "out"
    out.mkdir(exist_ok=True)
    return {"out": str(out), "max_bytes": 10_000, "file": str(file.resolve()), "module": "pkg.mod",
            "root": str(folder.resolve()), "prefix": os.path.realpath(sys.prefix)}  # fmt: skip


def test_a_console_script_wrapper_is_recorded_as_a_script_run(tmp_path: Path) -> None:
    folder = tmp_path / "proj"
    folder.mkdir()
    tool = _package(folder)
    spec = _spec(folder, folder / "pkg" / "mod.py")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([HOOK_DIR, str(folder)]),
        "CODEREFINE_PROGRAM_RECORD": json.dumps(spec),
    }
    proc = subprocess.run([str(tool), "--x"], input="1 2\n", text=True, capture_output=True, cwd=folder, env=env)
    assert (proc.returncode, proc.stdout) == (0, "3\n"), proc.stderr
    (record,) = [json.loads(path.read_text()) for path in (folder / "out").glob("run-*.json")]
    assert (record["kind"], record["target"], record["args"]) == ("script", str(tool.resolve()), ["--x"])
    assert base64.b64decode(record["stdin"]) == b"1 2\n" and not record["problems"]
    # the same wrapper importing another copy of the module than the project's: recorded as not replayable
    spec = _spec(folder, tmp_path / "elsewhere" / "mod.py")
    env["CODEREFINE_PROGRAM_RECORD"] = json.dumps(spec)
    subprocess.run([str(tool)], input="1\n", text=True, capture_output=True, cwd=folder, env=env, check=True)
    problems = [json.loads(path.read_text())["problems"] for path in (folder / "out").glob("run-*.json")]
    assert sorted(map(len, problems)) == [0, 1] and "not the project's copy" in max(problems)[0]


CARRIER = """import os, subprocess, sys
env = {ENV}
out = subprocess.run([sys.executable, "prog.py"], input="1 2\\n", text=True, capture_output=True, env=env)
print(out.stdout, end="")
"""


def test_a_test_that_clears_the_environment_is_still_recorded(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(READERS["sys.stdin"])
    (tmp_path / "driver.py").write_text(CARRIER.replace("{ENV}", "{}"))
    (record,) = _run(tmp_path, ["driver.py"], "", "prog.py")
    assert base64.b64decode(record["stdin"]) == b"1 2\n" and "LANG" not in record["env"]  # it still got none
    (tmp_path / "driver.py").write_text(CARRIER.replace("{ENV}", "{b'LANG': b'C'}"))  # bytes keys too
    assert len(_run(tmp_path, ["driver.py"], "", "prog.py")) == 2 and not list((tmp_path / "out").glob("missed-*"))
    # an environment the hook cannot be added to: the start is noted as missed, not lost silently
    (tmp_path / "driver.py").write_text(CARRIER.replace("{ENV}", "__import__('types').MappingProxyType({})"))
    assert len(_run(tmp_path, ["driver.py"], "", "prog.py")) == 2  # no third record
    (missed,) = (tmp_path / "out").glob("missed-*.json")
    assert "could not be added" in json.loads(missed.read_text())["why"]
