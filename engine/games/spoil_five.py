"""Spoil Five: win three of five tricks to take the pool (rules-notes section 3).

Rules as the referee reads them: ``/work/shared/rules-notes.md`` section 3 and
``docs/games/spoil-five.md``. One state is one match: the cut for the first
dealer, then a fixed number of deals (or until an ante falls due that a
player cannot pay), chips moving between the banks and the pool. Chips are
conserved: banks + pool + the unassigned remainder of a shared pool always
add up to ``players * bank``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum

from croupier.engine.cards import STANDARD_DECK, Card, Rank, Suit, format_cards, parse_cards
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
    bounded,
    check_bounds,
    check_players,
    clockwise_from,
    deal_round,
    redeal,
    shared,
)
from croupier.engine.rng import Rng

__all__ = [
    "ACE_OF_HEARTS",
    "GAME",
    "HAND_SIZE",
    "LOWEST_TRUMP",
    "PACKETS",
    "SPEC",
    "TRICKS_TO_WIN",
    "TRUMP",
    "Announce",
    "Announced",
    "AntesPaid",
    "Cut",
    "DealResult",
    "DealSpoiled",
    "DealStarted",
    "DealerChosen",
    "Decline",
    "Declined",
    "Jinx",
    "Jinxed",
    "MatchOver",
    "Options",
    "Phase",
    "Play",
    "Played",
    "PoolShared",
    "PoolWon",
    "Ranking",
    "Result",
    "Rob",
    "Robbed",
    "SpoilFiveAction",
    "SpoilFiveState",
    "SpoilFiveView",
    "TakePool",
    "Trick",
    "TrickWon",
    "cut_for_dealer",
    "deal_from",
    "may_renege",
    "new_game",
    "parse_action",
    "power",
    "stacked_deck",
    "suit_of",
    "trick_power",
    "trick_strength",
]

GAME = "Spoil Five"
MIN_PLAYERS, MAX_PLAYERS = 2, 10
HAND_SIZE = 5
PACKETS = (2, 3)
"""The deal goes round twice: two cards each, then three (10 players use 51 cards)."""
TRICKS_TO_WIN = 3
ACE_OF_HEARTS = Card(Rank.ACE, Suit.HEARTS)


# --- options ---------------------------------------------------------------------


class Ranking(Enum):
    """The order of the cards, and whether the top trumps may renege."""

    PLAIN = "plain"
    """The seed: 2 low .. A high in every suit, trumps above all."""
    CLASSIC = "classic"
    """Peel: 5 and J of trumps, A♥ (always a trump), A of trumps on top; plain
    suits "highest in red, lowest in black"; the top three trumps may renege."""


@dataclass(frozen=True)
class Options(Immutable):
    players: int = 5
    bank: int = bounded(20, 1, 10_000, "chips")
    """Chips each player starts with."""
    ante: int = bounded(1, 1, 1_000, "chips")
    """Chips a player pays into the pool when an ante falls due (and the jinx bonus)."""
    deals: int | None = bounded(None, 1, 1_000, "deals (or unset: each player deals twice)")
    """Deals in the match; None: each player deals twice (2 * players)."""
    ranking: Ranking = Ranking.PLAIN

    def __post_init__(self) -> None:
        check_players(self.players, MIN_PLAYERS, MAX_PLAYERS, GAME)
        check_bounds(self)
        if self.bank < self.ante:
            raise InvalidOptions(f"bank ({self.bank}) must cover at least one ante ({self.ante})")

    @property
    def total_deals(self) -> int:
        return self.deals if self.deals is not None else 2 * self.players


# --- the order of the cards ---------------------------------------------------------

TRUMP = 100
"""Added to every trump's power, so any trump beats any plain card."""
LOWEST_TRUMP = TRUMP + 1
"""The power of a trump Ace its holder did not announce: below every other trump."""
_CLASSIC_TOP = {Rank.FIVE: 20, Rank.JACK: 19}
"""Classic trumps above A♥ (18) and the trump Ace (17); then K 16, Q 15, numerals 2..10."""
_DECK_INDEX = {card: i for i, card in enumerate(STANDARD_DECK)}


def _is_ace_of_hearts(card: Card) -> bool:
    return card.rank is Rank.ACE and card.suit is Suit.HEARTS


def suit_of(card: Card, trump: Suit, ranking: Ranking) -> Suit:
    """The suit ``card`` counts as for following: A♥ is a trump in the classic order."""
    if ranking is Ranking.CLASSIC and _is_ace_of_hearts(card):
        return trump
    return card.suit


def power(card: Card, trump: Suit, ranking: Ranking) -> int:
    """How strong ``card`` is in a trick (higher wins); trumps are ``TRUMP`` and above.

    A plain card only counts if it is of the suit led. Ignores the unannounced
    trump Ace, which the state demotes to ``LOWEST_TRUMP``.
    """
    if ranking is Ranking.PLAIN:
        return card.rank + TRUMP if card.suit is trump else int(card.rank)
    red = card.suit is Suit.HEARTS or card.suit is Suit.DIAMONDS
    rank = card.rank
    if card.suit is trump or _is_ace_of_hearts(card):
        if rank in _CLASSIC_TOP and card.suit is trump:
            return TRUMP + _CLASSIC_TOP[rank]
        if rank is Rank.ACE:
            return TRUMP + (18 if card.suit is Suit.HEARTS else 17)
        if rank >= Rank.QUEEN:
            return TRUMP + rank + 3  # K 16, Q 15
        return TRUMP + (rank if red else 12 - rank)  # red 10 high, black 2 high
    if rank is Rank.ACE:
        return 1 if red else 10  # red Ace lowest; black Ace between J and 2
    if rank >= Rank.JACK:
        return int(rank)  # K 13, Q 12, J 11
    return int(rank) if red else 11 - rank  # red 10 high, black 2 high


def trick_power(card: Card, trump: Suit, ranking: Ranking, ace_low: bool) -> int:
    """``power``, with the trump Ace at ``LOWEST_TRUMP`` when ``ace_low`` (its holder did not announce it)."""
    if ace_low and card.rank is Rank.ACE and card.suit is trump:
        return LOWEST_TRUMP
    return power(card, trump, ranking)


def trick_strength(card: Card, led: Card, trump: Suit, ranking: Ranking, ace_low: bool) -> int:
    """What ``card`` counts for in a trick ``led`` began: its ``trick_power`` if a trump or
    of the suit led, else 0 (it cannot win); the highest wins the trick."""
    card_power = trick_power(card, trump, ranking, ace_low)
    if card_power >= TRUMP or suit_of(card, trump, ranking) is suit_of(led, trump, ranking):
        return card_power
    return 0


def may_renege(card: Card, trump: Suit, ranking: Ranking) -> bool:
    """5 and J of trumps and A♥ need not follow a lower trump led (classic only)."""
    if ranking is Ranking.PLAIN:
        return False
    top = card.suit is trump and (card.rank is Rank.FIVE or card.rank is Rank.JACK)
    return top or _is_ace_of_hearts(card)


def _sorted_hand(cards: Iterable[Card]) -> list[Card]:
    return sorted(cards, key=_DECK_INDEX.__getitem__)


def _suit_name(suit: Suit) -> str:
    return suit.name.lower()


# --- actions -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Play(Action):
    """Play a card to the trick. Text: ``7h``."""

    card: Card
    """The card played to the trick."""

    def __str__(self) -> str:
        return str(self.card)


@dataclass(frozen=True, slots=True)
class Rob(Action):
    """Discard a card face down and take the turn-up into hand. Text: ``rob 7c``.

    The dealer, before the first lead, when the turn-up is an Ace; or the
    holder of the trump Ace at their first turn, before playing (it also
    announces the Ace). The holder may discard any card, the Ace itself
    included (the seed: "any of their cards").
    """

    discard: Card
    """The card discarded face down for the turn-up."""

    def __str__(self) -> str:
        return f"rob {self.discard}"


@dataclass(frozen=True, slots=True)
class Decline(Action):
    """The dealer leaves a turned-up Ace where it is. Text: ``decline``."""

    def __str__(self) -> str:
        return "decline"


@dataclass(frozen=True, slots=True)
class Announce(Action):
    """Announce holding the trump Ace (then play). Text: ``announce``."""

    def __str__(self) -> str:
        return "announce"


@dataclass(frozen=True, slots=True)
class TakePool(Action):
    """After winning tricks 1-3: take the pool; the deal ends. Text: ``take``."""

    def __str__(self) -> str:
        return "take"


@dataclass(frozen=True, slots=True)
class Jinx(Action):
    """After winning tricks 1-3: play on to win all five. Text: ``jinx``."""

    def __str__(self) -> str:
        return "jinx"


SpoilFiveAction = Play | Rob | Decline | Announce | TakePool | Jinx
_ACTION_TYPES = (Play, Rob, Decline, Announce, TakePool, Jinx)
_WORDS: dict[str, SpoilFiveAction] = {str(a): a for a in (Decline(), Announce(), TakePool(), Jinx())}


def parse_action(text: str) -> SpoilFiveAction:
    words = text.split()
    if len(words) == 1 and words[0].lower() in _WORDS:
        return _WORDS[words[0].lower()]
    try:
        if len(words) == 2 and words[0].lower() == "rob":
            return Rob(Card.parse(words[1]))
        if len(words) == 1:
            return Play(Card.parse(words[0]))
    except MalformedInput as bad_card:
        raise MalformedInput(f"not a Spoil Five action: {text!r}: {bad_card}") from None
    raise MalformedInput(
        f"not a Spoil Five action: {text!r} (try '7h', 'rob 7c', 'decline', 'announce', 'take' or 'jinx')"
    )


# --- events (all public) ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Cut(Event):
    seat: Seat
    card: Card

    def __str__(self) -> str:
        return f"seat {self.seat} cuts {self.card}"


@dataclass(frozen=True, slots=True)
class DealerChosen(Event):
    seat: Seat

    def __str__(self) -> str:
        return f"seat {self.seat} cut lowest and deals first"


@dataclass(frozen=True, slots=True)
class AntesPaid(Event):
    seats: tuple[Seat, ...]
    amount: int
    pool: int

    def __str__(self) -> str:
        who = ", ".join(map(str, self.seats))
        if len(self.seats) == 1:
            return f"seat {who} antes {self.amount}; the pool is {self.pool}"
        return f"seats {who} ante {self.amount}; the pool is {self.pool}"


@dataclass(frozen=True, slots=True)
class DealStarted(Event):
    deal: int
    dealer: Seat
    turn_up: Card

    def __str__(self) -> str:
        return (
            f"deal {self.deal}: seat {self.dealer} deals; "
            f"{self.turn_up} is turned up: {_suit_name(self.turn_up.suit)} are trumps"
        )


@dataclass(frozen=True, slots=True)
class Robbed(Event):
    """The discarded card is not part of the event: only its owner sees it."""

    seat: Seat
    taken: Card

    def __str__(self) -> str:
        return f"seat {self.seat} robs: discards a card face down and takes the turned-up {self.taken}"


@dataclass(frozen=True, slots=True)
class Declined(Event):
    seat: Seat
    turn_up: Card

    def __str__(self) -> str:
        return f"seat {self.seat} (dealer) does not rob the turned-up {self.turn_up}"


@dataclass(frozen=True, slots=True)
class Announced(Event):
    seat: Seat
    ace: Card

    def __str__(self) -> str:
        return f"seat {self.seat} announces the trump Ace ({self.ace})"


@dataclass(frozen=True, slots=True)
class Played(Event):
    seat: Seat
    card: Card
    lowest_trump: bool = False
    """The trump Ace, played by a holder who did not announce it: it ranks lowest."""

    def __str__(self) -> str:
        note = " (not announced: the lowest trump)" if self.lowest_trump else ""
        return f"seat {self.seat} plays {self.card}{note}"


@dataclass(frozen=True, slots=True)
class TrickWon(Event):
    seat: Seat
    trick: int
    tricks_won: int

    def __str__(self) -> str:
        return f"seat {self.seat} wins trick {self.trick} ({self.tricks_won} won this deal)"


@dataclass(frozen=True, slots=True)
class Jinxed(Event):
    seat: Seat

    def __str__(self) -> str:
        return f"seat {self.seat} jinxes: plays on to win all five tricks"


@dataclass(frozen=True, slots=True)
class PoolWon(Event):
    seat: Seat
    pool: int
    bonus: int = 0
    """Chips paid by the other players for a jinx won."""

    def __str__(self) -> str:
        if self.bonus:
            return f"seat {self.seat} wins the jinx: the pool of {self.pool} and {self.bonus} from the others"
        return f"seat {self.seat} takes the pool of {self.pool}"


@dataclass(frozen=True, slots=True)
class DealSpoiled(Event):
    deal: int
    jinx_lost_by: Seat | None = None

    def __str__(self) -> str:
        why = "nobody won three tricks"
        if self.jinx_lost_by is not None:
            why = f"seat {self.jinx_lost_by} lost the jinx"
        return f"deal {self.deal} is spoiled ({why}); the pool stays"


@dataclass(frozen=True, slots=True)
class PoolShared(Event):
    each: int
    unassigned: int

    def __str__(self) -> str:
        return f"the pool left is shared: {self.each} each, {self.unassigned} unassigned"


@dataclass(frozen=True, slots=True)
class MatchOver(Event):
    reason: str
    banks: tuple[int, ...]

    def __str__(self) -> str:
        return f"match over ({self.reason}): chips {list(self.banks)}"


# --- view --------------------------------------------------------------------------


class Phase(Enum):
    ROB_TURN_UP = "rob_turn_up"
    """The turn-up is an Ace: the dealer robs or declines before the first lead."""
    PLAY = "play"
    """Cards are played to tricks."""
    JINX_CHOICE = "jinx_choice"
    """The winner of tricks 1-3 takes the pool or jinxes."""
    OVER = "over"
    """The match has ended."""


class Result(Enum):
    TAKEN = "taken"
    """A seat won three tricks (or more) and took the pool."""
    JINX_WON = "jinx_won"
    """The jinxer won all five tricks."""
    JINX_LOST = "jinx_lost"
    """The jinxer lost a trick after jinxing."""
    SPOILED = "spoiled"
    """Nobody won three tricks: the pool stays for the next deal."""


@dataclass(frozen=True, slots=True)
class Trick:
    plays: tuple[tuple[Seat, Card], ...]
    """(seat, card) in the order played; the first is the lead."""
    winner: Seat
    """The seat that won it."""


@dataclass(frozen=True, slots=True)
class DealResult:
    """How a finished deal ended, so a bot sees the last tricks after the next deal starts."""

    deal: int
    """The deal's number, from 1."""
    result: Result
    """Taken, jinx won, jinx lost or spoiled."""
    seat: Seat | None
    """Who took the pool or lost the jinx; None for a plain spoil."""
    chips: int
    """Chips the seat won (pool + jinx bonus); 0 for a spoil."""
    tricks: tuple[Trick, ...]
    """Its five tricks."""


@dataclass(frozen=True, slots=True, init=False)
class SpoilFiveView:
    """What one seat (or a spectator, ``seat=None``) may know.

    ``hands[i]`` is seat i's hand where the viewer may see it, else None.
    ``discard`` (the robber's face-down card) is shown only to the robber and
    in the full view; ``stock`` only in the full view.
    """

    seat: Seat | None
    """The viewer's seat; None for a spectator or the full (admin) view."""
    ranking: Ranking
    """The card order in play (plain or classic)."""
    ante: int
    """Chips paid into the pool when an ante falls due."""
    deal: int
    """This deal's number, from 1."""
    deals: int
    """Deals in the match."""
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
    turn_up: Card
    """The card turned up for trumps."""
    trumps: Suit
    """The trump suit (the turn-up's)."""
    robbed_by: Seat | None
    """Who took the turn-up into hand (it stays known to be there until played)."""
    ace_announced_by: Seat | None
    """Who announced the trump Ace: announced it, robbed (a holder who robbed may have discarded
    it), robbed the turned-up Ace, or played it as their first card."""
    trump_ace_low: bool
    """The trump Ace was not announced and ranks lowest; shown once the viewer can know it."""
    trick: tuple[tuple[Seat, Card], ...]
    """The trick in progress: (seat, card) in the order played."""
    tricks: tuple[Trick, ...]
    """This deal's finished tricks."""
    tricks_won: tuple[int, ...]
    """Tricks each seat has won this deal."""
    jinxer: Seat | None
    """The seat playing on to win all five tricks; None if nobody jinxed."""
    banks: tuple[int, ...]
    """Each seat's chips."""
    pool: int
    """Chips in the pool."""
    unassigned: int
    """Chips of a shared pool that did not divide evenly, carried over."""
    stock_size: int
    """Cards left in the stock."""
    last_deal: DealResult | None
    """How the previous deal ended; None before the first ends."""
    discard: Card | None = None
    """The robber's face-down discard: only to the robber and in the full view, else None."""
    stock: tuple[Card, ...] | None = None
    """The stock in its order; only in the full (admin) view, else None."""

    def __init__(
        self,
        seat: Seat | None,
        ranking: Ranking,
        ante: int,
        deal: int,
        deals: int,
        dealer: Seat,
        phase: Phase,
        to_act: Seat | None,
        hands: tuple[tuple[Card, ...] | None, ...],
        hand_sizes: tuple[int, ...],
        turn_up: Card,
        trumps: Suit,
        robbed_by: Seat | None,
        ace_announced_by: Seat | None,
        trump_ace_low: bool,
        trick: tuple[tuple[Seat, Card], ...],
        tricks: tuple[Trick, ...],
        tricks_won: tuple[int, ...],
        jinxer: Seat | None,
        banks: tuple[int, ...],
        pool: int,
        unassigned: int,
        stock_size: int,
        last_deal: DealResult | None,
        discard: Card | None = None,
        stock: tuple[Card, ...] | None = None,
    ) -> None:
        # Written out rather than generated (init=False): mypyc compiles this one, a view is built
        # at every decision, and the dataclass's own __init__ stays interpreted (docs/benchmarks.md).
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "ranking", ranking)
        object.__setattr__(self, "ante", ante)
        object.__setattr__(self, "deal", deal)
        object.__setattr__(self, "deals", deals)
        object.__setattr__(self, "dealer", dealer)
        object.__setattr__(self, "phase", phase)
        object.__setattr__(self, "to_act", to_act)
        object.__setattr__(self, "hands", hands)
        object.__setattr__(self, "hand_sizes", hand_sizes)
        object.__setattr__(self, "turn_up", turn_up)
        object.__setattr__(self, "trumps", trumps)
        object.__setattr__(self, "robbed_by", robbed_by)
        object.__setattr__(self, "ace_announced_by", ace_announced_by)
        object.__setattr__(self, "trump_ace_low", trump_ace_low)
        object.__setattr__(self, "trick", trick)
        object.__setattr__(self, "tricks", tricks)
        object.__setattr__(self, "tricks_won", tricks_won)
        object.__setattr__(self, "jinxer", jinxer)
        object.__setattr__(self, "banks", banks)
        object.__setattr__(self, "pool", pool)
        object.__setattr__(self, "unassigned", unassigned)
        object.__setattr__(self, "stock_size", stock_size)
        object.__setattr__(self, "last_deal", last_deal)
        object.__setattr__(self, "discard", discard)
        object.__setattr__(self, "stock", stock)


# --- state ---------------------------------------------------------------------------


# What a trick makes, each value built once (``shared``): cards and seats are few.
_PLAYS: dict[tuple[Card], Play] = {}
_PLAYED: dict[tuple[Seat, Card, bool], Played] = {}
_TRICKS_WON: dict[tuple[Seat, int, int], TrickWon] = {}


@dataclass(eq=True)
class SpoilFiveState(StateBase):
    options: Options
    rng: Rng
    banks: list[int]
    dealer: Seat = 0
    pool: int = 0
    unassigned: int = 0
    """Chips of a pool shared at the end that did not divide evenly."""
    deal: int = 0
    phase: Phase = Phase.PLAY
    hands: list[list[Card]] = field(default_factory=list)
    stock: list[Card] = field(default_factory=list)
    turn_up: Card = ACE_OF_HEARTS
    """Set by every deal; the default is never seen."""
    robber: Seat | None = None
    discard: Card | None = None
    announcer: Seat | None = None
    ace_low: bool = False
    ace_low_shown: bool = False
    turn: Seat = 0
    trick: list[tuple[Seat, Card]] = field(default_factory=list)
    tricks: list[Trick] = field(default_factory=list)
    won: list[int] = field(default_factory=list)
    jinxer: Seat | None = None
    last_deal: DealResult | None = None
    opening: tuple[Event, ...] = ()
    """The public events of ``new_game`` (cut, antes, first deal), for the referee to send."""

    def __deepcopy__(self, memo: dict[int, object]) -> SpoilFiveState:
        """Copy the containers only: cards, tricks, results and events are immutable values.

        The referee and the harness copy states often; a generic deepcopy
        would rebuild every card.
        """
        twin = copy.copy(self)
        twin.rng = copy.deepcopy(self.rng, memo)
        twin.banks = self.banks[:]
        twin.hands = [hand[:] for hand in self.hands]
        twin.stock = self.stock[:]
        twin.trick = self.trick[:]
        twin.tricks = self.tricks[:]
        twin.won = self.won[:]
        return twin

    @property
    def players(self) -> int:
        return self.options.players

    @property
    def trumps(self) -> Suit:
        return self.turn_up.suit

    @property
    def trump_ace(self) -> Card:
        return Card(Rank.ACE, self.turn_up.suit)

    # - chips and deals -

    def pay_antes(self, seats: Sequence[Seat]) -> list[Event]:
        ante = self.options.ante
        for seat in seats:
            self.banks[seat] -= ante
        self.pool += ante * len(seats)
        return [AntesPaid(tuple(seats), ante, self.pool)]

    def start_deal(self, deck: Sequence[Card] | None = None) -> list[Event]:
        """Deal the next deal from ``deck`` (a shuffled deck if None; tests stack it).

        The deck is dealt from the front, from the dealer's left: two cards
        each, then three each; the next card is turned up; the rest is the stock.
        """
        n = self.players
        cards = deck if deck is not None else self.rng.shuffled(STANDARD_DECK)
        hands, rest = deal_round(cards, n, self.dealer, PACKETS)
        self.deal += 1
        self.hands = [_sorted_hand(h) for h in hands]
        self.turn_up, self.stock = rest[0], rest[1:]
        self.robber = self.discard = self.announcer = self.jinxer = None
        self.ace_low = self.ace_low_shown = False
        self.trick = []
        self.tricks = []
        self.won = [0] * n
        if self.turn_up.rank is Rank.ACE:
            self.phase, self.turn = Phase.ROB_TURN_UP, self.dealer
        else:
            self.phase, self.turn = Phase.PLAY, (self.dealer + 1) % n
        return [DealStarted(self.deal, self.dealer, self.turn_up)]

    def _end_deal(self, result: Result, seat: Seat | None) -> list[Event]:
        events: list[Event] = []
        chips = 0
        if result is Result.TAKEN or result is Result.JINX_WON:
            assert seat is not None
            bonus = 0
            if result is Result.JINX_WON:
                for other in range(self.players):
                    if other != seat:
                        paid = min(self.options.ante, self.banks[other])  # short: pays what they have
                        self.banks[other] -= paid
                        bonus += paid
            chips = self.pool + bonus
            events.append(PoolWon(seat, self.pool, bonus))
            self.banks[seat] += chips
            self.pool = 0
        else:
            events.append(DealSpoiled(self.deal, seat))
        self.last_deal = DealResult(self.deal, result, seat, chips, tuple(self.tricks))
        if self.deal >= self.options.total_deals:
            return events + self._finish(f"deal {self.deal} of {self.deal} played")
        next_dealer = (self.dealer + 1) % self.players
        pool_won = result is Result.TAKEN or result is Result.JINX_WON
        payers = list(range(self.players)) if pool_won else [next_dealer]  # a spoil: the dealer tops up
        short = [s for s in payers if self.banks[s] < self.options.ante]
        if short:
            return events + self._finish(f"seat {short[0]} cannot pay the ante of {self.options.ante}")
        self.dealer = next_dealer
        return events + self.pay_antes(payers) + self.start_deal()

    def _finish(self, reason: str) -> list[Event]:
        events: list[Event] = []
        self.phase = Phase.OVER
        if self.pool:
            each, rest = divmod(self.pool, self.players)
            for seat in range(self.players):
                self.banks[seat] += each
            self.unassigned += rest
            self.pool = 0
            events.append(PoolShared(each, rest))
        events.append(MatchOver(reason, tuple(self.banks)))
        return events

    # - the rules of play -

    def playable(self, seat: Seat) -> list[Card]:
        """The cards ``seat`` may play to the current trick (any card when leading)."""
        hand = self.hands[seat]
        if not self.trick:
            return hand
        ranking, trump = self.options.ranking, self.turn_up.suit
        led_card = self.trick[0][1]
        if ranking is Ranking.PLAIN:  # the fast path: suits are plain suits, nobody reneges
            led = led_card.suit
            return [c for c in hand if c.suit is led] or [c for c in hand if c.suit is trump] or hand
        led = suit_of(led_card, trump, ranking)
        trumps = [c for c in hand if suit_of(c, trump, ranking) is trump]
        if led is trump:
            if trumps:  # a top trump need not follow a lower trump led
                led_power = trick_power(led_card, trump, ranking, self.ace_low)
                if all(
                    may_renege(c, trump, ranking) and trick_power(c, trump, ranking, self.ace_low) > led_power
                    for c in trumps
                ):
                    return hand
            return trumps or hand
        return [c for c in hand if suit_of(c, trump, ranking) is led] or trumps or hand

    def _is_trump_ace(self, card: Card) -> bool:
        return card.rank is Rank.ACE and card.suit is self.turn_up.suit

    def _holds_trump_ace(self, seat: Seat) -> bool:
        return any(self._is_trump_ace(c) for c in self.hands[seat])

    def _trick_winner(self) -> Seat:
        ranking, trump, led, ace_low = self.options.ranking, self.turn_up.suit, self.trick[0][1], self.ace_low
        winner, best = self.trick[0][0], -1
        for seat, card in self.trick:  # the first of the strongest, as max() picks
            strength = trick_strength(card, led, trump, ranking, ace_low)
            if strength > best:
                winner, best = seat, strength
        return winner

    def _holders_first_turn(self, seat: Seat) -> bool:
        """The trump Ace's holder, at their first turn, before playing: may rob and announce."""
        return self.phase is Phase.PLAY and not self.tricks and self._holds_trump_ace(seat)

    # - the protocol -

    def to_act(self) -> frozenset[Seat]:
        return frozenset() if self.phase is Phase.OVER else frozenset((self.turn,))

    def legal_actions(self, seat: Seat) -> list[SpoilFiveAction]:
        if self.phase is Phase.OVER or seat != self.turn:
            return []
        hand = self.hands[seat]
        if self.phase is Phase.ROB_TURN_UP:
            return [Decline(), *(Rob(c) for c in hand)]
        if self.phase is Phase.JINX_CHOICE:
            return [TakePool(), Jinx()]
        actions: list[SpoilFiveAction] = [shared(_PLAYS, Play, c) for c in self.playable(seat)]
        if self._holders_first_turn(seat):
            if self.announcer is None:
                actions.append(Announce())
            if self.robber is None:
                actions.extend(Rob(c) for c in hand)
        return actions

    def apply(self, seat: Seat, action: SpoilFiveAction, now: float = 0.0) -> list[Event]:
        self._check(seat, action)
        if isinstance(action, Play):
            return self._play(seat, action.card)
        if isinstance(action, Rob):
            hand = self.hands[seat]
            hand.remove(action.discard)
            hand.append(self.turn_up)
            self.hands[seat] = _sorted_hand(hand)
            self.robber, self.discard, self.announcer = seat, action.discard, seat  # robbing announces
            if self.phase is Phase.ROB_TURN_UP:
                self.phase, self.turn = Phase.PLAY, (self.dealer + 1) % self.players
            return [Robbed(seat, self.turn_up)]
        if isinstance(action, Decline):
            self.phase, self.turn = Phase.PLAY, (self.dealer + 1) % self.players
            return [Declined(seat, self.turn_up)]
        if isinstance(action, Announce):
            self.announcer = seat
            return [Announced(seat, self.trump_ace)]
        if isinstance(action, TakePool):
            return self._end_deal(Result.TAKEN, seat)
        assert isinstance(action, Jinx)
        self.jinxer, self.phase = seat, Phase.PLAY  # the winner of trick 3 leads trick 4
        return [Jinxed(seat)]

    def _check(self, seat: Seat, action: SpoilFiveAction) -> None:
        if not isinstance(action, _ACTION_TYPES):
            raise IllegalAction(f"not a Spoil Five action: {action!r}")
        if self.phase is Phase.OVER:
            raise IllegalAction("the match is over")
        if seat != self.turn:
            raise NotYourTurn(f"not your turn: seat {self.turn} is to act")
        hand = self.hands[seat]
        if self.phase is Phase.ROB_TURN_UP:
            if isinstance(action, Decline):
                return
            if not isinstance(action, Rob):
                raise IllegalAction(
                    f"first decide on the turned-up {self.turn_up}: 'rob <card>' to discard a card "
                    "and take it, or 'decline'"
                )
            if action.discard not in hand:
                raise IllegalAction(f"you do not hold {action.discard}")
            return
        if self.phase is Phase.JINX_CHOICE:
            if not isinstance(action, (TakePool, Jinx)):
                raise IllegalAction("you won the first three tricks: 'take' the pool or 'jinx' to play on")
            return
        if isinstance(action, (TakePool, Jinx)):
            raise IllegalAction(f"'{action}' is only for the winner of the first three tricks, after trick 3")
        if isinstance(action, Decline):
            raise IllegalAction("nothing to decline: only the dealer declines a turned-up Ace, before play")
        if isinstance(action, (Rob, Announce)):
            self._check_rob_or_announce(seat, action)
            return
        if action.card not in hand:
            raise IllegalAction(f"you do not hold {action.card}")
        playable = self.playable(seat)
        if action.card not in playable:
            led = suit_of(self.trick[0][1], self.trumps, self.options.ranking)
            cards = format_cards(playable)
            if led is self.trumps:
                raise IllegalAction(f"must follow trumps ({_suit_name(led)}): you hold {cards}")
            if suit_of(playable[0], self.trumps, self.options.ranking) is led:
                raise IllegalAction(f"must follow {_suit_name(led)}: you hold {cards}")
            raise IllegalAction(f"no {_suit_name(led)} to follow, so you must trump: you hold {cards}")

    def _check_rob_or_announce(self, seat: Seat, action: Rob | Announce) -> None:
        ace = self.trump_ace
        if isinstance(action, Rob) and self.robber == seat:  # first: the robber's Ace may be its discard
            raise IllegalAction("you have already robbed: play a card")
        if ace not in self.hands[seat]:
            raise IllegalAction(f"only the holder of the trump Ace ({ace}) may {str(action).split()[0]}")
        if self.tricks:
            raise IllegalAction("too late: robbing and announcing happen at your first turn, before you play")
        if isinstance(action, Announce):
            if self.announcer is not None:
                raise IllegalAction("the trump Ace is already announced (robbing announces it): play a card")
            return
        if action.discard not in self.hands[seat]:
            raise IllegalAction(f"you do not hold {action.discard}")

    def _play(self, seat: Seat, card: Card) -> list[Event]:
        hand = self.hands[seat]
        is_ace = self._is_trump_ace(card)
        if not self.tricks and self.announcer is None and self._holds_trump_ace(seat):  # holder's first play
            if is_ace:
                self.announcer = seat  # played face up: shown, so announced
            else:
                self.ace_low = True
        lowest = self.ace_low and is_ace
        self.ace_low_shown |= lowest
        hand.remove(card)
        self.trick.append((seat, card))
        events: list[Event] = [shared(_PLAYED, Played, seat, card, lowest)]
        if len(self.trick) < self.players:
            self.turn = (seat + 1) % self.players
            return events
        winner = self._trick_winner()
        self.tricks.append(Trick(tuple(self.trick), winner))
        self.trick = []
        self.won[winner] += 1
        number = len(self.tricks)
        events.append(shared(_TRICKS_WON, TrickWon, winner, number, self.won[winner]))
        if self.jinxer is not None:
            if winner != self.jinxer:
                return events + self._end_deal(Result.JINX_LOST, self.jinxer)
            if number == HAND_SIZE:
                return events + self._end_deal(Result.JINX_WON, winner)
        elif self.won[winner] == TRICKS_TO_WIN:
            if number == TRICKS_TO_WIN:
                self.phase, self.turn = Phase.JINX_CHOICE, winner
                return events
            return events + self._end_deal(Result.TAKEN, winner)
        elif all(w + HAND_SIZE - number < TRICKS_TO_WIN for w in self.won):
            return events + self._end_deal(Result.SPOILED, None)  # settled: nobody can reach three
        self.turn = winner
        return events

    # - views -

    def view(self, seat: Seat) -> SpoilFiveView:
        hands = tuple(tuple(h) if i == seat else None for i, h in enumerate(self.hands))
        ace_low = self.ace_low and (self.ace_low_shown or self._holds_trump_ace(seat))
        return self._view(seat, hands, ace_low, self.discard if seat == self.robber else None)

    def public_view(self) -> SpoilFiveView:
        return self._view(None, (None,) * self.players, self.ace_low_shown)

    def full_view(self) -> SpoilFiveView:
        hands = tuple(tuple(h) for h in self.hands)
        return self._view(None, hands, self.ace_low, self.discard, tuple(self.stock))

    def _view(
        self,
        seat: Seat | None,
        hands: tuple[tuple[Card, ...] | None, ...],
        ace_low: bool,
        discard: Card | None = None,
        stock: tuple[Card, ...] | None = None,
    ) -> SpoilFiveView:
        return SpoilFiveView(
            seat=seat,
            ranking=self.options.ranking,
            ante=self.options.ante,
            deal=self.deal,
            deals=self.options.total_deals,
            dealer=self.dealer,
            phase=self.phase,
            to_act=None if self.phase is Phase.OVER else self.turn,
            hands=hands,
            hand_sizes=tuple(len(h) for h in self.hands),
            turn_up=self.turn_up,
            trumps=self.trumps,
            robbed_by=self.robber,
            ace_announced_by=self.announcer,
            trump_ace_low=ace_low,
            trick=tuple(self.trick),
            tricks=tuple(self.tricks),
            tricks_won=tuple(self.won),
            jinxer=self.jinxer,
            banks=tuple(self.banks),
            pool=self.pool,
            unassigned=self.unassigned,
            stock_size=len(self.stock),
            last_deal=self.last_deal,
            discard=discard,
            stock=stock,
        )

    def is_over(self) -> bool:
        return self.phase is Phase.OVER

    def outcome(self) -> Outcome:
        return Outcome.ranked_by(self.banks)

    def resample_hidden(self, seat: Seat, rng: Rng) -> SpoilFiveState:
        """Re-deal what ``seat`` cannot see: other hands (less the cards known to
        be there: a robbed turn-up, an announced Ace), the stock, another's discard.
        A holder who robbed may have discarded the Ace: to the others it is then in
        the robber's hand or discard, and the re-deal puts it in either."""
        twin = copy.deepcopy(self)
        ace, robber = twin.trump_ace, twin.robber
        known: list[set[Card]] = [set() for _ in range(twin.players)]
        if robber is not None and twin.turn_up in twin.hands[robber]:
            known[robber].add(twin.turn_up)
        if twin.announcer is not None and ace in twin.hands[twin.announcer]:
            known[twin.announcer].add(ace)  # the same card as the turn-up when the dealer robbed an Ace
        others = [s for s in range(twin.players) if s != seat]
        zones = [[c for c in twin.hands[s] if c not in known[s]] for s in others]
        hidden_discard = twin.discard is not None and robber != seat
        discards = [twin.discard] if hidden_discard and twin.discard != ace else []
        redeal([*zones, twin.stock, discards], rng)
        for s, zone in zip(others, zones, strict=True):
            twin.hands[s] = _sorted_hand([*known[s], *zone])
        if discards:
            twin.discard = discards[0]
        if hidden_discard:
            twin._hide_ace_with_robber(rng)
        if not twin.ace_low_shown and twin.announcer is None:
            # The Ace's rank follows its (new) holder: low once they played without announcing.
            holder = next((s for s in range(twin.players) if ace in twin.hands[s]), None)
            played = bool(twin.tricks) or any(s == holder for s, _ in twin.trick)
            twin.ace_low = holder is not None and played
        return twin

    def _hide_ace_with_robber(self, rng: Rng) -> None:
        """Put the trump Ace at random in one of the robbing holder's hidden places: a hand slot
        (the robbed turn-up stays known) or the discard. Nothing to do when the dealer robbed
        the turned-up Ace (known in hand) or the Ace was played."""
        ace, robber = self.trump_ace, self.robber
        if robber is None or self.discard is None or ace == self.turn_up:
            return
        hand = self.hands[robber]
        if ace != self.discard and ace not in hand:
            return
        kept = [c for c in hand if c == self.turn_up]
        rest = [c for c in (*hand, self.discard) if c != ace and c != self.turn_up]
        place = rng.randint(0, len(rest))
        if place == len(rest):
            self.discard = ace
        else:
            self.discard = rest.pop(place)
            rest.append(ace)
        self.hands[robber] = _sorted_hand([*kept, *rest])


# --- setting up ----------------------------------------------------------------------


def cut_for_dealer(players: int, rng: Rng) -> tuple[Seat, list[Event]]:
    """Each contender is dealt a card from a freshly shuffled deck; the lowest
    rank (2 low .. A high, suits equal) deals; tied players cut again."""
    contenders = list(range(players))
    events: list[Event] = []
    while True:
        cards = rng.shuffled(STANDARD_DECK)[: len(contenders)]
        events.extend(Cut(seat, card) for seat, card in zip(contenders, cards, strict=True))
        lowest = min(card.rank for card in cards)
        contenders = [seat for seat, card in zip(contenders, cards, strict=True) if card.rank is lowest]
        if len(contenders) == 1:
            events.append(DealerChosen(contenders[0]))
            return contenders[0], events


def new_game(options: Options, rng: Rng) -> SpoilFiveState:
    dealer, events = cut_for_dealer(options.players, rng)
    state = SpoilFiveState(options, rng, banks=[options.bank] * options.players, dealer=dealer)
    events += state.pay_antes(range(options.players))
    events += state.start_deal()
    state.opening = tuple(events)
    return state


def stacked_deck(players: int, dealer: Seat, hands: Sequence[Sequence[Card]], turn_up: Card) -> list[Card]:
    """A deck order that deals ``hands`` (by seat) and turns up ``turn_up``;
    the stock is the other cards in deck order. For tests and worked examples."""
    if len(hands) != players or any(len(h) != HAND_SIZE for h in hands):
        raise ValueError(f"give {players} hands of {HAND_SIZE} cards")
    deck: list[Card] = []
    top = 0
    for size in PACKETS:
        for seat in clockwise_from(dealer + 1, players):
            deck.extend(hands[seat][top : top + size])
        top += size
    deck.append(turn_up)
    if len(set(deck)) != len(deck):
        raise ValueError(f"a card is dealt twice: {format_cards(deck)}")
    chosen = set(deck)
    return deck + [c for c in STANDARD_DECK if c not in chosen]


def deal_from(
    options: Options,
    hands: Sequence[str],
    turn_up: str,
    dealer: Seat = 0,
    rng: Rng | None = None,
    *,
    banks: Sequence[int] | None = None,
    pool: int | None = None,
    deal: int = 1,
) -> SpoilFiveState:
    """A match at a chosen deal, for tests and worked examples.

    Hands are by seat. By default it is the first deal with the antes paid;
    ``banks``, ``pool`` and ``deal`` set a match in progress (the chips must
    add up to ``players * bank``). Later deals come from ``rng``.

    >>> state = deal_from(Options(players=2), ["2c 3c 4c 5c 6c", "Ah Kh 2d 3d 4s"], "7h", dealer=1)
    >>> view = state.view(0)
    >>> view.trumps, view.to_act, view.pool, view.hands[1]
    (<Suit.HEARTS: 'h'>, 0, 2, None)
    >>> [str(action) for action in state.legal_actions(0)]  # no trump to rob with: any card
    ['2c', '3c', '4c', '5c', '6c']
    """
    n = options.players
    state = SpoilFiveState(options, rng or Rng(0), banks=[options.bank] * n, dealer=dealer, deal=deal - 1)
    if banks is None and pool is None:
        state.pay_antes(range(n))
    else:
        state.banks, state.pool = list(banks or []), pool or 0
        if len(state.banks) != n or sum(state.banks) + state.pool != n * options.bank:
            raise ValueError(f"chips must add up to {n} * {options.bank}: {state.banks}, pool {state.pool}")
    cards = [parse_cards(hand) for hand in hands]
    state.start_deal(stacked_deck(n, dealer, cards, Card.parse(turn_up)))
    return state


SPEC: GameSpec[Options] = GameSpec(
    name="spoil_five",
    title=GAME,
    options_type=Options,
    new_game=new_game,
    parse_action=parse_action,
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    test_variants=(
        *(Options(players=n, ranking=ranking, deals=2) for ranking in Ranking for n in (2, 3, 5, 10)),
        Options(players=3, bank=3, ante=1),  # banks run dry: the match ends when an ante cannot be paid
    ),
)
