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

A deal pool (a ladder's set: docs/tournaments.md) plays one deal at several tables of different bots,
so no bot meets the deal twice; ``evidence`` says what a set's tables tell the ratings:

>>> evidence([Table(7, ("a", "b"), {"a": 1, "b": 2}), Table(7, ("d", "c"), {"d": 2, "c": 1})])
({'a': 1, 'b': 2}, {'d': 2, 'c': 1})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

__all__ = ["Table", "evidence", "grid", "pair_points", "seat_points", "set_score"]


class Table(NamedTuple):
    """One match of a set: its deal's seed, the bot in each seat (seat 0 first), each bot's place."""

    seed: int
    seats: tuple[str, ...]
    places: Mapping[str, int]


def evidence(tables: Sequence[Table]) -> tuple[dict[str, int], ...]:
    """What a set's matches tell the ratings, as matches of places: each table's own. The one
    function a luck-corrected score replaces (the deal term of the luck issue, #46: the tables
    of a pool share their deal, which pins its luck down twice as well as a fresh deal's one).
    A pool's seat holders are not ranked against each other here: A's result against B beside
    D's against C with the same cards says that A - B beat D - C, a comparison of pairs the
    Plackett-Luce fit cannot take; read as A against D it drew the fit's ratings together, and
    bench/ladder_deals.py's ladder never reached the true order that way."""
    return tuple(dict(table.places) for table in tables)


def pair_points(place_a: int, place_b: int) -> float:
    """A's pairwise points against B in one match, from their places (1 best)."""
    return 1.0 if place_a < place_b else 0.5 if place_a == place_b else 0.0


def seat_points(places: Sequence[int], seat: int) -> float:
    """A seat's pair points against each other seat of a match (by their places), averaged: the
    score a seat's luck (results/luck.py's seat_luck, its mean over the same pairs) is taken from.

    >>> seat_points([1, 2, 2], 1)
    0.25
    """
    others = [place for other, place in enumerate(places) if other != seat]
    return sum(pair_points(places[seat], place) for place in others) / len(others)


def set_score(matches: Sequence[Mapping[str, int]], a: str, b: str) -> float:
    """A's score against B over a set's matches (each bot's place in each) that hold both."""
    both = [places for places in matches if a in places and b in places]
    if not both:
        raise ValueError(f"no match of the set holds both {a} and {b}")
    return sum(pair_points(places[a], places[b]) for places in both) / len(both)


def grid(rotations: int) -> tuple[float, ...]:
    """Every score a set of ``rotations`` matches can have: the multiples of 1/(2·rotations)."""
    if rotations < 1:
        raise ValueError(f"a duplicate set has at least one rotation, not {rotations}")
    steps = 2 * rotations
    return tuple(k / steps for k in range(steps + 1))
