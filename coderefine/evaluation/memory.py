"""Peak memory per call, original against candidate: the two replays' readings (coderefine_sandbox's
behaviour/memory.py) on the calls read on both sides, with the limit the settings set. The verdict on them
is `verdicts.memory_grew`."""

from __future__ import annotations

from coderefine.evaluation.settings import EvaluationSettings
from coderefine.records import MemoryUse

MIB = 1024 * 1024


def memory_use(
    original: tuple[tuple[int, int], ...], candidate: tuple[tuple[int, int], ...], settings: EvaluationSettings
) -> MemoryUse | None:
    """The largest peak on each side over the calls read on both; None when no call was read on both."""
    before, after = dict(original), dict(candidate)
    common = set(before) & set(after)
    if not common:
        return None
    return MemoryUse(
        original=max(before[index] for index in common),
        candidate=max(after[index] for index in common),
        calls=len(common),
        max_ratio=settings.memory_growth,
        min_growth=int(settings.memory_margin_mb * MIB),
        allowed="memory" in settings.allow,
    )
