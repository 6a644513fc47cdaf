"""A 1.3x rewrite of a microsecond function is confirmed as such: the timing harness's own per-call cost (two
clock reads around each call) is measured in every worker process and kept out of both sides' times, so it no
longer dilutes the ratio towards 1.

The real CLI, the real sandbox, real pytest and timing on a small project written into tmp_path; the only
scripted part is the model's answer.
"""

from __future__ import annotations

import timeit

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timed]

ORIGINAL = """\
def sum_squares(values):
    total = 0
    count = 0
    for v in values:
        total += v * v
        count += 1
    return total if count else 0
"""
# The same loop without the counter it never needed: ~1.3x in a plain loop, on a call of ~1 us.
CANDIDATE = """\
def sum_squares(values):
    total = 0
    for v in values:
        total += v * v
    return total
"""
INPUTS = [list(range(n, n + 12)) for n in range(0, 120, 3)]  # 40 calls: ~30 us a pass, a 10 % floor


def _plain_loop_ratio() -> float:
    """Both versions in a plain loop over the test's inputs in this process: the best of many short rounds,
    interleaved (a short round is likelier to run without another process on its core)."""
    functions = []
    for source in (ORIGINAL, CANDIDATE):
        namespace: dict[str, object] = {}
        exec(source, namespace)
        functions.append(namespace["sum_squares"])
    best = [float("inf"), float("inf")]
    for _ in range(60):
        for side, func in enumerate(functions):
            best[side] = min(best[side], timeit.timeit("for x in I: f(x)", globals={"f": func, "I": INPUTS}, number=50))
    return best[0] / best[1]


def test_a_small_speedup_of_a_microsecond_function_is_confirmed_with_the_independent_ratio_inside(scripted, tmp_path):
    module = tmp_path / "squares.py"
    module.write_text(ORIGINAL)
    (tmp_path / "test_squares.py").write_text(
        f"import pytest\n\nfrom squares import sum_squares\n\n\n@pytest.mark.parametrize('values', {INPUTS!r})\n"
        "def test_sum_squares(values):\n    assert sum_squares(values) == sum(v * v for v in values)\n"
    )
    data = scripted("optimize", module, [CANDIDATE], ["VERDICT: STOP"], (), "--function", "sum_squares")
    (only,) = data["iterations"]
    independent = _plain_loop_ratio()
    assert 1.1 < independent < 1.6, independent  # the pair is what this test is about: a small speedup
    assert only["verdict"] == "accepted", only["reason"]
    low, high = only["speedup_ci"]
    assert low <= independent <= high, (only["speedup"], low, high, independent)
    timing = only["timing"]
    per_call = timing["original_seconds"] / len(INPUTS)
    # The harness's cost was measured and taken out: more than nothing, a fraction of a call.
    assert 0 < timing["harness_seconds_per_call"] < per_call
