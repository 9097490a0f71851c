"""Platinum Fish: take a discard that matches; else draw or roll, whichever is likelier to make a match.

A pure function of the view, the legal actions and the options (the dice
variants change the odds). Cards are counted: each rank has 8 copies in the
double deck, and those in the viewer's hand, in laid matches and on the
discard pile are known; the top of the stock is any unseen card alike.
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from itertools import product

from croupier.engine.cards import DOUBLE_DECK, Rank
from croupier.engine.games.platinum_fish import (
    Ask,
    FishAction,
    Pass,
    PlatinumFishOptions,
    PlatinumFishView,
    Roll,
    TakeDiscard,
    roll_targets,
)

DECK_BY_RANK = Counter(card.rank for card in DOUBLE_DECK)
"""Cards of each rank in the game's deck."""
ROLL_BONUS = 0.05
"""A roll's miss goes into the hand (more ranks to match later); a draw's miss feeds the discard pile."""


def unseen_by_rank(view: PlatinumFishView) -> Counter[Rank]:
    seen = Counter([c.rank for c in view.discard])
    seen.update([c.rank for pairs in view.matches for pair in pairs for c in pair])
    seen.update(my_hand(view))
    return Counter({rank: count - seen[rank] for rank, count in DECK_BY_RANK.items() if count > seen[rank]})


def my_hand(view: PlatinumFishView) -> tuple[Rank, ...]:
    hand = view.hands[view.seat] if view.seat is not None else None
    return tuple(c.rank for c in hand or ())


def draw_odds(held: set[Rank], unseen: Counter[Rank]) -> float:
    total = sum(unseen.values())
    return sum(unseen[r] for r in held) / total if total else 0.0


def roll_odds(held: set[Rank], unseen: Counter[Rank], options: PlatinumFishOptions) -> float:
    """The chance a roll brings a card of a held rank: over the 36 throws, the share of held
    ranks among the unseen cards of the rolled values (the first such card in the stock is any of them)."""
    shares: dict[frozenset[Rank], float] = {}  # a throw's share, once per ranks looked for
    total = 0.0
    for ranks in throws(options):  # added in the throws' order: the same sum to the last bit
        share = shares.get(ranks)
        if share is None:
            candidates = sum(unseen[r] for r in ranks)
            if candidates:
                share = sum(unseen[r] for r in ranks & held) / candidates
            else:  # none left unseen of the value: an ask might still find one in a hand
                share = 0.5 if ranks & held else 0.0
            shares[ranks] = share
        total += share
    return total / 36


@cache  # the same for a whole match: not worked out again at every draw-or-roll
def throws(options: PlatinumFishOptions) -> tuple[frozenset[Rank], ...]:
    """The ranks each of the 36 throws looks for, in order."""
    return tuple(frozenset(roll_targets((a, b), options)[1]) for a, b in product(range(1, 7), repeat=2))


@cache
def unrollable(options: PlatinumFishOptions) -> frozenset[Rank]:
    """Ranks no throw looks for (the Ace, unless a die's face counts): no roll takes them from the stock."""
    return frozenset(set(DECK_BY_RANK).difference(*throws(options)))


def may_stall(view: PlatinumFishView, unseen: Counter[Rank], options: PlatinumFishOptions) -> bool:
    """The stock may hold only cards no roll takes: then, if every seat rolls, the game never ends."""
    return view.stock_size <= sum(unseen[r] for r in unrollable(options))


def ask_value(
    action: Ask, held: set[Rank], unseen: Counter[Rank], view: PlatinumFishView
) -> tuple[int, int, int]:
    """A held rank first (it makes a match), then the rank with most copies out, then the biggest hand."""
    hand_size = view.hand_sizes[action.seat] if action.seat is not None else 0
    return (action.rank in held, unseen[action.rank], hand_size)


def choose(
    view: PlatinumFishView, legal: list[FishAction], options: PlatinumFishOptions | None = None
) -> int:
    options = options or PlatinumFishOptions(players=len(view.hand_sizes))
    for i, action in enumerate(legal):
        if isinstance(action, TakeDiscard):
            return i  # a sure match, and another move
    held = set(my_hand(view))
    unseen = unseen_by_rank(view)
    asks = [i for i, a in enumerate(legal) if isinstance(a, Ask)]
    if asks:
        return max(asks, key=lambda i: ask_value(legal[i], held, unseen, view))  # type: ignore[arg-type]
    if any(isinstance(a, Pass) for a in legal):
        return next(i for i, a in enumerate(legal) if isinstance(a, Pass))
    roll = next((i for i, a in enumerate(legal) if isinstance(a, Roll)), None)
    draw = next((i for i, a in enumerate(legal) if not isinstance(a, Roll)), None)
    if roll is None or draw is None:
        return 0
    leading = view.seat is not None and view.scores[view.seat] == max(view.scores)
    if leading and may_stall(view, unseen, options):
        return draw  # ahead or level, with a stock that rolls may never empty: end the game
    better_roll = roll_odds(held, unseen, options) + ROLL_BONUS >= draw_odds(held, unseen)
    return roll if better_roll else draw
