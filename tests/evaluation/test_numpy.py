"""numpy in the real sandbox: arrays recorded while the tests run and compared call by call with their dtype,
shape, NaN in the same place, and an argument array changed in place; timed with native pools of one thread."""

from __future__ import annotations

import pytest

from tests.sandbox_runner import samples

ORIGINAL = """
import numpy as np


def scaled(values, out):
    result = np.empty(values.shape, dtype=np.float64)
    for i in range(values.shape[0]):
        result[i] = values[i] * 2.0
        out[i] = values[i] + 1.0
    return result
"""
# The project's tests only look at the shape: the recorded calls are what judge the candidates below.
TESTS = """
import numpy as np

from mod import scaled


def test_scaled():
    for values in (np.array([1.0, np.nan, 3.0]), np.arange(4.0), np.array([np.nan, 0.5])):
        out = np.zeros(values.shape)
        assert scaled(values, out).shape == values.shape
"""
VECTORISED = "import numpy as np\n\n\ndef scaled(values, out):\n    out[:] = values + 1.0\n    return values * 2.0\n"
# Two faults in one candidate, on different calls (a call reports its first difference): another dtype
# returned when there is a NaN, `out` left unwritten when there is none.
FLOAT32_NOT_IN_PLACE = """
import numpy as np


def scaled(values, out):
    if np.isnan(values).any():
        out[:] = values + 1.0
        return (values * 2.0).astype(np.float32)
    return values * 2.0
"""
NAN_AS_ZERO = VECTORISED.replace("return values * 2.0", "return np.nan_to_num(values * 2.0)")


@pytest.mark.slow
def test_arrays_are_compared_with_dtype_nan_and_in_place_changes(make_project):
    pytest.importorskip("numpy")
    from coderefine.evaluation.evaluator import SandboxEvaluator
    from coderefine.evaluation.project import resolve_project
    from coderefine.evaluation.settings import EvaluationSettings
    from coderefine.refine.candidate import original_candidate
    from coderefine.sandboxes.registry import make_sandbox

    root = make_project({"mod.py": ORIGINAL, "test_mod.py": TESTS})
    settings = EvaluationSettings(measure_speed=False)
    evaluator = SandboxEvaluator(resolve_project(root / "mod.py"), ("scaled",), make_sandbox("process"), settings)
    try:
        facts = evaluator.baseline(ORIGINAL)
        judged = {
            name: evaluator.evaluate(original_candidate(code)).behavior
            for name, code in (
                ("vectorised", VECTORISED),
                ("float32, not in place", FLOAT32_NOT_IN_PLACE),
                ("nan as zero", NAN_AS_ZERO),
            )
        }
    finally:
        evaluator.close()
    assert facts.calls_recorded == 3
    assert all(report is not None for report in judged.values())
    # NaN where the original has NaN is equal; a vectorised rewrite writing `out` as the loop did is right.
    vectorised = judged["vectorised"]
    assert vectorised is not None and vectorised.calls_compared == 3 and vectorised.equivalent, vectorised
    kinds = {name: {m.kind for m in report.examples} for name, report in judged.items() if report is not None}
    assert kinds["float32, not in place"] == {"return", "mutation"}
    returned = [m for m in judged["float32, not in place"].examples if m.kind == "return"]  # type: ignore[union-attr]
    assert "float32" in returned[0].got, returned
    assert kinds["nan as zero"] == {"return"}
    # Only the call with a NaN differs when NaN becomes 0: NaN is compared by place, not by ==.
    assert judged["nan as zero"].mismatches == 2  # type: ignore[union-attr]


def test_native_thread_pools_are_one_thread_in_every_timing_worker(tmp_path):
    from coderefine_sandbox.timing.steps import timing_env

    env = timing_env(samples.request(io_dir=str(tmp_path)), str(tmp_path), 7)
    assert env["PYTHONHASHSEED"] == "7"
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        assert env[name] == "1"
