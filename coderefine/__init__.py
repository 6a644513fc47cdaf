"""coderefine: make Python code faster or more readable, proving every change by running it."""

from __future__ import annotations

__version__ = "0.1.0"
