"""The sandbox package is loaded the way the host loads it: from the folder the sandbox runs it from."""

from __future__ import annotations

from coderefine.resources import load_sandbox_package

load_sandbox_package()
