"""Pair Battle: lay every set the hand holds, richest first, as fast as possible.

``plan`` lists the disjoint sets the hand can lay one after the other,
taking rank by rank the biggest play the engine allows (``plays_of_rank``)
until none is left: a triplet rather than a doublet of three (a doublet would
strand the third card: nobody could lay a single of that rank before a third
was laid), a triplet then the single of four, a single once its rank has
three on the table. In real time the bot answers with the first set and
sends the rest at once, without waiting for a request per play: each stays
legal, since only the bot's own plays change its hand and the count laid of a
rank only grows. In lockstep it lays the first each tick, and passes only
while it leads on points: should every other player pass in the same tick,
the standoff ends the game there, and the plays it keeps are not lost
otherwise.
"""

from __future__ import annotations

from collections import Counter
from itertools import groupby
from typing import Any

from croupier.engine.cards import Card, Rank
from croupier.engine.games.pair_battle import (
    PairBattleAction,
    PairBattleView,
    Pass,
    Play,
    Timing,
    card_points,
    plays_of_rank,
)


def plan(view: PairBattleView) -> list[Play]:
    """Every set the viewer's hand can lay in turn, the most points first."""
    hand = view.hands[view.seat] if view.seat is not None else None
    laid = Counter(card.rank for cards in view.laid for card in cards)
    groups: list[list[Play]] = []
    for rank, same in groupby(sorted(hand or (), key=_rank), key=_rank):
        cards, on_table, sets = tuple(same), laid[rank], []
        while cards and (allowed := plays_of_rank(cards, on_table)):
            biggest = max(allowed, key=_size)  # max keeps the first: of four, a triplet and then the single
            sets.append(biggest)
            cards = tuple(c for c in cards if c not in biggest.cards)
            on_table += len(biggest.cards)
        if sets:
            groups.append(sets)
    groups.sort(key=lambda plays: sum(points(p.cards) for p in plays), reverse=True)
    return [play for plays in groups for play in plays]


def _rank(card: Card) -> Rank:
    return card.rank


def _size(play: Play) -> int:
    return len(play.cards)


def points(cards: tuple[Card, ...]) -> int:
    return sum(card_points(c) for c in cards)


def choose(view: PairBattleView, legal: list[PairBattleAction], options: Any = None) -> int:
    if view.timing is Timing.LOCKSTEP and Pass() in legal and leading(view):
        return legal.index(Pass())  # every player passing ends the game now, while we lead
    plays = plan(view)
    if plays and plays[0] in legal:
        return legal.index(plays[0])
    return next((i for i, a in enumerate(legal) if not isinstance(a, Pass)), 0)


def leading(view: PairBattleView) -> bool:
    """Strictly ahead on points (a standoff ends the game; finishers would still rank first)."""
    if view.seat is None or view.finishers:
        return False
    mine = view.scores[view.seat]
    return all(mine > score for seat, score in enumerate(view.scores) if seat != view.seat)


def follow_ups(view: PairBattleView) -> list[Play]:
    """The sets to send right after ``choose``'s answer (real time only: lockstep takes one per tick)."""
    return plan(view)[1:] if view.timing is Timing.REALTIME else []
