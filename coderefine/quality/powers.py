"""The static half of issue 13's rule "no candidate gains powers": a file that newly imports a module
giving network, process or native-code powers is a `check` finding.

"Newly" means: not imported by the file's committed version (`git show HEAD:FILE`); a file git does not
know has no committed version, so every such import is new. A cheap text search runs first, so a file
without any such import costs no parse and no git call (`check` stays fast on a warm cache). The module
names mirror the sandbox's audit hook (coderefine_sandbox/audit.py, SENSITIVE_MODULES).
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

from coderefine.quality.findings import NEW_POWER, Finding

POWERS: dict[str, str] = {
    **dict.fromkeys(("socket", "ssl", "requests", "httpx", "urllib3", "aiohttp", "http", "urllib.request"), "network"),
    **dict.fromkeys(("ftplib", "smtplib", "telnetlib"), "network"),
    **dict.fromkeys(("subprocess", "multiprocessing", "concurrent.futures", "pty"), "process"),
    **dict.fromkeys(("ctypes", "cffi", "mmap"), "native"),
}
_MENTION = re.compile(
    r"^\s*(?:import|from)\s+(?:" + "|".join(re.escape(name.split(".")[0]) for name in POWERS) + r")\b", re.MULTILINE
)


def sensitive_imports(text: str) -> dict[str, int]:
    """Each sensitive module the source imports, with the line of its first import."""
    if not _MENTION.search(text):
        return {}
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            module = _power_module(name)
            if module is not None:
                found.setdefault(module, node.lineno)
    return found


def _power_module(name: str) -> str | None:
    parts = name.split(".")
    for size in range(len(parts), 0, -1):
        candidate = ".".join(parts[:size])
        if candidate in POWERS:
            return candidate
    return None


def committed_text(path: Path) -> str | None:
    """The file as committed at git HEAD, or None when it is not in a repository or not committed."""
    try:
        proc = subprocess.run(
            ["git", "show", f"HEAD:./{path.name}"],
            cwd=path.resolve().parent,
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    return proc.stdout.decode("utf-8", errors="replace")


def new_power_findings(path: Path, text: str) -> list[Finding]:
    """A finding per sensitive module `text` imports that the committed version of `path` does not."""
    current = sensitive_imports(text)
    if not current:
        return []
    committed = committed_text(path)
    before = sensitive_imports(committed) if committed is not None else {}
    return [
        Finding(
            str(path),
            line,
            line,
            None,
            NEW_POWER,
            1.0,
            0.0,
            f"`{module}` is newly imported and gives {POWERS[module]} powers the committed version does not use; "
            "remove it, or keep it knowingly (coderefine refuses a refined candidate that gains a power)",
        )
        for module, line in sorted(current.items(), key=lambda item: item[1])
        if module not in before
    ]
