"""A duplicate set's score for one bot against another: the one definition that adaptive play
(``croupier match --sprt``, the ladder) reads a set by.

A set is every rotation of one deal (schedule.py). In each of its matches bot A scores a pairwise
point against bot B: 1 if A placed better, ½ if they shared a place, 0 if worse, whatever the
other seats did. The set's score is A's points summed over the rotations, divided by the number of
rotations: a number from 0 to 1, ½ when the two did equally well with the same cards. Every hand
is held once by A and once by B, so most of the deal's luck cancels inside the set, and the sets
of one line-up are independent and identically distributed: what a sequential test needs.

>>> set_score([{"new": 1, "old": 2}, {"old": 1, "new": 2}], "new", "old")
0.5
>>> set_score([{"new": 1, "old": 2, "x": 3}, {"x": 1, "new": 2, "old": 2}], "new", "old")
0.75
>>> grid(2)
(0.0, 0.25, 0.5, 0.75, 1.0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["grid", "pair_points", "set_score"]


def pair_points(place_a: int, place_b: int) -> float:
    """A's pairwise points against B in one match, from their places (1 best)."""
    return 1.0 if place_a < place_b else 0.5 if place_a == place_b else 0.0


def set_score(matches: Sequence[Mapping[str, int]], a: str, b: str) -> float:
    """A's score against B over a duplicate set's matches (each bot's place in each)."""
    if not matches:
        raise ValueError("a duplicate set has at least one match")
    return sum(pair_points(places[a], places[b]) for places in matches) / len(matches)


def grid(rotations: int) -> tuple[float, ...]:
    """Every score a set of ``rotations`` matches can have: the multiples of 1/(2·rotations)."""
    if rotations < 1:
        raise ValueError(f"a duplicate set has at least one rotation, not {rotations}")
    steps = 2 * rotations
    return tuple(k / steps for k in range(steps + 1))
