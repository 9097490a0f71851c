"""The SDK's side of a bot stream, without the stream: fed what the referee sends, it asks the
bots and returns what to send back. No gRPC and no event loop here (sans-IO, as python-chess's
engine protocol runs over a mock transport in its tests): ``sdk.Client`` drives it over a real
stream, and the tests drive it by hand.

    protocol = StreamProtocol(factory)
    stream.write(protocol.hello())           # a new stream: what the last one sent is void
    for message in protocol.arrived(read()): # as it is read (a Batch gives its messages)
        for step in protocol.receive(message):
            ...                              # a Move to send, or a Thinking to await

A ``Thinking`` is an ``async def choose`` at work: await ``thinking.choice`` (alongside the
stream's other work: other seats' thinking included) and hand the result to
``protocol.chose(thinking, ...)``, which returns the steps that follow. A seat thinks about one
request at a time: newer ones wait, and only the newest is asked once it has answered.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol

from typing_extensions import TypeVar

from croupier.engine.core import Action, Event
from croupier.v1 import bots_pb2
from croupier.wire import convert

__all__ = [
    "MAX_RETRIES",
    "PROTOCOL_VERSION",
    "RESEND_SECONDS",
    "ActionT",
    "Commented",
    "Factory",
    "Match",
    "Player",
    "Resend",
    "Result",
    "Step",
    "StreamProtocol",
    "Thinking",
    "Unsolicited",
    "ViewT",
    "describe",
]

PROTOCOL_VERSION = 1
MAX_RETRIES = 3
"""Refused answers to one decision that ``choose`` is asked again for; then the referee's clock plays."""
RESEND_SECONDS = 1.0
"""How long after REASON_JOURNAL_FULL (the referee's disk is full: nothing was played) an answer is
sent again."""
Updates = bots_pb2.StreamOptions.Updates
Reason = bots_pb2.Error.Reason
Refusal = bots_pb2.ActionResult.RefusalReason
ROUTINE = frozenset({Reason.REASON_DECISION_NOT_OPEN, Reason.REASON_MATCH_OVER})
"""Errors of normal play, logged at DEBUG: an answer crossing a newer request (real-time games) or
the match's end."""

log = logging.getLogger("croupier.bot")

ViewT = TypeVar("ViewT", default=Any)
"""A bot's view type: its game's view dataclass (``ChineseTenView``), or Any for a bot of every game."""
ActionT = TypeVar("ActionT", bound=Action, default=Any)
"""A bot's action type: its game's actions (``ChineseTenAction``), or Any for a bot of every game."""
MAX_COMMENT = 200
"""Characters of a comment the referee keeps (it cuts the rest off; the move stands)."""


@dataclass(frozen=True)
class Commented(Generic[ActionT]):
    """A move with a note for the bot's author: ``return Commented(2, "seat 1 holds the Ks, p=0.7")``
    from ``choose`` (or pass one to ``Bot.play``). The referee keeps the comment in the match's
    journal with the move and shows it next to that move in the match's replay once the match is
    over; no bot ever receives it, so it cannot signal to the others at the table."""

    choice: int | ActionT | str
    """What ``choose`` would return without a comment: an index into ``legal``, an action, or its text."""
    comment: str
    """At most ``MAX_COMMENT`` characters (the referee cuts the rest); control characters become spaces."""


Unsolicited = Action | str | Commented[Any]
"""What ``Bot.play`` sends: an action, or its text form, maybe with a comment."""


@dataclass(frozen=True)
class Match:
    """The match a ``Bot`` object plays: what the referee said when it started."""

    id: str
    game: str
    options: Any
    """The game's options dataclass (``croupier.engine.games.<game>``), every default filled in."""
    seat: int
    players: tuple[str, ...]
    """Display names by seat."""
    decision_ms: int
    """Time for one decision before the bank is drawn on."""
    bank_ms: int
    """This seat's time bank for the whole match, when the match started."""
    resumed: bool = False
    """True when the bot joined a running match (a reconnect)."""


@dataclass(frozen=True)
class Result(Generic[ViewT]):
    """How a match ended, for ``Bot.ended``."""

    place: int
    """This seat's place, 1 best (shared places repeat: 1, 1, 3)."""
    scores: tuple[int, ...]
    places: tuple[int, ...]
    winners: tuple[int, ...]
    view: ViewT
    """The final view with every hand shown."""
    forfeited: str = ""
    """Why this seat was forfeited, if it was."""


class Player(Protocol):
    """What the protocol asks of a bot object (``sdk.Bot`` is one)."""

    _send: Callable[[Unsolicited], None] | None

    def choose(self, view: Any, legal: list[Any]) -> Any: ...

    def update(self, view: Any, events: list[Event]) -> None: ...

    def ended(self, result: Result[Any]) -> None: ...


Factory = Callable[[Match], Player]


@dataclass
class Thinking:
    """An ``async def choose`` under way: await ``choice``, then ``StreamProtocol.chose``."""

    seat: _Seat
    decision: bots_pb2.DecisionRequest
    legal: list[Any]
    choice: Awaitable[Any]


@dataclass
class Resend:
    """An answer the referee could not journal (its disk was full, nothing was played): after
    ``seconds``, ``StreamProtocol.resend`` gives it back to send, unless something overtook it."""

    seat: _Seat
    answer: bots_pb2.Move
    seconds: float = RESEND_SECONDS


Step = bots_pb2.Move | Thinking | Resend
"""What ``receive`` returns, in order: a move to send, a choice to await first, or a move to
send again later."""


class _Seat:
    """The SDK's side of one seat: the bot object, the game's codec, and what is in flight."""

    def __init__(self, match: Match, bot: Player) -> None:
        self.match = match
        self.bot = bot
        self.codec = convert.codec(match.game)
        self.latest_decision = 0
        """The newest decision id received: older ones are skipped."""
        self.outstanding = 0
        """Moves sent and not yet answered (an ActionResult, an Error, or a rise of ``accepted``)."""
        self.accepted = 0
        """With quiet acceptance: the count of accepted moves the seat's last message gave."""
        self.held: bots_pb2.DecisionRequest | None = None
        """The newest request that came while moves were outstanding: its view may not show them."""
        self.deferred: list[Unsolicited] | None = None
        """Plays made during ``choose``: sent after its answer."""
        self.answered: bots_pb2.DecisionRequest | None = None
        """The request answered last: a refusal leaves it open, and ``choose`` is asked again."""
        self.answer: bots_pb2.Move | None = None
        """The Move that answered it last: sent again if the referee could not journal it."""
        self.retries = 0
        self.thinking = False
        """An async ``choose`` of this seat is under way: newer requests are held until it answers."""

    def new_stream(self) -> None:
        """What the old stream sent and received is void (its thinking was cancelled with it)."""
        self.outstanding, self.held, self.latest_decision, self.accepted = 0, None, 0, 0
        self.thinking = False


@dataclass
class StreamProtocol:
    """One bot process's protocol with one referee, over any number of streams one after another.

    ``options`` is what to ask for in Hello (None: nothing, protocol 1 as it began); what the
    referee granted is ``granted`` once it welcomed the stream.
    """

    factory: Factory
    name: str = "bot"
    max_matches: int = 1
    options: bots_pb2.StreamOptions | None = None
    seats: dict[tuple[str, int], _Seat] = field(default_factory=dict)
    finished: int = 0
    """Matches seen to their end, or to this bot's forfeit in them."""
    granted: bots_pb2.StreamOptions = field(default_factory=bots_pb2.StreamOptions)
    welcome: bots_pb2.Welcome | None = None
    _steps: list[Step] = field(default_factory=list)

    # --- the stream ----------------------------------------------------------------------------

    def hello(self) -> bots_pb2.BotMessage:
        """The first message of a new stream; what the previous one sent is void."""
        for seat in self.seats.values():
            seat.new_stream()
        self.granted, self.welcome = bots_pb2.StreamOptions(), None
        hello = bots_pb2.Hello(
            protocol_version=PROTOCOL_VERSION, name=self.name, max_matches=self.max_matches
        )
        if self.options is not None and self.options != bots_pb2.StreamOptions():
            hello.options.CopyFrom(self.options)
        return bots_pb2.BotMessage(hello=hello)

    def outgoing(self, moves: list[bots_pb2.Move]) -> list[bots_pb2.BotMessage]:
        """The messages that carry ``moves``: one ``Moves`` if the referee takes batches."""
        if len(moves) > 1 and self.granted.batches:
            return [bots_pb2.BotMessage(moves=bots_pb2.Moves(moves=moves))]
        return [bots_pb2.BotMessage(move=move) for move in moves]

    def arrived(self, message: bots_pb2.ServerMessage) -> list[bots_pb2.ServerMessage]:
        """A message as it is read, ahead of ``receive``: a Batch's messages one by one, each
        seat's newest decision noted so that older ones are skipped."""
        messages = list(message.batch.messages) if message.HasField("batch") else [message]
        for each in messages:
            if each.HasField("decision"):
                seat = self.seats.get((each.decision.match_id, each.decision.seat))
                if seat is not None:
                    seat.latest_decision = max(seat.latest_decision, each.decision.decision_id)
        return messages

    # --- what the referee says -------------------------------------------------------------------

    def receive(self, message: bots_pb2.ServerMessage) -> list[Step]:
        """Act on one message (not a Batch: see ``arrived``); the moves to send and choices to await."""
        kind = message.WhichOneof("message")
        if kind == "welcome":
            self.welcome = message.welcome
            self.granted = message.welcome.options
        elif kind == "match_started":
            self._started(message.match_started)
        elif kind == "decision":
            self._count_accepted(message.decision.match_id, message.decision.seat, message.decision.accepted)
            self._decide(message.decision)
        elif kind == "view_update":
            update = message.view_update
            self._count_accepted(update.match_id, update.seat, update.accepted)
            self._update(update)
        elif kind == "action_result":
            result = message.action_result
            _log_result(result)
            if result.status != bots_pb2.ActionResult.TIMED_OUT:  # the others answer a move of ours
                self._answered(result.match_id, result.seat, result.status == bots_pb2.ActionResult.ACCEPTED)
            if result.status == bots_pb2.ActionResult.REFUSED:
                self._retry(result)
        elif kind == "match_ended":
            self._ended(message.match_ended)
        elif kind == "seat_forfeited":
            forfeited = message.seat_forfeited
            log.warning(
                "match %s: seat %d was forfeited (%s)", forfeited.match_id, forfeited.seat, forfeited.reason
            )
            if self.seats.pop((forfeited.match_id, forfeited.seat), None) is not None:
                self.finished += 1  # the referee plays the seat on; no MatchEnded comes to us
        elif kind == "error":
            self._error(message.error)
        return self._take()

    def resend(self, resend: Resend) -> list[bots_pb2.Move]:
        """The answer of a ``Resend`` whose time came, unless the seat, its answer or a newer
        decision overtook it (or a new stream began: its seats' latest decisions start over)."""
        seat, answer = resend.seat, resend.answer
        current = self.seats.get((seat.match.id, seat.match.seat)) is seat and seat.answer is answer
        if not current or answer.decision_id < seat.latest_decision:
            return []
        seat.outstanding += 1
        return [answer]

    def _error(self, error: bots_pb2.Error) -> None:
        """Act on an Error by its reason (docs/protocol.md lists them), never by its words."""
        reason = error.reason
        level = logging.DEBUG if reason in ROUTINE else logging.WARNING
        log.log(level, "referee: %s: %s", Reason.Name(reason), error.message)
        if reason == Reason.REASON_SEAT_TAKEN_OVER:  # about no move of ours: the seat is gone
            if self.seats.pop((error.match_id, error.seat), None) is not None:
                self.finished += 1  # another stream plays it on; nothing more comes to us
            return
        if not error.match_id:
            return
        seat = self._seat_answering(error.match_id, error.decision_id)
        self._answered(error.match_id, seat.match.seat if seat else None, accepted=False)
        if reason == Reason.REASON_JOURNAL_FULL and seat is not None and seat.answer is not None:
            self._steps.append(Resend(seat, seat.answer))

    def _seat_answering(self, match_id: str, decision_id: int) -> _Seat | None:
        """The seat whose answer to ``decision_id`` (not 0: a play without a request) an Error is about."""
        for (mid, _), seat in self.seats.items():
            if mid == match_id and decision_id and seat.answered and seat.answered.decision_id == decision_id:
                return seat
        return None

    def chose(self, thinking: Thinking, choice: Any = None, error: BaseException | None = None) -> list[Step]:
        """An awaited choice came (or ``choose`` raised ``error``): the steps that follow."""
        thinking.seat.thinking = False
        self._chosen(thinking.seat, thinking.decision, thinking.legal, choice, error)
        self._release(thinking.seat)
        return self._take()

    def _take(self) -> list[Step]:
        steps, self._steps = self._steps, []
        return steps

    def _started(self, started: bots_pb2.MatchStarted) -> None:
        key = (started.match_id, started.seat)
        if key in self.seats:
            return  # a reconnect: the same bot object goes on
        codec = convert.codec(started.game)
        match = Match(
            id=started.match_id,
            game=started.game,
            options=codec.options_from_proto(started.options),
            seat=started.seat,
            players=tuple(p.name for p in started.players),
            decision_ms=started.clocks.decision_ms,
            bank_ms=started.time_bank_ms,
            resumed=started.resumed,
        )
        try:
            seat = _Seat(match, self.factory(match))
        except Exception:
            log.exception(
                "match %s: cannot make a bot for %s; the referee's clock will play", match.id, match.game
            )
            return
        seat.bot._send = lambda action: self._play(seat, action)
        self.seats[key] = seat
        log.info(
            "match %s (%s) %s in seat %d",
            match.id,
            match.game,
            "resumed" if match.resumed else "started",
            match.seat,
        )

    def _count_accepted(self, match_id: str, number: int, accepted: int) -> None:
        """Quiet acceptance: a rise of the seat's count accepts as many of its moves in flight, and
        the message that says so was built after them (a request held meanwhile is stale)."""
        seat = self.seats.get((match_id, number))
        if seat is not None and accepted > seat.accepted:
            seat.outstanding = max(0, seat.outstanding - (accepted - seat.accepted))
            seat.accepted = accepted
            seat.held = None

    def _decide(self, decision: bots_pb2.DecisionRequest) -> None:
        seat = self.seats.get((decision.match_id, decision.seat))
        if seat is None:
            log.warning("a decision for an unknown match %s", decision.match_id)
            return
        if decision.decision_id < seat.latest_decision:
            return  # already replaced by a newer request, which is waiting
        if seat.outstanding or seat.thinking:
            seat.held = decision  # its view may not show our moves in flight yet, or choose is busy
            return
        codec = seat.codec
        legal = [codec.action_from_proto(a) for a in decision.legal_actions]
        seat.deferred = []
        try:
            choice = seat.bot.choose(codec.view_from_proto(decision.view), legal)
        except Exception as exc:
            self._chosen(seat, decision, legal, None, exc)
            return
        if inspect.isawaitable(choice):
            seat.thinking = True
            self._steps.append(Thinking(seat, decision, legal, choice))  # plays wait with it
            return
        self._chosen(seat, decision, legal, choice, None)

    def _chosen(
        self,
        seat: _Seat,
        decision: bots_pb2.DecisionRequest,
        legal: list[Any],
        choice: Any,
        error: BaseException | None,
    ) -> None:
        plays, seat.deferred = seat.deferred or [], None
        move = None
        try:
            if error is not None:
                raise error
            if choice is not None:
                move = _move(seat, decision.decision_id, choice, legal)
        except Exception:
            log.exception(
                "match %s seat %d: choose failed; the referee's clock will play for you",
                decision.match_id,
                decision.seat,
            )
            return
        if (
            decision.match_id,
            decision.seat,
        ) not in self.seats or decision.decision_id < seat.latest_decision:
            return  # the match ended, or a newer decision came, while an async choose thought
        if move is not None:
            if seat.answered is None or seat.answered.decision_id != decision.decision_id:
                seat.answered, seat.retries = decision, 0
            seat.answer = move
            seat.outstanding += 1
            self._steps.append(move)
        for action in plays:
            self._play(seat, action)

    def _retry(self, refused: bots_pb2.ActionResult) -> None:
        """A refused answer leaves its decision open: ask ``choose`` again, unless a newer request
        replaced it, or it was refused ``MAX_RETRIES`` times already (the clock will play)."""
        seat = self.seats.get((refused.match_id, refused.seat))
        decision = seat.answered if seat is not None else None
        if seat is None or decision is None or decision.decision_id != refused.decision_id:
            return
        if decision.decision_id < seat.latest_decision:
            return
        if seat.retries >= MAX_RETRIES:
            log.warning(
                "match %s seat %d: decision %d refused %d times; the referee's clock will play",
                refused.match_id, refused.seat, decision.decision_id, seat.retries + 1,
            )  # fmt: skip
            return
        seat.retries += 1
        self._decide(decision)

    def _play(self, seat: _Seat, action: Unsolicited) -> None:
        """An action without a request (``Bot.play``): held back while ``choose`` runs."""
        if seat.deferred is not None:
            seat.deferred.append(action)
            return
        seat.outstanding += 1
        self._steps.append(_move(seat, 0, action, None))

    def _answered(self, match_id: str, seat_number: int | None, accepted: bool) -> None:
        """One of our moves was answered. Requests that came before an accepted move are stale
        (a fresh one follows it); once every move is answered, a held request is handled."""
        for (mid, number), seat in self.seats.items():
            if mid == match_id and seat.outstanding and seat_number in (None, number):
                seat.outstanding -= 1
                if accepted:
                    seat.held = None
                self._release(seat)
                return

    def _release(self, seat: _Seat) -> None:
        """Decide the request held for ``seat`` once nothing of it is in flight, unless it went stale."""
        if not seat.outstanding and not seat.thinking and seat.held is not None:
            held, seat.held = seat.held, None
            playing = self.seats.get((seat.match.id, seat.match.seat)) is seat
            if playing and held.decision_id >= seat.latest_decision:
                self._decide(held)

    def _update(self, update: bots_pb2.ViewUpdate) -> None:
        seat = self.seats.get((update.match_id, update.seat))
        if seat is None:
            return
        codec = seat.codec
        seat.bot.update(
            codec.view_from_proto(update.view), [codec.event_from_proto(e) for e in update.events]
        )

    def _ended(self, ended: bots_pb2.MatchEnded) -> None:
        seat = self.seats.pop((ended.match_id, ended.seat), None)
        self.finished += 1
        mine = next((s for s in ended.result.seats if s.seat == ended.seat), None)
        log.info(
            "match %s over: place %s of %d, scores %s",
            ended.match_id,
            mine.place if mine else "?",
            len(ended.result.seats),
            [s.score for s in ended.result.seats],
        )
        if seat is None or mine is None:
            return
        result = Result(
            place=mine.place,
            scores=tuple(s.score for s in ended.result.seats),
            places=tuple(s.place for s in ended.result.seats),
            winners=tuple(ended.result.winners),
            view=seat.codec.view_from_proto(ended.view),
            forfeited=mine.forfeited,
        )
        seat.bot.ended(result)


def describe(options: bots_pb2.StreamOptions) -> str:
    """Stream options in words, as the bots log them: "none" for protocol 1."""
    words = [
        word
        for word, granted in (
            ("quiet acceptance", options.quiet_acceptance),
            ("deferred updates", options.updates == Updates.UPDATES_WITH_NEXT),
            ("batches", options.batches),
        )
        if granted
    ]
    return ", ".join(words) or "none"


def _move(seat: _Seat, decision_id: int, choice: object, legal: list[Any] | None) -> bots_pb2.Move:
    """A Move answering ``decision_id`` (0: unsolicited) with an index, an action or a text form,
    and the comment of a ``Commented`` one."""
    move = bots_pb2.Move(match_id=seat.match.id, decision_id=decision_id, seat=seat.match.seat)
    if isinstance(choice, Commented):
        if not isinstance(choice.comment, str):
            raise TypeError(f"a comment is a str, not {type(choice.comment).__name__}")
        move.comment = choice.comment
        choice = choice.choice
    if isinstance(choice, bool) or not isinstance(choice, int | str | Action):
        raise TypeError(f"choose returned {choice!r}: return an index, an action or an action's text")
    if isinstance(choice, int):
        if legal is None:
            raise TypeError("an index answers a decision: play() takes an action")
        if not 0 <= choice < len(legal):
            raise IndexError(f"choose returned index {choice}, but there are {len(legal)} legal actions")
        move.index = choice
    elif isinstance(choice, str):
        move.text = choice
    elif legal is not None and choice in legal:
        move.index = legal.index(choice)
    else:
        move.action.CopyFrom(seat.codec.action(choice))
    return move


def _log_result(result: bots_pb2.ActionResult) -> None:
    if result.status == bots_pb2.ActionResult.REFUSED:
        why = Refusal.Name(result.refusal_reason)
        log.warning("match %s seat %d: refused (%s): %s", result.match_id, result.seat, why, result.reason)
    elif result.status == bots_pb2.ActionResult.TIMED_OUT:
        log.warning("match %s seat %d: timed out (%d so far)", result.match_id, result.seat, result.timeouts)
