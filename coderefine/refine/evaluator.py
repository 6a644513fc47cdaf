"""What the loop needs from an evaluator: facts about the original, facts about each candidate.

The loop depends on this Protocol, not on the sandbox: `coderefine.evaluation.evaluator.Evaluator` (tests,
behaviour replay and timing in a sandbox) satisfies it, and so does any object with these three methods,
which lets the loop's rules be tested in milliseconds with evaluations built by hand.
"""

from __future__ import annotations

from typing import Protocol

from coderefine.records import BaselineFacts, Candidate, Evaluation


class Evaluator(Protocol):
    def baseline(self, code: str) -> BaselineFacts:
        """Run the original once: its tests, the calls they make, its timing workload and metrics."""
        ...

    def evaluate(self, candidate: Candidate) -> Evaluation:
        """Execution facts about one candidate, judged against the baseline run."""
        ...

    def close(self) -> None:
        """Release what the evaluations held (workspaces, sandboxes)."""
        ...
