"""Chinese Ten: capture the most points; when nothing captures, lay the card least likely to feed an opponent.

A pure function of the view and the legal actions (no server), scored per action:
a capture is worth the points it takes (card played included); a card laid on
the table risks its points in proportion to the unseen cards that could capture it.
"""

from __future__ import annotations

from typing import Any

from croupier.engine.cards import STANDARD_DECK, Card
from croupier.engine.games.chinese_ten import ChineseTenAction, ChineseTenView, Pick, captures, card_points

CAPTURE_BONUS = 0.5
"""A capture of no points still beats laying a card: it leaves an opponent less on the table."""


def unseen_cards(view: ChineseTenView) -> list[Card]:
    """Cards the viewer has not seen: the other hands and the stock."""
    seen = set(view.table) | {c for pile in view.captured for c in pile}
    if view.seat is not None and view.hands[view.seat] is not None:
        seen |= set(view.hands[view.seat] or ())
    if view.turned is not None:
        seen.add(view.turned)
    return [c for c in STANDARD_DECK if c not in seen]


def capture_risk(card: Card, view: ChineseTenView, unseen: list[Card]) -> float:
    """Points expected lost by laying ``card``: the chance the next player holds a card that takes it."""
    if not unseen or view.seat is None:
        return 0.0
    takers = sum(1 for c in unseen if captures(c, (card,)))
    next_hand = view.hand_sizes[(view.seat + 1) % len(view.hand_sizes)]
    chance = min(1.0, takers * max(next_hand, 1) / len(unseen))
    return card_points(card, view.scoring) * chance


def score(action: ChineseTenAction, view: ChineseTenView, unseen: list[Card]) -> float:
    points = view.scoring
    if isinstance(action, Pick):
        return float(card_points(action.target, points))
    if action.taken:
        return (
            card_points(action.card, points)
            + sum(card_points(c, points) for c in action.taken)
            + CAPTURE_BONUS
        )
    return -capture_risk(action.card, view, unseen)


def choose(view: ChineseTenView, legal: list[ChineseTenAction], options: Any = None) -> int:
    unseen = unseen_cards(view)
    return max(range(len(legal)), key=lambda i: score(legal[i], view, unseen))
