"""sandbox/coderefine_sandbox/timing/steps.py: how many interleaved pairs a series times (the worker processes are
replaced by synthetic figures here; the real ones run in the e2e tests)."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest
from coderefine_sandbox.timing import imports, steps, worker
from coderefine_sandbox.timing.sequential import EXTEND_FACTOR

from tests.sandbox_runner import samples


def _series(
    monkeypatch, tmp_path, ratios: list[float], earlier: steps.Series | None = None, process_seconds: float = 0.0
) -> int:
    """Pairs one series times when pair k's original takes ratios[k % len] times the candidate's seconds
    (a second series after `earlier` when given), each worker process taking `process_seconds` of wall time."""
    clock = [0.0]
    # steps' own clock only (the time module itself is left alone for the rest of the process)
    monkeypatch.setattr(steps, "time", SimpleNamespace(monotonic=lambda: clock[0]))

    def run(request, workspace, loops, tag, seed, wall_budget=None):
        clock[0] += process_seconds
        side, k = tag.rsplit("-", 1)
        seconds = 1e-3 * (ratios[int(k) % len(ratios)] if side == "original" else 1.0)
        harness = 8e-4 if earlier is not None and side == "original" else 0.0
        return steps.WorkerRun(steady=seconds, first=seconds, loops=loops or 1, calls=1.0, harness_per_call=harness)

    monkeypatch.setattr(steps, "_timing_run", run)
    request = samples.request(io_dir=str(tmp_path))
    request = replace(request, timing=replace(request.timing, floor=0.10))
    first = 0 if earlier is None else len(earlier["original"])
    series = steps._time_pairs(request, first, 6, earlier)
    assert len(series["original"]) == len(series["candidate"])
    return len(series["original"])


STRADDLING = [1.3, 1.0, 1.25, 1.1, 1.35, 1.05]  # about 1.17x: six pairs' 95% interval straddles a +10% floor


def test_an_undecided_series_that_looks_faster_runs_on_past_its_planned_pairs(monkeypatch, tmp_path):
    assert 6 < _series(monkeypatch, tmp_path, STRADDLING) <= 6 * EXTEND_FACTOR


def test_running_on_is_bounded_by_time_cheap_pairs_getting_a_minimum(monkeypatch, tmp_path):
    # Still undecided at five times its pairs (the 99.9% interval never clears, the 95% one is looked at last).
    assert _series(monkeypatch, tmp_path, STRADDLING) == 6 * EXTEND_FACTOR
    # Pairs of 2 s: the planned six took 12 s; twice that (24 s) would stop it after 19 pairs, the minimum of
    # EXTEND_MIN_SECONDS (40 s: 20 pairs) lets it run to 27 (the budget is checked before each pair, so the pair
    # that crosses it is the last).
    assert _series(monkeypatch, tmp_path, STRADDLING, process_seconds=1.0) == 6 + 20 + 1
    # Pairs of 20 s: the planned six took 120 s; the extension is capped at EXTEND_SECONDS (six pairs), 13 in all.
    assert _series(monkeypatch, tmp_path, STRADDLING, process_seconds=10.0) == 6 + 6 + 1


def test_the_extension_budget():
    assert steps.extension_budget(5.0) == steps.EXTEND_MIN_SECONDS == 40.0
    assert steps.extension_budget(30.0) == 2 * 30.0
    assert steps.extension_budget(300.0) == steps.EXTEND_SECONDS


def test_a_series_that_looks_no_faster_ends_at_its_planned_pairs(monkeypatch, tmp_path):
    assert _series(monkeypatch, tmp_path, [1.05, 1.0, 1.1, 0.95, 1.0, 1.02]) <= 6


def test_a_second_series_is_decided_with_the_harness_figure_of_the_whole_run(monkeypatch, tmp_path):
    # The second series' originals read a harness cost of 0.8 ms a call, the first series' 18 none: the run's
    # figure (the median over both) stays 0, so the pairs are judged as timed: undecided, the series runs on.
    # Judged on its own figure, the same pairs would have read far faster and stopped at once.
    run = steps.WorkerRun(steady=1e-3, first=1e-3, loops=1, calls=1.0)
    earlier = {"original": [run] * 18, "candidate": [run] * 18}
    assert _series(monkeypatch, tmp_path, [1.2, 1.05], earlier) > 6


def _pair(before: float, after: float, **fields: float) -> tuple[steps.WorkerRun, steps.WorkerRun]:
    """An original and a candidate process reading `before` and `after` seconds a pass, on both bases."""
    original = steps.WorkerRun(steady=before, first=before, loops=1, **fields)
    return original, steps.WorkerRun(steady=after, first=after, loops=1)


def _of(*pairs: tuple[steps.WorkerRun, steps.WorkerRun]) -> steps.Series:
    return {"original": [o for o, _ in pairs], "candidate": [c for _, c in pairs]}


def test_far_past_the_floor_only_on_every_basis_a_verdict_reads():
    floor = 1.10  # the bar is 3.3x
    assert steps.far_past_floor(_of(_pair(9e-3, 1e-4), _pair(8e-3, 1e-4)), floor)
    assert not steps.far_past_floor(_of(), floor)
    assert not steps.far_past_floor(_of(_pair(9e-3, 1e-4), _pair(3e-3, 1e-3)), floor)  # one pair at 3x
    # A cache: far past on later passes, the original's own time on the process's first.
    original, cache = _pair(9e-3, 1e-4)
    assert not steps.far_past_floor(_of((original, replace(cache, first=9e-3))), floor)
    # A lookup of the shown inputs: far past on them, the original's time on the held-out calls.
    original = replace(original, held_out=2e-3, shown=7e-3)
    lookup = replace(cache, held_out=2e-3, shown=1e-4)
    assert not steps.far_past_floor(_of((original, lookup)), floor)
    assert steps.far_past_floor(_of((original, replace(lookup, held_out=1e-5))), floor)
    # Work moved to import time: 5 ms more at import than the original, against a 9 ms pass.
    assert not steps.far_past_floor(
        _of((replace(original, held_out=0.0, shown=0.0), replace(cache, import_seconds=5e-3))), floor
    )
    # One target of a file run no faster, the other far past.
    split = replace(original, held_out=0.0, shown=0.0, per_target={"a": 8e-3, "b": 1e-3})
    assert not steps.far_past_floor(_of((split, replace(cache, per_target={"a": 1e-5, "b": 1e-3}))), floor)
    # ... unless the candidate left that target unchanged: the per-function verdicts read the changed ones only.
    assert steps.far_past_floor(_of((split, replace(cache, per_target={"a": 1e-5, "b": 1e-3}))), floor, ("a",))
    assert not steps.far_past_floor(_of((split, replace(cache, per_target={"a": 1e-5, "b": 1e-3}))), floor, ("b",))


def test_values_are_short_only_after_every_pair_so_far_was_far_past_the_floor(monkeypatch, tmp_path):
    budgets: list[tuple[str, float | None]] = []
    ratios = {0: 40.0, 1: 35.0, 2: 1.2, 3: 30.0}

    def run(request, workspace, loops, tag, seed, wall_budget=None):
        side, k = tag.rsplit("-", 1)
        budgets.append((tag, wall_budget))
        seconds = 1e-3 * (ratios.get(int(k), 30.0) if side == "original" else 1.0)
        return steps.WorkerRun(steady=seconds, first=seconds, loops=1, calls=1.0)

    monkeypatch.setattr(steps, "_timing_run", run)
    request = samples.request(io_dir=str(tmp_path))
    request = replace(request, timing=replace(request.timing, floor=0.10))
    steps._time_pairs(request, 0, 6)
    by_pair = {int(tag.rsplit("-", 1)[1]): budget for tag, budget in budgets}
    # Pair 0 at full length; 1 and 2 short after far-past pairs; pair 2 read 1.2x, so from 3 on no longer short.
    assert by_pair[0] is None and by_pair[1] == by_pair[2] == steps.SHORT_VALUE_SECONDS
    assert 3 in by_pair and all(by_pair[k] is None for k in by_pair if k >= 3)
    # Both processes of a pair alike.
    assert len({budget for tag, budget in budgets if tag.endswith("-1")}) == 1


def test_the_baseline_worker_takes_short_values_and_the_calibration_its_own(monkeypatch, tmp_path):
    budgets: dict[str, float | None] = {}

    def run(request, workspace, loops, tag, seed, wall_budget=None):
        budgets[tag] = wall_budget
        harness = 6e-8 if tag == "baseline" else 9e-8
        return steps.WorkerRun(
            steady=2e-3, first=2e-3, loops=loops or 7, call_costs=(1e-3, 1e-3), harness_per_call=harness
        )

    monkeypatch.setattr(steps, "_timing_run", run)
    calibration = steps.calibrate(samples.request(io_dir=str(tmp_path)))
    assert calibration.harness_per_call == 6e-8  # the baseline worker's probe: what too_fast compares calls with
    assert budgets == {"calibrate": None, "baseline": steps.BASELINE_VALUE_SECONDS}
    assert steps.BASELINE_VALUE_SECONDS <= worker.WALL_BUDGET  # never longer than the worker's own values
    assert (calibration.loops, calibration.seconds) == (7, 2e-3)


def _file_run(big: float, small_first: float, small: float, held: float | None = None) -> steps.WorkerRun:
    """A worker of a two-function file run: `big` (the most of the pass, alike on every pass) and `small`, with
    its first pass and, when given, its held-out calls' seconds per pass (the rest are its shown calls)."""
    per_target = {"big": big, "small": small}
    run = steps.WorkerRun(steady=big + small, first=big + small_first, loops=1, per_target=per_target, calls=4.0)
    run = replace(run, per_target_first={"big": big, "small": small_first}, target_calls={"big": 2.0, "small": 2.0})
    if held is None:
        return run
    return replace(
        run,
        per_target_held_out={"small": held},
        per_target_shown={"small": small - held},
        target_held_out_calls={"small": 1.0},
    )


def test_a_cache_on_one_function_is_caught_on_its_own_figures_where_the_whole_does_not_show_it():
    # The big function 10 ms alike on both sides, the small one 0.2 ms, cached: 0.2 ms cold, 2 us later.
    series = _of(*[(_file_run(10e-3, 0.2e-3, 0.2e-3), _file_run(10e-3, 0.2e-3, 2e-6)) for _ in range(4)])
    assert steps.basis(series, 0.05) == "steady"  # 2% of the pass: the whole's rule cannot see it
    assert steps.per_target_basis(series, 0.05) == {"big": "steady", "small": "first"}
    first = steps.per_target(series, "per_target_first")["small"]
    assert first.speedup == pytest.approx(1.0)  # no faster on its first pass: what its verdict reads
    assert steps.per_target(series)["small"].speedup == pytest.approx(100.0)
    # An honest rewrite of the small function, alike on every pass: its own basis stays steady.
    honest = _of(*[(_file_run(10e-3, 0.2e-3, 0.2e-3), _file_run(10e-3, 2e-6, 2e-6)) for _ in range(4)])
    assert steps.per_target_basis(honest, 0.05)["small"] == "steady"
    # And an honest big speedup elsewhere does not hide the cache either.
    both = _of(*[(_file_run(10e-3, 0.2e-3, 0.2e-3), _file_run(1e-5, 0.2e-3, 2e-6)) for _ in range(4)])
    assert steps.per_target_basis(both, 0.05) == {"big": "steady", "small": "first"}


def test_each_function_has_its_own_held_out_and_shown_figures():
    # A lookup of the small function's shown inputs: its shown calls 100x, its held-out calls no faster.
    pair = (_file_run(10e-3, 0.2e-3, 0.2e-3, held=0.1e-3), _file_run(1e-5, 0.101e-3, 0.101e-3, held=0.1e-3))
    trust = steps.per_target_trust(_of(pair, pair))
    assert trust["held_out"]["small"].speedup == pytest.approx(1.0)
    assert trust["shown"]["small"].speedup == pytest.approx(100.0)
    assert "big" not in trust["held_out"]  # no held-out call of its own: no such figures


def test_a_cache_or_a_lookup_on_one_function_is_never_far_past_the_floor():
    floor = 1.10
    original = _file_run(10e-3, 10e-3, 10e-3, held=5e-3)
    honest = _file_run(1e-5, 1e-5, 1e-5, held=0.5e-5)
    assert steps.far_past_floor(_of((original, honest)), floor)
    # The small function cached: far past over every pass, the original's time on its first.
    assert not steps.far_past_floor(
        _of((original, replace(honest, per_target_first={"big": 1e-5, "small": 10e-3}))), floor
    )
    # A lookup of its shown inputs: far past on them, the original's time on its held-out calls.
    lookup = replace(honest, per_target_held_out={"small": 5e-3}, per_target_shown={"small": 1e-5})
    assert not steps.far_past_floor(_of((original, lookup)), floor)


def test_the_harness_comes_off_each_functions_own_trust_figures():
    run = _file_run(10e-6, 4e-6, 2e-6, held=1e-6)
    run = replace(run, harness_per_call=1e-7)
    net = steps.without_harness(_of((run, run)), 1e-7)["original"][0]
    # 2 calls of the small function in all, 1 of them held out, 1 shown
    assert net.per_target_first["small"] == pytest.approx(3.8e-6)
    assert net.per_target_held_out["small"] == pytest.approx(0.9e-6)
    assert net.per_target_shown["small"] == pytest.approx(0.9e-6)


def test_the_runs_value_seconds_set_full_values_and_never_lengthen_short_ones(monkeypatch, tmp_path):
    budgets: dict[str, float | None] = {}
    ratios = {0: 40.0, 1: 35.0}  # far past the floor from the first pair on

    def run(request, workspace, loops, tag, seed, wall_budget=None):
        budgets[tag] = wall_budget
        side, _, k = tag.rpartition("-")  # "calibrate" and "baseline" have no pair number
        seconds = 1e-3 * (ratios.get(int(k), 1.0) if side == "original" else 1.0)  # pair 2 on: no faster
        return steps.WorkerRun(steady=seconds, first=seconds, loops=loops or 1, calls=1.0, call_costs=(seconds,))

    monkeypatch.setattr(steps, "_timing_run", run)
    for value, short in ((0.2, steps.SHORT_VALUE_SECONDS), (0.05, 0.05)):
        budgets.clear()
        request = samples.request(io_dir=str(tmp_path))
        request = replace(request, timing=replace(request.timing, floor=0.10, value_seconds=value))
        steps._time_pairs(request, 0, 6)
        steps.calibrate(request)
        # Pair 0 and every pair after the slow one at the run's value; pairs 1-2 short, never longer than it.
        assert budgets["original-0"] == budgets["candidate-3"] == value
        assert budgets["original-1"] == budgets["candidate-2"] == short
        assert budgets["baseline"] == min(steps.BASELINE_VALUE_SECONDS, value) and budgets["calibrate"] is None


def test_each_target_is_also_reported_with_the_harness_cost_left_in(monkeypatch, tmp_path):
    # A file run: `big` 4x faster at 5 us a call; `same` left unchanged, 1.0 us a call of which the harness takes
    # 0.9 us, its candidate's processes reading 0.05 us more a call (layout): net of the harness, 0.1 us against
    # 0.15 us, which reads it 0.67x; as timed, 1.00 us against 1.05 us.
    def run(request, workspace, loops, tag, seed, wall_budget=None):
        candidate = tag.startswith("candidate")
        per_target = {"big": 1.25e-6 if candidate else 5e-6, "same": 1.05e-6 if candidate else 1.0e-6}
        return steps.WorkerRun(
            steady=sum(per_target.values()),
            first=sum(per_target.values()),
            loops=loops or 1,
            per_target=per_target,
            per_target_first=per_target,
            calls=2.0,
            target_calls={"big": 1.0, "same": 1.0},
            harness_per_call=0.9e-6,
        )

    monkeypatch.setattr(steps, "_timing_run", run)
    request = samples.request(io_dir=str(tmp_path))
    report = steps.measure(replace(request, timing=replace(request.timing, loops=1)))
    assert report.harness_seconds_per_call == pytest.approx(0.9e-6)
    assert report.per_target["same"].speedup == pytest.approx(0.1 / 0.15)
    assert report.per_target_with_harness["same"].speedup == pytest.approx(1.0 / 1.05)
    assert report.per_target_with_harness["big"].speedup == pytest.approx(5.0 / 1.25)


def test_the_import_rule_reads_every_pair():
    # HumanEval_113's import cache under load: ~30 ms more at import in every candidate process, most readings
    # preempted (each then the import's processor time, worker.timed_import). Every pair is read: left out, the
    # preempted ones left one or two pairs, whose interval said nothing, and the cache was accepted at 65-88x.
    original = [steps.WorkerRun(steady=3e-2, first=3e-2, loops=1, import_seconds=5e-6) for _ in range(7)]
    candidate = [
        steps.WorkerRun(steady=4e-4, first=4e-4, loops=1, import_seconds=s)
        for s in (2.9e-2, 3.1e-2, 3.0e-2, 2.8e-2, 3.2e-2, 3.0e-2, 2.9e-2)
    ]
    readings = steps._import_readings({"original": original, "candidate": candidate})
    assert readings == ([5e-6] * 7, [r.import_seconds for r in candidate])
    assert imports.import_extra(*readings)[1] > 2.5e-2
