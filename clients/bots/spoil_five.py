"""Spoil Five: announce and rob when allowed, win tricks with the cheapest card that wins,
throw the weakest card when a trick cannot be won, and jinx only with two sure winners.

A pure function of the view and the legal actions. Card strength is the
engine's own ``trick_power`` (plain or classic ranking), with the unannounced
trump Ace demoted as the view says.
"""

from __future__ import annotations

from typing import Any

from croupier.engine.cards import STANDARD_DECK, Card
from croupier.engine.games.spoil_five import (
    Announce,
    Decline,
    Jinx,
    Play,
    Rob,
    SpoilFiveAction,
    SpoilFiveView,
    TakePool,
    suit_of,
    trick_power,
    trick_strength,
)


def strength(card: Card, view: SpoilFiveView) -> int:
    return trick_power(card, view.trumps, view.ranking, view.trump_ace_low)


def is_trump(card: Card, view: SpoilFiveView) -> bool:
    return suit_of(card, view.trumps, view.ranking) is view.trumps


def in_trick(card: Card, view: SpoilFiveView) -> int:
    """What ``card`` counts for in the current trick (one card is played at least)."""
    return trick_strength(card, view.trick[0][1], view.trumps, view.ranking, view.trump_ace_low)


def unseen_cards(view: SpoilFiveView) -> list[Card]:
    """Cards the viewer cannot place: other hands, the stock, another's discard."""
    seen = {c for trick in view.tricks for _, c in trick.plays} | {c for _, c in view.trick}
    seen |= set(my_hand(view))
    if view.discard is not None:
        seen.add(view.discard)
    if view.robbed_by is None:
        seen.add(view.turn_up)  # still face up on the stock
    return [c for c in STANDARD_DECK if c not in seen]


def my_hand(view: SpoilFiveView) -> tuple[Card, ...]:
    return (view.hands[view.seat] or ()) if view.seat is not None else ()


def sure_winner(card: Card, view: SpoilFiveView, unseen: list[Card]) -> bool:
    """A trump no card out there can beat."""
    if not is_trump(card, view):
        return False
    mine = strength(card, view)
    return all(strength(c, view) < mine for c in unseen if is_trump(c, view))


def choose_play(view: SpoilFiveView, cards: list[Card], unseen: list[Card]) -> Card:
    if not view.trick:  # leading: a sure winner if any, else the weakest card (the others may spend theirs)
        winners = [c for c in cards if sure_winner(c, view, unseen)]
        if winners:
            return max(winners, key=lambda c: strength(c, view))
        return min(cards, key=lambda c: (is_trump(c, view), strength(c, view)))
    best = max(in_trick(c, view) for _, c in view.trick)
    winning = [c for c in cards if in_trick(c, view) > best]
    if winning:
        return min(winning, key=lambda c: strength(c, view))
    # cannot win: keep trumps and high cards for later tricks
    return min(cards, key=lambda c: (is_trump(c, view), strength(c, view)))


def choose(view: SpoilFiveView, legal: list[SpoilFiveAction], options: Any = None) -> int:
    unseen = unseen_cards(view)
    hand = my_hand(view)
    for i, action in enumerate(legal):
        if isinstance(action, Announce):
            return i  # unannounced, the trump Ace would rank lowest
    robs = {a.discard: i for i, a in enumerate(legal) if isinstance(a, Rob)}
    if robs:  # the turn-up is a trump: take it if it beats the weakest card held
        discard = min(robs, key=lambda c: (is_trump(c, view), strength(c, view)))
        if strength(view.turn_up, view) > strength(discard, view):
            return robs[discard]
    if any(isinstance(a, Jinx) for a in legal):
        all_sure = len(hand) == 2 and all(sure_winner(c, view, unseen) for c in hand)
        wanted = Jinx if all_sure else TakePool
        return next(i for i, a in enumerate(legal) if isinstance(a, wanted))
    plays = {a.card: i for i, a in enumerate(legal) if isinstance(a, Play)}
    if plays:
        return plays[choose_play(view, list(plays), unseen)]
    return next(i for i, a in enumerate(legal) if isinstance(a, Decline))
