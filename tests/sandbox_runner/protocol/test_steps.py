"""What crosses a process boundary inside the sandbox is a protocol dataclass too: each step's request (replay,
generate, a timing worker, a profile pass) and each file one step leaves for another (the calls file's header,
the calls the original does not repeat, the timing worker's figures, the timing sample, pytest's results).
Each survives the codec, and an unknown or a missing field fails loudly."""

from __future__ import annotations

import ast
import dataclasses
import json
import pickle

import pytest
from coderefine_sandbox import protocol
from coderefine_sandbox.behaviour import replay
from coderefine_sandbox.protocol import (
    CallsHeader,
    ProtocolError,
    ReplayRequest,
    TimingTally,
    TimingWorkerRequest,
    WorkerFigures,
    from_dict,
    from_json,
    read_calls,
    read_json,
    to_dict,
    to_json,
    write_calls,
    write_json,
)
from coderefine_sandbox.timing import steps as timing_steps
from coderefine_sandbox.timing.worker import pyperf_argv

from tests.sandbox_runner import samples
from tests.sandbox_runner.imports import SANDBOX_PACKAGE

RECORDS = samples.step_records()


def _name(record: object) -> str:
    return type(record).__name__


@pytest.mark.parametrize("record", RECORDS, ids=_name)
def test_every_step_record_survives_a_round_trip_through_json(record, tmp_path):
    assert from_json(type(record), to_json(record)) == record
    write_json(str(tmp_path / "record.json"), record)
    assert read_json(type(record), str(tmp_path / "record.json")) == record


@pytest.mark.parametrize("record", RECORDS, ids=_name)
def test_an_unknown_field_of_a_step_record_is_refused(record):
    data = to_dict(record)
    data["extra"] = 1
    with pytest.raises(ProtocolError, match=rf"unknown field 'extra' for {_name(record)}"):
        from_dict(type(record), data)


@pytest.mark.parametrize("record", RECORDS, ids=_name)
def test_a_missing_field_of_a_step_record_is_refused(record):
    data = to_dict(record)
    first = dataclasses.fields(record)[0].name  # type: ignore[arg-type]
    del data[first]
    with pytest.raises(ProtocolError, match=rf"{_name(record)} is missing field '{first}'"):
        from_dict(type(record), data)


def test_a_nested_field_is_refused_with_its_path():
    data = to_dict(samples.step_records()[0])
    data["tolerances"]["rel_tolerance"] = 0.1
    with pytest.raises(ProtocolError, match=r"ReplayRequest\.tolerances: unknown field 'rel_tolerance'"):
        from_dict(ReplayRequest, data)
    figures = to_dict(WorkerFigures(TimingTally(0.0, 0.0, 1, 0.0, 0.0, -1.0), (), {}, None))
    figures["tally"]["passes"] = "1"
    with pytest.raises(ProtocolError, match=r"WorkerFigures\.tally\.passes: expected int, got str"):
        from_dict(WorkerFigures, figures)


def test_the_calls_file_is_a_json_header_line_then_the_pickled_calls(tmp_path):
    path = str(tmp_path / "calls.pkl")
    header = CallsHeader(module="pkg.mod", recording=samples.recording_summary())
    records = [{"target": "f", "args": pickle.dumps(((1,), {}))}]
    write_calls(path, header, records)
    assert read_calls(path) == (header, records)
    with open(path, "rb") as fh:
        assert json.loads(fh.readline()) == to_dict(header)  # `head -1` shows what the recording gave


def test_a_calls_file_whose_header_differs_from_its_type_is_refused(tmp_path):
    path = tmp_path / "calls.pkl"
    header = {**to_dict(CallsHeader(module="mod", recording=None)), "calls": 3}
    path.write_bytes(json.dumps(header).encode() + b"\n" + pickle.dumps([]))
    with pytest.raises(ProtocolError, match="unknown field 'calls' for CallsHeader"):
        read_calls(str(path))
    # The layout before the header (one pickled dict) is no calls file either: refused, not misread.
    path.write_bytes(pickle.dumps({"records": []}, protocol=4))
    with pytest.raises(ProtocolError, match="CallsHeader: not JSON"):
        read_calls(str(path))


def test_a_step_refuses_a_request_it_cannot_read(tmp_path):
    data = to_dict(samples.step_records()[0])
    data["rel_tol"] = 1e-3  # the old flags do not come back as fields
    (tmp_path / "step.json").write_text(json.dumps(data))
    with pytest.raises(ProtocolError, match="unknown field 'rel_tol' for ReplayRequest"):
        replay.main([str(tmp_path / "step.json")])


def test_the_timing_worker_gives_pyperf_its_own_worker_command_line():
    calibrating = next(r for r in RECORDS if isinstance(r, TimingWorkerRequest) and r.loops is None)
    assert pyperf_argv(calibrating) == [
        *("--worker", "--quiet", "--values", "3", "--warmups", "1", "--min-time", "0.1"),
        *("-o", "/run/io-1/t.json", "--calibrate-loops"),
    ]
    timed = dataclasses.replace(calibrating, loops=128)
    assert pyperf_argv(timed)[-2:] == ["--loops", "128"]


def test_worker_figures_missing_are_none_and_unreadable_ones_fail_the_timing(tmp_path):
    path = tmp_path / "timing.figures.json"
    assert timing_steps._read_figures(str(path)) is None  # the worker died after pyperf's file: pyperf's alone
    path.write_text(json.dumps({"held_out": 0.0, "tampered": []}))  # the old side file's shape
    with pytest.raises(RuntimeError, match=r"the timing worker's figures cannot be read: .*WorkerFigures"):
        timing_steps._read_figures(str(path))


def _public_names(module: str) -> set[str]:
    """The names a protocol module defines at its top level (classes, functions, constants, aliases)."""
    tree = ast.parse((SANDBOX_PACKAGE / "protocol" / f"{module}.py").read_text(encoding="utf-8"))
    found = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            found.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found |= {target.id for target in targets if isinstance(target, ast.Name)}
    return {name for name in found if not name.startswith("_") and name != "T"}


def test_the_protocol_package_re_exports_every_public_name_of_its_modules():
    modules = sorted(path.stem for path in (SANDBOX_PACKAGE / "protocol").glob("*.py") if path.stem != "__init__")
    assert {"codec", "modes", "recording", "behaviour", "timing", "programs", "profiling"} <= set(modules)
    for module in modules:
        for name in _public_names(module):
            assert name in protocol.__all__, f"{module}.{name}"
            assert getattr(protocol, name) is getattr(getattr(protocol, module), name)
    assert sorted(protocol.__all__) == sorted(set(protocol.__all__))
