"""The conformance harness every registered game must pass.

Plain functions over any ``GameSpec``, so a new game gets the whole suite by
being registered (and naming its scoring invariant in ``INVARIANTS``).
Failures raise AssertionError with what a game author needs to find the bug.
"""

from __future__ import annotations

import copy
import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from croupier.engine.cards import STANDARD_DECK, card_order
from croupier.engine.core import Action, Event, GameSpec, GameState, IllegalAction
from croupier.engine.rng import Rng

State = GameState[Any, Any]
Step = tuple[float, int, Action] | float
"""A timeline entry: an action (time, seat, action) or a bare float, a call of advance(time)."""

PLAYOUTS = int(os.environ.get("CROUPIER_PLAYOUTS", "100"))
"""Random playouts per game variant; raise it for a deeper soak."""
MAX_STEPS = 50_000
CLOCK_STEP = 0.02
"""Referee seconds that pass between two actions in a playout (games with clocks)."""


# --- per-game invariants (called after every action) ---------------------------------


def _chinese_ten(state: Any) -> None:
    from croupier.engine.games.chinese_ten import Scoring, card_points

    per_deal = 240 if state.options.scoring is Scoring.CHINESE_TEN else 218
    for deal, points in enumerate(state.deal_results, 1):
        assert sum(points) == per_deal, f"deal {deal} scored {points}, not {per_deal} in all"
    if not state.over:
        kept = [sum(card_points(c, state.options.scoring) for c in pile) for pile in state.piles]
        assert state.points == kept, f"kept pile points {state.points} != recounted {kept}"
    if not state.over:  # every point of the deal is somewhere: piles, table, hands, stock
        cards = [*state.table, *state.stock, *(c for h in state.hands for c in h)]
        cards += [c for p in state.piles for c in p] + ([state.turned] if state.turned else [])
        assert len(cards) == 52, f"{len(cards)} cards in play, not 52"
        assert sum(card_points(c, state.options.scoring) for c in cards) == per_deal
    if state.deal_results:
        assert state.totals == [sum(col) for col in zip(*state.deal_results, strict=True)]


def _platinum_fish(state: Any) -> None:
    from collections import Counter

    from croupier.engine.cards import DOUBLE_DECK
    from croupier.engine.games.platinum_fish import Phase

    places = [state.stock, state.discard, *state.hands, *([c for p in m for c in p] for m in state.matches)]
    assert sum(map(len, places)) == 104, "cards appeared or vanished"
    assert all(a.rank == b.rank for pairs in state.matches for a, b in pairs), "a match of unequal ranks"
    for seat, hand in enumerate(state.hands):
        ranks = [c.rank for c in hand]
        assert len(ranks) == len(set(ranks)), f"seat {seat} holds an unlaid pair: {hand}"
    assert (state.phase is Phase.OVER) == (not state.stock), "the game ends exactly when the stock empties"
    if state.phase is Phase.OVER:  # the full multiset check once a game: hashing 104 cards is slow
        everything = Counter(c for place in places for c in place)
        assert everything == Counter(DOUBLE_DECK), "the 104 cards (each twice) are not all accounted for"
        assert state.outcome().scores == tuple(len(m) for m in state.matches)


def _pair_battle(state: Any) -> None:
    from collections import Counter

    from croupier.engine.cards import STANDARD_DECK
    from croupier.engine.games.pair_battle import HAND_SIZE, card_points

    n = state.players
    zones = [*state.hands, *state.reserves, *state.laid, state.out_of_play]
    cards = Counter(c for zone in zones for c in zone)
    assert cards == Counter(STANDARD_DECK), "the 52 cards are not all accounted for"
    assert all(len(h) <= HAND_SIZE[n] for h in state.hands), "a hand holds more cards than were dealt to it"
    for seat in range(n):
        laid, finished = state.laid[seat], seat in state.finishers
        emptied = not state.hands[seat] and not state.reserves[seat]
        assert finished == emptied, f"seat {seat}: finished {finished}, hand and reserve emptied {emptied}"
        assert state.hands[seat] or not state.reserves[seat], f"seat {seat}: empty hand left unrefilled"
        fours = sum(1 for rank in {c.rank for c in laid} if sum(c.rank is rank for c in laid) == 4)
        points = sum(card_points(c) for c in laid) + 10 * finished + 5 * fours - 10 * state.penalties[seat]
        assert state.scores[seat] == points, f"seat {seat} scores {state.scores[seat]}, not {points}"
    if not state.is_over() and state.window_closes_at is None and state.started:
        assert state.to_act(), "nobody can act, no window is open, yet the game goes on"


_WHOLE_DECK = sorted(map(card_order, STANDARD_DECK))
"""The deck as sort keys: comparing sorted keys is cheaper than hashing cards."""


def _spoil_five(state: Any) -> None:
    banks, pool = state.banks, state.pool
    chips = sum(banks) + pool + state.unassigned
    expected = state.players * state.options.bank
    assert chips == expected, f"chips not conserved: {banks} + pool {pool} + {state.unassigned} != {expected}"
    assert min(banks) >= 0 and pool >= 0, f"negative chips: banks {banks}, pool {pool}"
    played = [c for _, c in state.trick] + [c for t in state.tricks for _, c in t.plays]
    face_up = [] if state.robber is not None else [state.turn_up]
    discard = [] if state.discard is None else [state.discard]
    cards = [*played, *face_up, *discard, *state.stock, *(c for h in state.hands for c in h)]
    assert sorted(map(card_order, cards)) == _WHOLE_DECK, "the 52 cards are not all accounted for"
    assert sum(state.won) == len(state.tricks), "tricks won do not add up to tricks played"
    in_trick = {seat for seat, _ in state.trick}
    for seat, hand in enumerate(state.hands):
        assert len(hand) == 5 - len(state.tricks) - (seat in in_trick), f"seat {seat} holds {len(hand)} cards"


INVARIANTS: dict[str, Callable[[Any], None]] = {
    "chinese_ten": _chinese_ten,
    "pair_battle": _pair_battle,
    "platinum_fish": _platinum_fish,
    "spoil_five": _spoil_five,
}


# --- playing -------------------------------------------------------------------------


@dataclass
class Playout:
    """One random match: the choices made, so it can be replayed exactly."""

    spec: GameSpec[Any]
    options: Any
    seed: int
    state: State = field(init=False)
    now: float = 0.0
    timeline: list[Step] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    actions: int = 0

    def __post_init__(self) -> None:
        self.state = self.spec.new_game(self.options, Rng(self.seed))
        self.events = list(self.state.opening)

    def let_time_pass(self) -> None:
        """Advance the clock; jump to the game's next wake-up when nobody can act."""
        state = self.state
        self.now += CLOCK_STEP
        wake = state.wake_at()
        if not state.to_act() and wake is not None:
            self.now = max(self.now, wake)
        if wake is not None and wake <= self.now:
            self.events.extend(state.advance(self.now))
            self.timeline.append(self.now)

    def step(self, chooser: random.Random) -> tuple[int, Action] | None:
        """Make one random legal move; None when the match is over."""
        state = self.state
        for _ in range(100):
            if state.is_over():
                return None
            self.let_time_pass()
            if state.to_act():
                break
        else:
            raise AssertionError(f"stuck: not over, nobody to act, no wake-up ({self.describe()})")
        if state.is_over():
            return None
        seat = chooser.choice(sorted(state.to_act()))
        legal = state.legal_actions(seat)
        assert legal, f"seat {seat} is to act but has no legal action ({self.describe()})"
        action = chooser.choice(legal)
        self.events.extend(state.apply(seat, action, self.now))
        self.timeline.append((self.now, seat, action))
        self.actions += 1
        return seat, action

    def describe(self) -> str:
        return f"{self.spec.name} {self.options} seed {self.seed} after {self.actions} actions"


def replay(spec: GameSpec[Any], options: Any, seed: int, timeline: list[Step]) -> tuple[State, list[Event]]:
    """Rebuild a match from its seed and timeline; returns the state and every event."""
    state = spec.new_game(options, Rng(seed))
    events: list[Event] = list(state.opening)
    for entry in timeline:
        if isinstance(entry, float):
            events.extend(state.advance(entry))
        else:
            now, seat, action = entry
            events.extend(state.apply(seat, action, now))
    return state, events


# --- the checks -----------------------------------------------------------------------


def check_determinism(spec: GameSpec[Any], options: Any, seed: int) -> None:
    """Same seed and same actions give the same events and the same views."""
    first = Playout(spec, options, seed)
    chooser = random.Random(seed)
    while first.step(chooser):
        pass
    second, events = replay(spec, options, seed, first.timeline)
    assert events == first.events, f"events differ on replay ({first.describe()})"
    for seat in range(first.state.players):
        assert second.view(seat) == first.state.view(seat)
    assert second.full_view() == first.state.full_view()
    assert second.outcome() == first.state.outcome()


def check_closure(spec: GameSpec[Any], options: Any, seed: int, action_pool: dict[str, Action]) -> None:
    """A random playout ends; at sampled moments every listed action applies and
    unlisted ones (drawn from actions seen in other playouts) raise IllegalAction
    and leave the state exactly as it was."""
    playout = Playout(spec, options, seed)
    chooser = random.Random(seed ^ 0x5EED)
    invariant = INVARIANTS[spec.name]
    state = playout.state
    invariant(state)
    while playout.actions < MAX_STEPS:
        if not state.is_over() and chooser.random() < 0.05:
            _check_moment(playout, chooser, action_pool)
        if playout.step(chooser) is None:
            break
        invariant(state)
    else:
        raise AssertionError(f"did not end within {MAX_STEPS} actions ({playout.describe()})")
    _check_outcome(state)


def _check_moment(playout: Playout, chooser: random.Random, action_pool: dict[str, Action]) -> None:
    state, spec = playout.state, playout.spec
    acting = state.to_act()
    for seat in range(state.players):
        legal = state.legal_actions(seat)
        assert bool(legal) == (seat in acting), (
            f"seat {seat}: to_act says {seat in acting} but it has {len(legal)} legal actions"
        )
        for action in legal:
            text = str(action)
            assert spec.parse_action(text) == action, f"text form {text!r} does not read back"
            action_pool.setdefault(text, action)
        for action in chooser.sample(legal, min(len(legal), 4)):
            copy.deepcopy(state).apply(seat, action, playout.now)  # must not raise
        legal_texts = {str(a) for a in legal}
        unlisted = [a for text, a in action_pool.items() if text not in legal_texts]
        for action in chooser.sample(unlisted, min(len(unlisted), 8)):
            before = copy.deepcopy(state)
            try:
                state.apply(seat, action, playout.now)
            except IllegalAction as refusal:
                assert str(refusal), "a refusal must say why"
            else:
                raise AssertionError(f"seat {seat}: unlisted {action} was accepted ({playout.describe()})")
            assert state == before, f"refused {action} changed the state ({playout.describe()})"


def _check_outcome(state: State) -> None:
    assert state.is_over() and not state.to_act()
    outcome = state.outcome()
    n = state.players
    assert len(outcome.scores) == n and len(outcome.places) == n
    assert min(outcome.places) == 1 and outcome.winners == {s for s in range(n) if outcome.places[s] == 1}


def check_non_interference(state: State, seat: int, rng: Rng) -> bool:
    """Re-deal what ``seat`` cannot see; its view and legal actions must not move.

    Returns whether the re-deal changed anything at all, so callers can make
    sure the check was not vacuous.
    """
    twin = state.resample_hidden(seat, rng)
    assert twin.view(seat) == state.view(seat), (
        f"seat {seat}'s view changed when only cards it cannot see were re-dealt: a hidden card leaks"
    )
    assert twin.legal_actions(seat) == state.legal_actions(seat), (
        f"seat {seat}'s legal actions depend on cards it cannot see"
    )
    assert twin.public_view() == state.public_view(), "the public view depends on hidden cards"
    return bool(twin.full_view() != state.full_view())


def check_non_interference_playout(spec: GameSpec[Any], options: Any, seed: int) -> int:
    """Non-interference at many moments of one playout; returns how many re-deals changed something."""
    playout = Playout(spec, options, seed)
    chooser = random.Random(seed)
    rng = Rng(seed + 1)
    changed = 0
    while True:
        for seat in range(playout.state.players):
            changed += check_non_interference(playout.state, seat, rng)
        if playout.step(chooser) is None:
            return changed
