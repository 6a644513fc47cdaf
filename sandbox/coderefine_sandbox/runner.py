"""The one program coderefine runs inside the sandbox for an evaluation.

    python -m coderefine_sandbox.runner REQUEST.json   ->   one JSON document on stdout

The request is a protocol.RunnerRequest, the document the report of its mode (protocol.BaselineReport or
protocol.CandidateReport). The runner never imports the user's code itself: tests, replays and timing
workers each run in a subprocess of their own (process.py), in a new session, killed as a group when
their time limit passes. So an infinite loop or a crash in candidate code becomes a fact in the report,
never a hung or broken runner. What each mode does is in modes.py.
"""

from __future__ import annotations

import json
import resource
import sys

from coderefine_sandbox.modes import baseline, candidate
from coderefine_sandbox.protocol import (
    REPORTS,
    ProfileReport,
    ProfileRequest,
    ReachReport,
    ReachRequest,
    RunnerReport,
    RunnerRequest,
    from_dict,
    to_json,
)


def run(data: object) -> RunnerReport | ProfileReport | ReachReport:
    """The report for a request (as read from JSON); a failure of the runner itself is in the report too."""
    mode = data.get("mode") if isinstance(data, dict) else None
    # scan's and reach's steps are imported for their own modes only: every evaluation starts a runner.
    if mode == "profile":  # `coderefine scan`: a whole project, its own request type
        from coderefine_sandbox.profiling.steps import profile

        try:
            return profile(from_dict(ProfileRequest, data))
        except Exception as exc:
            return ProfileReport(runner_error=f"{type(exc).__name__}: {exc}")
    if mode == "reach":  # `coderefine reach`: which project functions each test runs, its own request type
        from coderefine_sandbox.recording.reach_run import reach

        try:
            return reach(from_dict(ReachRequest, data))
        except Exception as exc:
            return ReachReport(runner_error=f"{type(exc).__name__}: {exc}")
    report_type = REPORTS.get(mode) if isinstance(mode, str) else None
    if report_type is None:
        # With no mode there is no report type to answer in: a host this far off must hear it loudly.
        raise SystemExit(f"coderefine_sandbox.runner: the request has no valid mode: {mode!r}")
    try:
        request = from_dict(RunnerRequest, data)
        return baseline(request) if request.mode == "baseline" else candidate(request)
    except Exception as exc:  # report, never die silently: the host turns this into a rejected candidate
        return report_type(runner_error=f"{type(exc).__name__}: {exc}")


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as fh:
        data = json.load(fh)
    report = run(data)
    # The host cannot always see this CPU time itself (bubblewrap's PID namespace and Docker's exec do not
    # pass their children's usage up), so the runner reports it: its own and every step's it waited for.
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    report.cpu_seconds = round(sum(u.ru_utime + u.ru_stime for u in usage), 3)
    sys.stdout.write(to_json(report))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
