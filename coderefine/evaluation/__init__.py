"""Evaluation: the original's baseline and each candidate run in the sandbox, and the runner's reports
turned into records.

This package speaks the sandbox runner's protocol (`coderefine_sandbox.protocol`), and imports it from
the very folder the sandbox runs it from: loaded here, before any module of the package needs it.
"""

from __future__ import annotations

from coderefine.resources import load_sandbox_package

load_sandbox_package()
