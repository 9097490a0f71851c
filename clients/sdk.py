"""The Python bot SDK: a bot author writes ``choose(view, legal)``; the SDK does the rest.

    import random
    from croupier.clients.sdk import Bot, main

    class RandomBot(Bot):
        def choose(self, view, legal):
            return random.randrange(len(legal))

    if __name__ == "__main__":
        main(RandomBot)

The bot sees engine objects, never protobuf: ``view`` is the game's view
dataclass (``croupier.engine.games.<game>``, documented in ``docs/games/``) and
``legal`` the list of the game's action objects; ``choose`` returns an index
into ``legal`` (or an action, or an action's text form). One ``Bot`` object is
made per match and seat, so a bot keeps what it remembers of a match in
``self``; ``self.match`` says which game, options and seat.

A bot for one game may say so, and a type checker then knows its views and actions:
``class MyBot(Bot[ChineseTenView, ChineseTenAction])``. A plain ``Bot`` is ``Bot[Any, Any]``.

The SDK keeps one stream to the referee, plays any number of matches on it at
once, reconnects with a growing delay when the stream breaks (the referee
gives a reconnected bot its seats back), skips decisions already replaced by
newer ones, and stops cleanly on SIGINT/SIGTERM.

Over 600 lines, kept whole: it is the one module a bot author imports (``Bot``, ``main``,
``play_offline``), and most of it is the one stream client those share.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import logging
import os
import random
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic

import grpc
from typing_extensions import TypeVar

from croupier.clients.connection import add_connection_arguments
from croupier.engine.core import Action, Event, GameSpec, IllegalAction, Outcome
from croupier.engine.rng import Rng
from croupier.server import convert
from croupier.server.errors import no_referee
from croupier.v1 import bots_pb2, bots_pb2_grpc

__all__ = [
    "MAX_RETRIES",
    "PROTOCOL_VERSION",
    "RESEND_SECONDS",
    "ActionT",
    "Bot",
    "BotFactory",
    "Choice",
    "Client",
    "Match",
    "Result",
    "ViewT",
    "main",
    "play_offline",
    "run_client",
]

PROTOCOL_VERSION = 1
FIRST_DELAY, MAX_DELAY = 0.5, 30.0
"""Reconnection delays in seconds: doubling from the first to the longest, with jitter."""
FATAL = frozenset(
    {
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.UNIMPLEMENTED,
    }
)
"""Stream endings that another try would only repeat (bad token, wrong protocol version)."""
MAX_RETRIES = 3
"""Refused answers to one decision that ``choose`` is asked again for; then the referee's clock plays."""
RESEND_SECONDS = 1.0
"""How long after REASON_JOURNAL_FULL (the referee's disk is full: nothing was played) an answer is
sent again."""
Reason = bots_pb2.Error.Reason
Refusal = bots_pb2.ActionResult.RefusalReason
ROUTINE = frozenset({Reason.REASON_DECISION_NOT_OPEN, Reason.REASON_MATCH_OVER})
"""Errors of normal play, logged at DEBUG: an answer crossing a newer request (real-time games) or
the match's end."""

log = logging.getLogger("croupier.bot")

Choice = int | Action | str
"""What ``choose`` returns: an index into ``legal``, one of its actions, or an action's text form."""
Unsolicited = Action | str
ViewT = TypeVar("ViewT", default=Any)
"""A bot's view type: its game's view dataclass (``ChineseTenView``), or Any for a bot of every game."""
ActionT = TypeVar("ActionT", bound=Action, default=Any)
"""A bot's action type: its game's actions (``ChineseTenAction``), or Any for a bot of every game."""


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


class Bot(Generic[ViewT, ActionT]):
    """Subclass it and write ``choose``; the other hooks are optional.

    The SDK makes one object per match and seat (``factory(match)``), so per-match
    memory lives in ``self``. ``choose`` may be ``async def`` for a bot that
    thinks at length (``await asyncio.to_thread(...)``) without holding up its other matches.
    ``Bot[View, Action]`` types a bot for one game: ``choose`` gets that game's view and actions.
    """

    def __init__(self, match: Match) -> None:
        self.match = match
        self._send: Callable[[Action | str], None] | None = None

    def choose(
        self, view: ViewT, legal: list[ActionT]
    ) -> ActionT | int | str | Awaitable[ActionT | int | str | None] | None:
        """Your move: return an index into ``legal`` (or one of its actions).

        None answers nothing: in a real-time game you may stay silent (or have
        sent your plays with ``play``); in a turn-based game the clock runs on.
        """
        raise NotImplementedError("write choose(view, legal) in your Bot subclass")

    def update(self, view: ViewT, events: list[Event]) -> None:
        """Your view changed while you were not asked to move (others played, time passed).

        Your own move brings no update: its events come with your next update or request."""

    def ended(self, result: Result[ViewT]) -> None:
        """The match is over."""

    def play(self, action: ActionT | str) -> None:
        """Send an action without a decision request: Pair Battle's real-time plays.

        Called from ``choose``, it goes out right after choose's answer, so a
        bot can lay several sets at once. The referee judges each play when it
        arrives (one no longer legal is refused, and in Pair Battle costs the
        penalty); until every such play is answered, the SDK holds back new
        decision requests of this seat, whose views would not show them yet.
        """
        if self._send is None:
            raise RuntimeError("play() works once the match has started (from update or choose)")
        self._send(action)


BotFactory = Callable[[Match], Bot[Any, Any]]
"""What the SDK makes a bot with, once per match and seat: a ``Bot`` subclass, or any such callable."""


# --- one stream ------------------------------------------------------------------------


class _Seat:
    """The SDK's side of one seat: the bot object and the game's codec."""

    def __init__(self, match: Match, bot: Bot[Any, Any]) -> None:
        self.match = match
        self.bot = bot
        self.codec = convert.codec(match.game)
        self.latest_decision = 0
        """The newest decision id received: older ones are skipped."""
        self.outstanding = 0
        """Moves sent and not yet answered (with an ActionResult or an Error)."""
        self.held: bots_pb2.DecisionRequest | None = None
        """The newest request that came while moves were outstanding: its view may not show them."""
        self.deferred: list[Unsolicited] | None = None
        """Plays made during ``choose``: sent after its answer."""
        self.answered: bots_pb2.DecisionRequest | None = None
        """The request answered last: a refusal leaves it open, and ``choose`` is asked again."""
        self.answer: bots_pb2.BotMessage | None = None
        """The Move that answered it last: sent again if the referee could not journal it."""
        self.retries = 0


class Client:
    """Plays on one referee until stopped, reconnecting when the stream breaks."""

    def __init__(
        self,
        factory: BotFactory,
        server: str,
        tokens: Sequence[str],
        *,
        name: str = "bot",
        max_matches: int = 1,
        stop_after: int | None = None,
        credentials: grpc.ChannelCredentials | None = None,
    ) -> None:
        if not tokens:
            raise ValueError("a bot needs a token (--token or $CROUPIER_TOKEN)")
        self.factory = factory
        self.server = server
        self.tokens = list(tokens)
        self.name = name
        self.max_matches = max_matches
        self.stop_after = stop_after
        self.credentials = credentials
        self.finished = 0
        """Matches seen to their end, or to this bot's forfeit in them."""
        self.seats: dict[tuple[str, int], _Seat] = {}
        self._stop = asyncio.Event()
        self._outbox: asyncio.Queue[bots_pb2.BotMessage] | None = None
        self._inbox: asyncio.Queue[bots_pb2.ServerMessage | None] | None = None

    def stop(self) -> None:
        """End the stream and return from ``run`` (safe from a signal handler)."""
        self._stop.set()
        if self._inbox is not None:
            self._inbox.put_nowait(None)

    async def run(self) -> int:
        """Play until stopped (0), until ``stop_after`` matches ended (0), or a fatal refusal (2)."""
        delay = FIRST_DELAY
        asked = False  # whether the referee is running at all, said once while nothing answers
        while not self._stop.is_set():
            welcomed = False
            try:
                welcomed = await self._stream()
            except grpc.aio.AioRpcError as exc:
                if exc.code() in FATAL:
                    log.error("the referee refused this bot: %s: %s", exc.code().name, exc.details())
                    return 2
                if exc.code() != grpc.StatusCode.UNAVAILABLE:
                    log.warning("connection to %s lost: %s: %s", self.server, exc.code().name, exc.details())
                elif not asked:
                    log.warning("%s; retrying until one does", no_referee(self.server))
                    asked = True
            if self._stop.is_set():
                break
            if welcomed:
                delay = FIRST_DELAY  # it was working: come back quickly
                asked = False
            wait = delay * random.uniform(0.8, 1.2)
            log.log(logging.DEBUG if asked else logging.INFO, "reconnecting in %.1f s", wait)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), wait)
            delay = min(MAX_DELAY, delay * 2)
        return 0

    async def _stream(self) -> bool:
        """One stream, until it ends or the client stops; True if the referee welcomed it."""
        welcomed = False
        outbox: asyncio.Queue[bots_pb2.BotMessage] = asyncio.Queue()
        outbox.put_nowait(
            bots_pb2.BotMessage(
                hello=bots_pb2.Hello(
                    protocol_version=PROTOCOL_VERSION, name=self.name, max_matches=self.max_matches
                )
            )
        )
        self._outbox = outbox
        inbox: asyncio.Queue[bots_pb2.ServerMessage | None] = asyncio.Queue()
        self._inbox = inbox
        for seat in self.seats.values():  # a new stream: what the old one sent and received is void
            seat.outstanding, seat.held, seat.latest_decision = 0, None, 0
        metadata = tuple(("croupier-token", token) for token in self.tokens)
        async with self._channel() as channel:
            # no request iterator: we write ourselves (grpc-stubs miss this form)
            call = bots_pb2_grpc.BotServiceStub(channel).Play(metadata=metadata)  # type: ignore[call-arg]
            reader = asyncio.create_task(self._read(call, inbox))
            writer = asyncio.create_task(self._write(call, outbox))
            try:
                while not self._stop.is_set():
                    message = await inbox.get()
                    if message is None:
                        if reader.done():
                            reader.result()  # raises the stream's error, if it ended with one
                        break
                    if message.WhichOneof("message") == "welcome":
                        welcomed = True
                        log.info("connected to %s as %s", self.server, message.welcome.bot_name or self.name)
                    await self._handle(message)
                    if self.stop_after is not None and self.finished >= self.stop_after:
                        self.stop()
            finally:
                self._outbox = self._inbox = None
                call.cancel()
                for task in (reader, writer):
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
                        await task
        return welcomed

    def _channel(self) -> grpc.aio.Channel:
        options = [("grpc.keepalive_time_ms", 20_000), ("grpc.keepalive_timeout_ms", 10_000)]
        if self.credentials is not None:
            return grpc.aio.secure_channel(self.server, self.credentials, options=options)
        return grpc.aio.insecure_channel(self.server, options=options)

    async def _read(self, call: Any, inbox: asyncio.Queue[bots_pb2.ServerMessage | None]) -> None:
        """Read ahead of the handler, noting each seat's newest decision so stale ones are skipped."""
        try:
            async for message in call:
                if message.WhichOneof("message") == "decision":
                    seat = self.seats.get((message.decision.match_id, message.decision.seat))
                    if seat is not None:
                        seat.latest_decision = max(seat.latest_decision, message.decision.decision_id)
                inbox.put_nowait(message)
        finally:
            inbox.put_nowait(None)

    async def _write(self, call: Any, outbox: asyncio.Queue[bots_pb2.BotMessage]) -> None:
        while True:
            message = await outbox.get()
            try:
                await call.write(message)
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                return  # the stream is gone: the reader reports why

    def _send(self, message: bots_pb2.BotMessage) -> None:
        if self._outbox is not None:
            self._outbox.put_nowait(message)

    # --- what the referee says --------------------------------------------------------------

    async def _handle(self, message: bots_pb2.ServerMessage) -> None:
        kind = message.WhichOneof("message")
        if kind == "match_started":
            self._started(message.match_started)
        elif kind == "decision":
            await self._decide(message.decision)
        elif kind == "view_update":
            self._update(message.view_update)
        elif kind == "action_result":
            result = message.action_result
            _log_result(result)
            if result.status != bots_pb2.ActionResult.TIMED_OUT:  # the others answer a move of ours
                await self._answered(
                    result.match_id, result.seat, result.status == bots_pb2.ActionResult.ACCEPTED
                )
            if result.status == bots_pb2.ActionResult.REFUSED:
                await self._retry(result)
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
            await self._error(message.error)

    async def _error(self, error: bots_pb2.Error) -> None:
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
        await self._answered(error.match_id, seat.match.seat if seat else None, accepted=False)
        if reason == Reason.REASON_JOURNAL_FULL and seat is not None and seat.answer is not None:
            asyncio.get_running_loop().call_later(
                RESEND_SECONDS, self._resend, seat, seat.answer, self._outbox
            )

    def _seat_answering(self, match_id: str, decision_id: int) -> _Seat | None:
        """The seat whose answer to ``decision_id`` (not 0: a play without a request) an Error is about."""
        for (mid, _), seat in self.seats.items():
            if mid == match_id and decision_id and seat.answered and seat.answered.decision_id == decision_id:
                return seat
        return None

    def _resend(
        self, seat: _Seat, answer: bots_pb2.BotMessage, outbox: asyncio.Queue[bots_pb2.BotMessage] | None
    ) -> None:
        """Send an answer the referee could not journal again, unless something newer overtook it."""
        current = self.seats.get((seat.match.id, seat.match.seat)) is seat and seat.answer is answer
        if current and outbox is self._outbox and answer.move.decision_id >= seat.latest_decision:
            seat.outstanding += 1
            self._send(answer)

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

    async def _decide(self, decision: bots_pb2.DecisionRequest) -> None:
        seat = self.seats.get((decision.match_id, decision.seat))
        if seat is None:
            log.warning("a decision for an unknown match %s", decision.match_id)
            return
        if decision.decision_id < seat.latest_decision:
            return  # already replaced by a newer request, which is waiting
        if seat.outstanding:
            seat.held = decision  # its view may not show our moves in flight yet
            return
        codec = seat.codec
        view = codec.view_from_proto(decision.view)
        legal = [codec.action_from_proto(a) for a in decision.legal_actions]
        seat.deferred = []
        move = None
        try:
            choice = seat.bot.choose(view, legal)
            if inspect.isawaitable(choice):
                choice = await choice
            if choice is not None:
                move = _move(seat, decision.decision_id, choice, legal)
        except Exception:
            log.exception(
                "match %s seat %d: choose failed; the referee's clock will play for you",
                decision.match_id,
                decision.seat,
            )
            return
        finally:
            plays, seat.deferred = seat.deferred, None
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
            self._send(move)
        for action in plays:
            self._play(seat, action)

    async def _retry(self, refused: bots_pb2.ActionResult) -> None:
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
        await self._decide(decision)

    def _play(self, seat: _Seat, action: Unsolicited) -> None:
        """An action without a request (``Bot.play``): held back while ``choose`` runs."""
        if seat.deferred is not None:
            seat.deferred.append(action)
            return
        seat.outstanding += 1
        self._send(_move(seat, 0, action, None))

    async def _answered(self, match_id: str, seat_number: int | None, accepted: bool) -> None:
        """One of our moves was answered. Requests that came before an accepted move are stale
        (a fresh one follows it); once every move is answered, a held request is handled."""
        for (mid, number), seat in self.seats.items():
            if mid == match_id and seat.outstanding and seat_number in (None, number):
                seat.outstanding -= 1
                if accepted:
                    seat.held = None
                if not seat.outstanding and seat.held is not None:
                    held, seat.held = seat.held, None
                    if held.decision_id >= seat.latest_decision:
                        await self._decide(held)
                return

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


def _move(seat: _Seat, decision_id: int, choice: object, legal: list[Any] | None) -> bots_pb2.BotMessage:
    """A Move answering ``decision_id`` (0: unsolicited) with an index, an action or a text form."""
    move = bots_pb2.Move(match_id=seat.match.id, decision_id=decision_id, seat=seat.match.seat)
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
    return bots_pb2.BotMessage(move=move)


def _log_result(result: bots_pb2.ActionResult) -> None:
    if result.status == bots_pb2.ActionResult.REFUSED:
        why = Refusal.Name(result.refusal_reason)
        log.warning("match %s seat %d: refused (%s): %s", result.match_id, result.seat, why, result.reason)
    elif result.status == bots_pb2.ActionResult.TIMED_OUT:
        log.warning("match %s seat %d: timed out (%d so far)", result.match_id, result.seat, result.timeouts)


# --- offline play: the engine, no referee ---------------------------------------------------

REALTIME_STEP = 0.01
"""Offline real-time games: referee seconds each action takes."""


def play_offline(spec: GameSpec[Any], options: Any, factories: Sequence[BotFactory], seed: int) -> Outcome:
    """Play one match in-process through the engine, one bot per seat: for testing bots fast.

    Each step one seat among those able to act moves (in real-time games a
    random one, drawn from ``seed``: every bot equally quick). Plays a bot makes
    with ``play`` go in right after its answer, as they would reach a referee;
    one the rules refuse costs what the referee would make it cost. A step a bot
    lets pass without acting is played for it with the first legal action, as a
    referee's clock would. ``choose`` must be a plain function here (not ``async``).
    The same seed and bots play the same match:

    >>> from croupier.engine.games import get_game
    >>> class FirstLegal(Bot):
    ...     def choose(self, view, legal):
    ...         return 0
    >>> spec = get_game("chinese_ten")
    >>> play_offline(spec, spec.options({"players": 2, "target": 50}), [FirstLegal, FirstLegal], seed=1)
    Outcome(scores=(128, 112), places=(1, 2), winners=frozenset({0}))
    """
    state = spec.new_game(options, Rng(seed))
    order = random.Random(seed)
    names = tuple(f"seat {i}" for i in range(len(factories)))
    bots = [
        factory(Match(f"offline-{seed}", spec.name, options, seat, names, 0, 0))
        for seat, factory in enumerate(factories)
    ]
    sent: list[Unsolicited] = []
    for bot in bots:
        bot._send = sent.append
    now = 0.0
    while not state.is_over():
        seats = sorted(state.to_act())
        if not seats:
            now, _ = state.wait_for_clock(now)
            continue
        seat = order.choice(seats)
        legal = state.legal_actions(seat)
        choice = bots[seat].choose(state.view(seat), legal)
        if choice is None and not sent:
            choice = 0
        actions = ([] if choice is None else [legal[choice] if isinstance(choice, int) else choice]) + sent
        sent.clear()
        for action in actions:
            if state.is_over():
                break
            try:
                state.apply(seat, spec.parse_action(action) if isinstance(action, str) else action, now)
            except IllegalAction as exc:
                state.penalize(seat, str(exc), now)
            now += REALTIME_STEP
    return state.outcome()


# --- the command line ---------------------------------------------------------------------


def run_client(factory: BotFactory, args: argparse.Namespace, default_name: str) -> int:
    """Run a bot with parsed connection arguments until it stops; the exit code."""
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    logging.getLogger("asyncio").setLevel(logging.WARNING)
    tokens = args.token or [t for t in os.environ.get("CROUPIER_TOKEN", "").split(",") if t]
    if not tokens:
        print("croupier bot: give a token: --token TOKEN or $CROUPIER_TOKEN", file=sys.stderr)
        return 2
    if args.max_matches < 1:
        print("croupier bot: --max-matches must be at least 1", file=sys.stderr)
        return 2
    credentials = grpc.ssl_channel_credentials(args.tls_ca.read_bytes()) if args.tls_ca else None
    client = Client(
        factory,
        args.server,
        tokens,
        name=args.name or default_name,
        max_matches=args.max_matches,
        stop_after=args.matches,
        credentials=credentials,
    )
    return asyncio.run(_run_until_signal(client))


async def _run_until_signal(client: Client) -> int:
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, client.stop)
    code = await client.run()
    log.info("stopped after %d match(es)", client.finished)
    return code


def main(factory: BotFactory, argv: Sequence[str] | None = None) -> None:
    """Run a bot from the command line: ``python mybot.py --server HOST:PORT --token T``."""
    parser = argparse.ArgumentParser(description=f"the {getattr(factory, '__name__', 'bot')} Croupier bot")
    add_connection_arguments(parser)
    args = parser.parse_args(argv)
    sys.exit(run_client(factory, args, getattr(factory, "__name__", "bot")))
