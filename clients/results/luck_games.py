"""What the luck correction (luck.py) knows of each game: its score so far and what remains to be
scored (``PROGRESS``, V's input), which steps may hold chance (``MAY_DRAW``), and the frequent chance
events worked out from the engine's own rules without replaying the step per outcome
(``WORKED_OUT``: Chinese Ten's turn-up, Platinum Fish's roll). Every rule asked is the engine's
(capture options, roll targets, partners); this module only adds up their consequences.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["HAND_WEIGHT", "MAY_DRAW", "PROGRESS", "TURN_UP", "TWIN", "WORKED_OUT", "Seen", "Worked"]

Progress = Callable[[Any], tuple[list[float], float]]
"""A game's score so far per seat, and how much is still to be scored (in the same units)."""


# --- what remains, per game ------------------------------------------------------------------


def _chinese_ten(state: Any) -> tuple[list[float], float]:
    from croupier.engine.games.chinese_ten import captures, pile_points

    scoring = state.options.scoring
    scores = [float(t + p) for t, p in zip(state.totals, state.points, strict=True)]
    if state.over:
        return scores, 0.0
    if state.turned is not None:  # the turn-up waits for its player's pick: the best is as good as taken
        taken = max(pile_points((state.turned, t), scoring) for t in captures(state.turned, state.table))
        scores[state.turn] += taken
    rest = _chinese_ten_rest(state, scores, _deck_points(scoring) - sum(state.points))
    if state.turned is None:
        mover = state.turn
        best, _second, table_points = _table_for(_reach(state.hands[mover], scoring), state.table, scoring)
        held = [float(pile_points(hand, scoring)) for hand in state.hands]
        outlook = _chinese_ten_outlook(held, mover, best, table_points)
        scores = [score + gain for score, gain in zip(scores, outlook, strict=True)]
    return scores, rest


CHINESE_TEN_WEIGHTS = (-2.5906, 0.3084, 0.5965, 0.4276, 1.3650)
"""The deal points a seat is still to take, per feature of the state (``chinese_ten_features``):
fitted offline by least squares on self-play (bench/luck_fit.py, docs/testing-bots.md)."""


def chinese_ten_features(
    held: Sequence[float], mover: int, best: float, table_points: float
) -> list[tuple[float, ...]]:
    """Per seat, what V reads beyond the score: whether it moves next, the best capture it has on
    the table then (the mover's alone: the table changes before the others play), the table's
    points (the mover's to take first), and the points ``held`` in its hand."""
    return [
        (
            float(seat == mover),
            best if seat == mover else 0.0,
            table_points if seat == mover else 0.0,
            table_points if seat != mover else 0.0,
            points,
        )
        for seat, points in enumerate(held)
    ]


def _chinese_ten_outlook(held: Sequence[float], mover: int, best: float, table_points: float) -> list[float]:
    """The deal points each seat is still expected to take (what V adds to its score)."""
    w = CHINESE_TEN_WEIGHTS
    rest = w[3] * table_points
    return [
        w[4] * points + (w[0] + w[1] * best + w[2] * table_points if seat == mover else rest)
        for seat, points in enumerate(held)
    ]


def _reach(hand: Sequence[Any], scoring: Any) -> dict[Any, int]:
    """The best points a hand's card adds to a capture of a table card, by that card's rank."""
    from croupier.engine.games.chinese_ten import CAPTURE_PARTNER, card_points

    reach: dict[Any, int] = {}
    for card in hand:
        rank, points = CAPTURE_PARTNER[card.rank], card_points(card, scoring)
        if points >= reach.get(rank, -1):
            reach[rank] = points
    return reach


def _table_for(reach: dict[Any, int], table: Sequence[Any], scoring: Any) -> tuple[float, float, float]:
    """The best and second best capture a hand (its ``reach``) has on ``table``, and its points."""
    from croupier.engine.games.chinese_ten import card_points

    best = second = 0.0
    total = 0.0
    for card in table:
        points = card_points(card, scoring)
        total += points
        own = reach.get(card.rank)
        if own is not None:
            value = own + points
            if value > best:
                best, second = value, best
            elif value > second:
                second = value
    return best, second, total


def _chinese_ten_rest(state: Any, scores: list[float], left: float) -> float:
    """What remains to be scored: ``left`` in this deal (what no pile holds yet: hands, table,
    stock), and the deals until the leader may reach the target."""
    per_deal = _deck_points(state.options.scoring)
    n: int = state.players
    lead = max(scores) + left / n
    target: int = state.options.target
    deals_to_go = max(0.0, (target - lead) / (per_deal / n))
    return left + deals_to_go * per_deal


Seen = tuple[tuple[float, ...], float]
"""One outcome of chance worked out without a replay: the scores and what remains after it (every
outcome of a worked-out event equally likely)."""
Worked = tuple[dict[object, Seen], dict[Seen, int]]
"""A worked-out chance event: what follows each of chance's choices, and how many choices lead to each."""


def _chinese_ten_turn_ups(state: Any, seat: int, action: Any) -> Worked | None:
    """A Play's turn-up, by the stock card turned (each equally likely), from the table the played
    card leaves (the engine's own capture rule, asked of the state with that table for a moment)
    rather than a replay of the whole step per card. None where the Play ends the deal (the next
    one is shuffled: the step is replayed)."""
    from croupier.engine.games.chinese_ten import Play, card_points, pile_points

    if not isinstance(action, Play) or (len(state.stock) <= 1 and sum(len(h) for h in state.hands) <= 1):
        return None
    scoring = state.options.scoring
    table, layout = state.table, state.layout_set_rank
    gained = 0
    if action.taken:
        after = [card for card in table if card not in action.taken]
        if action.card.rank is layout and len(action.taken) == 3:
            state.layout_set_rank = None
        gained = pile_points((action.card, *action.taken), scoring)
    else:
        after = [*table, action.card]
    base = [float(t + p) for t, p in zip(state.totals, state.points, strict=True)]
    left = _deck_points(scoring) - sum(state.points) - gained
    mover = (seat + 1) % state.players
    held = [float(pile_points(hand, scoring)) for hand in state.hands]
    held[seat] -= pile_points((action.card,), scoring)
    reach = _reach(state.hands[mover], scoring)
    best, second, table_points = _table_for(reach, after, scoring)
    found: dict[object, Seen] = {}
    alike: dict[Seen, int] = {}
    known: dict[tuple[int, int, float, float], Seen] = {}
    by_card: dict[tuple[Any, int], Seen] = {}  # what a turn-up leads to depends on its rank and points
    by_rank: dict[Any, tuple[list[tuple[Any, ...]], list[int]]] = {}
    state.table = after
    try:
        for card in state.stock:
            points = card_points(card, scoring)
            seen = by_card.get((card.rank, points))
            if seen is None:
                captured = by_rank.get(card.rank)
                if captured is None:
                    options = state._capture_options(card)
                    captured = by_rank[card.rank] = (options, [pile_points(o, scoring) for o in options])
                options, option_points = captured
                if not options:  # laid: the mover may take it
                    own = reach.get(card.rank)
                    next_table = (max(best, own + points) if own is not None else best, table_points + points)
                elif len(options) == 1 and len(options[0]) == 1:  # one card taken from the table
                    (target,) = options[0]
                    own, lost = reach.get(target.rank), option_points[0]
                    next_table = (
                        second if own is not None and own + lost == best else best,
                        table_points - lost,
                    )
                else:  # the layout's three, or a pick to make (as if its best were taken): worked out afresh
                    chosen = options[option_points.index(max(option_points))]
                    mover_best, _, on_table = _table_for(
                        reach, [t for t in after if t not in chosen], scoring
                    )
                    next_table = (mover_best, on_table)
                key = (
                    points + max(option_points) if options else 0,
                    points + option_points[0]
                    if len(options) == 1
                    else 0,  # a pick still to make has not scored
                    *next_table,
                )
                seen = known.get(key)
                if seen is None:
                    scores = base[:]
                    scores[seat] += gained + key[0]
                    rest_to_score = _chinese_ten_rest(state, scores, left - key[1])
                    outlook = _chinese_ten_outlook(held, mover, key[2], key[3])
                    scores = [score + gain for score, gain in zip(scores, outlook, strict=True)]
                    seen = known[key] = (tuple(scores), rest_to_score)
                by_card[(card.rank, points)] = seen
            found[card] = seen
            alike[seen] = alike.get(seen, 0) + 1
    finally:
        state.table, state.layout_set_rank = table, layout
    return found, alike


def _chinese_ten_turned(state: Any, events: Sequence[Any]) -> object:
    from croupier.engine.games.chinese_ten import Turned

    return next(event.card for event in events if isinstance(event, Turned))


def _platinum_fish_rolls(state: Any, seat: int, action: Any) -> Worked | None:
    """A roll, by its dice (36 equally likely): the first stock card of a rolled value from the top
    (the stock's order as the referee holds it), a match if the hand holds its partner (the
    engine's own rule), else a card more in the hand; nothing if no such card is in the stock."""
    from croupier.engine.games.platinum_fish import Roll

    if not isinstance(action, Roll):
        return None
    stock, held = len(state.stock), sum(len(h) for h in state.hands)
    top: dict[Any, int] = {}  # each rank's first card from the top (the stock's end)
    for index in range(stock - 1, -1, -1):
        rank = state.stock[index].rank
        if rank not in top:
            top[rank] = index
            if len(top) == RANKS:
                break
    base = tuple(len(m) + HAND_WEIGHT * len(h) for m, h in zip(state.matches, state.hands, strict=True))
    found: dict[object, Seen] = {}
    alike: dict[Seen, int] = {}
    for ranks, rolls in _rolls(state.options):
        places = [top[rank] for rank in ranks if rank in top]
        seen: Seen = (base, (stock + held) / 2)
        if places:
            card = state.stock[max(places)]
            matched = state._partner(seat, card) is not None
            if stock > 1:
                scores = list(base)
                scores[seat] += (
                    1 - HAND_WEIGHT if matched else HAND_WEIGHT
                )  # a pair laid, or a card more held
                seen = (tuple(scores), (stock - 1 + held + (-1 if matched else 1)) / 2)
            else:  # the stock's last card: over, the matches alone count
                scores = [float(len(m)) for m in state.matches]
                scores[seat] += matched
                seen = (tuple(scores), 0.0)
        for dice in rolls:
            found[dice] = seen
        alike[seen] = alike.get(seen, 0) + len(rolls)
    return found, alike


_ROLLS: dict[Any, list[tuple[tuple[Any, ...], list[tuple[int, int]]]]] = {}


def _rolls(options: Any) -> list[tuple[tuple[Any, ...], list[tuple[int, int]]]]:
    """The 36 rolls of two dice grouped by the ranks they look for (roll_targets), per variant."""
    known = _ROLLS.get(options)
    if known is None:
        from croupier.engine.games.platinum_fish import roll_targets

        groups: dict[tuple[Any, ...], list[tuple[int, int]]] = {}
        for dice in ((d1, d2) for d1 in range(1, 7) for d2 in range(1, 7)):
            groups.setdefault(roll_targets(dice, options)[1], []).append(dice)
        known = _ROLLS[options] = list(groups.items())
    return known


def _platinum_fish_rolled(state: Any, events: Sequence[Any]) -> object:
    from croupier.engine.games.platinum_fish import Rolled

    return next(event.dice for event in events if isinstance(event, Rolled))


WORKED_OUT: dict[
    str, tuple[Callable[[Any, int, Any], Worked | None], Callable[[Any, Sequence[Any]], object]]
] = {
    "chinese_ten": (_chinese_ten_turn_ups, _chinese_ten_turned),
    "platinum_fish": (_platinum_fish_rolls, _platinum_fish_rolled),
}
"""The frequent chance events worked out without a replay per outcome (the correction's cost): every
outcome by what chance chose, and how to read chance's choice from the step's events."""


_DECK_POINTS: dict[Any, int] = {}


def _deck_points(scoring: Any) -> int:
    """A Chinese Ten deck's points under ``scoring`` (read once)."""
    points = _DECK_POINTS.get(scoring)
    if points is None:
        from croupier.engine.cards import STANDARD_DECK
        from croupier.engine.games.chinese_ten import pile_points

        points = _DECK_POINTS[scoring] = pile_points(list(STANDARD_DECK), scoring)
    return points


def _platinum_fish(state: Any) -> tuple[list[float], float]:
    scores = [len(m) + HAND_WEIGHT * len(h) for m, h in zip(state.matches, state.hands, strict=True)]
    return scores, (len(state.stock) + sum(len(h) for h in state.hands)) / 2


RANKS = 13
HAND_WEIGHT = 0.56
"""A card in a Platinum Fish hand is worth this share of a match at the end (fitted offline on the
heuristic's playouts against a weakened one: docs/testing-bots.md)."""


def _spoil_five(state: Any) -> tuple[list[float], float]:
    options = state.options
    deals = options.deals or 2 * options.players
    pot = options.ante * options.players
    return [float(b) for b in state.banks], state.pool + max(0, deals - state.deal) * pot


def _pair_battle(state: Any) -> tuple[list[float], float]:
    cards = sum(len(h) for h in state.hands) + sum(len(r) for r in state.reserves)
    return [float(s) for s in state.scores], float(cards)


PROGRESS: dict[str, Progress] = {
    "chinese_ten": _chinese_ten,
    "platinum_fish": _platinum_fish,
    "spoil_five": _spoil_five,
    "pair_battle": _pair_battle,
}


def _chinese_ten_draws(state: Any, seat: int, action: Any) -> bool:
    from croupier.engine.games.chinese_ten import Play

    return isinstance(action, Play) or not (
        state.stock or any(state.hands)
    )  # a turn-up, or the last pick of a deal


def _platinum_fish_draws(state: Any, seat: int, action: Any) -> bool:
    from croupier.engine.games.platinum_fish import Roll

    return isinstance(action, Roll)


def _spoil_five_draws(state: Any, seat: int, action: Any) -> bool:
    from croupier.engine.games.spoil_five import TakePool

    # A trick's last card or taking the pool may end the deal: the next one is shuffled.
    return len(state.trick) == state.players - 1 or isinstance(action, TakePool)


def _pair_battle_draws(state: Any, seat: int, action: Any) -> bool:
    return sum(s is None for s in state.submissions) == 1  # lockstep's last answer: the order is drawn


MAY_DRAW: dict[str, Callable[[Any, int, Any], bool]] = {
    "chinese_ten": _chinese_ten_draws,
    "platinum_fish": _platinum_fish_draws,
    "spoil_five": _spoil_five_draws,
    "pair_battle": _pair_battle_draws,
}
"""Whether a step may draw from the Rng or turn a stock card (False only where it cannot)."""


def _twin(state: Any) -> Any:
    """A copy of a state whose mutable parts are lists (of lists) of immutable values: those copied,
    the rest shared (its ``rng`` too: the meter gives each twin one of its own); many times quicker
    than ``deepcopy``, which a chance event calls once per outcome."""
    values = {}
    for name in _FIELDS.setdefault(type(state), tuple(f.name for f in dataclasses.fields(state) if f.init)):
        value = getattr(state, name)
        if type(value) is list:
            value = [item[:] if type(item) is list else item for item in value]
        values[name] = value
    return type(state)(**values)


_FIELDS: dict[type, tuple[str, ...]] = {}
TWIN: dict[str, Callable[[Any], Any]] = {"chinese_ten": _twin}
"""Games whose states ``_twin`` copies exactly (tests/clients/test_luck.py); others use ``copy``."""
TURN_UP = frozenset({"chinese_ten"})
"""Games whose stock's top card, when taken, is uniform among the unrevealed stock (luck.py's docstring)."""
