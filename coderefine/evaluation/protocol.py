"""The sandbox runner's typed protocol, as the host speaks it: the one place the host loads it.

The protocol is the sandbox's own package (`coderefine_sandbox.protocol`), loaded from the very folder the
sandbox runs it from (`coderefine.resources.load_sandbox_package`), so both sides read the same file
whichever way coderefine is installed. Every host module that speaks the protocol imports its names from
here, never from `coderefine_sandbox` directly: this module is what makes that import possible.
"""

from __future__ import annotations

from coderefine.resources import load_sandbox_package

load_sandbox_package()  # registers `coderefine_sandbox` from the sandbox's folder, for the import below

from coderefine_sandbox.protocol import *  # noqa: E402, F403
from coderefine_sandbox.protocol import __all__ as __all__  # noqa: E402
