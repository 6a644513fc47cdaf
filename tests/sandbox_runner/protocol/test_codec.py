"""sandbox/coderefine_sandbox/protocol/: strict, typed requests and reports in both directions."""

from __future__ import annotations

import json

import pytest
from coderefine_sandbox.protocol import (
    BaselineReport,
    CandidateReport,
    ProtocolError,
    ReplayReport,
    RunnerRequest,
    from_dict,
    from_json,
    to_dict,
    to_json,
)
from coderefine_sandbox.runner import run

from tests.sandbox_runner import samples


@pytest.mark.parametrize(
    ("kind", "record"),
    [
        (RunnerRequest, samples.request()),
        (RunnerRequest, samples.request(mode="baseline", timing=None, bench=None, generated=None)),
        (BaselineReport, samples.baseline_report()),
        (BaselineReport, BaselineReport(runner_error="boom")),
        (CandidateReport, samples.candidate_report()),
        (CandidateReport, CandidateReport()),
    ],
)
def test_every_record_survives_a_round_trip_through_json(kind, record):
    text = to_json(record)
    assert from_json(kind, text) == record
    assert json.loads(text) == to_dict(record)


def test_to_dict_writes_plain_json_values():
    data = to_dict(samples.request())
    assert data["targets"] == ["f", "C.g"]  # tuples become lists
    assert data["behavior"] == {"rel_tol": 1e-6, "abs_tol": 0.0, "unordered": ["f"]}
    assert data["generate"] is None


def test_an_unknown_field_is_refused_naming_the_type_and_the_field():
    data = to_dict(samples.request())
    data["rel_tolerance"] = 1e-3
    with pytest.raises(ProtocolError, match=r"unknown field 'rel_tolerance' for RunnerRequest"):
        from_dict(RunnerRequest, data)


def test_an_unknown_nested_field_is_refused_with_its_path():
    data = to_dict(samples.candidate_report())
    data["timing"]["estimates"]["steady"]["median"] = 1.0
    with pytest.raises(ProtocolError, match=r"CandidateReport\.timing\.estimates\['steady'\]: unknown field 'median'"):
        from_dict(CandidateReport, data)


def test_a_missing_field_is_refused_naming_the_type_and_the_field():
    data = to_dict(samples.request())
    del data["behavior"]["rel_tol"]  # no silent default: the host must say which tolerance
    with pytest.raises(ProtocolError, match=r"RunnerRequest\.behavior: BehaviorTolerances is missing field 'rel_tol'"):
        from_dict(RunnerRequest, data)


def test_a_field_with_a_default_must_still_be_present():
    data = to_dict(CandidateReport())
    del data["cpu_seconds"]
    with pytest.raises(ProtocolError, match="CandidateReport is missing field 'cpu_seconds'"):
        from_dict(CandidateReport, data)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("capture",), [500, 1024], r"RunnerRequest\.capture: expected an object for CaptureLimits, got list"),
        (("tests",), "tests/test_mod.py", r"RunnerRequest\.tests: expected a list, got str"),
        (("test_timeout",), "30", r"RunnerRequest\.test_timeout: expected float, got str"),
        (("hash_seed",), True, r"RunnerRequest\.hash_seed: expected int, got bool"),
        (("hash_seed",), 0.5, r"RunnerRequest\.hash_seed: expected int, got float"),
        (("replay",), 1, r"RunnerRequest\.replay: expected bool, got int"),
        (("mode",), "fast", r"RunnerRequest\.mode: expected one of 'baseline', 'candidate', got 'fast'"),
        (("behavior",), None, r"RunnerRequest\.behavior: expected an object for BehaviorTolerances, got NoneType"),
        (("timing", "loops"), "128", r"RunnerRequest\.timing\.loops: expected int, got str"),
        (("bench", "functions", 0), 3, r"RunnerRequest\.bench\.functions\[0\]: expected str, got int"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_with_its_path(path, value, message):
    data = to_dict(samples.request())
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(ProtocolError, match=message):
        from_dict(RunnerRequest, data)


def test_an_int_is_a_float_but_stays_a_float():
    data = to_dict(samples.request())
    data["test_timeout"] = 30
    decoded = from_dict(RunnerRequest, data)
    assert decoded.test_timeout == 30.0
    assert isinstance(decoded.test_timeout, float)


def test_a_fixed_size_tuple_checks_its_length_and_a_dict_its_values():
    data = to_dict(samples.candidate_report())
    data["timing"]["ci"] = [1.3]
    with pytest.raises(ProtocolError, match=r"CandidateReport\.timing\.ci: expected 2 items, got 1"):
        from_dict(CandidateReport, data)
    data = to_dict(samples.baseline_report())
    data["capture"]["counts"]["f"] = "41"
    with pytest.raises(ProtocolError, match=r"BaselineReport\.capture\.counts\['f'\]: expected int"):
        from_dict(BaselineReport, data)


def test_not_json_and_not_an_object_are_refused():
    with pytest.raises(ProtocolError, match="CandidateReport: not JSON"):
        from_json(CandidateReport, "Traceback (most recent call last):")
    with pytest.raises(ProtocolError, match="expected an object for CandidateReport, got list"):
        from_json(CandidateReport, "[]")
    with pytest.raises(ProtocolError, match="not a protocol record"):
        to_dict({"tests": None})


def test_replay_report_problem_and_differs():
    assert not samples.replay_report().problem
    assert samples.replay_report().differs  # one mismatch
    failed = ReplayReport.failed("replaying the recorded calls crashed")
    assert failed.problem == "replaying the recorded calls crashed"
    unimportable = ReplayReport(0, 3, (), (), None, (), "SyntaxError: bad", None)
    assert unimportable.problem == "the module cannot be imported: SyntaxError: bad"


def test_the_runner_answers_a_request_it_cannot_read_with_a_report_naming_the_field():
    data = to_dict(samples.request())
    data["timing"]["pairz"] = 6
    report = run(data)
    assert isinstance(report, CandidateReport)
    assert report.tests is None
    assert report.runner_error is not None
    assert "ProtocolError: RunnerRequest.timing: unknown field 'pairz' for TimingParameters" in report.runner_error


def test_the_runner_refuses_a_request_without_a_mode():
    with pytest.raises(SystemExit, match="no valid mode"):
        run({"workspace": "/tmp"})
