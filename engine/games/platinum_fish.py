"""Platinum Fish: collect pairs of equal rank from a double deck, with two dice.

Rules as the referee reads them: ``/work/shared/rules-notes.md`` section 1 and
``docs/games/platinum-fish.md``. One state is one game: it ends the moment the
last card leaves the stock, and the seat with most matches wins (ties share).

Invariant the rules keep: every pair is laid the moment it forms, so a hand
never holds two cards of one rank (the deal lays all its pairs at once).
"""

from __future__ import annotations

import bisect
import copy
import dataclasses
import enum
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from croupier.engine.cards import DOUBLE_DECK, Card, Rank, card_order, format_cards
from croupier.engine.core import (
    Action,
    Event,
    GameSpec,
    IllegalAction,
    Immutable,
    InvalidOptions,
    MalformedInput,
    NotYourTurn,
    Outcome,
    Seat,
    StateBase,
    check_players,
    clockwise_from,
    redeal,
    shared,
)
from croupier.engine.rng import Rng

__all__ = [
    "GAME",
    "HISTORY",
    "MIN_DEAL",
    "SPEC",
    "Ask",
    "AskRule",
    "Asked",
    "Dealt",
    "Discarded",
    "Draw",
    "Drew",
    "FishAction",
    "GameOver",
    "Gave",
    "Matched",
    "NoneGiven",
    "NotInStock",
    "Pass",
    "Passed",
    "Phase",
    "PlatinumFishOptions",
    "PlatinumFishState",
    "PlatinumFishView",
    "Roll",
    "Rolled",
    "ShortRoll",
    "StockShuffled",
    "TakeDiscard",
    "Targets",
    "TookDiscard",
    "TookFromStock",
    "TurnPasses",
    "TurnedUp",
    "deal_from",
    "new_game",
    "parse_action",
    "ranks_of_value",
    "roll_targets",
]

GAME = "Platinum Fish"
MIN_PLAYERS, MAX_PLAYERS = 2, 6
MIN_DEAL = 3
"""Fewest cards a seat is dealt: a deal roll under 3 is rolled again (or counts as 3)."""
HISTORY = 32
"""Events kept in a view: the whole deal (at most 26 events) fits in the first view."""


# --- options ---------------------------------------------------------------------


class ShortRoll(enum.Enum):
    """What a deal roll of 1 or 2 does."""

    REROLL = "reroll"
    """Roll again until 3 or more (the seed)."""
    TAKE_THREE = "take_three"
    """Take 3 cards (pagat: "if you rolled a 2, you'd get 3 cards")."""


class Targets(enum.Enum):
    """Which values a roll of two dice looks for."""

    SUM = "sum"
    """The sum only, 2..12 (the seed)."""
    FACES_AND_SUM = "faces_and_sum"
    """Either die's face or the sum, 1 meaning an Ace (pagat)."""


class AskRule(enum.Enum):
    """Whom a player asks when a roll finds nothing in the stock."""

    FIRST_HOLDER = "first_holder"
    """The first opponent clockwise from the asker's left who holds the rank (rules-notes)."""
    NAMED = "named"
    """One opponent the asker names; if they lack the rank the turn ends (pagat)."""


@dataclass(frozen=True)
class PlatinumFishOptions(Immutable):
    players: int = 4
    short_roll: ShortRoll = ShortRoll.REROLL
    targets: Targets = Targets.SUM
    twelve_includes_jack: bool = False
    """A rolled 12 also means a Jack (pagat: "12 = any face card")."""
    dice_match_ends_turn: bool = False
    """A match made with a card gained by rolling (or asking) ends the turn (pagat)."""
    ask: AskRule = AskRule.FIRST_HOLDER
    reshuffle_after_search: bool = False
    """Shuffle the stock after a roll took a card out of it (the seed allows it)."""

    def __post_init__(self) -> None:
        check_players(self.players, MIN_PLAYERS, MAX_PLAYERS, GAME)


# --- card values -------------------------------------------------------------------

_VALUE: dict[Rank, int] = {r: (1 if r is Rank.ACE else min(int(r), 12)) for r in Rank}
"""A=1, 2..10 face value, J=11, Q=12, K=12 (the seed's table)."""


_RANKS_OF_VALUE: dict[int, tuple[Rank, ...]] = {
    number: tuple(r for r in sorted(Rank) if _VALUE[r] == number) for number in range(1, 13)
}


def ranks_of_value(number: int, twelve_includes_jack: bool = False) -> tuple[Rank, ...]:
    """The ranks a rolled number stands for (12: Q, K; with the variant J, Q, K)."""
    if number == 12 and twelve_includes_jack:
        return (Rank.JACK, *_RANKS_OF_VALUE[12])
    return _RANKS_OF_VALUE[number]


def roll_targets(
    dice: tuple[int, int], options: PlatinumFishOptions
) -> tuple[tuple[int, ...], tuple[Rank, ...]]:
    """What a roll looks for: the numbers, ascending (the sum; with ``FACES_AND_SUM`` each die's
    face too), and the ranks they stand for, each once, in the numbers' order."""
    key = (dice, options.targets, options.twelve_includes_jack)
    known = _ROLL_TARGETS.get(key)
    if known is None:  # 36 rolls a variant: each worked out once
        known = _ROLL_TARGETS[key] = _work_out_targets(dice, options)
    return known


_ROLL_TARGETS: dict[tuple[tuple[int, int], Targets, bool], tuple[tuple[int, ...], tuple[Rank, ...]]] = {}


def _work_out_targets(
    dice: tuple[int, int], options: PlatinumFishOptions
) -> tuple[tuple[int, ...], tuple[Rank, ...]]:
    numbers = {dice[0] + dice[1]}
    if options.targets is Targets.FACES_AND_SUM:
        numbers.update(dice)
    targets = tuple(sorted(numbers))
    jack = options.twelve_includes_jack
    return targets, tuple(dict.fromkeys(r for number in targets for r in ranks_of_value(number, jack)))


# --- actions -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FishAction(Action):
    """Base of Platinum Fish's actions."""


@dataclass(frozen=True, slots=True)
class TakeDiscard(FishAction):
    """Take the top discard; only when it makes a match with a hand card."""

    def __str__(self) -> str:
        return "take"


@dataclass(frozen=True, slots=True)
class Draw(FishAction):
    """Take the top stock card."""

    def __str__(self) -> str:
        return "draw"


@dataclass(frozen=True, slots=True)
class Roll(FishAction):
    """Roll both dice and take the first stock card of a rolled value."""

    def __str__(self) -> str:
        return "roll"


@dataclass(frozen=True, slots=True)
class Ask(FishAction):
    """After a roll found nothing: ask for a rank of a rolled value.

    ``seat`` names the opponent in the named-opponent variant and is None otherwise.
    """

    rank: Rank
    """The rank asked for."""
    seat: Seat | None = None
    """The opponent asked (named-opponent variant); None otherwise."""

    def __str__(self) -> str:
        return f"ask {self.rank}" if self.seat is None else f"ask {self.rank} from {self.seat}"


@dataclass(frozen=True, slots=True)
class Pass(FishAction):
    """After a roll found nothing: do not ask; the turn ends."""

    def __str__(self) -> str:
        return "pass"


TAKE, DRAW, ROLL, PASS = TakeDiscard(), Draw(), Roll(), Pass()
_WORDS: dict[str, FishAction] = {"take": TAKE, "draw": DRAW, "roll": ROLL, "pass": PASS}
_FORMS = "take, draw, roll, ask RANK, ask RANK from SEAT, pass"


def parse_action(text: str) -> FishAction:
    """Read an action's text form: ``take``, ``draw``, ``roll``, ``ask Q``, ``ask Q from 2``, ``pass``."""
    words = text.split()
    if len(words) == 1 and words[0].lower() in _WORDS:
        return _WORDS[words[0].lower()]
    if words and words[0].lower() == "ask":
        if len(words) == 2:
            return Ask(Rank.parse(words[1]))
        if len(words) == 4 and words[2].lower() == "from":
            if not words[3].isdigit():
                raise MalformedInput(f"not a seat number: {words[3]!r} in {text!r}")
            return Ask(Rank.parse(words[1]), int(words[3]))
    raise MalformedInput(f"not a Platinum Fish action: {text!r}; use one of: {_FORMS}")


# --- events (all public) ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Dealt(Event):
    """A seat's deal: its die rolls (re-rolls included) and how many cards it got."""

    seat: Seat
    rolls: tuple[int, ...]
    cards: int

    def __str__(self) -> str:
        return f"seat {self.seat} rolls {', '.join(map(str, self.rolls))} and is dealt {self.cards} cards"


@dataclass(frozen=True, slots=True)
class Matched(Event):
    seat: Seat
    cards: tuple[Card, Card]

    def __str__(self) -> str:
        return f"seat {self.seat} lays a match: {format_cards(self.cards)}"


@dataclass(frozen=True, slots=True)
class TurnedUp(Event):
    """The dealer turns the top stock card face up: the discard pile starts."""

    card: Card

    def __str__(self) -> str:
        return f"the dealer turns up {self.card}"


@dataclass(frozen=True, slots=True)
class TookDiscard(Event):
    seat: Seat
    card: Card

    def __str__(self) -> str:
        return f"seat {self.seat} takes {self.card} from the discard pile"


@dataclass(frozen=True, slots=True)
class Drew(Event):
    """The drawn card is shown: it is either laid in a match or discarded face up."""

    seat: Seat
    card: Card

    def __str__(self) -> str:
        return f"seat {self.seat} draws {self.card}"


@dataclass(frozen=True, slots=True)
class Discarded(Event):
    seat: Seat
    card: Card

    def __str__(self) -> str:
        return f"seat {self.seat} discards {self.card}: no match"


@dataclass(frozen=True, slots=True)
class Rolled(Event):
    """Two dice and the values they stand for."""

    seat: Seat
    dice: tuple[int, int]
    targets: tuple[int, ...]

    def __str__(self) -> str:
        looks = " or ".join(map(str, self.targets))
        return f"seat {self.seat} rolls {self.dice[0]} and {self.dice[1]}: looking for {looks}"


@dataclass(frozen=True, slots=True)
class TookFromStock(Event):
    """A roll found a card in the stock; which one stays private unless it makes a match."""

    seat: Seat

    def __str__(self) -> str:
        return f"seat {self.seat} takes a card of the rolled value from the stock"


@dataclass(frozen=True, slots=True)
class NotInStock(Event):
    seat: Seat
    targets: tuple[int, ...]

    def __str__(self) -> str:
        looks = " or ".join(map(str, self.targets))
        return f"no card of value {looks} in the stock: seat {self.seat} may ask or pass"


@dataclass(frozen=True, slots=True)
class Asked(Event):
    """``opponent`` is the named opponent (named variant) or None (first holder clockwise)."""

    seat: Seat
    rank: Rank
    opponent: Seat | None

    def __str__(self) -> str:
        whom = "the table" if self.opponent is None else f"seat {self.opponent}"
        return f"seat {self.seat} asks {whom} for a {self.rank}"


@dataclass(frozen=True, slots=True)
class Gave(Event):
    """The rank is public (it was asked for); the suit stays private unless matched."""

    giver: Seat
    taker: Seat
    rank: Rank

    def __str__(self) -> str:
        return f"seat {self.giver} gives seat {self.taker} a {self.rank}"


@dataclass(frozen=True, slots=True)
class NoneGiven(Event):
    rank: Rank

    def __str__(self) -> str:
        return f"nobody asked holds a {self.rank}"


@dataclass(frozen=True, slots=True)
class Passed(Event):
    seat: Seat

    def __str__(self) -> str:
        return f"seat {self.seat} passes"


@dataclass(frozen=True, slots=True)
class StockShuffled(Event):
    def __str__(self) -> str:
        return "the stock is shuffled"


@dataclass(frozen=True, slots=True)
class TurnPasses(Event):
    seat: Seat
    """The seat whose turn it is now."""

    def __str__(self) -> str:
        return f"seat {self.seat} to play"


@dataclass(frozen=True, slots=True)
class GameOver(Event):
    """The last stock card has left the stock."""

    matches: tuple[int, ...]
    winners: tuple[Seat, ...]

    def __str__(self) -> str:
        won = ", ".join(f"seat {s}" for s in self.winners)
        return f"the stock is empty: matches {', '.join(map(str, self.matches))}; winner(s): {won}"


# The events a turn makes most, each value built once (``shared``).
_TURN_PASSES = tuple(TurnPasses(seat) for seat in range(MAX_PLAYERS))
_PASSED = tuple(Passed(seat) for seat in range(MAX_PLAYERS))
_TOOK_FROM_STOCK = tuple(TookFromStock(seat) for seat in range(MAX_PLAYERS))
_DREW: dict[tuple[Seat, Card], Drew] = {}
_DISCARDED: dict[tuple[Seat, Card], Discarded] = {}
_ROLLED: dict[tuple[Seat, tuple[int, int], tuple[int, ...]], Rolled] = {}


# --- view ------------------------------------------------------------------------------


class Phase(enum.Enum):
    TURN = "turn"
    """The seat to act takes the discard, draws or rolls."""
    ASK = "ask"
    """The seat's roll found nothing in the stock: it asks or passes."""
    OVER = "over"
    """The game has ended."""


@dataclass(frozen=True, slots=True, init=False)
class PlatinumFishView:
    """What one seat (or a spectator, or an admin) sees.

    ``hands[s]`` is None for a hand the viewer cannot see; ``stock`` (top card
    last) only in the full view. Piles list their top card last.
    """

    seat: Seat | None
    """The viewer's seat; None for a spectator or the full (admin) view."""
    dealer: Seat
    """The dealer's seat."""
    phase: Phase
    """What the seat to act is deciding."""
    to_act: Seat | None
    """The seat whose decision it is; None when the game is over."""
    hands: tuple[tuple[Card, ...] | None, ...]
    """Each seat's hand where the viewer may see it (its own; all in the full view), else None."""
    hand_sizes: tuple[int, ...]
    """How many cards each seat holds."""
    matches: tuple[tuple[tuple[Card, Card], ...], ...]
    """Each seat's laid matches (pairs of cards)."""
    scores: tuple[int, ...]
    """Matches laid per seat."""
    discard: tuple[Card, ...]
    """The discard pile, top card last."""
    stock_size: int
    """Cards left in the stock."""
    stock: tuple[Card, ...] | None
    """The stock in its order; only in the full (admin) view, else None."""
    dice: tuple[int, int] | None
    """The roll being answered (phase ASK), else None."""
    targets: tuple[int, ...]
    """The values that roll stands for (phase ASK), else empty."""
    history: tuple[Event, ...]
    """The most recent public events, oldest first."""

    def __init__(
        self,
        seat: Seat | None,
        dealer: Seat,
        phase: Phase,
        to_act: Seat | None,
        hands: tuple[tuple[Card, ...] | None, ...],
        hand_sizes: tuple[int, ...],
        matches: tuple[tuple[tuple[Card, Card], ...], ...],
        scores: tuple[int, ...],
        discard: tuple[Card, ...],
        stock_size: int,
        stock: tuple[Card, ...] | None,
        dice: tuple[int, int] | None,
        targets: tuple[int, ...],
        history: tuple[Event, ...],
    ) -> None:
        # Written out rather than generated (init=False): mypyc compiles this one, a view is built
        # at every decision, and the dataclass's own __init__ stays interpreted (docs/benchmarks.md).
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "dealer", dealer)
        object.__setattr__(self, "phase", phase)
        object.__setattr__(self, "to_act", to_act)
        object.__setattr__(self, "hands", hands)
        object.__setattr__(self, "hand_sizes", hand_sizes)
        object.__setattr__(self, "matches", matches)
        object.__setattr__(self, "scores", scores)
        object.__setattr__(self, "discard", discard)
        object.__setattr__(self, "stock_size", stock_size)
        object.__setattr__(self, "stock", stock)
        object.__setattr__(self, "dice", dice)
        object.__setattr__(self, "targets", targets)
        object.__setattr__(self, "history", history)


# --- state -----------------------------------------------------------------------------


@dataclass(eq=True)
class PlatinumFishState(StateBase):
    """One game, from the deal to the empty stock. Build it with ``new_game`` or ``deal_from``."""

    options: PlatinumFishOptions
    rng: Rng
    dealer: Seat
    stock: list[Card]
    """Top card last (drawing is a pop)."""
    hands: list[list[Card]] = field(default_factory=list)
    """Each hand in rank order (``card_order``), at most one card of a rank."""
    matches: list[list[tuple[Card, Card]]] = field(default_factory=list)
    discard: list[Card] = field(default_factory=list)
    current: Seat = 0
    phase: Phase = Phase.TURN
    dice: tuple[int, int] | None = None
    targets: tuple[int, ...] = ()
    asks: tuple[Ask, ...] = ()
    """The asks allowed now (phase ASK)."""
    history: deque[Event] = field(default_factory=lambda: deque(maxlen=HISTORY))
    opening: tuple[Event, ...] = ()
    """The deal's events (die rolls, pairs laid, the turn-up): the game's first public events."""

    @property
    def players(self) -> int:
        return self.options.players

    def __deepcopy__(self, memo: dict[int, object]) -> PlatinumFishState:
        """Copy the containers only: cards, events and actions are immutable, and a
        generic deepcopy of 104 cards would dominate every copy the referee makes."""
        return dataclasses.replace(
            self,
            rng=copy.deepcopy(self.rng, memo),
            stock=self.stock.copy(),
            hands=[hand.copy() for hand in self.hands],
            matches=[pairs.copy() for pairs in self.matches],
            discard=self.discard.copy(),
            history=self.history.copy(),
        )

    # -- the deal --

    def _deal(self) -> list[Event]:
        n = self.players
        self.hands = [[] for _ in range(n)]
        self.matches = [[] for _ in range(n)]
        events: list[Event] = []
        for seat in clockwise_from(self.dealer + 1, self.players):
            rolls = [self.rng.die()]
            while rolls[-1] < MIN_DEAL and self.options.short_roll is ShortRoll.REROLL:
                rolls.append(self.rng.die())
            count = max(rolls[-1], MIN_DEAL)
            if count >= len(self.stock):
                raise InvalidOptions(f"the deck runs out dealing {count} cards to seat {seat}")
            self.hands[seat] = sorted((self.stock.pop() for _ in range(count)), key=card_order)
            events.append(Dealt(seat, tuple(rolls), count))
        for seat in clockwise_from(self.dealer + 1, self.players):
            events.extend(self._lay_dealt_pairs(seat))
        card = self.stock.pop()
        self.discard.append(card)
        events.append(TurnedUp(card))
        self.current = (self.dealer + 1) % n
        if not self.stock:
            self._finish(events)
        else:
            events.append(_TURN_PASSES[self.current])
        self.history.extend(events)
        return events

    def _lay_dealt_pairs(self, seat: Seat) -> list[Event]:
        """Lay every pair in a dealt hand: three of a rank leave one card, four leave none."""
        kept: list[Card] = []
        events: list[Event] = []
        for card in self.hands[seat]:  # sorted, so equal ranks are adjacent
            if kept and kept[-1].rank == card.rank:
                pair = (kept.pop(), card)
                self.matches[seat].append(pair)
                events.append(Matched(seat, pair))
            else:
                kept.append(card)
        self.hands[seat] = kept
        return events

    # -- the protocol --

    def to_act(self) -> frozenset[Seat]:
        return frozenset() if self.phase is Phase.OVER else frozenset((self.current,))

    def legal_actions(self, seat: Seat) -> list[FishAction]:
        if self.phase is Phase.OVER or seat != self.current:
            return []
        if self.phase is Phase.ASK:
            return [*self.asks, PASS]
        if self.discard and self._partner(seat, self.discard[-1]) is not None:
            return [TAKE, DRAW, ROLL]
        return [DRAW, ROLL]

    def apply(self, seat: Seat, action: FishAction, now: float = 0.0) -> list[Event]:
        self._check(seat, action)
        events: list[Event] = []
        if isinstance(action, TakeDiscard):
            card = self.discard.pop()
            events.append(TookDiscard(seat, card))
            self._lay(seat, card, events)
        elif isinstance(action, Draw):
            card = self.stock.pop()
            events.append(shared(_DREW, Drew, seat, card))
            if self._partner(seat, card) is None:
                self.discard.append(card)
                events.append(shared(_DISCARDED, Discarded, seat, card))
                self._end_turn(events)
            else:
                self._lay(seat, card, events)
        elif isinstance(action, Roll):
            self._roll(seat, events)
        elif isinstance(action, Ask):
            self._ask(seat, action, events)
        else:
            events.append(_PASSED[seat])
            self._end_turn(events)
        self.history.extend(events)
        return events

    def _check(self, seat: Seat, action: FishAction) -> None:
        """Refuse an action the rules do not allow now, saying why (changes nothing)."""
        if self.phase is Phase.OVER:
            raise IllegalAction("the game is over")
        if seat != self.current:
            raise NotYourTurn(f"not your turn: seat {self.current} is to act")
        if self.phase is Phase.ASK:
            if isinstance(action, Pass) or action in self.asks:
                return
            allowed = ", ".join(map(str, [*self.asks, PASS]))
            if isinstance(action, Ask):
                raise IllegalAction(f"cannot {action}: {self._ask_refusal(seat, action)}; choose {allowed}")
            raise IllegalAction(f"your roll found nothing in the stock: choose {allowed}")
        if isinstance(action, TakeDiscard):
            if not self.discard:
                raise IllegalAction("the discard pile is empty")
            top = self.discard[-1]
            if self._partner(seat, top) is None:
                raise IllegalAction(f"the top discard {top} makes no match: you hold no {top.rank}")
        elif isinstance(action, Ask | Pass):
            raise IllegalAction(f"'{action}' only answers a roll that found nothing: take, draw or roll")
        elif not isinstance(action, Draw | Roll):
            raise IllegalAction(f"not a Platinum Fish action: {action!r}")

    def _ask_refusal(self, seat: Seat, action: Ask) -> str:
        ranks = {a.rank for a in self.asks}
        if action.rank not in ranks:
            return f"{action.rank} is not a rank of the rolled value {' or '.join(map(str, self.targets))}"
        if self.options.ask is AskRule.FIRST_HOLDER:
            return "this game asks the first holder clockwise: name no seat"
        if action.seat is None:
            return "this game asks a named opponent: say 'ask RANK from SEAT'"
        return f"seat {action.seat} is not an opponent of seat {seat}"

    # -- turn mechanics --

    def _roll(self, seat: Seat, events: list[Event]) -> None:
        dice = (self.rng.die(), self.rng.die())
        targets, ranks = roll_targets(dice, self.options)
        events.append(shared(_ROLLED, Rolled, seat, dice, targets))
        stock = self.stock
        for i in range(len(stock) - 1, -1, -1):  # from the top down
            if stock[i].rank in ranks:
                card = stock.pop(i)  # the rest keep their order
                events.append(_TOOK_FROM_STOCK[seat])
                if self.options.reshuffle_after_search and stock:
                    self.rng.shuffle(stock)
                    events.append(StockShuffled())
                self._gain(seat, card, events)
                return
        events.append(NotInStock(seat, targets))
        self.phase, self.dice, self.targets = Phase.ASK, dice, targets
        if self.options.ask is AskRule.NAMED:
            opponents = clockwise_from(seat + 1, self.players)[:-1]  # the asker comes round last
            self.asks = tuple(Ask(r, o) for r in ranks for o in opponents)
        else:
            self.asks = tuple(Ask(r) for r in ranks)

    def _ask(self, seat: Seat, action: Ask, events: list[Event]) -> None:
        self.phase, self.dice, self.targets, self.asks = Phase.TURN, None, (), ()
        events.append(Asked(seat, action.rank, action.seat))
        asked = clockwise_from(seat + 1, self.players)[:-1] if action.seat is None else [action.seat]
        for giver in asked:
            hand = self.hands[giver]
            i = next((i for i, c in enumerate(hand) if c.rank == action.rank), None)
            if i is not None:
                events.append(Gave(giver, seat, action.rank))
                self._gain(seat, hand.pop(i), events)
                return
        events.append(NoneGiven(action.rank))
        self._end_turn(events)

    def _gain(self, seat: Seat, card: Card, events: list[Event]) -> None:
        """A card won by a roll or an ask: a match is laid, anything else is kept; either may end the turn."""
        if self._partner(seat, card) is None:
            bisect.insort(self.hands[seat], card, key=card_order)
            self._end_turn(events)
        elif self.options.dice_match_ends_turn:
            self._lay(seat, card, events, move_again=False)
        else:
            self._lay(seat, card, events)

    def _lay(self, seat: Seat, card: Card, events: list[Event], move_again: bool = True) -> None:
        hand = self.hands[seat]
        partner = self._partner(seat, card)
        assert partner is not None
        pair = (hand.pop(partner), card)
        self.matches[seat].append(pair)
        events.append(Matched(seat, pair))
        if not self.stock:
            self._finish(events)
        elif move_again:
            self.phase = Phase.TURN
        else:
            self._end_turn(events)

    def _end_turn(self, events: list[Event]) -> None:
        if not self.stock:
            self._finish(events)
            return
        self.phase, self.dice, self.targets, self.asks = Phase.TURN, None, (), ()
        self.current = (self.current + 1) % self.players
        events.append(_TURN_PASSES[self.current])

    def _finish(self, events: list[Event]) -> None:
        self.phase, self.dice, self.targets, self.asks = Phase.OVER, None, (), ()
        outcome = self.outcome()
        events.append(GameOver(outcome.scores, tuple(sorted(outcome.winners))))

    def _partner(self, seat: Seat, card: Card) -> int | None:
        """Index of the hand card that makes a match with ``card``, if any."""
        rank = card.rank
        for i, held in enumerate(self.hands[seat]):
            if held.rank is rank:  # ranks are Rank members: identity, not IntEnum's compare
                return i
        return None

    # -- views and results --

    def view(self, seat: Seat) -> PlatinumFishView:
        return self._view(seat, everything=False)

    def public_view(self) -> PlatinumFishView:
        return self._view(None, everything=False)

    def full_view(self) -> PlatinumFishView:
        return self._view(None, everything=True)

    def _view(self, seat: Seat | None, everything: bool) -> PlatinumFishView:
        return PlatinumFishView(
            seat=seat,
            dealer=self.dealer,
            phase=self.phase,
            to_act=None if self.phase is Phase.OVER else self.current,
            hands=tuple([tuple(h) if everything or s == seat else None for s, h in enumerate(self.hands)]),
            hand_sizes=tuple([len(h) for h in self.hands]),
            matches=tuple([tuple(pairs) for pairs in self.matches]),
            scores=tuple([len(pairs) for pairs in self.matches]),
            discard=tuple(self.discard),
            stock_size=len(self.stock),
            stock=tuple(self.stock) if everything else None,
            dice=self.dice,
            targets=self.targets,
            history=tuple(self.history),
        )

    def is_over(self) -> bool:
        return self.phase is Phase.OVER

    def outcome(self) -> Outcome:
        if self.phase is not Phase.OVER:
            raise IllegalAction("the game is not over: the stock still has cards")
        return Outcome.ranked_by([len(m) for m in self.matches])

    def resample_hidden(self, seat: Seat, rng: Rng) -> PlatinumFishState:
        twin = self.copy()
        assert isinstance(twin, PlatinumFishState)
        redeal([h for s, h in enumerate(twin.hands) if s != seat] + [twin.stock], rng)
        for s, hand in enumerate(twin.hands):
            if s != seat:
                hand.sort(key=card_order)
        return twin


# --- building a game -----------------------------------------------------------------------


def deal_from(
    options: PlatinumFishOptions, deck: Sequence[Card], rng: Rng, dealer: Seat = 0
) -> PlatinumFishState:
    """Deal a game from ``deck`` in the given order, top card first, instead of a shuffled one.

    For tests and puzzles: the deck may be any cards (a short deck gives a
    short stock); the dice still come from ``rng``. The deal's events are in
    ``state.opening``. Raises InvalidOptions if the deck runs out before the turn-up.

    >>> from croupier.engine.cards import parse_cards
    >>> deck = parse_cards("2c 3c 4c 5c 6c 7c 8c 9c 10c Jc Qc Kc Ac 2d 3d 4d 5d 6d")
    >>> state = deal_from(PlatinumFishOptions(players=2), deck, Rng(1))
    >>> state.opening[:3]  # each seat rolls for its hand's size, then the turn-up
    (Dealt(seat=1, rolls=(2, 5), cards=5), Dealt(seat=0, rolls=(1, 3), cards=3), TurnedUp(card=Card(10c)))
    >>> state.view(1).hands[1], state.legal_actions(1)
    ((Card(2c), Card(3c), Card(4c), Card(5c), Card(6c)), [Draw(), Roll()])
    """
    if not 0 <= dealer < options.players:
        raise InvalidOptions(f"dealer must be a seat 0..{options.players - 1}, not {dealer}")
    state = PlatinumFishState(options=options, rng=rng, dealer=dealer, stock=list(reversed(deck)))
    state.opening = tuple(state._deal())
    return state


def new_game(options: PlatinumFishOptions, rng: Rng) -> PlatinumFishState:
    """Shuffle the 104 cards and deal; seat 0 deals, seat 1 plays first."""
    return deal_from(options, rng.shuffled(DOUBLE_DECK), rng)


def _test_variants() -> tuple[PlatinumFishOptions, ...]:
    defaults = tuple(PlatinumFishOptions(players=n) for n in range(MIN_PLAYERS, MAX_PLAYERS + 1))
    variants = (
        PlatinumFishOptions(players=3, short_roll=ShortRoll.TAKE_THREE),
        PlatinumFishOptions(players=4, targets=Targets.FACES_AND_SUM),
        PlatinumFishOptions(players=2, twelve_includes_jack=True),
        PlatinumFishOptions(players=5, dice_match_ends_turn=True),
        PlatinumFishOptions(players=6, ask=AskRule.NAMED),
        PlatinumFishOptions(players=3, reshuffle_after_search=True),
        PlatinumFishOptions(
            players=4,
            short_roll=ShortRoll.TAKE_THREE,
            targets=Targets.FACES_AND_SUM,
            twelve_includes_jack=True,
            dice_match_ends_turn=True,
            ask=AskRule.NAMED,
            reshuffle_after_search=True,
        ),
    )
    return defaults + variants


SPEC: GameSpec[PlatinumFishOptions] = GameSpec(
    name="platinum_fish",
    title=GAME,
    options_type=PlatinumFishOptions,
    new_game=new_game,
    parse_action=parse_action,
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    test_variants=_test_variants(),
)
