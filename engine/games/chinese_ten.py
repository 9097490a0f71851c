"""Chinese Ten, with its Red Frog Black Frog scoring (rules-notes section 4).

A fishing game: a card from hand captures one table card that sums with it
to ten (A..9) or has its rank (10..K); then the top stock card is turned up
and does the same for the player. A match is deals until someone reaches
the target at the end of a deal with a single highest total.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from enum import Enum

from croupier.engine.cards import STANDARD_DECK, Card, Color, Rank, Suit, format_cards, parse_cards
from croupier.engine.core import (
    Action,
    Event,
    GameSpec,
    IllegalAction,
    Immutable,
    MalformedInput,
    NotYourTurn,
    Outcome,
    Seat,
    StateBase,
    bounded,
    check_bounds,
    check_players,
    deal_round,
    redeal,
    shared,
)
from croupier.engine.rng import Rng

__all__ = [
    "CAPTURE_PARTNER",
    "HAND_SIZE",
    "LAYOUT_SET_RANKS",
    "LAYOUT_SIZE",
    "PICTURE_RANKS",
    "SPEC",
    "Captured",
    "ChineseTenAction",
    "ChineseTenState",
    "ChineseTenView",
    "DealScored",
    "DealStarted",
    "LayoutCaptured",
    "MatchOver",
    "Options",
    "Pick",
    "Play",
    "Played",
    "Scoring",
    "Tabled",
    "Turned",
    "captures",
    "card_points",
    "new_game",
    "parse_action",
    "pile_points",
]

HAND_SIZE = {2: 12, 3: 8, 4: 6}
LAYOUT_SIZE = 4
PICTURE_RANKS = (Rank.TEN, Rank.JACK, Rank.QUEEN, Rank.KING)
LAYOUT_SET_RANKS = (*PICTURE_RANKS, Rank.FIVE)
"""Ranks whose three or four in the first layout trigger the special captures."""


class Scoring(Enum):
    CHINESE_TEN = "chinese_ten"
    """Red cards and the ace of spades: 240 points a deal."""
    RED_FROG = "red_frog"
    """Red Frog Black Frog: black cards, the ace of spades 50: 218 points a deal."""


@dataclass(frozen=True)
class Options(Immutable):
    players: int = 3
    scoring: Scoring = Scoring.CHINESE_TEN
    target: int = bounded(1000, 1, 10_000, "points")
    """The match ends after the deal in which someone reaches this total (ties at the top play on)."""

    def __post_init__(self) -> None:
        check_players(self.players, 2, 4, "Chinese Ten")
        check_bounds(self)


def card_points(card: Card, scoring: Scoring) -> int:
    return (_CHINESE_TEN_POINTS if scoring is Scoring.CHINESE_TEN else _RED_FROG_POINTS)[card]


def _work_out_points(card: Card, scoring: Scoring) -> int:
    is_ace_of_spades = card.rank is Rank.ACE and card.suit is Suit.SPADES
    if scoring is Scoring.CHINESE_TEN:
        if is_ace_of_spades:
            return 30
        if card.color is not Color.RED:
            return 0
        if card.rank is Rank.ACE:
            return 20
        return int(card.rank) if card.rank <= Rank.EIGHT else 10
    if is_ace_of_spades:
        return 50
    if card.color is not Color.BLACK or card.rank is Rank.ACE:
        return 0
    return int(card.rank) if card.rank <= Rank.NINE else 10


_CHINESE_TEN_POINTS = {card: _work_out_points(card, Scoring.CHINESE_TEN) for card in STANDARD_DECK}
_RED_FROG_POINTS = {card: _work_out_points(card, Scoring.RED_FROG) for card in STANDARD_DECK}
"""Every card's points, worked out once per scoring."""


def pile_points(cards: list[Card] | tuple[Card, ...], scoring: Scoring) -> int:
    points = _CHINESE_TEN_POINTS if scoring is Scoring.CHINESE_TEN else _RED_FROG_POINTS
    total = 0
    for card in cards:
        total += points[card]
    return total


def captures(card: Card, table: list[Card] | tuple[Card, ...]) -> list[Card]:
    """The table cards ``card`` can capture, one at a time: a sum of ten for
    A..9 (an Ace counts 1), the same rank for 10, J, Q, K.

    >>> from croupier.engine.cards import parse_cards
    >>> captures(Card.parse("7h"), parse_cards("3c 3d 10s"))
    [Card(3c), Card(3d)]
    >>> captures(Card.parse("Kh"), parse_cards("10s Kc"))
    [Card(Kc)]
    """
    partner = CAPTURE_PARTNER[card.rank]
    return [t for t in table if t.rank == partner]


def _low_value(rank: Rank) -> int:
    return 1 if rank is Rank.ACE else int(rank)


def _rank_of_value(value: int) -> Rank:
    return Rank.ACE if value == 1 else Rank(value)


CAPTURE_PARTNER: dict[Rank, Rank] = {
    rank: rank if rank in PICTURE_RANKS else _rank_of_value(10 - _low_value(rank)) for rank in Rank
}
"""The one rank each rank captures; computed once (the hot path asks it per card)."""


# --- actions -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Play(Action):
    """Play ``card`` from hand, capturing ``taken`` (empty: the card joins the table).

    Text: ``7h`` (no capture), ``7h:3c``, ``5h:5c,5d,5s`` (the layout's three).
    """

    card: Card
    """The card played from hand."""
    taken: tuple[Card, ...] = ()
    """The table cards it captures; empty: it joins the table."""

    def __str__(self) -> str:
        if not self.taken:
            return str(self.card)
        return f"{self.card}:{','.join(str(c) for c in self.taken)}"


@dataclass(frozen=True, slots=True)
class Pick(Action):
    """Choose which table card the turned-up stock card captures. Text: ``pick 3c``."""

    target: Card
    """The table card the turned-up card captures."""

    def __str__(self) -> str:
        return f"pick {self.target}"


ChineseTenAction = Play | Pick


def parse_action(text: str) -> ChineseTenAction:
    words = text.split()
    if len(words) == 2 and words[0].lower() == "pick":
        return Pick(Card.parse(words[1]))
    if len(words) != 1:
        raise MalformedInput(f"not a Chinese Ten action: {text!r} (try '7h', '7h:3c' or 'pick 3c')")
    card_text, _, taken_text = words[0].partition(":")
    return Play(Card.parse(card_text), parse_cards(taken_text))


# --- events ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DealStarted(Event):
    deal: int
    dealer: Seat
    layout: tuple[Card, ...]

    def __str__(self) -> str:
        return f"deal {self.deal}: seat {self.dealer} deals; the layout is {format_cards(self.layout)}"


@dataclass(frozen=True, slots=True)
class LayoutCaptured(Event):
    """Four of a kind in the layout: the dealer takes them before play."""

    dealer: Seat
    cards: tuple[Card, ...]

    def __str__(self) -> str:
        return f"seat {self.dealer} (dealer) captures the layout's four: {format_cards(self.cards)}"


@dataclass(frozen=True, slots=True)
class Played(Event):
    seat: Seat
    card: Card

    def __str__(self) -> str:
        return f"seat {self.seat} plays {self.card}"


@dataclass(frozen=True, slots=True)
class Turned(Event):
    seat: Seat
    card: Card

    def __str__(self) -> str:
        return f"seat {self.seat} turns up {self.card}"


@dataclass(frozen=True, slots=True)
class Captured(Event):
    seat: Seat
    card: Card
    taken: tuple[Card, ...]

    def __str__(self) -> str:
        return f"seat {self.seat}'s {self.card} captures {format_cards(self.taken)}"


@dataclass(frozen=True, slots=True)
class Tabled(Event):
    card: Card

    def __str__(self) -> str:
        return f"{self.card} joins the table"


@dataclass(frozen=True, slots=True)
class DealScored(Event):
    deal: int
    points: tuple[int, ...]
    totals: tuple[int, ...]

    def __str__(self) -> str:
        return f"deal {self.deal} scores {list(self.points)}; totals {list(self.totals)}"


@dataclass(frozen=True, slots=True)
class MatchOver(Event):
    totals: tuple[int, ...]
    winners: tuple[Seat, ...]

    def __str__(self) -> str:
        return f"match over: totals {list(self.totals)}; winner(s) seat {', '.join(map(str, self.winners))}"


# --- view --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, init=False)
class ChineseTenView:
    """What one seat (or a spectator, ``seat=None``) may know.

    ``hands[i]`` is seat i's hand where the viewer may see it, else None;
    ``stock`` is the stock's order only in the full (admin) view.
    """

    seat: Seat | None
    """The viewer's seat; None for a spectator or the full (admin) view."""
    scoring: Scoring
    """Chinese Ten or Red Frog Black Frog scoring."""
    target: int
    """The total that ends the match."""
    deal: int
    """This deal's number, from 1."""
    dealer: Seat
    """The dealer's seat."""
    to_act: Seat | None
    """The seat whose decision it is; None when the game is over."""
    hands: tuple[tuple[Card, ...] | None, ...]
    """Each seat's hand where the viewer may see it (its own; all in the full view), else None."""
    hand_sizes: tuple[int, ...]
    """How many cards each seat holds."""
    table: tuple[Card, ...]
    """The face-up layout cards that may be captured."""
    stock_size: int
    """Cards left in the stock."""
    turned: Card | None
    """The turned-up stock card waiting for its player to pick a target."""
    captured: tuple[tuple[Card, ...], ...]
    """Each seat's captured cards this deal."""
    deal_points: tuple[int, ...]
    """Each seat's points this deal so far."""
    totals: tuple[int, ...]
    """Each seat's points over the finished deals."""
    stock: tuple[Card, ...] | None = None
    """The stock in its order; only in the full (admin) view, else None."""

    def __init__(
        self,
        seat: Seat | None,
        scoring: Scoring,
        target: int,
        deal: int,
        dealer: Seat,
        to_act: Seat | None,
        hands: tuple[tuple[Card, ...] | None, ...],
        hand_sizes: tuple[int, ...],
        table: tuple[Card, ...],
        stock_size: int,
        turned: Card | None,
        captured: tuple[tuple[Card, ...], ...],
        deal_points: tuple[int, ...],
        totals: tuple[int, ...],
        stock: tuple[Card, ...] | None = None,
    ) -> None:
        # Written out rather than generated (init=False): mypyc compiles this one, a view is built
        # at every decision, and the dataclass's own __init__ stays interpreted (docs/benchmarks.md).
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "scoring", scoring)
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "deal", deal)
        object.__setattr__(self, "dealer", dealer)
        object.__setattr__(self, "to_act", to_act)
        object.__setattr__(self, "hands", hands)
        object.__setattr__(self, "hand_sizes", hand_sizes)
        object.__setattr__(self, "table", table)
        object.__setattr__(self, "stock_size", stock_size)
        object.__setattr__(self, "turned", turned)
        object.__setattr__(self, "captured", captured)
        object.__setattr__(self, "deal_points", deal_points)
        object.__setattr__(self, "totals", totals)
        object.__setattr__(self, "stock", stock)


# --- state ---------------------------------------------------------------------------


# What a turn makes, each value built once (``shared``): cards, seats and captures are few.
_PLAYS: dict[tuple[Card, tuple[Card, ...]], Play] = {}
_PLAYED: dict[tuple[Seat, Card], Played] = {}
_CAPTURED: dict[tuple[Seat, Card, tuple[Card, ...]], Captured] = {}
_TABLED: dict[tuple[Card], Tabled] = {}
_TURNED: dict[tuple[Seat, Card], Turned] = {}


@dataclass(eq=True)
class ChineseTenState(StateBase):
    options: Options
    rng: Rng
    dealer: Seat = 0
    deal: int = 0
    hands: list[list[Card]] = field(default_factory=list)
    table: list[Card] = field(default_factory=list)
    stock: list[Card] = field(default_factory=list)
    piles: list[list[Card]] = field(default_factory=list)
    points: list[int] = field(default_factory=list)
    """Each pile's points this deal, kept as cards are captured (views show them every decision)."""
    totals: list[int] = field(default_factory=list)
    deal_results: list[tuple[int, ...]] = field(default_factory=list)
    turn: Seat = 1
    turned: Card | None = None
    layout_set_rank: Rank | None = None
    """Rank of the layout's three of a kind, whose fourth card captures all three."""
    over: bool = False
    opening: tuple[Event, ...] = ()
    """The first deal's events, made by ``new_game``."""

    def __deepcopy__(self, memo: dict[int, object]) -> ChineseTenState:
        """Copy the containers only: cards, results and events are immutable values, and a
        generic deepcopy rebuilt every card (a boss copies a state for every action it weighs)."""
        twin = copy.copy(self)
        twin.rng = copy.deepcopy(self.rng, memo)
        twin.hands = [hand[:] for hand in self.hands]
        twin.table = self.table[:]
        twin.stock = self.stock[:]
        twin.piles = [pile[:] for pile in self.piles]
        twin.points = self.points[:]
        twin.totals = self.totals[:]
        twin.deal_results = self.deal_results[:]
        return twin

    @property
    def players(self) -> int:
        return self.options.players

    # - dealing -

    def start_deal(self, deck: list[Card] | None = None) -> list[Event]:
        """Deal a new deal from ``deck`` (a shuffled deck if None; tests stack it).

        The deck is dealt from the front: each hand in turn from the dealer's
        left, then the layout, then the rest is the stock (top first).
        """
        n = self.players
        if deck is None:
            deck = self.rng.shuffled(STANDARD_DECK)
        self.deal += 1
        self.hands, rest = deal_round(deck, n, self.dealer, (HAND_SIZE[n],))
        self.table, self.stock = rest[:LAYOUT_SIZE], rest[LAYOUT_SIZE:]
        self.piles = [[] for _ in range(n)]
        self.points = [0] * n
        self.turn = (self.dealer + 1) % n
        self.turned = None
        self.layout_set_rank = None
        events: list[Event] = [DealStarted(self.deal, self.dealer, tuple(self.table))]
        for rank in LAYOUT_SET_RANKS:
            same = [c for c in self.table if c.rank is rank]
            if len(same) == 4:
                self.table = []
                self.piles[self.dealer].extend(same)
                self.points[self.dealer] += pile_points(same, self.options.scoring)
                events.append(LayoutCaptured(self.dealer, tuple(same)))
            elif len(same) == 3:
                self.layout_set_rank = rank
        return events

    # - the protocol -

    def to_act(self) -> frozenset[Seat]:
        return frozenset() if self.over else frozenset((self.turn,))

    def legal_actions(self, seat: Seat) -> list[ChineseTenAction]:
        if self.over or seat != self.turn:
            return []
        if self.turned is not None:
            return [Pick(t) for t in captures(self.turned, self.table)]
        actions: list[ChineseTenAction] = []
        by_rank = self._table_by_rank()  # once for the whole hand, not a table scan per card
        for card in self.hands[seat]:
            for taken in self._capture_options(card, by_rank) or [()]:
                actions.append(shared(_PLAYS, Play, card, taken))
        return actions

    def _table_by_rank(self) -> dict[Rank, list[Card]]:
        by_rank: dict[Rank, list[Card]] = {}
        for card in self.table:
            by_rank.setdefault(card.rank, []).append(card)
        return by_rank

    def _capture_options(
        self, card: Card, by_rank: dict[Rank, list[Card]] | None = None
    ) -> list[tuple[Card, ...]]:
        """Every way ``card`` may capture: one target each (what ``captures`` finds), or the
        layout's three at once. ``by_rank``: the table grouped by ``_table_by_rank``, if at hand."""
        if by_rank is None:  # one card: a scan of the table, not the table grouped
            if card.rank is self.layout_set_rank:
                three = [t for t in self.table if t.rank is card.rank]
                if len(three) == 3:
                    return [tuple(three)]
            partner = CAPTURE_PARTNER[card.rank]
            return [(t,) for t in self.table if t.rank is partner]
        if card.rank is self.layout_set_rank:
            three = by_rank.get(card.rank, [])
            if len(three) == 3:
                return [tuple(three)]
        return [(t,) for t in by_rank.get(CAPTURE_PARTNER[card.rank], ())]

    def apply(self, seat: Seat, action: ChineseTenAction, now: float = 0.0) -> list[Event]:
        self._check(seat, action)
        if isinstance(action, Pick):
            assert self.turned is not None
            card, self.turned = self.turned, None
            events: list[Event] = [self._capture(seat, card, (action.target,))]
        else:
            self.hands[seat].remove(action.card)
            events = [shared(_PLAYED, Played, seat, action.card)]
            taken = action.taken
            events.append(self._capture(seat, action.card, taken) if taken else self._lay(action.card))
            events.extend(self._turn_up(seat))
        if self.turned is None:
            events.extend(self._end_turn())
        return events

    def _check(self, seat: Seat, action: ChineseTenAction) -> None:
        if self.over:
            raise IllegalAction("the match is over")
        if seat != self.turn:
            raise NotYourTurn(f"not your turn: seat {self.turn} is to act")
        if self.turned is not None:
            if not isinstance(action, Pick):
                raise IllegalAction(f"pick what your turned-up {self.turned} captures first")
            targets = captures(self.turned, self.table)
            if action.target not in targets:
                raise IllegalAction(
                    f"{self.turned} cannot capture {action.target}: pick one of {format_cards(targets)}"
                )
            return
        if isinstance(action, Pick):
            raise IllegalAction("nothing to pick: no turned-up card is waiting; play a card from your hand")
        if action.card not in self.hands[seat]:
            raise IllegalAction(f"you do not hold {action.card}")
        options = self._capture_options(action.card)
        if action.taken not in (options or [()]):
            if options:
                choices = " or ".join(str(Play(action.card, taken)) for taken in options)
                raise IllegalAction(f"{action.card} must capture: play {choices}")
            raise IllegalAction(f"{action.card} captures nothing here: play it as {action.card}")

    def _capture(self, seat: Seat, card: Card, taken: tuple[Card, ...]) -> Event:
        for target in taken:
            self.table.remove(target)
        if card.rank is self.layout_set_rank and len(taken) == 3:
            self.layout_set_rank = None
        self.piles[seat].append(card)
        self.piles[seat].extend(taken)
        self.points[seat] += pile_points((card, *taken), self.options.scoring)
        return shared(_CAPTURED, Captured, seat, card, taken)

    def _lay(self, card: Card) -> Event:
        self.table.append(card)
        return shared(_TABLED, Tabled, card)

    def _turn_up(self, seat: Seat) -> list[Event]:
        card = self.stock.pop(0)
        events: list[Event] = [shared(_TURNED, Turned, seat, card)]
        options = self._capture_options(card)
        if len(options) > 1:
            self.turned = card  # the player picks the target
        elif options:
            events.append(self._capture(seat, card, options[0]))
        else:
            events.append(self._lay(card))
        return events

    def _end_turn(self) -> list[Event]:
        n = self.players
        if self.stock or any(self.hands):
            self.turn = (self.turn + 1) % n
            return []
        points = tuple(self.points)
        self.deal_results.append(points)
        self.totals = [t + p for t, p in zip(self.totals, points, strict=True)]
        events: list[Event] = [DealScored(self.deal, points, tuple(self.totals))]
        best = max(self.totals)
        if best >= self.options.target and self.totals.count(best) == 1:
            self.over = True
            events.append(MatchOver(tuple(self.totals), tuple(self.outcome().winners)))
            return events
        self.dealer = (self.dealer + 1) % n
        events.extend(self.start_deal())
        return events

    def view(self, seat: Seat) -> ChineseTenView:
        return self._view(seat, tuple(tuple(h) if i == seat else None for i, h in enumerate(self.hands)))

    def public_view(self) -> ChineseTenView:
        return self._view(None, (None,) * self.players)

    def full_view(self) -> ChineseTenView:
        return self._view(None, tuple(tuple(h) for h in self.hands), stock=tuple(self.stock))

    def _view(
        self,
        seat: Seat | None,
        hands: tuple[tuple[Card, ...] | None, ...],
        stock: tuple[Card, ...] | None = None,
    ) -> ChineseTenView:
        scoring = self.options.scoring
        return ChineseTenView(
            seat=seat,
            scoring=scoring,
            target=self.options.target,
            deal=self.deal,
            dealer=self.dealer,
            to_act=None if self.over else self.turn,
            hands=hands,
            hand_sizes=tuple(len(h) for h in self.hands),
            table=tuple(self.table),
            stock_size=len(self.stock),
            turned=self.turned,
            captured=tuple(tuple(p) for p in self.piles),
            deal_points=tuple(self.points),
            totals=tuple(self.totals),
            stock=stock,
        )

    def is_over(self) -> bool:
        return self.over

    def outcome(self) -> Outcome:
        return Outcome.ranked_by(self.totals)

    def resample_hidden(self, seat: Seat, rng: Rng) -> ChineseTenState:
        twin = copy.deepcopy(self)
        redeal([h for i, h in enumerate(twin.hands) if i != seat] + [twin.stock], rng)
        return twin


def new_game(options: Options, rng: Rng) -> ChineseTenState:
    state = ChineseTenState(options, rng, totals=[0] * options.players)
    state.opening = tuple(state.start_deal())
    return state


SPEC: GameSpec[Options] = GameSpec(
    name="chinese_ten",
    title="Chinese Ten",
    options_type=Options,
    new_game=new_game,
    parse_action=parse_action,
    min_players=2,
    max_players=4,
    test_variants=tuple(
        Options(players=n, scoring=scoring, target=300) for scoring in Scoring for n in (3, 2, 4)
    ),
)
