"""coderefine/evaluation/settings.py: every run builds its EvaluationSettings from the user's settings by one
path (`from_settings`), and each setting that shapes an evaluation arrives there as it was resolved."""

from __future__ import annotations

from dataclasses import fields

from coderefine.evaluation.settings import EvaluationSettings
from coderefine.setting_specs import SPEC_BY_NAME
from coderefine.settings import resolve_settings

# The evaluation's field for each user setting it mirrors (the rest of its fields are the run's or its own).
MIRRORED = {
    "test_timeout": "timeout",
    "memory_mb": "memory_mb",
    "timing_pairs": "timing_pairs",
    "timing_budget": "timing_budget",
    "timing_value_seconds": "timing_value_seconds",
    "min_speedup": "min_speedup",
    "rel_tol": "rel_tol",
    "abs_tol": "abs_tol",
    "unordered": "unordered",
    "min_calls": "min_calls",
    "min_coverage": "min_coverage",
    "allow_insufficient_tests": "allow_insufficient_tests",
    "allow": "allow",
    "memory_growth": "memory_growth",
    "memory_margin_mb": "memory_margin_mb",
    "output_match": "output_match",
    "compare_stderr": "compare_stderr",
    "min_runs": "min_runs",
    "boundary_inputs": "boundary_inputs",
}
# Settings the run turns into an evaluation's field (the count of inputs to generate; the files the globs match).
DERIVED_BY_THE_RUN = {"gen_inputs", "timing_inputs"}
# A value other than the default for each of them, as a flag would give it.
GIVEN = {
    "timeout": 77.0,
    "memory_mb": 999,
    "timing_pairs": 9,
    "timing_budget": 0.7,
    "timing_value_seconds": 0.3,
    "min_speedup": 0.3,
    "rel_tol": 1e-4,
    "abs_tol": 1e-7,
    "unordered": "f,elsewhere",
    "min_calls": 11,
    "min_coverage": 0.5,
    "allow_insufficient_tests": True,
    "allow": "network,thread,memory",
    "memory_growth": 3.0,
    "memory_margin_mb": 16.0,
    "output_match": "numeric",
    "compare_stderr": True,
    "min_runs": 4,
    "boundary_inputs": 17,
}


def test_every_mirrored_field_is_a_setting_with_the_same_default():
    evaluation = EvaluationSettings(measure_speed=True)
    for field, name in MIRRORED.items():
        assert getattr(evaluation, field) == SPEC_BY_NAME[name].default, field


def test_from_settings_carries_every_setting_that_shapes_an_evaluation(tmp_path):
    settings = resolve_settings(GIVEN, tmp_path, {})
    evaluation = EvaluationSettings.from_settings(
        settings, measure_speed=True, targets=("f", "g"), pass_env=("HOME_DIR",), script=True
    )
    for field, name in MIRRORED.items():
        expected = getattr(settings, name)
        if name == "unordered":  # only this run's targets: a pyproject.toml setting may name other files' too
            expected = ("f",)
        assert getattr(evaluation, field) == expected, field
        assert getattr(evaluation, field) != SPEC_BY_NAME[name].default, f"{field}: the test must set it"
    assert (evaluation.measure_speed, evaluation.pass_env, evaluation.script) == (True, ("HOME_DIR",), True)


def test_a_setting_named_like_an_evaluation_field_is_mirrored():
    """A new setting that an evaluation reads must be added to from_settings (and to MIRRORED above)."""
    names = {field.name for field in fields(EvaluationSettings)}
    unmirrored = (names & set(SPEC_BY_NAME)) - set(MIRRORED.values()) - DERIVED_BY_THE_RUN
    assert not unmirrored, unmirrored
