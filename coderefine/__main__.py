from __future__ import annotations

from coderefine.launcher import main

main()
