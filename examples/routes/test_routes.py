from __future__ import annotations

import pytest

from routes import count_routes, total_distance, unique_stops


@pytest.mark.parametrize(
    ("east", "south", "expected"),
    [(0, 0, 1), (1, 1, 2), (2, 2, 6), (3, 5, 56), (8, 8, 12870), (10, 9, 92378), (11, 10, 352716)],
)
def test_count_routes(east, south, expected):
    assert count_routes(east, south) == expected


def test_unique_stops_keeps_first_visit_order():
    assert unique_stops(["depot", "b", "a", "b", "depot", "c"]) == ["depot", "b", "a", "c"]
    assert unique_stops([]) == []


def test_unique_stops_on_a_long_day():
    stops = [f"stop-{(i * 7919) % 1500}" for i in range(6000)]
    result = unique_stops(stops)
    assert len(result) == 1500
    assert result[:3] == ["stop-0", "stop-419", "stop-838"]


def test_total_distance():
    assert total_distance([1.5, 2.25, 0.25]) == 4.0
    assert total_distance([]) == 0.0
