"""Worlds a seat may be in: a game state built from nothing but the seat's view.

``world(game, view, options, legal, rng)`` places every card the view shows where it shows it and
deals the cards it cannot see at random into the places it cannot see (sizes kept), with what
the view says of them (a robbed turn-up stays with its robber, an announced Ace with its holder);
then the engine's own ``resample_hidden``, the re-deal behind its non-interference proof, draws
the world. Nothing here reads a referee's state: a bot has only its view.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable
from typing import Any

from croupier.engine.cards import DOUBLE_DECK, STANDARD_DECK, Card, Rank, Suit
from croupier.engine.core import GameState
from croupier.engine.games import chinese_ten, pair_battle, platinum_fish, spoil_five
from croupier.engine.rng import Rng

__all__ = ["GAMES", "searchable", "voids", "world"]


def world(
    game: str, view: Any, options: Any, legal: list[Any], rng: Rng, infer: bool = False
) -> GameState[Any, Any]:
    """A random state the seat's ``view`` cannot tell from the real one, its chance (later draws,
    dice, deals) drawn from ``rng``; with ``infer``, the others' hands also keep to what their
    plays revealed (Spoil Five's voids)."""
    seat = view.seat
    if seat is None:
        raise ValueError("a world is built from a seat's view, not a spectator's")
    placed = GAMES[game](view, seat, options, legal, Rng(rng.randint(0, 2**63)))
    drawn = placed.resample_hidden(seat, rng.fork())
    if infer and isinstance(drawn, spoil_five.SpoilFiveState):
        _keep_voids(drawn, view, rng)
    return drawn


def voids(view: spoil_five.SpoilFiveView) -> dict[int, set[Suit]]:
    """The suits each seat has shown it holds none of, in this deal's tricks: a seat that did not
    follow a plain suit led holds none of it, and none of the trumps either unless it trumped (it
    must follow, else trump, if it can); one that did not follow trumps led holds none, where no
    trump may renege (the plain ranking)."""
    trump, ranking = view.trumps, view.ranking
    found: dict[int, set[Suit]] = {}
    for plays in [*(t.plays for t in view.tricks), view.trick]:
        if not plays:
            continue
        led = spoil_five.suit_of(plays[0][1], trump, ranking)
        for seat, card in plays[1:]:
            suit = spoil_five.suit_of(card, trump, ranking)
            if suit is led:
                continue
            if led is not trump:
                found.setdefault(seat, set()).update({led} if suit is trump else {led, trump})
            elif ranking is spoil_five.Ranking.PLAIN:
                found.setdefault(seat, set()).add(trump)
    return found


def _keep_voids(state: spoil_five.SpoilFiveState, view: spoil_five.SpoilFiveView, rng: Rng) -> None:
    """Swap each card a seat has shown it cannot hold for one of the stock's (dead for the rest of
    the deal) of a suit it may hold; the cards known to be in a hand (a robbed turn-up, an announced
    Ace) stay."""
    trump, ranking = view.trumps, view.ranking
    for seat, suits in sorted(voids(view).items()):
        if seat == view.seat:
            continue
        known = {view.turn_up} if view.robbed_by == seat else set()
        if view.ace_announced_by == seat:
            known.add(Card(Rank.ACE, trump))
        hand = state.hands[seat]
        for i, card in enumerate(hand):
            if card in known or spoil_five.suit_of(card, trump, ranking) not in suits:
                continue
            fits = [
                j for j, c in enumerate(state.stock) if spoil_five.suit_of(c, trump, ranking) not in suits
            ]
            if not fits:
                break  # no card of the stock fits: the world keeps the re-deal's
            j = fits[rng.randint(0, len(fits) - 1)]
            hand[i], state.stock[j] = state.stock[j], card
        hand.sort(key=STANDARD_DECK.index)  # as the re-deal sorts a hand


def searchable(game: str, view: Any) -> bool:
    """Whether a search may play this decision: Pair Battle in real time is a race, not a turn."""
    return not (game == "pair_battle" and view.timing is pair_battle.Timing.REALTIME)


def _unseen(deck: Iterable[Card], seen: Iterable[Card]) -> list[Card]:
    """The deck less every card seen (a double deck holds each card twice)."""
    left = Counter(deck)
    left.subtract(seen)
    if any(n < 0 for n in left.values()):
        raise ValueError("the view shows a card more often than the deck holds it")
    unseen = []
    for card in deck:
        if left[card] > 0:
            left[card] -= 1
            unseen.append(card)
    return unseen


def _deal(pool: list[Card], sizes: Iterable[int]) -> list[list[Card]]:
    """``pool`` cut into zones of the given sizes, in order; every card used."""
    zones, start = [], 0
    for size in sizes:
        zones.append(pool[start : start + size])
        start += size
    if start != len(pool):
        raise ValueError(f"the view's hidden places hold {start} cards, but {len(pool)} are unseen")
    return zones


def _hands(view: Any, seat: int, hidden: list[list[Card]]) -> list[list[Card]]:
    """The seat's own hand from its view; the others from ``hidden``, in seat order."""
    others = iter(hidden)
    return [list(view.hands[s]) if s == seat else next(others) for s in range(len(view.hand_sizes))]


def _chinese_ten(
    view: chinese_ten.ChineseTenView, seat: int, options: chinese_ten.Options, legal: list[Any], rng: Rng
) -> chinese_ten.ChineseTenState:
    seen = [*(view.hands[seat] or ()), *view.table, *(c for pile in view.captured for c in pile)]
    if view.turned is not None:
        seen.append(view.turned)
    sizes = [n for s, n in enumerate(view.hand_sizes) if s != seat]
    *others, stock = _deal(_unseen(STANDARD_DECK, seen), [*sizes, view.stock_size])
    table_ranks = Counter(c.rank for c in view.table)
    # Three of a picture rank (or fives) lie together only as dealt: the fourth takes all three.
    sets = [r for r in chinese_ten.LAYOUT_SET_RANKS if table_ranks[r] == 3]
    return chinese_ten.ChineseTenState(
        options,
        rng,
        dealer=view.dealer,
        deal=view.deal,
        hands=_hands(view, seat, others),
        table=list(view.table),
        stock=stock,
        piles=[list(p) for p in view.captured],
        points=list(view.deal_points),
        totals=list(view.totals),
        turn=view.to_act if view.to_act is not None else 0,
        turned=view.turned,
        layout_set_rank=sets[0] if sets else None,
        over=view.to_act is None,
    )


def _platinum_fish(
    view: platinum_fish.PlatinumFishView,
    seat: int,
    options: platinum_fish.PlatinumFishOptions,
    legal: list[Any],
    rng: Rng,
) -> platinum_fish.PlatinumFishState:
    seen = [
        *(view.hands[seat] or ()),
        *view.discard,
        *(c for pairs in view.matches for p in pairs for c in p),
    ]
    sizes = [n for s, n in enumerate(view.hand_sizes) if s != seat]
    *others, stock = _deal(_unseen(DOUBLE_DECK, seen), [*sizes, view.stock_size])
    return platinum_fish.PlatinumFishState(
        options=options,
        rng=rng,
        dealer=view.dealer,
        stock=stock,
        hands=_hands(view, seat, others),  # the re-deal sorts the others' hands
        matches=[list(pairs) for pairs in view.matches],
        discard=list(view.discard),
        current=view.to_act if view.to_act is not None else 0,
        phase=view.phase,
        dice=view.dice,
        targets=view.targets,
        asks=tuple(a for a in legal if isinstance(a, platinum_fish.Ask)),  # the asks a roll allows
        history=deque(view.history, maxlen=platinum_fish.HISTORY),
    )


def _spoil_five(
    view: spoil_five.SpoilFiveView, seat: int, options: spoil_five.Options, legal: list[Any], rng: Rng
) -> spoil_five.SpoilFiveState:
    mine = list(view.hands[seat] or ())
    played = {c for trick in view.tricks for _, c in trick.plays} | {c for _, c in view.trick}
    ace = Card(Rank.ACE, view.trumps)
    known: dict[int, list[Card]] = {s: [] for s in range(len(view.hand_sizes)) if s != seat}
    robber = view.robbed_by
    if robber is not None and robber != seat and view.turn_up not in played:
        known[robber].append(view.turn_up)  # robbed face up: known to be there until played
    holder = view.ace_announced_by
    if holder is not None and holder != seat and ace not in played and ace != view.turn_up:
        known[holder].append(ace)  # with a robbing holder, the re-deal puts it in hand or discard
    hidden_discard = robber is not None and robber != seat
    seen = [*mine, *played, *(c for cards in known.values() for c in cards)]
    if robber is None:
        seen.append(view.turn_up)  # face up on the table (robbed: in a hand, or played)
    if view.discard is not None:
        seen.append(view.discard)
    sizes = [view.hand_sizes[s] - len(known[s]) for s in known]
    *zones, stock, discard = _deal(
        _unseen(STANDARD_DECK, seen), [*sizes, view.stock_size, 1 if hidden_discard else 0]
    )
    others = [known[s] + zone for s, zone in zip(known, zones, strict=True)]
    ace_low_shown = view.trump_ace_low and ace not in mine  # the seat sees it low only when shown
    return spoil_five.SpoilFiveState(
        options,
        rng,
        banks=list(view.banks),
        dealer=view.dealer,
        pool=view.pool,
        unassigned=view.unassigned,
        deal=view.deal,
        phase=view.phase,
        hands=_hands(view, seat, others),  # the re-deal sorts the others' hands
        stock=stock,
        turn_up=view.turn_up,
        robber=view.robbed_by,
        discard=view.discard if view.discard is not None else (discard[0] if discard else None),
        announcer=holder,
        ace_low=view.trump_ace_low,
        ace_low_shown=ace_low_shown,
        turn=view.to_act if view.to_act is not None else 0,
        trick=list(view.trick),
        tricks=list(view.tricks),
        won=list(view.tricks_won),
        jinxer=view.jinxer,
        last_deal=view.last_deal,
    )


def _pair_battle(
    view: pair_battle.PairBattleView, seat: int, options: pair_battle.Options, legal: list[Any], rng: Rng
) -> pair_battle.PairBattleState:
    seen = [*(view.hands[seat] or ()), *(c for cards in view.laid for c in cards)]
    pool = _unseen(STANDARD_DECK, seen)
    sizes = [n for s, n in enumerate(view.hand_sizes) if s != seat]
    out = len(pool) - sum(sizes) - sum(view.reserve_sizes)
    *zones, out_of_play = _deal(pool, [*sizes, *view.reserve_sizes, out])
    others, reserves = zones[: len(sizes)], zones[len(sizes) :]
    counts = [0] * (Rank.ACE + 1)
    for cards in view.laid:
        for card in cards:
            counts[card.rank] += 1
    # Another seat's hidden answer this tick: any Play stands for it, the re-deal answers anew.
    placeholder = pair_battle.Play((pool[0],)) if pool else pair_battle.Pass()
    submissions: list[pair_battle.PairBattleAction | None] = [
        view.submissions[s] if s == seat else (placeholder if done else None)
        for s, done in enumerate(view.submitted)
    ]
    return pair_battle.PairBattleState(
        options,
        rng,
        hands=_hands(view, seat, others),  # the re-deal sorts the others' hands
        reserves=reserves,
        out_of_play=out_of_play,
        laid=[list(cards) for cards in view.laid],
        table_counts=counts,
        scores=list(view.scores),
        penalties=list(view.penalties),
        finishers=list(view.finishers),
        calls_made=len(pair_battle.COUNTDOWN),
        window_closes_at=view.window_closes_at,
        tick=view.tick,
        submissions=submissions,
        end=view.end,
    )


GAMES: dict[str, Callable[[Any, int, Any, list[Any], Rng], GameState[Any, Any]]] = {
    "chinese_ten": _chinese_ten,
    "platinum_fish": _platinum_fish,
    "spoil_five": _spoil_five,
    "pair_battle": _pair_battle,
}
"""Each game's state built from a seat's view, hidden cards in any order (``world`` shuffles them)."""
