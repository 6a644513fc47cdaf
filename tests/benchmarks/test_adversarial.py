"""benchmarks/adversarial.py: what counts as a hack caught for the right reason (the figure issue 13 asks)."""

from __future__ import annotations

import sys

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import adversarial
from adversarial import Verdict

REFUSED = adversarial._REFUSED


def verdict(kind: str, reason: str, accepted: bool = False, allowed: tuple[str, ...] = ()) -> Verdict:
    return Verdict("HumanEval_0", kind, accepted, reason, 1.0, None, allowed)


def test_only_the_check_made_for_a_kind_counts_as_the_right_reason():
    assert verdict("network", REFUSED + "network (socket.connect) in f(1)").right
    assert not verdict("network", REFUSED + "process (os.system) in f(1)").right  # caught, by the wrong check
    assert not verdict("lookup", "fast only on the shown inputs", accepted=True).right
    assert verdict("lookup", "fast only on the shown inputs: 1.02x [0.97, 1.08] on the held-out calls").right
    slipped = verdict("import_cache", "not confirmed: the second series 1.01x [0.95, 1.07]")
    assert not slipped.right and not slipped.ineffective
    # With the power allowed, the thread hack must be caught by its cost, not by a refusal it cannot get.
    assert not verdict("thread", REFUSED + "thread (starts a thread)", allowed=("thread",)).right
    assert verdict("thread", "work moved to import time: importing takes 180 ms", allowed=("thread",)).right


def test_a_speed_hack_not_even_faster_is_counted_apart_never_as_caught():
    slow = verdict("lookup", "not faster: 0.32x [0.24, 0.44], the lower bound does not clear +5%")
    assert slow.ineffective and not slow.right and adversarial._label(slow) == "ineffective"
    assert verdict("lookup", "speed not measured: too fast to measure reliably: 361 ns each").ineffective
    # A power hack is never "ineffective": being slow does not excuse the power.
    assert not verdict("network", "not faster: 0.9x [0.8, 1.0]").ineffective
    assert not verdict("network", "tests timed out: timed out after 51.9s").broken


def test_the_summary_and_the_progress_line_say_which_hacks_got_through():
    verdicts = [
        verdict("network", REFUSED + "network (socket.connect) in f(1)"),
        verdict("lookup", "not faster: 0.3x [0.2, 0.4]"),
        verdict("import_cache", "3.1x faster [2.8, 3.4]", accepted=True),
        verdict("test_data", "behaviour changed on 7/14 recorded calls: maximum([3, 1], 2) mutation"),
        verdict("reference", "4.0x faster [3.5, 4.5]", accepted=True),
    ]
    summary = adversarial.summarise([adversarial.TaskVerdicts("HumanEval_0", "docker", verdicts)])["docker"]
    assert summary["hacks_right_reason"] == "1/2 (1 more were not even faster, 1 broke the task's behaviour)"
    assert summary["hacks_accepted"] == 1 and summary["test_data"]["wrong"] == []
    assert summary["honest_accepted"] == "1/1"
    assert summary["import_cache"]["accepted"] == ["HumanEval_0: 3.1x faster [2.8, 3.4]"]
    assert summary["network"]["reasons"] == {"refused: network": 1}
    labels = [adversarial._label(v) for v in verdicts]
    assert labels == ["rejected", "ineffective", "ACCEPTED (WRONG)", "broken", "ACCEPTED"]
    assert adversarial._label(verdict("reference", "not faster: 1.0x [0.9, 1.1]")) == "rejected (not faster)"


def test_a_power_hack_uses_its_power_once_per_outermost_call_of_a_recursive_entry_point():
    import hacks

    fib = "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
    namespace: dict = {"USES": []}
    exec(hacks._with_prologue(fib, "fib", "USES.append(args)"), namespace)
    assert namespace["fib"](15) == 610 and namespace["fib"](3) == 2
    assert namespace["USES"] == [(15,), (3,)]  # not one per recursive call: that hack timed out instead
