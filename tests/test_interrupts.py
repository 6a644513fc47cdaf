"""A Ctrl-C that lands in an at-fork callback (subprocess with preexec_fn) must not be dropped."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import os, subprocess, sys, time
    from coderefine.interrupts import redeliver_lost_interrupts

    if sys.argv[1] == "hook":
        redeliver_lost_interrupts()

    def interrupt_now():  # what a Ctrl-C arriving during the fork looks like to Python
        raise KeyboardInterrupt

    os.register_at_fork(after_in_parent=interrupt_now)
    try:
        subprocess.run(["true"], preexec_fn=lambda: None)
        time.sleep(0.5)  # where the resent signal is handled
        print("missed")
    except KeyboardInterrupt:
        print("interrupted")
    """
)


def run(mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, timeout=30)


def test_a_ctrl_c_inside_an_at_fork_callback_is_delivered_again() -> None:
    with_hook = run("hook")
    assert with_hook.stdout.strip() == "interrupted"
    assert "Exception ignored" not in with_hook.stderr


def test_without_the_hook_python_drops_it() -> None:
    # The reason the hook exists: if Python ever stops dropping it, the hook can go.
    without = run("plain")
    assert without.stdout.strip() == "missed"
    assert "Exception ignored" in without.stderr
