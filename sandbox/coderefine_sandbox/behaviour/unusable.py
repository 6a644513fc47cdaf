"""The exception naming why a recorded call cannot be judged (lazy.py, asynchronous.py, functions.py raise it)."""

from __future__ import annotations


class Unusable(Exception):
    """Why a lazy result or argument cannot be judged (the call is then unusable, with this reason)."""
