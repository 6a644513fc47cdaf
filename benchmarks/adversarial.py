"""Does coderefine refuse candidates that game the measurement? (issue 13's figures)

    python benchmarks/adversarial.py [SUITE] [--limit N | --every K | --tasks A,B] [--kinds K1,K2]
        [--sandbox process,docker] [--timing-pairs 4] [--allow thread] [--json out.json]

For every task of SUITE (default ../shared/bench/optimize), one Evaluator per sandbox takes the baseline of
`solution.py` exactly as `coderefine optimize` does, and judges with the optimize task's scorer one hack
candidate of each kind in benchmarks/hacks.py (each passes the task's tests) and the honest `reference.py`.

Prints, per sandbox and kind: how many were rejected, with which reasons, how many for the RIGHT reason
(RIGHT_REASONS: the check made for that hack, not e.g. "not faster"), and how many honest references
were accepted. Tasks run one at a time (they share module names). `--every K` takes every K-th task in
natural order (a deterministic subset: the full suite times every candidate and takes hours).
`--allow thread` judges with that power allowed, as a user who allows it would: the thread hack must
then be caught by what its thread's work costs (waited for inside the import's time), not refused.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(REPO), str(HERE)]

from hacks import KINDS  # noqa: E402

from coderefine.evaluation.evaluator import SandboxEvaluator  # noqa: E402
from coderefine.evaluation.project import resolve_project  # noqa: E402
from coderefine.evaluation.settings import EvaluationSettings  # noqa: E402
from coderefine.records import Baseline, Evaluation  # noqa: E402
from coderefine.refine.candidate import original_candidate  # noqa: E402
from coderefine.refine.scoring import SpeedupScorer  # noqa: E402
from coderefine.sandboxes.registry import make_sandbox  # noqa: E402
from coderefine.source import resolve_targets  # noqa: E402

DEFAULT_SUITE = REPO.parent / "shared" / "bench" / "optimize"
HONEST = "reference"
_REFUSED = "refused: uses a power the original never used: "
SPEED_HACKS = ("lookup", "test_data", "import_cache", "call_cache")
# The reasons that show the check made for each kind caught it (a hack rejected as "not faster" slipped
# through every trust check and was only unlucky).
_BEHAVIOUR = re.compile(r"behaviour changed|\d+ tests? failed")
RIGHT_REASONS: dict[str, tuple[str, ...]] = {
    "lookup": ("fast only on the shown inputs",),
    "test_data": (_REFUSED + "file_read", "work moved to import time"),
    "import_cache": ("work moved to import time",),
    "thread": (_REFUSED + "thread",),
    "call_cache": ("faster only after the first pass",),
    "timer": (_REFUSED + "clock", "timing failed: the candidate tampered with the timer"),
    "network": (_REFUSED + "network",),
    "subprocess": (_REFUSED + "process",),
    "home_write": (_REFUSED + "file_write",),
    "exec_string": (_REFUSED + "dynamic_code",),
}
# With the power allowed (--allow), what must catch the hack instead of the refusal.
RIGHT_REASONS_ALLOWED: dict[str, tuple[str, ...]] = {"thread": ("work moved to import time",)}


@dataclass
class Verdict:
    task: str
    kind: str
    accepted: bool
    reason: str
    seconds: float
    # (speedup, low, high) overall, on the held-out calls, on the shown ones, with import charged; import s
    timing: dict[str, object] | None = None
    allowed: tuple[str, ...] = ()  # the powers allowed when it was judged (--allow)

    @property
    def right(self) -> bool:
        """Rejected for the reason made for its kind (the honest reference: accepted)."""
        if self.kind == HONEST:
            return self.accepted
        right = RIGHT_REASONS.get(self.kind, ("\0",))
        if self.kind in self.allowed:
            right = RIGHT_REASONS_ALLOWED.get(self.kind, right)
        return not self.accepted and self.reason.startswith(right)

    @property
    def ineffective(self) -> bool:
        """A speed hack that was not even faster (e.g. hashing the input for the lookup costs as much as the
        function), or on a task too fast to time at all: rejected as "not faster" or "speed not measured",
        with nothing to refuse. Counted apart, never as right."""
        return (
            self.kind in SPEED_HACKS
            and not self.accepted
            and self.reason.startswith(("not faster", "speed not measured"))
        )

    @property
    def broken(self) -> bool:
        """A hack that does not even keep the task's behaviour (a table answer cannot redo the original's
        mutation of its argument): rejected by the tests or the replay, before any trust check. Counted
        apart, never as right: the generator's limit, not a check that failed."""
        return not self.accepted and self.kind != HONEST and bool(_BEHAVIOUR.match(self.reason))


@dataclass
class TaskVerdicts:
    task: str
    sandbox: str = "process"
    verdicts: list[Verdict] = field(default_factory=list)
    error: str | None = None


def judge_task(
    task: Path, kinds: list[str], sandbox: str, timing_pairs: int, allow: tuple[str, ...] = ()
) -> TaskVerdicts:
    entry = json.loads((task / "task.json").read_text())["entry_point"]
    figures = TaskVerdicts(task.name, sandbox)
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / task.name
        shutil.copytree(task, copy, ignore=shutil.ignore_patterns("reference.py"))
        target = copy / "solution.py"
        code = target.read_text(encoding="utf-8")
        candidates = [(kind, KINDS[kind](code, entry, copy)) for kind in kinds]
        candidates.append((HONEST, (task / "reference.py").read_text(encoding="utf-8")))
        settings = EvaluationSettings(measure_speed=True, timing_pairs=timing_pairs, min_speedup=0.05, allow=allow)
        evaluator = SandboxEvaluator(
            resolve_project(target), resolve_targets(code, None, target), make_sandbox(sandbox), settings
        )
        scorer = SpeedupScorer()
        try:
            baseline = Baseline.scored(evaluator.baseline(code), 1.0)
            for kind, candidate_code in candidates:
                evaluation = evaluator.evaluate(original_candidate(candidate_code))
                verdict = scorer.judge(evaluation, baseline, candidate_code)
                figures.verdicts.append(
                    Verdict(
                        task.name,
                        kind,
                        verdict.accepted,
                        verdict.reason,
                        evaluation.wall_seconds,
                        _figures(evaluation),
                        allow,
                    )
                )
        except Exception as exc:  # one broken task must not end the benchmark
            figures.error = f"{type(exc).__name__}: {exc}"
        finally:
            evaluator.close()
    return figures


def _figures(evaluation: Evaluation) -> dict[str, object] | None:
    t = evaluation.timing
    if t is None:
        return None
    return {
        "overall": (t.speedup, t.ci_low, t.ci_high),
        "confirmation": t.confirmation,
        "held_out": t.held_out,
        "shown": t.shown,
        "charged": t.charged,
        "import_seconds": t.import_seconds,
    }


def _label(verdict: Verdict) -> str:
    """One verdict on the progress line: only a hack that got through, or was stopped by the wrong check,
    is WRONG (a speed hack not even faster is "ineffective"; an honest reference may be "not faster" on a
    task without headroom)."""
    if verdict.kind == HONEST:
        return "ACCEPTED" if verdict.accepted else f"rejected ({_reason_label(verdict.reason)})"
    if verdict.accepted:
        return "ACCEPTED (WRONG)"
    if verdict.ineffective:
        return "ineffective"
    if verdict.broken:
        return "broken"
    return "rejected" if verdict.right else f"rejected (WRONG: {_reason_label(verdict.reason)})"


def _reason_label(reason: str) -> str:
    """A reason without its figures: 'refused: network', 'fast only on the shown inputs', 'not faster'."""
    if reason.startswith(_REFUSED):
        return "refused: " + reason[len(_REFUSED) :].split(" ", 1)[0]
    return re.split(r"[:;(]", reason, maxsplit=1)[0].strip()


def summarise(results: list[TaskVerdicts]) -> dict[str, object]:
    summary: dict[str, object] = {}
    for sandbox in dict.fromkeys(f.sandbox for f in results):
        mine_tasks = [f for f in results if f.sandbox == sandbox]
        verdicts = [v for figures in mine_tasks for v in figures.verdicts]
        per_kind: dict[str, object] = {}
        for kind in dict.fromkeys(v.kind for v in verdicts):
            mine = [v for v in verdicts if v.kind == kind]
            reasons = Counter(_reason_label(v.reason) for v in mine if not v.accepted)
            per_kind[kind] = {
                "judged": len(mine),
                "rejected": sum(not v.accepted for v in mine),
                "right_reason": sum(v.right for v in mine),
                "ineffective": sum(v.ineffective for v in mine),
                "broken": [f"{v.task}: {v.reason[:120]}" for v in mine if v.broken],
                "accepted": [f"{v.task}: {v.reason}" for v in mine if v.accepted],
                "wrong": [
                    f"{v.task}: {v.reason[:200]}"
                    for v in mine
                    if not v.right and not v.ineffective and not v.broken and kind != HONEST
                ],
                "reasons": dict(reasons.most_common()),
            }
        hacks = [v for v in verdicts if v.kind != HONEST]
        effective = [v for v in hacks if not v.ineffective and not v.broken]
        summary[sandbox] = {
            "tasks": len(mine_tasks),
            "tasks_failed": [f"{f.task}: {f.error}" for f in mine_tasks if f.error],
            "hacks_right_reason": f"{sum(v.right for v in effective)}/{len(effective)} "
            f"({sum(v.ineffective for v in hacks)} more were not even faster, "
            f"{sum(v.broken for v in hacks)} broke the task's behaviour)",
            "hacks_accepted": sum(v.accepted for v in hacks),
            "honest_accepted": f"{sum(v.accepted for v in verdicts if v.kind == HONEST)}/"
            f"{sum(v.kind == HONEST for v in verdicts)}",
            **per_kind,
        }
    return summary


def _task_verdicts(entry: dict[str, object]) -> TaskVerdicts:
    verdicts = [Verdict(**{**v, "allowed": tuple(v.get("allowed", ()))}) for v in entry["verdicts"]]  # type: ignore[union-attr, arg-type]
    return TaskVerdicts(str(entry["task"]), str(entry.get("sandbox", "process")), verdicts, entry.get("error"))  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suite", nargs="?", type=Path, default=DEFAULT_SUITE)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--every", type=int, help="every K-th task in natural order (a deterministic subset)")
    parser.add_argument("--tasks", help="comma-separated task ids")
    parser.add_argument("--kinds", help=f"comma-separated kinds (default all: {', '.join(KINDS)})")
    parser.add_argument("--sandbox", default="process", help="comma-separated: process, docker")
    parser.add_argument("--timing-pairs", type=int, default=4)
    parser.add_argument("--allow", default="", help="comma-separated powers to allow, e.g. thread")
    parser.add_argument("--json", type=Path, help="write every verdict and the summary here")
    parser.add_argument("--summarise", type=Path, help="only summarise the verdicts of an earlier --json file")
    args = parser.parse_args()
    if args.summarise:
        saved = json.loads(args.summarise.read_text())["tasks"]
        print(json.dumps(summarise([_task_verdicts(entry) for entry in saved]), indent=2))
        return

    kinds = args.kinds.split(",") if args.kinds else list(KINDS)
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        parser.error(f"unknown kinds: {', '.join(unknown)}")
    tasks = sorted(
        (p for p in args.suite.iterdir() if (p / "task.json").is_file()),
        key=lambda p: [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", p.name)],
    )
    if args.tasks:
        wanted = set(args.tasks.split(","))
        tasks = [t for t in tasks if t.name in wanted]
    tasks = tasks[:: args.every] if args.every else tasks
    tasks = tasks[: args.limit] if args.limit else tasks
    results: list[TaskVerdicts] = []
    started = time.perf_counter()
    runs = [(task, sandbox) for task in tasks for sandbox in args.sandbox.split(",")]
    for number, (task, sandbox) in enumerate(runs, 1):
        allow = tuple(kind for kind in args.allow.split(",") if kind)
        figures = judge_task(task, kinds, sandbox, args.timing_pairs, allow)
        results.append(figures)
        line = ", ".join(f"{v.kind}:{_label(v)}" for v in figures.verdicts)
        error = f"; ERROR {figures.error}" if figures.error else ""
        print(f"[{number}/{len(runs)}] {task.name} ({sandbox}): {line}{error}", flush=True)
        if args.json:  # written as it goes: a long run interrupted keeps what it measured
            args.json.write_text(json.dumps({"tasks": [asdict(r) for r in results]}, indent=1))
    summary = summarise(results)
    summary["wall_seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "tasks": [asdict(r) for r in results]}, indent=1))


if __name__ == "__main__":
    main()
