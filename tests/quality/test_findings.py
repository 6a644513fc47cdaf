"""Direct tests of the check's records (coderefine.quality.findings) and their on-disk cache."""

from __future__ import annotations

import json

from coderefine.quality.check_cache import CheckCache
from coderefine.quality.findings import COMPLEXITY, MAINTAINABILITY, RULES, CheckThresholds, Finding


def complex_finding() -> Finding:
    return Finding("src/app.py", 12, 30, "Parser.parse", COMPLEXITY, 14.0, 10.0, "split `Parser.parse`")


def test_a_finding_reads_as_one_line_with_the_rule_direction():
    assert complex_finding().line_text() == "src/app.py:12: cyclomatic-complexity 14 > 10: split `Parser.parse`"
    low = Finding("src/app.py", 1, 1, None, MAINTAINABILITY, 7.34, 10.0, "split the module")
    assert low.detail() == "maintainability-index 7.3 < 10: split the module"
    assert {rule.upper_bound for rule in RULES.values()} == {True, False}


def test_threshold_keys_differ_when_any_threshold_differs():
    keys = {
        CheckThresholds().key(),
        CheckThresholds(max_complexity=9).key(),
        CheckThresholds(min_maintainability=11).key(),
        CheckThresholds(min_readability=0).key(),
    }
    assert len(keys) == 4


def test_the_cache_gives_back_what_was_put_and_misses_on_damage(tmp_path):
    cache = CheckCache(tmp_path)
    key = "ab" + "0" * 62
    assert cache.get(key) is None
    cache.put(key, [complex_finding()])
    assert cache.get(key) == [complex_finding()]
    (entry,) = tmp_path.rglob("*.json")
    assert json.loads(entry.read_text())[0]["function"] == "Parser.parse"
    entry.write_text("[{}]")  # valid JSON, not a finding: a miss
    assert cache.get(key) is None
