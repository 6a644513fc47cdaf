"""Which tests judged a run, as the console and the JSON report say it."""

from __future__ import annotations

from typing import Any

from coderefine.records import TestsSelected

# The JSON report lists the candidates' tests up to this many (the count is always there).
MAX_LISTED = 200


def selection_text(selected: TestsSelected) -> str:
    """'14 of 120 run by the original judge each candidate - they call the targets (...)'."""
    files = ""
    if selected.files_seen is not None and selected.mode == "traced":
        files = f" from {selected.files_kept} of {selected.files_seen} test files"
    if selected.candidate_tests != selected.baseline_tests:
        ran = f"the {selected.baseline_tests} the original ran{files}"
        head = f"{selected.candidate_tests} of {ran} judge each candidate"
    else:
        head = f"{selected.baseline_tests}{files} judge the run"
    return f"{head} - {selected.reason}"


def selection_dict(selected: TestsSelected | None) -> dict[str, Any] | None:
    if selected is None:
        return None
    return {
        "mode": selected.mode,
        "reason": selected.reason,
        "baseline_tests": selected.baseline_tests,
        "candidate_tests": selected.candidate_tests,
        "test_files": selected.files_seen,
        "test_files_run": selected.files_kept,
        "tests": list(selected.node_ids[:MAX_LISTED]),
        "test_files_importing": selected.files_importing,
        "test_files_untraced": selected.files_untraced,
        "tests_untraced": selected.tests_untraced,
        "test_files_unimportable": selected.files_unimportable,
    }
