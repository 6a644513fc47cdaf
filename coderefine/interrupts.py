"""Ctrl-C that Python would drop.

Starting a subprocess with `preexec_fn` (the process sandbox sets resource limits that way) runs Python's
at-fork callbacks in the parent. A SIGINT handled inside one of them raises a KeyboardInterrupt that cannot
propagate: Python prints "Exception ignored in ..." with a traceback and carries on, so the user's Ctrl-C
is lost and the run keeps going. The hook here sends the signal again, from a thread a moment later: sent
at once, it would be handled inside the hook itself and dropped the same way.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

_previous_hook: Callable[[Any], object] | None = None
_before_resend: Callable[[], None] | None = None


def _redeliver(unraisable: Any) -> None:
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        if _before_resend is not None:
            _before_resend()
        resend = threading.Timer(0.01, os.kill, (os.getpid(), signal.SIGINT))
        resend.daemon = True
        resend.start()
        return
    if _previous_hook is not None:
        _previous_hook(unraisable)


def redeliver_lost_interrupts(before_resend: Callable[[], None] | None = None) -> None:
    """Install the hook for this process. `before_resend` resets a handler that answers only the first
    Ctrl-C, so the resent one is not taken for a second."""
    global _previous_hook, _before_resend
    _before_resend = before_resend
    if sys.unraisablehook is not _redeliver:
        _previous_hook = sys.unraisablehook
        sys.unraisablehook = _redeliver
