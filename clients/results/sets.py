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

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from croupier.clients.results.ratings import RatedSet, t_975

__all__ = [
    "Table",
    "evidence",
    "grid",
    "luck_and_skill",
    "pair_points",
    "seat_points",
    "set_score",
    "set_scores",
    "tie_known",
    "ties_known",
]

TIE_ELO = 10.0
"""A pair whose set scores put them within this many Elo (95%) is known tied..."""
TIE_SETS = 8
"""...from this many sets between them on (fewer say too little about the spread of a set's score)."""


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


def luck_and_skill(places: Sequence[int], seat: int, luck: float) -> str:
    """A seat's luck and skill (its mean pair points against the others less its luck: the
    luck-corrected score, results/luck.py) as the matches view and the replay show them."""
    return f"luck {luck:+.2f}, skill {seat_points(places, seat) - luck:.2f}"


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


def set_scores(rated: RatedSet) -> dict[tuple[str, str], float]:
    """Per pair (a, b) of bots that met in the set, a before b by name: a's set score against b
    (the unit a luck-corrected score will replace)."""
    pairs = {pair for places in rated.matches for pair in itertools.combinations(sorted(places), 2)}
    return {(a, b): set_score(rated.matches, a, b) for a, b in sorted(pairs)}


def ties_known(sets: Iterable[RatedSet]) -> set[tuple[str, str]]:
    """The pairs (a, b), a before b by name, that ``sets`` show within ``TIE_ELO`` of each other."""
    scores: dict[tuple[str, str], list[float]] = {}
    for rated in sets:
        for pair, score in set_scores(rated).items():
            scores.setdefault(pair, []).append(score)
    return {pair for pair, each in scores.items() if tie_known(each)}


def tie_known(scores: Sequence[float], elo: float = TIE_ELO) -> bool:
    """Whether per-set scores of one pair put its difference within ``elo`` Elo: from ``TIE_SETS``
    sets on, the mean's 95% interval (Student's t on the sets' own spread, so that two identical
    deterministic bots, drawing every set, are known tied at their ``TIE_SETS``th and two random
    ones, whose sets spread, never in practice)
    inside the expected scores of a gap of ±``elo``."""
    n = len(scores)
    if n < TIE_SETS:
        return False
    mean = sum(scores) / n
    spread = math.sqrt(sum((x - mean) ** 2 for x in scores) / (n - 1))
    margin = 1.0 / (1.0 + math.pow(10.0, -elo / 400.0)) - 0.5
    return abs(mean - 0.5) + t_975(n - 1) * spread / math.sqrt(n) < margin
