"""`coderefine check`'s static half of "no new powers": a newly imported socket, subprocess, requests or
ctypes in a file is a finding; one the committed version already imports is not."""

from __future__ import annotations

import subprocess
from pathlib import Path

from coderefine.quality.check import CheckThresholds, check_files
from coderefine.quality.findings import NEW_POWER
from coderefine.quality.powers import new_power_findings, sensitive_imports


def test_sensitive_imports_are_found_in_every_spelling():
    text = "import os\nimport subprocess as sp\nfrom urllib.request import urlopen\ndef f():\n    import ctypes\n"
    assert sensitive_imports(text) == {"subprocess": 2, "urllib.request": 3, "ctypes": 5}
    assert sensitive_imports("import os\nfrom urllib.parse import quote\n") == {}  # parsing a URL is no power


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=repo, check=True, capture_output=True
    )


def test_only_imports_the_committed_version_lacks_are_findings(tmp_path):
    _git(tmp_path, "init", "-q")
    module = tmp_path / "mod.py"
    module.write_text("import subprocess\n\n\ndef f(x):\n    return x\n")
    _git(tmp_path, "add", "mod.py")
    _git(tmp_path, "commit", "-qm", "init")
    module.write_text("import subprocess\nimport socket\n\n\ndef f(x):\n    return x\n")
    outcome = check_files([module], CheckThresholds())
    found = [f for f in outcome.findings if f.metric == NEW_POWER]
    assert [(f.line, f.message.split("`")[1]) for f in found] == [(2, "socket")]
    assert "network powers" in found[0].message
    # A file git does not know has no committed version: each such import is new.
    loose = tmp_path / "loose.py"
    loose.write_text("import requests\n")
    assert [f.message.split("`")[1] for f in new_power_findings(loose, loose.read_text())] == ["requests"]
