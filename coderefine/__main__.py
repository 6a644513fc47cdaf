from __future__ import annotations

from coderefine.cli import main

main()
