"""Each game's observation layout and fixed action space (docs/training.md lists them).

An action space is a fixed set of slots. ``slot(action, seat, players)`` names
the slot of any action the engine may list; the environment maps a chosen slot
back to the one legal action in it, so an index always means the same kind of
move (play the 7h, rob discarding the Ah, ask for queens from the next seat).
Encoders read only the seat's engine view: what the seat may know, no more.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from itertools import combinations
from typing import Any, ClassVar

from croupier.clients.pettingzoo.encoding import (
    Layout,
    Vector,
    card_index,
    put_cards,
    put_one_hot,
    put_seat,
    put_seats,
    put_value,
)
from croupier.engine.cards import Rank, Suit
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

    def __init__(self) -> None:
        """The features every game starts with: who is at the table, who acts, who deals, your hand."""
        n = self.max_players
        self.layout = Layout()
        add = self.layout.add
        self.seats = add("seats", n, "1 for each seat at the table (relative: 0 is you)")
        self.to_act = add("to_act", n, "1 for each seat that may act now")
        if self.has_dealer:
            self.dealer = add("dealer", n, "one-hot: the dealer")
        self.hand = add("hand", 52, self.hand_doc)

    def put_common(self, out: Vector, view: Any, acting: Iterable[int | None]) -> tuple[int, int]:
        """Fill the common features from ``view``; returns the viewer's seat and the table's size."""
        me, players = view.seat, len(view.hand_sizes)
        assert me is not None, "an observation is of one seat's view"
        put_seats(out, self.seats, [1] * players, me)
        for seat in acting:
            put_seat(out, self.to_act, seat, me, players)
        if self.has_dealer:
            put_seat(out, self.dealer, view.dealer, me, players)
        put_cards(out, self.hand, view.hands[me] or ())
        return me, players

    @abstractmethod
    def encode(self, view: Any) -> Vector:
        """The observation of the seat whose view this is."""

    @abstractmethod
    def slot(self, action: Action, seat: int, players: int) -> int:
        """The action-space index of an action the engine lists for ``seat``."""

    @abstractmethod
    def action_rows(self) -> list[tuple[str, str]]:
        """(index range, meaning) for the docs."""


# --- Chinese Ten ------------------------------------------------------------------------------


class ChineseTenCoding(Coding):
    game = "chinese_ten"
    max_players = chinese_ten.SPEC.max_players
    PLAY, CAPTURE, THREE, PICK = 0, 52, 52 + 52 * 4, 52 + 52 * 4 + 52
    action_count = PICK + 52

    def __init__(self) -> None:
        super().__init__()
        n, add = self.max_players, self.layout.add
        self.table = add("table", 52, "cards face up on the table")
        self.turned = add("turned", 52, "the turned-up stock card waiting for its player to pick a target")
        self.mine = add("captured_mine", 52, "cards you captured this deal")
        self.theirs = add("captured_others", 52, "cards the others captured this deal")
        self.hand_sizes = add("hand_sizes", n, "cards in each hand / 12", scale=12)
        self.stock = add("stock_size", 1, "cards in the stock / 52", scale=52)
        self.points = add("deal_points", n, "each seat's points this deal / 240", scale=240)
        self.totals = add("totals", n, "each seat's match total / (2 × target), clipped at 1")
        self.frog = add("red_frog", 1, "1 with Red Frog Black Frog scoring")

    def encode(self, view: chinese_ten.ChineseTenView) -> Vector:
        out = self.layout.zeros()
        me, _ = self.put_common(out, view, (view.to_act,))
        put_cards(out, self.table, view.table)
        if view.turned is not None:
            put_cards(out, self.turned, (view.turned,))
        for seat, pile in enumerate(view.captured):
            put_cards(out, self.mine if seat == me else self.theirs, pile)
        put_seats(out, self.hand_sizes, view.hand_sizes, me)
        put_value(out, self.stock, view.stock_size)
        put_seats(out, self.points, view.deal_points, me)
        put_seats(out, self.totals, [t / (2 * view.target) for t in view.totals], me)
        put_value(out, self.frog, float(view.scoring is chinese_ten.Scoring.RED_FROG))
        return out

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
        n, add = self.max_players, self.layout.add
        self.turn_up = add("turn_up", 52, "one-hot: the turned-up card")
        self.trumps = add("trumps", 4, "one-hot: the trump suit (c, d, h, s)")
        self.discard = add("discard", 52, "your own face-down discard, if you robbed")
        self.trick = add("trick", 52, "cards in the current trick")
        self.led = add("led", 52, "one-hot: the card that led the current trick")
        self.in_trick = add("trick_seats", n, "1 for each seat that has played to the current trick")
        self.played = add("played", 52, "cards of this deal's finished tricks")
        self.robbed = add("robbed_by", n, "one-hot: who took the turn-up into hand")
        self.announced = add("ace_announced_by", n, "one-hot: who announced the trump Ace")
        self.ace_low = add(
            "trump_ace_low", 1, "1 if the trump Ace ranks lowest (not announced), once you can know"
        )
        self.jinxer = add("jinxer", n, "one-hot: who jinxed")
        self.won = add("tricks_won", n, "tricks each seat won this deal / 5", scale=5)
        self.hand_sizes = add("hand_sizes", n, "cards in each hand / 5", scale=5)
        self.banks = add("banks", n, "each seat's chips / (players × bank)")
        self.pool = add("pool", 1, "chips in the pool / (players × bank)")
        self.phase = add("phase", len(self.PHASES), "one-hot: rob_turn_up, play, jinx_choice, over")
        self.deals_left = add("deals_left", 1, "deals still to play after this one / deals")
        self.classic = add("classic", 1, "1 with the classic ranking")

    def encode(self, view: spoil_five.SpoilFiveView) -> Vector:
        out = self.layout.zeros()
        me, players = self.put_common(out, view, (view.to_act,))
        put_cards(out, self.turn_up, (view.turn_up,))
        put_one_hot(out, self.trumps, SUITS.index(view.trumps))
        if view.discard is not None:
            put_cards(out, self.discard, (view.discard,))
        put_cards(out, self.trick, (card for _, card in view.trick))
        if view.trick:
            put_cards(out, self.led, (view.trick[0][1],))
        for seat, _ in view.trick:
            put_seat(out, self.in_trick, seat, me, players)
        put_cards(out, self.played, (card for trick in view.tricks for _, card in trick.plays))
        put_seat(out, self.robbed, view.robbed_by, me, players)
        put_seat(out, self.announced, view.ace_announced_by, me, players)
        put_value(out, self.ace_low, float(view.trump_ace_low))
        put_seat(out, self.jinxer, view.jinxer, me, players)
        put_seats(out, self.won, view.tricks_won, me)
        put_seats(out, self.hand_sizes, view.hand_sizes, me)
        chips = sum(view.banks) + view.pool + view.unassigned  # conserved: players × bank
        put_seats(out, self.banks, [b / chips for b in view.banks], me)
        put_value(out, self.pool, view.pool / chips)
        put_one_hot(out, self.phase, self.PHASES.index(view.phase))
        put_value(out, self.deals_left, (view.deals - view.deal) / view.deals)
        put_value(out, self.classic, float(view.ranking is spoil_five.Ranking.CLASSIC))
        return out

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

    def __init__(self) -> None:
        super().__init__()
        n, add = self.max_players, self.layout.add
        self.mine = add("laid_mine", 52, "cards you laid")
        self.theirs = add("laid_others", 52, "cards the others laid")
        self.hand_sizes = add("hand_sizes", n, "cards in each hand / 9", scale=9)
        self.reserves = add("reserve_sizes", n, "cards in each face-down reserve / 17", scale=17)
        self.scores = add("scores", n, "each seat's points / 500, clipped to -1..1", scale=500, signed=True)
        self.finishers = add("finishers", n, "1 for each seat that has finished")
        self.submitted = add("submitted", n, "1 for each seat that has answered this tick")

    def encode(self, view: pair_battle.PairBattleView) -> Vector:
        out = self.layout.zeros()
        acting = [] if view.end is not None else [s for s, done in enumerate(view.submitted) if not done]
        me, players = self.put_common(out, view, acting)
        for seat, laid in enumerate(view.laid):
            put_cards(out, self.mine if seat == me else self.theirs, laid)
        put_seats(out, self.hand_sizes, view.hand_sizes, me)
        put_seats(out, self.reserves, view.reserve_sizes, me)
        put_seats(out, self.scores, view.scores, me)
        for seat in view.finishers:
            put_seat(out, self.finishers, seat, me, players)
        put_seats(out, self.submitted, view.submitted, me)
        return out

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
        n, add = self.max_players, self.layout.add
        self.discard = add("discard", 52, "cards in the discard pile / 2 (two decks)", scale=2)
        self.top = add("discard_top", 52, "one-hot: the top discard")
        self.laid = add("laid", 52, "cards laid in matches by anyone / 2", scale=2)
        self.scores = add("scores", n, "matches each seat laid / 52", scale=52)
        self.hand_sizes = add("hand_sizes", n, "cards in each hand / 13", scale=13)
        self.stock = add("stock_size", 1, "cards in the stock / 104", scale=104)
        self.phase = add("phase", len(self.PHASES), "one-hot: turn, ask, over")
        self.targets = add("targets", 12, "the values 1..12 the unanswered roll looks for (phase ask)")

    def encode(self, view: platinum_fish.PlatinumFishView) -> Vector:
        out = self.layout.zeros()
        me, _ = self.put_common(out, view, (view.to_act,))
        put_cards(out, self.discard, view.discard)
        if view.discard:
            put_cards(out, self.top, (view.discard[-1],))
        put_cards(out, self.laid, (card for seat in view.matches for pair in seat for card in pair))
        put_seats(out, self.scores, view.scores, me)
        put_seats(out, self.hand_sizes, view.hand_sizes, me)
        put_value(out, self.stock, view.stock_size)
        put_one_hot(out, self.phase, self.PHASES.index(view.phase))
        for value in view.targets:
            put_one_hot(out, self.targets, value - 1)
        return out

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
