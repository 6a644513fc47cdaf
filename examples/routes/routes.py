"""Route planning helpers for a small delivery company."""

from __future__ import annotations


def count_routes(blocks_east: int, blocks_south: int) -> int:
    """Number of shortest routes through a street grid, moving only east or south."""
    if blocks_east == 0 or blocks_south == 0:
        return 1
    return count_routes(blocks_east - 1, blocks_south) + count_routes(blocks_east, blocks_south - 1)


def unique_stops(stops: list[str]) -> list[str]:
    """The stops in the order first visited, each once."""
    seen = []
    for stop in stops:
        if stop not in seen:
            seen.append(stop)
    return seen


def total_distance(legs: list[float]) -> float:
    """Sum of the leg lengths, in kilometres."""
    total = 0.0
    for leg in legs:
        total += leg
    return total
