"""Each game's observation layout and fixed action space (docs/training.md lists them).

An action space is a fixed set of slots. ``slot(action, seat, players)`` names
the slot of any action the engine may list; the environment maps a chosen slot
back to the one legal action in it, so an index always means the same kind of
move (play the 7h, rob discarding the Ah, ask for queens from the next seat).
Encoders read only the seat's engine view: what the seat may know, no more. Each
feature says which of the view's fields it reads (``Layout``), so ``update``
rewrites only what an action changed.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from itertools import combinations
from operator import attrgetter
from typing import Any, ClassVar

from croupier.clients.pettingzoo.encoding import (
    Feature,
    Grow,
    Layout,
    Piles,
    Vector,
    Write,
    card_index,
    pile_feature,
    put_cards,
    put_one_hot,
    put_seat,
    put_seats,
    put_value,
)
from croupier.engine.cards import Card, Rank, Suit
from croupier.engine.core import Action
from croupier.engine.games import chinese_ten, get_game, pair_battle, platinum_fish, spoil_five

SUITS = tuple(Suit)
RANKS = tuple(Rank)


class Coding(ABC):
    """How one game's views become vectors and its actions slots."""

    game: str
    max_players: int
    action_count: int
    has_dealer = True
    hand_doc = "your cards"

    acting_reads: tuple[str, ...] = ("to_act",)
    """The view fields ``acting`` reads."""

    def __init__(self) -> None:
        """The features every game starts with: who is at the table, who acts, who deals, your hand."""
        n = self.max_players
        self.layout = Layout()
        self.seats = self.add(
            "seats",
            n,
            "1 for each seat at the table (relative: 0 is you)",
            (),
            lambda out, f, view, me, players: put_seats(out, f, [1] * players, me),
        )
        self.to_act = self.add(
            "to_act", n, "1 for each seat that may act now", self.acting_reads, self.put_acting
        )
        if self.has_dealer:
            self.dealer = self.one_seat("dealer", "one-hot: the dealer", "dealer")
        self.hand = self.add(
            "hand",
            52,
            self.hand_doc,
            ("hands",),
            lambda out, f, view, me, _: put_cards(out, f, view.hands[me] or ()),
        )

    def acting(self, view: Any) -> Iterable[int | None]:
        """The seats that may act now."""
        return (view.to_act,)

    def put_acting(self, out: Vector, feature: Feature, view: Any, me: int, players: int) -> None:
        for seat in self.acting(view):
            put_seat(out, feature, seat, me, players)

    def add(
        self,
        name: str,
        size: int,
        doc: str,
        reads: tuple[str, ...],
        write: Write,
        *,
        scale: float = 1.0,
        signed: bool = False,
        grow: Grow | None = None,
    ) -> Feature:
        return self.layout.add(name, size, doc, reads, write, scale=scale, signed=signed, grow=grow)

    def piles(
        self,
        name: str,
        doc: str,
        reads: tuple[str, ...],
        piles: Piles,
        cards: Callable[[Any], Iterable[Card]] | None = None,
        *,
        scale: float = 1.0,
    ) -> Feature:
        """The cards of ``piles`` (``pile_feature``): updated by the cards each pile gained or lost."""
        write, grow = pile_feature(piles, cards)
        return self.add(name, 52, doc, reads, write, scale=scale, grow=grow)

    def cards(self, name: str, doc: str, field: str, *, scale: float = 1.0) -> Feature:
        """The cards of the view's ``field`` (a sequence of cards)."""
        get = attrgetter(field)
        return self.add(
            name, 52, doc, (field,), lambda out, f, view, *_: put_cards(out, f, get(view)), scale=scale
        )

    def per_seat(
        self, name: str, doc: str, field: str, *, scale: float = 1.0, signed: bool = False
    ) -> Feature:
        """One number per seat from the view's ``field`` (one value by seat)."""
        get = attrgetter(field)
        n = self.max_players

        def write(out: Vector, f: Feature, view: Any, me: int, players: int) -> None:
            put_seats(out, f, get(view), me)

        return self.add(name, n, doc, (field,), write, scale=scale, signed=signed)

    def one_seat(self, name: str, doc: str, field: str) -> Feature:
        """A one-hot of the seat in the view's ``field`` (none for None)."""
        get = attrgetter(field)

        def write(out: Vector, f: Feature, view: Any, me: int, players: int) -> None:
            put_seat(out, f, get(view), me, players)

        return self.add(name, self.max_players, doc, (field,), write)

    def value(self, name: str, doc: str, field: str, *, scale: float = 1.0) -> Feature:
        """One number, the view's ``field``."""
        get = attrgetter(field)
        return self.add(
            name, 1, doc, (field,), lambda out, f, view, *_: put_value(out, f, get(view)), scale=scale
        )

    def encode(self, view: Any) -> Vector:
        """The observation of the seat whose view this is."""
        assert view.seat is not None, "an observation is of one seat's view"
        return self.layout.encode(view, view.seat, len(view.hand_sizes))

    def update(self, last: Vector, before: Any, view: Any) -> Vector:
        """``encode(view)`` from ``last``, the encoding of ``before``, an earlier view of the same seat."""
        return self.layout.update(last, before, view, view.seat, len(view.hand_sizes))

    @abstractmethod
    def slot(self, action: Action, seat: int, players: int) -> int:
        """The action-space index of an action the engine lists for ``seat``."""

    @abstractmethod
    def action_rows(self) -> list[tuple[str, str]]:
        """(index range, meaning) for the docs."""


# --- Chinese Ten ------------------------------------------------------------------------------


def others(field: str) -> Piles:
    """The piles of the view's ``field`` (one by seat) but the viewer's."""
    get = attrgetter(field)
    return lambda view, me: [pile for seat, pile in enumerate(get(view)) if seat != me]


class ChineseTenCoding(Coding):
    game = "chinese_ten"
    max_players = chinese_ten.SPEC.max_players
    PLAY, CAPTURE, THREE, PICK = 0, 52, 52 + 52 * 4, 52 + 52 * 4 + 52
    action_count = PICK + 52

    def __init__(self) -> None:
        super().__init__()
        n, add = self.max_players, self.add
        self.table = self.piles(
            "table", "cards face up on the table", ("table",), lambda view, _: (view.table,)
        )
        self.turned = add(
            "turned",
            52,
            "the turned-up stock card waiting for its player to pick a target",
            ("turned",),
            lambda out, f, view, *_: put_cards(out, f, () if view.turned is None else (view.turned,)),
        )
        self.mine = self.piles(
            "captured_mine",
            "cards you captured this deal",
            ("captured",),
            lambda view, me: (view.captured[me],),
        )
        self.theirs = self.piles(
            "captured_others", "cards the others captured this deal", ("captured",), others("captured")
        )
        self.hand_sizes = self.per_seat("hand_sizes", "cards in each hand / 12", "hand_sizes", scale=12)
        self.stock = self.value("stock_size", "cards in the stock / 52", "stock_size", scale=52)
        self.points = self.per_seat(
            "deal_points", "each seat's points this deal / 240", "deal_points", scale=240
        )
        self.totals = add(
            "totals",
            n,
            "each seat's match total / (2 × target), clipped at 1",
            ("totals", "target"),
            lambda out, f, view, me, _: put_seats(out, f, [t / (2 * view.target) for t in view.totals], me),
        )
        self.frog = add(
            "red_frog",
            1,
            "1 with Red Frog Black Frog scoring",
            ("scoring",),
            lambda out, f, view, *_: put_value(out, f, float(view.scoring is chinese_ten.Scoring.RED_FROG)),
        )

    def slot(self, action: Action, seat: int, players: int) -> int:
        if isinstance(action, chinese_ten.Pick):
            return self.PICK + card_index(action.target)
        assert isinstance(action, chinese_ten.Play), action
        card = card_index(action.card)
        if not action.taken:
            return self.PLAY + card
        if len(action.taken) == 3:
            return self.THREE + card
        return self.CAPTURE + 4 * card + SUITS.index(action.taken[0].suit)

    def action_rows(self) -> list[tuple[str, str]]:
        return [
            ("0–51", "play card c (card index, as in `hand`), capturing nothing"),
            (
                "52–259",
                "52 + 4·c + s: play card c capturing the table card of suit s (c, d, h, s) "
                "of the rank c captures",
            ),
            ("260–311", "260 + c: play card c capturing the layout's three of its rank"),
            ("312–363", "312 + t: pick table card t for the turned-up stock card"),
        ]


# --- Spoil Five ------------------------------------------------------------------------------


def chip_total(view: spoil_five.SpoilFiveView) -> int:
    return sum(view.banks) + view.pool + view.unassigned


def put_banks(out: Vector, feature: Feature, view: spoil_five.SpoilFiveView, me: int, players: int) -> None:
    chips = chip_total(view)
    put_seats(out, feature, [bank / chips for bank in view.banks], me)


def put_trick_seats(
    out: Vector, feature: Feature, view: spoil_five.SpoilFiveView, me: int, players: int
) -> None:
    for seat, _ in view.trick:
        put_seat(out, feature, seat, me, players)


class SpoilFiveCoding(Coding):
    game = "spoil_five"
    max_players = spoil_five.SPEC.max_players
    PLAY, ROB = 0, 52
    WORDS: ClassVar[dict[type[Action], int]] = {
        spoil_five.Decline: 104,
        spoil_five.Announce: 105,
        spoil_five.TakePool: 106,
        spoil_five.Jinx: 107,
    }
    action_count = 108
    PHASES = tuple(spoil_five.Phase)

    def __init__(self) -> None:
        super().__init__()
        n, add = self.max_players, self.add
        self.turn_up = add(
            "turn_up",
            52,
            "one-hot: the turned-up card",
            ("turn_up",),
            lambda out, f, view, *_: put_cards(out, f, (view.turn_up,)),
        )
        self.trumps = add(
            "trumps",
            4,
            "one-hot: the trump suit (c, d, h, s)",
            ("trumps",),
            lambda out, f, view, *_: put_one_hot(out, f, SUITS.index(view.trumps)),
        )
        self.discard = add(
            "discard",
            52,
            "your own face-down discard, if you robbed",
            ("discard",),
            lambda out, f, view, *_: put_cards(out, f, () if view.discard is None else (view.discard,)),
        )
        self.trick = self.piles(
            "trick",
            "cards in the current trick",
            ("trick",),
            lambda view, _: (view.trick,),
            lambda play: play[1:],
        )
        self.led = add(
            "led",
            52,
            "one-hot: the card that led the current trick",
            ("trick",),
            lambda out, f, view, *_: put_cards(out, f, [card for _, card in view.trick[:1]]),
        )
        self.in_trick = add(
            "trick_seats",
            n,
            "1 for each seat that has played to the current trick",
            ("trick",),
            put_trick_seats,
        )
        self.played = self.piles(
            "played",
            "cards of this deal's finished tricks",
            ("tricks",),
            lambda view, _: (view.tricks,),
            lambda trick: [card for _, card in trick.plays],
        )
        self.robbed = self.one_seat("robbed_by", "one-hot: who took the turn-up into hand", "robbed_by")
        self.announced = self.one_seat(
            "ace_announced_by", "one-hot: who announced the trump Ace", "ace_announced_by"
        )
        self.ace_low = add(
            "trump_ace_low",
            1,
            "1 if the trump Ace ranks lowest (not announced), once you can know",
            ("trump_ace_low",),
            lambda out, f, view, *_: put_value(out, f, float(view.trump_ace_low)),
        )
        self.jinxer = self.one_seat("jinxer", "one-hot: who jinxed", "jinxer")
        self.won = self.per_seat("tricks_won", "tricks each seat won this deal / 5", "tricks_won", scale=5)
        self.hand_sizes = self.per_seat("hand_sizes", "cards in each hand / 5", "hand_sizes", scale=5)
        chips = ("banks", "pool", "unassigned")  # conserved: players × bank
        self.banks = add(
            "banks",
            n,
            "each seat's chips / (players × bank)",
            chips,
            put_banks,
        )
        self.pool = add(
            "pool",
            1,
            "chips in the pool / (players × bank)",
            chips,
            lambda out, f, view, *_: put_value(out, f, view.pool / chip_total(view)),
        )
        self.phase = add(
            "phase",
            len(self.PHASES),
            "one-hot: rob_turn_up, play, jinx_choice, over",
            ("phase",),
            lambda out, f, view, *_: put_one_hot(out, f, self.PHASES.index(view.phase)),
        )
        self.deals_left = add(
            "deals_left",
            1,
            "deals still to play after this one / deals",
            ("deals", "deal"),
            lambda out, f, view, *_: put_value(out, f, (view.deals - view.deal) / view.deals),
        )
        self.classic = add(
            "classic",
            1,
            "1 with the classic ranking",
            ("ranking",),
            lambda out, f, view, *_: put_value(out, f, float(view.ranking is spoil_five.Ranking.CLASSIC)),
        )

    def slot(self, action: Action, seat: int, players: int) -> int:
        if isinstance(action, spoil_five.Play):
            return self.PLAY + card_index(action.card)
        if isinstance(action, spoil_five.Rob):
            return self.ROB + card_index(action.discard)
        return self.WORDS[type(action)]

    def action_rows(self) -> list[tuple[str, str]]:
        return [
            ("0–51", "play card c (card index, as in `hand`)"),
            ("52–103", "52 + c: rob, discarding card c face down"),
            ("104", "decline (the dealer leaves a turned-up Ace)"),
            ("105", "announce the trump Ace"),
            ("106", "take the pool (after winning tricks 1–3)"),
            ("107", "jinx (play on for all five tricks)"),
        ]


# --- Pair Battle -------------------------------------------------------------------------------


def put_finishers(
    out: Vector, feature: Feature, view: pair_battle.PairBattleView, me: int, players: int
) -> None:
    for seat in view.finishers:
        put_seat(out, feature, seat, me, players)


SUIT_SETS: tuple[frozenset[Suit], ...] = tuple(
    frozenset(suits) for size in (1, 2, 3) for suits in combinations(SUITS, size)
)
"""The 14 suit sets a play of one rank may lay: 4 singles, 6 doublets, 4 triplets."""


class PairBattleCoding(Coding):
    game = "pair_battle"
    max_players = pair_battle.SPEC.max_players
    PASS = len(RANKS) * len(SUIT_SETS)
    action_count = PASS + 1
    _SET_INDEX: ClassVar[dict[frozenset[Suit], int]] = {suits: i for i, suits in enumerate(SUIT_SETS)}
    has_dealer = False  # seat 0 deals, and dealing gives no role

    acting_reads = ("end", "submitted")

    def __init__(self) -> None:
        super().__init__()
        n, add = self.max_players, self.add
        self.mine = self.piles("laid_mine", "cards you laid", ("laid",), lambda view, me: (view.laid[me],))
        self.theirs = self.piles("laid_others", "cards the others laid", ("laid",), others("laid"))
        self.hand_sizes = self.per_seat("hand_sizes", "cards in each hand / 9", "hand_sizes", scale=9)
        self.reserves = self.per_seat(
            "reserve_sizes", "cards in each face-down reserve / 17", "reserve_sizes", scale=17
        )
        self.scores = self.per_seat(
            "scores", "each seat's points / 500, clipped to -1..1", "scores", scale=500, signed=True
        )
        self.finishers = add(
            "finishers", n, "1 for each seat that has finished", ("finishers",), put_finishers
        )
        self.submitted = self.per_seat(
            "submitted", "1 for each seat that has answered this tick", "submitted"
        )

    def acting(self, view: pair_battle.PairBattleView) -> Iterable[int | None]:
        return () if view.end is not None else [s for s, done in enumerate(view.submitted) if not done]

    def slot(self, action: Action, seat: int, players: int) -> int:
        if isinstance(action, pair_battle.Pass):
            return self.PASS
        assert isinstance(action, pair_battle.Play), action
        rank = action.cards[0].rank
        suits = frozenset(card.suit for card in action.cards)
        return RANKS.index(rank) * len(SUIT_SETS) + self._SET_INDEX[suits]

    def action_rows(self) -> list[tuple[str, str]]:
        sets = ", ".join("".join(s.value for s in SUITS if s in suits) for suits in SUIT_SETS)
        return [
            ("0–181", f"14 · r + k: lay rank r (0 = 2 … 12 = A) in the suits of set k, in order: {sets}"),
            ("182", "pass (lockstep)"),
        ]


# --- Platinum Fish -----------------------------------------------------------------------------


def put_targets(
    out: Vector, feature: Feature, view: platinum_fish.PlatinumFishView, me: int, players: int
) -> None:
    for value in view.targets:
        put_one_hot(out, feature, value - 1)


class PlatinumFishCoding(Coding):
    game = "platinum_fish"
    max_players = platinum_fish.MAX_PLAYERS
    hand_doc = "your cards (at most one of a rank: pairs are laid at once)"
    WORDS: ClassVar[dict[type[Action], int]] = {
        platinum_fish.TakeDiscard: 0,
        platinum_fish.Draw: 1,
        platinum_fish.Roll: 2,
        platinum_fish.Pass: 3,
    }
    ASK, ASK_FROM = 4, 4 + 13
    action_count = ASK_FROM + 13 * (max_players - 1)
    PHASES = tuple(platinum_fish.Phase)

    def __init__(self) -> None:
        super().__init__()
        add = self.add
        self.discard = self.piles(
            "discard",
            "cards in the discard pile / 2 (two decks)",
            ("discard",),
            lambda view, _: (view.discard,),
            scale=2,
        )
        self.top = add(
            "discard_top",
            52,
            "one-hot: the top discard",
            ("discard",),
            lambda out, f, view, *_: put_cards(out, f, view.discard[-1:]),
        )
        self.laid = self.piles(
            "laid",
            "cards laid in matches by anyone / 2",
            ("matches",),
            lambda view, _: view.matches,
            tuple,
            scale=2,
        )
        self.scores = self.per_seat("scores", "matches each seat laid / 52", "scores", scale=52)
        self.hand_sizes = self.per_seat("hand_sizes", "cards in each hand / 13", "hand_sizes", scale=13)
        self.stock = self.value("stock_size", "cards in the stock / 104", "stock_size", scale=104)
        self.phase = add(
            "phase",
            len(self.PHASES),
            "one-hot: turn, ask, over",
            ("phase",),
            lambda out, f, view, *_: put_one_hot(out, f, self.PHASES.index(view.phase)),
        )
        self.targets = add(
            "targets",
            12,
            "the values 1..12 the unanswered roll looks for (phase ask)",
            ("targets",),
            put_targets,
        )

    def slot(self, action: Action, seat: int, players: int) -> int:
        if isinstance(action, platinum_fish.Ask):
            rank = RANKS.index(action.rank)
            if action.seat is None:
                return self.ASK + rank
            return self.ASK_FROM + 13 * ((action.seat - seat) % players - 1) + rank
        return self.WORDS[type(action)]

    def action_rows(self) -> list[tuple[str, str]]:
        return [
            ("0, 1, 2, 3", "take the discard, draw, roll, pass"),
            ("4–16", "4 + r: ask for rank r (0 = 2 … 12 = A)"),
            (
                "17–81",
                "17 + 13 · (k − 1) + r: ask the seat k places to your left for rank r "
                "(the named-opponent variant)",
            ),
        ]


CODINGS: dict[str, Coding] = {
    coding.game: coding
    for coding in (ChineseTenCoding(), SpoilFiveCoding(), PairBattleCoding(), PlatinumFishCoding())
}
"""One coding per registered game."""


def markdown() -> str:
    """Each game's observation layout and action space as docs/training.md shows them
    (``python -m croupier.clients.pettingzoo`` prints it; a test keeps the docs in step)."""
    lines: list[str] = []
    for name, coding in sorted(CODINGS.items()):
        lines += [f"### {get_game(name).title}", ""]
        lines += [f"Observation: {coding.layout.size} numbers.", "", *coding.layout.table(), ""]
        lines += [f"Action space: {coding.action_count} actions.", "", "| index | action |", "|---|---|"]
        lines += [f"| {where} | {meaning} |" for where, meaning in coding.action_rows()]
        lines.append("")
    return "\n".join(lines)
