"""coderefine/evaluation/requests.py: the runner's requests carry the user's settings, and nothing else
decides them (each default lives in the settings specs)."""

from __future__ import annotations

from pathlib import Path

from coderefine_sandbox.protocol import RunnerRequest, from_json, to_json

from coderefine.evaluation.project import Project
from coderefine.evaluation.requests import HASH_SEED, Learned, Requests
from coderefine.evaluation.settings import EvaluationSettings
from coderefine.evaluation.timing_policy import values_per_process
from coderefine.evaluation.verdicts import noise_floor
from coderefine.evaluation.workload import UserBenchmark
from coderefine.setting_specs import SPEC_BY_NAME

USER_SETTINGS = {
    "test_timeout": "timeout",
    "memory_mb": "memory_mb",
    "timing_pairs": "timing_pairs",
    "timing_budget": "timing_budget",
    "min_speedup": "min_speedup",
    "rel_tol": "rel_tol",
    "abs_tol": "abs_tol",
    "unordered": "unordered",
    "min_calls": "min_calls",
    "min_coverage": "min_coverage",
    "allow_insufficient_tests": "allow_insufficient_tests",
}


def _requests(tmp_path: Path, **settings: object) -> Requests:
    project = Project(
        root=tmp_path, target=Path("src/pkg/mod.py"), module_name="pkg.mod", import_root=Path("src"), tests=("tests",)
    )
    return Requests(
        EvaluationSettings(**settings),  # type: ignore[arg-type]
        project,
        ("f",),
        tmp_path / "original",
        tmp_path / "io",
    )


def test_evaluation_settings_take_their_defaults_from_the_settings_specs():
    settings = EvaluationSettings(measure_speed=True)
    for field, spec in USER_SETTINGS.items():
        assert getattr(settings, field) == SPEC_BY_NAME[spec].default, field


def test_the_baseline_request_carries_the_settings(tmp_path):
    requests = _requests(tmp_path, measure_speed=True, rel_tol=1e-3, abs_tol=1e-6, unordered=("f",), timing_pairs=4)
    request = requests.baseline(test_timeout=120.0)
    assert request.mode == "baseline"
    assert (request.workspace, request.original_workspace) == (str(tmp_path / "original"),) * 2
    assert request.io_dir == str(tmp_path / "io")
    assert (request.module_name, request.import_root, request.targets, request.tests) == (
        "pkg.mod",
        "src",
        ("f",),
        ("tests",),
    )
    assert (request.test_timeout, request.step_timeout) == (120.0, 120.0)
    assert request.calls_path == str(tmp_path / "io" / "calls.pkl")
    assert request.hash_seed == HASH_SEED
    assert (request.behavior.rel_tol, request.behavior.abs_tol, request.behavior.unordered) == (1e-3, 1e-6, ("f",))
    assert request.timing is not None
    assert request.timing.pairs == 4
    assert request.timing.loops is None  # calibrated by this very run
    assert not request.replay
    assert request.generate is None and request.generated is None and request.bench is None
    assert from_json(RunnerRequest, to_json(request)) == request


def test_a_candidate_request_uses_what_the_baseline_learned(tmp_path):
    requests = _requests(tmp_path, measure_speed=True, min_speedup=0.05, timing_values=3, gen_inputs=20)
    learned = Learned(loops=64, workload_seconds=5e-6, calls_recorded=12, generated_calls=7)
    request = requests.candidate(tmp_path / "cand-1", tmp_path / "io-1", 10.0, learned)
    assert request.mode == "candidate"
    assert request.workspace == str(tmp_path / "cand-1")
    assert request.step_timeout == 60.0  # never below a minute
    assert request.replay
    assert request.timing is not None
    assert request.timing.loops == 64
    assert request.timing.floor == noise_floor(0.05, 5e-6) == 0.20  # a microsecond workload needs more
    assert request.timing.values == values_per_process(3, 5e-6)
    assert request.generate is None
    assert request.generated is not None and request.generated.calls_path == str(tmp_path / "io" / "generated.pkl")
    assert request.calls_path == str(tmp_path / "io" / "calls.pkl")  # the baseline's recording
    assert request.changed_targets == ()  # not known: every target counts
    # The targets the candidate changed, in the run's order; a helper it changed is no target
    changed = requests.candidate(tmp_path / "cand-2", tmp_path / "io-2", 10.0, learned, changed=("_helper", "f"))
    assert changed.changed_targets == ("f",)
    assert from_json(RunnerRequest, to_json(changed)).changed_targets == ("f",)


def test_generation_is_asked_for_by_the_baseline_only_when_configured(tmp_path):
    assert _requests(tmp_path, measure_speed=False, gen_inputs=20).baseline(1.0).generate.count == 20
    no_generated = Learned(calls_recorded=3)
    assert (
        _requests(tmp_path, measure_speed=False, gen_inputs=20)
        .candidate(tmp_path, tmp_path, 1.0, no_generated)
        .generated
        is None
    )


def test_readability_runs_time_nothing_and_a_bench_goes_by_its_file(tmp_path):
    bench = UserBenchmark(file=Path("benches/bench_mod.py"), functions=("bench_f", "bench_g"))
    request = _requests(tmp_path, measure_speed=False, bench=bench).baseline(1.0)
    assert request.timing is None
    assert request.bench is not None
    assert (request.bench.file, request.bench.functions) == ("benches/bench_mod.py", ("bench_f", "bench_g"))
