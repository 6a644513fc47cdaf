"""The resumable state of a sweep: JSON lines, a header with what decides the outcomes, the scan, then one
finished function per line, appended and synced as each ends, and each file's merge once verified. A rerun
with the same key reuses the scan, skips the finished functions whose file is unchanged and the merges
already verified; a line cut short by a crash is ignored."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from coderefine.errors import SweepStateError
from coderefine.sweep.jobs import FunctionOutcome
from coderefine.sweep.merge import FilePlan
from coderefine.sweep.scan import ScanResult

STATE_VERSION = 1


def default_state_path(key: dict[str, Any], root: Path) -> Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return root / ".coderefine" / "sweep" / f"{key['task']}-{digest}.jsonl"


class SweepState:
    def __init__(self, path: Path, key: dict[str, Any]) -> None:
        self.path = path
        self.key = json.loads(json.dumps(key, default=str))
        self.scan: ScanResult | None = None
        self.outcomes: dict[str, FunctionOutcome] = {}
        self.plans: dict[str, FilePlan] = {}  # by plan_key: a merge verified once is not verified again

    def load(self) -> None:
        if not self.path.exists():
            return
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise SweepStateError(f"{self.path}: cannot read the sweep state ({exc})") from None
        try:
            header = json.loads(lines[0]) if lines else None
        except json.JSONDecodeError:
            header = None
        if not isinstance(header, dict) or header.get("coderefine_sweep_state") != STATE_VERSION:
            raise SweepStateError(f"{self.path}: not a coderefine sweep state file; pass another --state or --fresh")
        if header.get("key") != self.key:
            changed = sorted(k for k in self.key if header["key"].get(k) != self.key[k])
            raise SweepStateError(
                f"{self.path}: made by a sweep with other arguments ({', '.join(changed)} differ); "
                "pass --fresh to start over or another --state"
            )
        for line in lines[1:]:
            try:
                record = json.loads(line)
                if "scan" in record:
                    self.scan = ScanResult.from_dict(record["scan"])
                elif "plan" in record:
                    self.plans[record["plan_key"]] = FilePlan.from_dict(record["plan"])
                elif "outcome" in record:
                    outcome = FunctionOutcome.from_dict(record["outcome"])
                    self.outcomes[outcome.key] = outcome
            except (json.JSONDecodeError, TypeError, KeyError):
                continue

    def start(self, fresh: bool) -> None:
        if fresh or not self.path.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            header = {"coderefine_sweep_state": STATE_VERSION, "key": self.key}
            self.path.write_text(json.dumps(header) + "\n", encoding="utf-8")
            self.scan, self.outcomes, self.plans = None, {}, {}

    def _append(self, record: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, allow_nan=False) + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def save_scan(self, scan: ScanResult) -> None:
        self.scan = scan
        self._append({"scan": scan.to_dict()})

    def save_plan(self, key: str, plan: FilePlan) -> None:
        self.plans[key] = plan
        self._append({"plan_key": key, "plan": plan.to_dict()})

    def save(self, outcome: FunctionOutcome) -> None:
        self.outcomes[outcome.key] = outcome
        self._append({"outcome": outcome.to_dict()})
