"""sandbox/coderefine_sandbox/timing/steps.py: how many interleaved pairs a series times (the worker processes are
replaced by synthetic figures here; the real ones run in the e2e tests)."""

from __future__ import annotations

from dataclasses import replace

from coderefine_sandbox.timing import steps

from tests.sandbox_runner import samples


def _series(monkeypatch, tmp_path, ratios: list[float], earlier: steps.Series | None = None) -> int:
    """Pairs one series times when pair k's original takes ratios[k % len] times the candidate's seconds
    (a second series after `earlier` when given)."""

    def run(request, workspace, loops, tag, seed):
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


def test_an_undecided_series_that_looks_faster_runs_on_past_its_planned_pairs(monkeypatch, tmp_path):
    # About 1.17x, spread so that six pairs' 95% interval straddles the +10% floor.
    assert 6 < _series(monkeypatch, tmp_path, [1.3, 1.0, 1.25, 1.1, 1.35, 1.05]) <= 18


def test_a_series_that_looks_no_faster_ends_at_its_planned_pairs(monkeypatch, tmp_path):
    assert _series(monkeypatch, tmp_path, [1.05, 1.0, 1.1, 0.95, 1.0, 1.02]) <= 6


def test_a_second_series_is_decided_with_the_harness_figure_of_the_whole_run(monkeypatch, tmp_path):
    # The second series' originals read a harness cost of 0.8 ms a call, the first series' 18 none: the run's
    # figure (the median over both) stays 0, so the pairs are judged as timed: undecided, the series runs on.
    # Judged on its own figure, the same pairs would have read far faster and stopped at once.
    run = steps.WorkerRun(steady=1e-3, first=1e-3, loops=1, calls=1.0)
    earlier = {"original": [run] * 18, "candidate": [run] * 18}
    assert _series(monkeypatch, tmp_path, [1.2, 1.05], earlier) > 6
