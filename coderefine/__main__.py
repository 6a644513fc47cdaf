from __future__ import annotations

from coderefine.cli.launcher import main

main()
