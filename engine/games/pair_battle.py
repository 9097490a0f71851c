"""Pair Battle, "Битва пар" (rules-notes section 2).

A race without turns: after the countdown every player lays doublets,
triplets, or a single card on a rank that already has three on the table,
as fast as they can, refilling their hand from a face-down reserve. The
first player to empty hand and reserve ends the game (others finishing
within the simultaneity window count too); points for the cards laid decide
the rest.

Time is the referee's: every ``apply``/``advance``/``penalize`` is given
``now`` (seconds since the match started) and the engine never reads a
clock. The lockstep variant replaces real time with ticks in which every
player submits one play or a pass.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from itertools import combinations, groupby, pairwise

from croupier.engine.cards import STANDARD_DECK, Card, Rank, card_order, format_cards, parse_cards
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
    deal_round,
    redeal,
    shared,
)
from croupier.engine.rng import Rng

__all__ = [
    "COUNTDOWN",
    "FINISH_BONUS",
    "FOUR_OF_A_RANK_BONUS",
    "HAND_SIZE",
    "PENALTY",
    "SPEC",
    "Countdown",
    "EndReason",
    "Ended",
    "Finished",
    "Laid",
    "Options",
    "PairBattleAction",
    "PairBattleState",
    "PairBattleView",
    "Pass",
    "Passed",
    "Penalized",
    "Phase",
    "Play",
    "Submitted",
    "Timing",
    "card_points",
    "deal_from",
    "new_game",
    "parse_action",
    "plays_of_rank",
]

HAND_SIZE = {2: 9, 3: 8, 4: 7}
PENALTY = 10
FINISH_BONUS = 10
FOUR_OF_A_RANK_BONUS = 5
COUNTDOWN = ("3", "2", "1", "go")


class Timing(Enum):
    REALTIME = "realtime"
    """Plays at any time after "go", judged in the order they reach the referee."""
    LOCKSTEP = "lockstep"
    """Ticks: every player submits one play or a pass, applied in a seeded random order."""


@dataclass(frozen=True)
class Options(Immutable):
    players: int = 2
    timing: Timing = Timing.REALTIME
    penalty: bool = True
    """A refused play costs 10 points; False: refused without penalty."""
    countdown_tick: float = bounded(1.0, 0.0, 60.0, "seconds")
    """Seconds between the calls "3", "2", "1", "go" (real time only; 0 starts at once)."""
    window: float = bounded(0.05, 0.0, 10.0, "seconds")
    """Seconds after the first finish in which others still finish with it (real time only): closed
    at both ends, so with the first finish at f a finish at f + window counts (0: the same instant)."""

    def __post_init__(self) -> None:
        check_players(self.players, 2, 4, "Pair Battle")
        check_bounds(self)


def card_points(card: Card) -> int:
    """A 15; K, Q, J, 10: 10; 2..9: 5 (the seed omits the 4: a typo, it scores 5)."""
    if card.rank is Rank.ACE:
        return 15
    return 10 if card.rank >= Rank.TEN else 5


def _rank(card: Card) -> Rank:
    return card.rank


# --- actions -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Play(Action):
    """Lay one set face up: a doublet, a triplet, or a single. Text: ``7h 7d``.

    The cards are kept in rank-then-suit order, so ``7d 7h`` and ``7h 7d`` are
    the same play with one text form.
    """

    cards: tuple[Card, ...]
    """The set's cards: two or three of one rank, or one."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "cards", tuple(sorted(self.cards, key=card_order)))

    def __str__(self) -> str:
        return format_cards(self.cards)


@dataclass(frozen=True, slots=True)
class Pass(Action):
    """Lockstep only: lay nothing this tick. Text: ``pass``."""

    def __str__(self) -> str:
        return "pass"


PairBattleAction = Play | Pass


def plays_of_rank(cards: Sequence[Card], laid: int) -> list[Play]:
    """The plays a hand's ``cards`` of one rank allow with ``laid`` of that rank on the table:
    the single once three are laid (the hand holds the rank's last card), else every doublet and triplet."""
    if laid >= 3:
        return [shared(_PLAYS, Play, (cards[0],))]
    return [shared(_PLAYS, Play, same) for size in (2, 3) for same in combinations(cards, size)]


_PLAYS: dict[tuple[tuple[Card, ...]], Play] = {}
"""Each play built once (``shared``), its cards sorted once: a hand's plays are listed at every look."""


def parse_action(text: str) -> PairBattleAction:
    if text.strip().lower() == "pass":
        return Pass()
    cards = parse_cards(text)
    if not cards:
        raise MalformedInput(f"not a Pair Battle action: {text!r} (try '7h 7d', '7h 7d 7c', '7h' or 'pass')")
    return Play(cards)


# --- events ----------------------------------------------------------------------


class EndReason(Enum):
    FINISHED = "finished"
    """Someone emptied hand and reserve and the simultaneity window closed."""
    DEADLOCK = "deadlock"
    """Nobody had a legal play."""
    STANDOFF = "standoff"
    """Lockstep: every player passed in one tick, so the table would never change."""


@dataclass(frozen=True, slots=True)
class Countdown(Event):
    call: str
    """"3", "2", "1" or "go"."""

    def __str__(self) -> str:
        return "go!" if self.call == "go" else f"{self.call}..."


@dataclass(frozen=True, slots=True)
class Laid(Event):
    seat: Seat
    cards: tuple[Card, ...]
    drew: int
    """Cards drawn from the seat's reserve to refill (fewer than laid when it ran out)."""

    def __str__(self) -> str:
        kind = {1: "a single", 2: "a doublet", 3: "a triplet"}[len(self.cards)]
        return f"seat {self.seat} lays {kind} {format_cards(self.cards)} and draws {self.drew}"


@dataclass(frozen=True, slots=True)
class Finished(Event):
    seat: Seat

    def __str__(self) -> str:
        return f"seat {self.seat} has laid every card"


@dataclass(frozen=True, slots=True)
class Penalized(Event):
    """Public, so without the refusal's reason: that names cards the seat holds (its mover is told
    it in the answer to its play)."""

    seat: Seat
    points: int

    def __str__(self) -> str:
        return f"seat {self.seat} loses {self.points} points for a refused play"


@dataclass(frozen=True, slots=True)
class Submitted(Event):
    """Lockstep: the seat has answered this tick (what it answered stays hidden)."""

    seat: Seat
    tick: int

    def __str__(self) -> str:
        return f"seat {self.seat} has submitted for tick {self.tick}"


@dataclass(frozen=True, slots=True)
class Passed(Event):
    seat: Seat

    def __str__(self) -> str:
        return f"seat {self.seat} passes"


@dataclass(frozen=True, slots=True)
class Ended(Event):
    reason: EndReason
    finishers: tuple[Seat, ...]
    scores: tuple[int, ...]

    def __str__(self) -> str:
        why = {
            EndReason.FINISHED: f"seat(s) {', '.join(map(str, self.finishers))} finished",
            EndReason.DEADLOCK: "nobody can play",
            EndReason.STANDOFF: "every player passed",
        }[self.reason]
        return f"game over ({why}): scores {list(self.scores)}"


_LAID: dict[tuple[Seat, tuple[Card, ...], int], Laid] = {}


# --- view --------------------------------------------------------------------------


class Phase(Enum):
    COUNTDOWN = "countdown"
    """The calls "3", "2", "1", "go": nobody may play yet."""
    PLAY = "play"
    """Sets may be laid."""
    OVER = "over"
    """The game has ended."""


@dataclass(frozen=True, slots=True, init=False)
class PairBattleView:
    """What one seat (or a spectator, ``seat=None``) may know.

    ``hands[i]`` is seat i's hand where the viewer may see it, else None.
    Nobody sees a reserve's cards, not even its owner: ``reserves`` and
    ``out_of_play`` are filled only in the full (admin) view.
    """

    seat: Seat | None
    """The viewer's seat; None for a spectator or the full (admin) view."""
    timing: Timing
    """Real time or lockstep."""
    phase: Phase
    """Countdown, play or over."""
    go_at: float | None
    """Real time: the referee time of "go"; None in lockstep."""
    window_closes_at: float | None
    """Real time, after the first finish: the last referee time at which plays are taken (the
    first finish plus the window); the game ends as soon as time passes it."""
    tick: int
    """Lockstep: the tick now being collected, from 1; 0 in real time."""
    hands: tuple[tuple[Card, ...] | None, ...]
    """Each seat's hand where the viewer may see it (its own; all in the full view), else None."""
    hand_sizes: tuple[int, ...]
    """How many cards each seat holds."""
    reserve_sizes: tuple[int, ...]
    """Cards left in each seat's face-down reserve."""
    laid: tuple[tuple[Card, ...], ...]
    """The cards each seat has laid face up, in the order laid."""
    scores: tuple[int, ...]
    """Each seat's points so far."""
    penalties: tuple[int, ...]
    """Points each seat has lost to refused plays."""
    finishers: tuple[Seat, ...]
    """The seats that have emptied hand and reserve, in the order they did."""
    submitted: tuple[bool, ...]
    """Lockstep: who has answered this tick."""
    submissions: tuple[PairBattleAction | None, ...]
    """Lockstep: the answers of this tick that the viewer may see (its own; all in the full view)."""
    end: EndReason | None
    """Why the game ended; None while it runs."""
    reserves: tuple[tuple[Card, ...], ...] | None = None
    """Full view only: each reserve, top card first."""
    out_of_play: tuple[Card, ...] | None = None
    """Full view only: the card left out with 3 players."""

    def __init__(
        self,
        seat: Seat | None,
        timing: Timing,
        phase: Phase,
        go_at: float | None,
        window_closes_at: float | None,
        tick: int,
        hands: tuple[tuple[Card, ...] | None, ...],
        hand_sizes: tuple[int, ...],
        reserve_sizes: tuple[int, ...],
        laid: tuple[tuple[Card, ...], ...],
        scores: tuple[int, ...],
        penalties: tuple[int, ...],
        finishers: tuple[Seat, ...],
        submitted: tuple[bool, ...],
        submissions: tuple[PairBattleAction | None, ...],
        end: EndReason | None,
        reserves: tuple[tuple[Card, ...], ...] | None = None,
        out_of_play: tuple[Card, ...] | None = None,
    ) -> None:
        # Written out rather than generated (init=False): mypyc compiles this one, a view is built
        # at every decision, and the dataclass's own __init__ stays interpreted (docs/benchmarks.md).
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "timing", timing)
        object.__setattr__(self, "phase", phase)
        object.__setattr__(self, "go_at", go_at)
        object.__setattr__(self, "window_closes_at", window_closes_at)
        object.__setattr__(self, "tick", tick)
        object.__setattr__(self, "hands", hands)
        object.__setattr__(self, "hand_sizes", hand_sizes)
        object.__setattr__(self, "reserve_sizes", reserve_sizes)
        object.__setattr__(self, "laid", laid)
        object.__setattr__(self, "scores", scores)
        object.__setattr__(self, "penalties", penalties)
        object.__setattr__(self, "finishers", finishers)
        object.__setattr__(self, "submitted", submitted)
        object.__setattr__(self, "submissions", submissions)
        object.__setattr__(self, "end", end)
        object.__setattr__(self, "reserves", reserves)
        object.__setattr__(self, "out_of_play", out_of_play)


# --- state ---------------------------------------------------------------------------


@dataclass(eq=True)
class PairBattleState(StateBase):
    """One game, from the deal to the end; build it with ``new_game`` or ``deal_from``."""

    options: Options
    rng: Rng
    hands: list[list[Card]]
    """Kept in rank-then-suit order."""
    reserves: list[list[Card]]
    """Top card first."""
    out_of_play: list[Card]
    laid: list[list[Card]] = field(default_factory=list)
    table_counts: list[int] = field(default_factory=lambda: [0] * (Rank.ACE + 1))
    """Cards laid by anyone, indexed by rank value."""
    scores: list[int] = field(default_factory=list)
    penalties: list[int] = field(default_factory=list)
    finishers: list[Seat] = field(default_factory=list)
    calls_made: int = 0
    """How many of the countdown calls "3", "2", "1", "go" have been made."""
    countdown_from: float = 0.0
    """Referee time the countdown started: 0, or when a restarted referee had every seat back."""
    window_closes_at: float | None = None
    tick: int = 0
    submissions: list[PairBattleAction | None] = field(default_factory=list)
    end: EndReason | None = None
    opening: tuple[Event, ...] = ()
    """Nothing: the countdown's calls are events of time (``advance``)."""

    def __deepcopy__(self, memo: dict[int, object]) -> PairBattleState:
        """Copy the containers only: cards and actions are immutable values, and a generic
        deepcopy rebuilt every card (a boss copies a state for every action it weighs)."""
        twin = copy.copy(self)
        twin.rng = copy.deepcopy(self.rng, memo)
        twin.hands = [hand[:] for hand in self.hands]
        twin.reserves = [reserve[:] for reserve in self.reserves]
        twin.out_of_play = self.out_of_play[:]
        twin.laid = [cards[:] for cards in self.laid]
        twin.table_counts = self.table_counts[:]
        twin.scores = self.scores[:]
        twin.penalties = self.penalties[:]
        twin.finishers = self.finishers[:]
        twin.submissions = self.submissions[:]
        return twin

    @property
    def players(self) -> int:
        return self.options.players

    @property
    def lockstep(self) -> bool:
        return self.options.timing is Timing.LOCKSTEP

    def _call_time(self, call: int) -> float:
        """Referee time of countdown call ``call`` (0 = "3"): one tick apart, from one tick in."""
        return self.countdown_from + (call + 1) * self.options.countdown_tick

    @property
    def go_at(self) -> float:
        return self._call_time(len(COUNTDOWN) - 1)

    @property
    def started(self) -> bool:
        return self.calls_made == len(COUNTDOWN)

    # - the protocol -

    def to_act(self) -> frozenset[Seat]:
        return frozenset(s for s in range(self.players) if self._may_act(s))

    def _may_act(self, seat: Seat) -> bool:
        """Lockstep: every seat that has not answered this tick; real time: every seat with a play."""
        if self.end is not None or not self.started:
            return False
        if self.lockstep:
            return self.submissions[seat] is None
        return self._can_play(seat)

    def legal_actions(self, seat: Seat) -> list[PairBattleAction]:
        if not (0 <= seat < self.players and self._may_act(seat)):
            return []
        plays: list[PairBattleAction] = list(self._plays(seat))
        if self.lockstep:
            plays.append(Pass())
        return plays

    def _plays(self, seat: Seat) -> list[Play]:
        """Every play the seat's hand allows now, by rank."""
        hand = groupby(self.hands[seat], key=_rank)
        return [play for rank, same in hand for play in plays_of_rank(tuple(same), self.table_counts[rank])]

    def _can_play(self, seat: Seat) -> bool:
        previous: Rank | None = None
        for card in self.hands[seat]:
            if card.rank is previous or self.table_counts[card.rank] >= 3:
                return True
            previous = card.rank
        return False

    def apply(self, seat: Seat, action: PairBattleAction, now: float = 0.0) -> list[Event]:
        self._check(seat, action, now)
        if self.lockstep:
            return self._submit(seat, action)
        assert isinstance(action, Play)
        events = self.advance(now)
        events.extend(self._lay(seat, action))
        events.extend(self._settle(now))
        return events

    def _check(self, seat: Seat, action: PairBattleAction, now: float) -> None:
        """Raise IllegalAction unless ``seat`` may make ``action`` at ``now``; changes nothing."""
        _check_seat(seat, self.players)
        if self.end is not None:
            raise IllegalAction("the game is over")
        if not isinstance(action, Play | Pass):
            raise IllegalAction(f"{action} is not a Pair Battle action: lay cards like '7h 7d' or 'pass'")
        if self.lockstep:
            if self.submissions[seat] is not None:
                raise NotYourTurn(f"you have already answered tick {self.tick}: wait for the others")
            if isinstance(action, Pass):
                return
        else:
            if isinstance(action, Pass):
                raise IllegalAction("pass is only for timing=lockstep: in real time simply send nothing")
            if not self.started and now < self.go_at:
                raise NotYourTurn(f"too early: play starts at go, {self.go_at:.3f} s; it is {now:.3f} s")
            if self._window_closed(now):
                closed = self.window_closes_at
                raise IllegalAction(f"the game is over: the finish window closed at {closed:.3f} s")
            if seat in self.finishers:
                raise IllegalAction("you have finished: your hand and reserve are empty")
        self._check_set(self.hands[seat], action.cards)

    def _check_set(self, hand: list[Card], cards: tuple[Card, ...]) -> None:
        if not 1 <= len(cards) <= 3:
            raise IllegalAction(
                f"a play is one doublet, one triplet or one single; {len(cards)} cards is not one set "
                "(lay sets one at a time)"
            )
        if any(a == b for a, b in pairwise(cards)):  # a play's cards are sorted
            raise IllegalAction(f"{format_cards(cards)} names a card twice")
        missing = [c for c in cards if c not in hand]
        if missing:
            raise IllegalAction(f"you do not hold {format_cards(missing)}")
        rank = cards[0].rank
        if any(c.rank is not rank for c in cards):
            raise IllegalAction(f"{format_cards(cards)} is not a set: a doublet or triplet is of one rank")
        laid = self.table_counts[rank]
        if len(cards) == 1 and laid < 3:
            raise IllegalAction(f"a single {cards[0]} needs three {rank}s laid first; {laid} are laid")

    def _lay(self, seat: Seat, play: Play) -> list[Event]:
        """Lay a checked play, score it and refill the hand from the reserve."""
        hand, reserve, laid = self.hands[seat], self.reserves[seat], self.laid[seat]
        rank = play.cards[0].rank
        for card in play.cards:
            hand.remove(card)
        laid.extend(play.cards)
        self.table_counts[rank] += len(play.cards)
        self.scores[seat] += sum(card_points(c) for c in play.cards)
        if sum(1 for c in laid if c.rank is rank) == 4:
            self.scores[seat] += FOUR_OF_A_RANK_BONUS
        drawn = reserve[: len(play.cards)]
        del reserve[: len(play.cards)]
        if drawn:
            hand.extend(drawn)
            hand.sort(key=card_order)
        events: list[Event] = [shared(_LAID, Laid, seat, play.cards, len(drawn))]
        if not hand:  # the refill would have filled it: the reserve is empty too
            self.finishers.append(seat)
            self.scores[seat] += FINISH_BONUS
            events.append(Finished(seat))
        return events

    def _settle(self, now: float) -> list[Event]:
        """Real time, after a play: open the window at the first finish; end the game if nobody can play."""
        if self.finishers and self.window_closes_at is None:
            self.window_closes_at = now + self.options.window
        return self._end_if_nobody_can_play()

    def _window_closed(self, now: float) -> bool:
        """Real time: the finish window is closed at both ends, so ``now`` at its last instant is inside."""
        return self.window_closes_at is not None and now > self.window_closes_at

    def _end_if_nobody_can_play(self) -> list[Event]:
        if any(self._can_play(s) for s in range(self.players)):
            return []
        return self._end(EndReason.FINISHED if self.finishers else EndReason.DEADLOCK)

    def _submit(self, seat: Seat, action: PairBattleAction) -> list[Event]:
        """Lockstep: hold the answer hidden; the tick's last answer resolves the tick."""
        self.submissions[seat] = action
        events: list[Event] = [Submitted(seat, self.tick)]
        if any(s is None for s in self.submissions):
            return events
        # An answer checked on arrival stays legal whatever the others lay first:
        # a hand changes only by its own plays and laid counts only grow.
        for s in self.rng.shuffled(range(self.players)):
            answer = self.submissions[s]
            events.extend(self._lay(s, answer) if isinstance(answer, Play) else [Passed(s)])
        everyone_passed = all(isinstance(a, Pass) for a in self.submissions)
        self.submissions = [None] * self.players
        self.tick += 1
        if self.finishers:
            events.extend(self._end(EndReason.FINISHED))
        elif everyone_passed:
            events.extend(self._end(EndReason.STANDOFF))
        else:
            events.extend(self._end_if_nobody_can_play())
        return events

    def _end(self, reason: EndReason) -> list[Event]:
        self.end = reason
        return [Ended(reason, tuple(self.finishers), tuple(self.scores))]

    def advance(self, now: float) -> list[Event]:
        events: list[Event] = []
        if self.end is not None or self.lockstep:
            return events
        while not self.started and now >= self._call_time(self.calls_made):
            events.append(Countdown(COUNTDOWN[self.calls_made]))
            self.calls_made += 1
            if self.started:  # a deal nobody can play from ends at go
                events.extend(self._end_if_nobody_can_play())
        if self._window_closed(now):
            events.extend(self._end(EndReason.FINISHED))
        return events

    @property
    def realtime(self) -> bool:
        return not self.lockstep

    def recount(self, now: float) -> list[Event]:
        """The countdown again, from ``now``; a finish window still open is as long after the new
        "go" as it had left."""
        if self.end is not None or self.lockstep:
            return []
        left = None if self.window_closes_at is None else max(0.0, self.window_closes_at - now)
        self.calls_made = 0
        self.countdown_from = now
        if left is not None:
            self.window_closes_at = self.go_at + left
        return []

    def wake_at(self) -> float | None:
        if self.end is not None or self.lockstep:
            return None
        if not self.started:
            return self._call_time(self.calls_made)
        if self.window_closes_at is None:
            return None
        return math.nextafter(self.window_closes_at, math.inf)  # the first instant past the window

    def penalize(self, seat: Seat, reason: str, now: float = 0.0) -> list[Event]:
        """The 10 points a refused play costs (none in the no-penalty variant or after the end)."""
        _check_seat(seat, self.players)
        events = self.advance(now)
        if self.end is None and self.options.penalty:
            self.penalties[seat] += 1
            self.scores[seat] -= PENALTY
            events.append(Penalized(seat, PENALTY))
        return events

    # - views -

    def view(self, seat: Seat) -> PairBattleView:
        _check_seat(seat, self.players)
        return self._view(
            seat,
            tuple(tuple(h) if s == seat else None for s, h in enumerate(self.hands)),
            tuple(a if s == seat else None for s, a in enumerate(self.submissions)),
        )

    def public_view(self) -> PairBattleView:
        hidden = (None,) * self.players
        return self._view(None, hidden, hidden)

    def full_view(self) -> PairBattleView:
        return self._view(
            None,
            tuple(tuple(h) for h in self.hands),
            tuple(self.submissions),
            reserves=tuple(tuple(r) for r in self.reserves),
            out_of_play=tuple(self.out_of_play),
        )

    def _view(
        self,
        seat: Seat | None,
        hands: tuple[tuple[Card, ...] | None, ...],
        submissions: tuple[PairBattleAction | None, ...],
        reserves: tuple[tuple[Card, ...], ...] | None = None,
        out_of_play: tuple[Card, ...] | None = None,
    ) -> PairBattleView:
        phase = Phase.OVER if self.end is not None else Phase.PLAY if self.started else Phase.COUNTDOWN
        return PairBattleView(
            seat=seat,
            timing=self.options.timing,
            phase=phase,
            go_at=None if self.lockstep else self.go_at,
            window_closes_at=self.window_closes_at,
            tick=self.tick,
            hands=hands,
            hand_sizes=tuple(map(len, self.hands)),
            reserve_sizes=tuple(map(len, self.reserves)),
            laid=tuple(map(tuple, self.laid)),
            scores=tuple(self.scores),
            penalties=tuple(self.penalties),
            finishers=tuple(self.finishers),
            submitted=tuple(a is not None for a in self.submissions),
            submissions=submissions,
            end=self.end,
            reserves=reserves,
            out_of_play=out_of_play,
        )

    def is_over(self) -> bool:
        return self.end is not None

    def outcome(self) -> Outcome:
        """Finishers first (by points among them), then the rest by points."""
        keys = [(seat in self.finishers, score) for seat, score in enumerate(self.scores)]
        return Outcome.ranked_by(self.scores, keys)

    def resample_hidden(self, seat: Seat, rng: Rng) -> PairBattleState:
        twin = copy.deepcopy(self)
        others = [h for s, h in enumerate(twin.hands) if s != seat]
        redeal([*others, *twin.reserves, twin.out_of_play], rng)
        for hand in others:
            hand.sort(key=card_order)
        # Others' hidden answers were made from hands that are now different:
        # give them answers their new hands could have made.
        for s, answer in enumerate(twin.submissions):
            if s != seat and isinstance(answer, Play):
                answers: list[PairBattleAction] = [*twin._plays(s), Pass()]
                twin.submissions[s] = rng.choice(answers)
        return twin


def _check_seat(seat: Seat, players: int) -> None:
    if not 0 <= seat < players:
        raise IllegalAction(f"no seat {seat}: seats are 0 to {players - 1}")


def deal_from(
    options: Options,
    hands: list[list[Card]] | list[tuple[Card, ...]],
    reserves: list[list[Card]] | list[tuple[Card, ...]],
    out_of_play: list[Card] | tuple[Card, ...] = (),
    rng: Rng | None = None,
) -> PairBattleState:
    """A game from a chosen deal (reserves top card first): what ``new_game``
    does after shuffling, and how tests stack a deal. Cards left out of the
    given places are simply not in the game.

    >>> hands = [list(parse_cards("7h 7d 2c")), list(parse_cards("9s 9h 3d"))]
    >>> state = deal_from(Options(timing=Timing.LOCKSTEP), hands, [list(parse_cards("Kc")), []])
    >>> state.view(0).hands
    ((Card(2c), Card(7d), Card(7h)), None)
    >>> state.legal_actions(0)
    [Play(cards=(Card(7d), Card(7h))), Pass()]
    """
    n = options.players
    if len(hands) != n or len(reserves) != n:
        raise InvalidOptions(f"give {n} hands and {n} reserves, not {len(hands)} and {len(reserves)}")
    cards = [c for zone in (*hands, *reserves, out_of_play) for c in zone]
    if len(set(cards)) != len(cards):
        raise InvalidOptions("a card is dealt twice")
    if any(len(h) > HAND_SIZE[n] for h in hands):
        raise InvalidOptions(f"a hand holds at most {HAND_SIZE[n]} cards with {n} players")
    state = PairBattleState(
        options,
        rng or Rng(0),
        hands=[sorted(h, key=card_order) for h in hands],
        reserves=[list(r) for r in reserves],
        out_of_play=list(out_of_play),
        laid=[[] for _ in range(n)],
        scores=[0] * n,
        penalties=[0] * n,
        submissions=[None] * n,
    )
    if state.lockstep:
        state.calls_made, state.tick = len(COUNTDOWN), 1
        state._end_if_nobody_can_play()
    else:
        state.advance(0.0)  # a zero countdown starts at once
    return state


def new_game(options: Options, rng: Rng) -> PairBattleState:
    """Shuffle and deal: hands, then equal reserves, the odd card (3 players) out of play."""
    n = options.players
    deck = rng.shuffled(STANDARD_DECK)
    hands, rest = deal_round(deck, n, 0, (HAND_SIZE[n],))  # seat 0 deals
    reserves, out_of_play = deal_round(rest, n, 0, (len(rest) // n,))
    return deal_from(options, hands, reserves, out_of_play, rng)


SPEC: GameSpec[Options] = GameSpec(
    name="pair_battle",
    title="Pair Battle",
    options_type=Options,
    new_game=new_game,
    parse_action=parse_action,
    min_players=2,
    max_players=4,
    test_variants=(
        *(Options(players=n) for n in (2, 3, 4)),
        *(Options(players=n, timing=Timing.LOCKSTEP) for n in (2, 3, 4)),
        Options(players=3, penalty=False, countdown_tick=0.0, window=0.0),
    ),
)
