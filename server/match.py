"""The match actor: one match owns its engine state, changed only by its jobs.

Bot streams, timers and the referee post jobs into the match's inbox; the
actor runs them one at a time, each to its end (no job awaits), from an event
loop callback, so nothing else ever touches the state. Each
job that changes the match writes a journal record first, then tells the
bots and spectators. A record the journal cannot take (a full disk) is not
played: a change made to the engine to learn its events is undone (the
engine rebuilt from the journal), so memory never runs ahead of the journal;
the mover is answered RESOURCE_EXHAUSTED and the match tries again every
``RETRY_SECONDS`` until there is room. After every job the actor settles the match: plays
forfeited seats the match waits on, ends the match when the game is over,
opens and re-opens decisions, pushes views, and arms one timer for the
earliest thing time will do (a decision's deadline, a reconnect grace, the
game's own countdown or window).

Clocks: a seat's clock runs while it is to act (in a real-time game, while it
has a legal play). It has ``decision`` seconds, then draws on its bank; when
both are spent the referee plays the first legal action for it and records a
timeout. After ``max_timeouts`` timeouts, or ``grace`` seconds without a
connected bot, the seat is forfeited: the referee plays it on (at once when
the match waits on it alone, otherwise when its per-decision time runs out,
so it never races live bots) and ranks it last.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

import croupier.server.session as sessions
from croupier.engine.core import (
    Action,
    Event,
    GameSpec,
    GameState,
    IllegalAction,
    MalformedInput,
    options_to_dict,
)
from croupier.engine.rng import Rng
from croupier.server import convert
from croupier.server.errors import (
    FailedPrecondition,
    InvalidArgument,
    PermissionDenied,
    ResourceExhausted,
    ServiceError,
    clip,
)
from croupier.server.journal import (
    ACTION_RECORDS,
    JournalWriter,
    Record,
    apply_record,
    replayed,
    seed_sha256,
    write_private,
)
from croupier.server.metrics import Metrics
from croupier.server.session import Session
from croupier.v1 import bots_pb2, games_pb2, match_pb2, spectator_pb2

EARLY = 1e-3
"""Timers may fire this much early: a deadline this close counts as reached."""
RETRY_SECONDS = 1.0
"""How long a match whose journal could not be written (a full disk) waits before trying again."""
MAX_MOVE_TEXT = 200
"""Characters of a Move's text: every action's text form is a few words."""


class JournalFull(ResourceExhausted):
    """The journal could not take a record: nothing was changed."""


Status = match_pb2.MatchStatus
Result = bots_pb2.ActionResult
Kind = spectator_pb2.Step.Kind

EDGES = ("start", "end", "cancel")
"""Records whose frame carries the MatchInfo."""

STEP_KINDS = {
    "start": Kind.START,
    "act": Kind.ACTION,
    "timeout": Kind.TIMEOUT,
    "auto": Kind.FALLBACK,
    "refuse": Kind.REFUSAL,
    "clock": Kind.CLOCK,
    "recount": Kind.CLOCK,
    "forfeit": Kind.FORFEIT,
    "end": Kind.END,
    "cancel": Kind.CANCEL,
}


@dataclass(frozen=True)
class Clocks:
    """A match's clocks, in seconds."""

    decision: float = 5.0
    bank: float = 30.0
    max_timeouts: int = 3
    grace: float = 10.0
    max_refusals: int = 100
    """Refused moves after which a seat is forfeited (0: never). A bot that keeps sending what the
    rules refuse is broken, and each refusal costs a journal record and a frame for everyone."""

    def __post_init__(self) -> None:
        for name in ("decision", "bank", "grace"):
            if not 0 <= getattr(self, name) <= 86_400:
                raise InvalidArgument(f"clock {name} must be 0 to 86400 s, not {getattr(self, name)}")
        if not 1 <= self.max_timeouts <= 1_000:
            raise InvalidArgument(f"max_timeouts must be 1 to 1000, not {self.max_timeouts}")
        if not 0 <= self.max_refusals <= 100_000:
            raise InvalidArgument(f"max_refusals must be 0 (never) to 100000, not {self.max_refusals}")

    def merged(self, pb: match_pb2.Clocks) -> Clocks:
        """These clocks with the fields set in ``pb`` (milliseconds) replacing ours."""
        changes: dict[str, Any] = {}
        for name, proto_name in (("decision", "decision_ms"), ("bank", "bank_ms"), ("grace", "grace_ms")):
            if pb.HasField(proto_name):  # type: ignore[arg-type]  # the stubs type the names as literals
                changes[name] = getattr(pb, proto_name) / 1000
        for name in ("max_timeouts", "max_refusals"):
            if pb.HasField(name):  # type: ignore[arg-type]
                changes[name] = getattr(pb, name)
        return dataclasses.replace(self, **changes)

    def to_proto(self) -> match_pb2.Clocks:
        return match_pb2.Clocks(
            decision_ms=round(self.decision * 1000),
            bank_ms=round(self.bank * 1000),
            max_timeouts=self.max_timeouts,
            grace_ms=round(self.grace * 1000),
            max_refusals=self.max_refusals,
        )


@dataclass(frozen=True)
class Player:
    name: str
    bot_id: str
    """The invited bot; empty for a seat joined by its seat token."""
    token_sha256: str


@dataclass
class Decision:
    id: int
    legal: list[Action]
    deadline: float
    """Referee time when the seat's clock runs out."""


@dataclass
class SeatState:
    """The referee's side of one seat: who holds it and its clocks."""

    bank: float
    holder: Session | None = None
    gone_since: float | None = None
    """Referee time the seat lost its bot (running matches only; never for a forfeited seat)."""
    forfeited: str = ""
    timeouts: int = 0
    refusals: int = 0
    decision: Decision | None = None
    acting_since: float | None = None
    """Referee time the seat's clock started: it has been to act ever since."""
    last_think: float = 0.0
    decisions: int = 0
    """Decisions opened for the seat in this run of the referee: its ids count them."""
    resolved: tuple[int, str, Action] | None = None
    """The last decision settled: (id, "accepted" or "timeout", the action applied)."""
    unsent: list[games_pb2.Event] = field(default_factory=list)
    """Events its bot has not been sent yet: those of its own move, told by an ActionResult,
    wait for its next message instead of a ViewUpdate of their own."""


@dataclass
class Subscription:
    """A spectator's live feed: frames, then None when the match is over."""

    admin: bool
    frames: asyncio.Queue[spectator_pb2.MatchFrame | None] = field(default_factory=asyncio.Queue)
    overrun: bool = False
    """Ended because it left MAX_QUEUED frames unread (the match does not wait for a spectator)."""


class Match:
    """One match: its engine state, seats, clocks, journal and audience."""

    def __init__(
        self,
        *,
        match_id: str,
        spec: GameSpec[Any],
        options: Any,
        seed: int,
        clocks: Clocks,
        players: list[Player],
        created_ms: int,
        journal_path: Path,
        metrics: Metrics,
        on_released: Callable[[Match, int], None],
        on_finished: Callable[[Match], None],
    ) -> None:
        self.id = match_id
        self.spec = spec
        self.codec = convert.codec(spec.name)
        self.options = options
        self.options_pb = self.codec.options(options)
        self._seed = seed
        self.seed_sha256 = seed_sha256(seed)
        self.clocks = clocks
        self.players = players
        self.created_ms = created_ms
        self.journal_path = journal_path
        self.secret_path = journal_path.with_suffix(".secret")
        self.metrics = metrics.game(spec.name)
        self.on_released = on_released
        self.on_finished = on_finished
        self.sealed: Callable[[], bool] = lambda: False
        """Whether another live match is dealt the same cards (the referee's rule, Referee.sealed):
        then the end shows each bot only its own view."""
        self.state: GameState[Any, Any] = spec.new_game(options, Rng(seed))
        self.status = Status.MATCH_STATUS_WAITING
        self.seats = [SeatState(bank=clocks.bank) for _ in players]
        self.records: list[Record] = []
        """Every journal record, in memory: what spectators replay from."""
        self.result: match_pb2.MatchResult | None = None
        self.cancel_reason = ""
        self.done = asyncio.Event()
        """Set when the match is over: finished or cancelled."""
        self.inbox: deque[Callable[[], None]] = deque()
        self.subscribers: list[Subscription] = []
        self.log = structlog.get_logger("croupier.match").bind(match_id=match_id, game=spec.name)
        self._journal: JournalWriter | None = None
        self._origin = 0.0
        self._last_at = 0.0
        """Referee time of the last record (of a rebuilt match)."""
        self._retry: asyncio.TimerHandle | None = None
        """Armed while the journal cannot be written (a full disk): when to try again."""
        self._epoch = 1
        """Which run of the match this is (the first is 1): a part of every decision id."""
        self._events: list[Event] = []
        self._views_due = False
        self._told: set[int] = set()
        """Seats told of their own action (ActionResult) since the last publish."""
        self._dirty = False
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None
        self._acting = False
        """The actor runs jobs (from start_actor to stop_actor)."""
        self._regathering = False
        """A resumed real-time match waits for every seat to be back (or forfeited), then the
        game counts down again: nobody plays while another seat is away."""
        self._drain_due = False
        self._context = contextvars.copy_context()
        """Where jobs run: the match's own log context, not that of whoever posted them."""
        self._context.run(structlog.contextvars.bind_contextvars, match_id=match_id)

    # --- creation, resumption, the actor's loop ---------------------------------------------

    def create(self) -> None:
        """Write the private seed file and the journal's header: the match exists from now on."""
        write_private(
            self.secret_path, {"seed": self._seed, "seat_tokens": [p.token_sha256 for p in self.players]}
        )
        self._journal = JournalWriter(self.journal_path)
        self._write_now(
            {
                "t": "match",
                "version": 1,
                "match_id": self.id,
                "game": self.spec.name,
                "options": options_to_dict(self.options),
                "players": [{"name": p.name, "bot_id": p.bot_id} for p in self.players],
                "clocks": dataclasses.asdict(self.clocks),
                "seed_sha256": self.seed_sha256,
                "created_ms": self.created_ms,
            }
        )
        self._journal.sync()
        self.metrics.active_matches.inc()

    @classmethod
    def rebuild(
        cls,
        journal_path: Path,
        records: list[Record],
        secret: dict[str, Any],
        metrics: Metrics,
        on_released: Callable[[Match, int], None],
        on_finished: Callable[[Match], None],
    ) -> tuple[Match, str]:
        """An unfinished match as its journal's ``records`` and its seed file left it when the referee
        died, taken up to the first record that does not apply, and what is wrong with that one ("" if
        every record applied; ``len(match.records)`` did). Then ``reopen`` it."""
        from croupier.engine.games import get_game

        header = records[0]
        spec = get_game(header["game"])
        players = [
            Player(p["name"], p["bot_id"], token)
            for p, token in zip(header["players"], secret["seat_tokens"], strict=True)
        ]
        match = cls(
            match_id=header["match_id"],
            spec=spec,
            options=spec.options(header["options"]),
            seed=secret["seed"],
            clocks=Clocks(**header["clocks"]),
            players=players,
            created_ms=header["created_ms"],
            journal_path=journal_path,
            metrics=metrics,
            on_released=on_released,
            on_finished=on_finished,
        )
        for taken, record in enumerate(records[1:], 1):
            try:
                apply_record(spec, match.state, record)
                match._account(record)
            except Exception as exc:  # any damage: what was half applied is rebuilt without it
                kept = records[:taken]
                match, _ = cls.rebuild(journal_path, kept, secret, metrics, on_released, on_finished)
                return match, f"line {taken + 1} does not apply ({exc!r})"
            match._last_at = record.get("at", match._last_at)
        match.records = list(records)
        return match, ""

    def reopen(self) -> None:
        """Go on writing the journal of a rebuilt match (whose file holds exactly its records)."""
        # This resume record is not written yet, so it counts as one more run.
        self._epoch = 2 + sum(1 for r in self.records if r["t"] == "resume")
        self._journal = JournalWriter(self.journal_path)
        self._write_now({"t": "resume", "at": self._last_at})
        if self.status == Status.MATCH_STATUS_RUNNING:
            self._origin = asyncio.get_running_loop().time() - self._last_at
            for seat in self.seats:
                if not seat.forfeited:
                    seat.gone_since = self._last_at  # nobody is connected yet: the grace starts now
            self._regathering = self.state.realtime
            self._dirty = True
        self.metrics.active_matches.inc()

    def _account(self, record: Record) -> None:
        """Seat bookkeeping of one replayed record (the engine's part is ``apply_record``)."""
        kind = record["t"]
        if kind == "start":
            self.status = Status.MATCH_STATUS_RUNNING
            return
        if "seat" not in record:
            return
        seat = self.seats[record["seat"]]
        if kind == "act":
            seat.bank = record["bank"]
            seat.last_think = record["think"]
            seat.resolved = (record["d"], "accepted", self.spec.parse_action(record["action"]))
        elif kind == "timeout":
            seat.timeouts += 1
            seat.bank = 0.0
            seat.resolved = (record["d"], "timeout", self.spec.parse_action(record["action"]))
        elif kind == "refuse":
            seat.refusals += 1
        elif kind == "forfeit":
            seat.forfeited = record["reason"]
            seat.bank = 0.0

    def start_actor(self) -> None:
        self._acting = True
        self._schedule_drain()  # a resumed match settles at once

    async def stop_actor(self) -> None:
        """Stop without finishing (the referee shuts down): the journal stays resumable."""
        self._acting = False
        self._cancel_timer()
        if self._retry is not None:
            self._retry.cancel()
        if self._journal is not None:
            self._journal.close()

    def post(self, job: Callable[[], None]) -> None:
        self.inbox.append(job)
        self._schedule_drain()

    def _schedule_drain(self) -> None:
        # A loop callback, not a task per match: a job costs no task switch, and posting from
        # inside a job never runs it nested.
        if self._acting and not self._drain_due:
            self._drain_due = True
            asyncio.get_running_loop().call_soon(self._drain, context=self._context)

    def _drain(self) -> None:
        self._drain_due = False
        if self._dirty:
            self._settle_safely()
        while self.inbox and self._acting and not self.done.is_set():
            job = self.inbox.popleft()
            try:
                job()
            except JournalFull:
                pass  # changed nothing, said so, and tries again later
            except Exception:
                # A bug must not take the match down: log it and go on with the next job.
                self.log.exception("match job failed")
            if self._dirty:
                self._settle_safely()

    def _settle_safely(self) -> None:
        try:
            self._settle()
        except JournalFull:
            pass
        except Exception:
            self.log.exception("match job failed")

    def now(self) -> float:
        """Referee time: seconds since the match started (monotonic)."""
        return asyncio.get_running_loop().time() - self._origin

    # --- seats coming and going (posted by the referee) ----------------------------------------

    def attach(self, session: Session, seat: int) -> None:
        self.post(lambda: self._attach(session, seat))

    def detach(self, session: Session, seat: int) -> None:
        self.post(lambda: self._detach(session, seat))

    def _attach(self, session: Session, index: int) -> None:
        seat = self.seats[index]
        if seat.forfeited:
            session.send(self._forfeited_message(index))
            return
        old = seat.holder
        if old is not None and old is not session:
            old.send_error(
                FailedPrecondition.code,
                f"seat {index} of match {self.id} was taken over by another stream",
                self.id,
            )
        seat.holder = session
        seat.gone_since = None
        seat.unsent = []  # a new stream starts afresh: events are not repeated after a reconnect
        if self.status == Status.MATCH_STATUS_WAITING:
            if all(s.holder is not None for s in self.seats):
                self._start()
        elif self.status == Status.MATCH_STATUS_RUNNING:
            session.send(self._started_message(index, resumed=True))
            self._send_current(index)
            self._dirty = True  # re-arm the timer: this seat's grace no longer runs

    def _detach(self, session: Session, index: int) -> None:
        seat = self.seats[index]
        if seat.holder is not session:
            return
        seat.holder = None
        if self.status == Status.MATCH_STATUS_RUNNING and not seat.forfeited:
            seat.gone_since = self.now()
            self._dirty = True

    def _start(self) -> None:
        start: Record = {"t": "start", "at": 0.0}
        self._journal_first(start)
        self._origin = asyncio.get_running_loop().time()
        self.status = Status.MATCH_STATUS_RUNNING
        # The opening events (cuts, antes, the first deal) reach spectators in the start frame and
        # the bots in their first ViewUpdate or DecisionRequest, once: a resume does not repeat them.
        self._tell(start, list(self.state.opening))
        self.log.info("match started", players=[p.name for p in self.players])
        for index, seat in enumerate(self.seats):
            if seat.holder is not None:
                seat.holder.send(self._started_message(index, resumed=False))
        self._views_due = True
        self._dirty = True

    # --- moves (posted by the bot streams) ----------------------------------------------------

    def move(self, session: Session, move: bots_pb2.Move) -> None:
        self.post(lambda: self._move(session, move))

    def _move(self, session: Session, move: bots_pb2.Move) -> None:
        try:
            index = self._seat_of(session, move)
            if self.status == Status.MATCH_STATUS_WAITING:
                raise FailedPrecondition(
                    f"match {self.id} has not started: it waits for every seat to be held"
                )
            if self.done.is_set():
                raise FailedPrecondition(f"match {self.id} is over")
            if self._regathering:
                raise FailedPrecondition(
                    f"match {self.id} resumed after a referee restart: it waits for every seat to be "
                    "back, then counts down again"
                )
            seat = self.seats[index]
            if seat.forfeited:
                raise FailedPrecondition(
                    f"seat {index} was forfeited ({seat.forfeited}): the referee plays it"
                )
            if move.decision_id and (seat.decision is None or seat.decision.id != move.decision_id):
                self._answer_closed(session, index, move)
                return
            self._play(session, index, move)
        except ServiceError as exc:
            session.send_error(exc.code, str(exc), move.match_id, move.decision_id)

    def _seat_of(self, session: Session, move: bots_pb2.Move) -> int:
        held = [i for i, s in enumerate(self.seats) if s.holder is session]
        if move.HasField("seat"):
            if not 0 <= move.seat < len(self.seats):
                raise InvalidArgument(f"match {self.id} has no seat {move.seat}")
            if move.seat not in held:
                raise PermissionDenied(f"you do not hold seat {move.seat} of match {self.id}")
            return move.seat
        if len(held) == 1:
            return held[0]
        if not held:
            raise PermissionDenied(f"you hold no seat of match {self.id}")
        for i in held:
            seat = self.seats[i]
            if (seat.decision and seat.decision.id == move.decision_id) or (
                seat.resolved and seat.resolved[0] == move.decision_id and move.decision_id
            ):
                return i
        raise InvalidArgument(f"you hold seats {held} of match {self.id}: say which one acts (Move.seat)")

    def _answer_closed(self, session: Session, index: int, move: bots_pb2.Move) -> None:
        """An answer to a decision that is not open: a repeat of an applied one, or a stale one."""
        seat = self.seats[index]
        if seat.resolved is not None and seat.resolved[0] == move.decision_id:
            decision_id, how, action = seat.resolved
            if how == "accepted":
                session.send(self._result(index, decision_id, Result.DUPLICATE, action))
                return
            raise FailedPrecondition(f"decision {decision_id} timed out: the referee played {action} for you")
        open_now = (
            f"your open decision is {seat.decision.id}" if seat.decision else "you have no open decision"
        )
        raise FailedPrecondition(f"decision {move.decision_id} is not open ({open_now})")

    def _play(self, session: Session, index: int, move: bots_pb2.Move) -> None:
        seat = self.seats[index]
        now = self.now()
        action: Action | None = None
        try:
            action = self._read_action(move, seat.decision)
            events = self.state.apply(index, action, now)
        except (MalformedInput, IllegalAction) as exc:
            self._refuse(session, index, move, action, str(exc), now)
            return
        decision_id = seat.decision.id if seat.decision else 0
        think = now - seat.acting_since if seat.acting_since is not None else 0.0
        bank = max(0.0, seat.bank - max(0.0, think - self.clocks.decision))
        act: Record = {
            "t": "act",
            "at": now,
            "seat": index,
            "action": str(action),
            "d": decision_id,
            "think": think,
            "bank": bank,
        }
        self._journal_applied(act)
        seat.bank = bank
        seat.last_think = think
        seat.resolved = (decision_id, "accepted", action)
        seat.decision = None
        seat.acting_since = None
        self._tell(act, events)
        session.send(self._result(index, move.decision_id, Result.ACCEPTED, action, think=think))
        self._told.add(index)
        self.metrics.decisions.inc()
        self.metrics.decision_seconds.observe(think)

    def _read_action(self, move: bots_pb2.Move, decision: Decision | None) -> Action:
        choice = move.WhichOneof("choice")
        if choice == "index":
            if not move.decision_id:
                raise MalformedInput("an index answers a decision request: set decision_id")
            assert decision is not None  # an open decision matched decision_id
            if move.index >= len(decision.legal):
                raise MalformedInput(
                    f"index {move.index} is out of range: decision {decision.id} lists "
                    f"{len(decision.legal)} actions (0 to {len(decision.legal) - 1})"
                )
            return decision.legal[move.index]
        if choice == "action":
            return self.codec.action_from_proto(move.action)
        if choice == "text":
            if len(move.text) > MAX_MOVE_TEXT:
                raise MalformedInput(
                    f"a move's text is at most {MAX_MOVE_TEXT} characters, not {len(move.text)}"
                )
            return self.spec.parse_action(move.text)
        raise MalformedInput("a move needs a choice: set index, action or text")

    def _refuse(
        self,
        session: Session,
        index: int,
        move: bots_pb2.Move,
        action: Action | None,
        reason: str,
        now: float,
    ) -> None:
        seat = self.seats[index]
        reason = clip(reason)  # it may quote the move: the bot's own input, at any size
        attempt = clip(str(action) if action is not None else _describe(move))
        refusal: Record = {"t": "refuse", "at": now, "seat": index, "reason": reason, "action": attempt}
        self._journal_first(refusal)
        seat.refusals += 1
        self._tell(refusal, self.state.penalize(index, reason, now))
        session.send(self._result(index, move.decision_id, Result.REFUSED, action, reason=reason))
        self._told.add(index)
        self.metrics.refused.inc()
        if seat.refusals == self.clocks.max_refusals:
            self._forfeit(index, "refusals", now)

    # --- time ---------------------------------------------------------------------------------

    def _post_tick(self) -> None:
        self._timer = None
        self._timer_at = None
        self.post(self._tick)

    def _tick(self) -> None:
        if self.status != Status.MATCH_STATUS_RUNNING:
            return
        now = self.now()
        wake = None if self._regathering else self.state.wake_at()
        if wake is not None and now + EARLY >= wake:
            clock: Record = {"t": "clock", "at": now}
            self._journal_first(clock)
            self._tell(clock, self.state.advance(now))
        for index, seat in enumerate(self.seats):
            if self.state.is_over():
                break
            if seat.decision is not None and now + EARLY >= seat.decision.deadline:
                self._clock_ran_out(index, now)
            if (
                seat.gone_since is not None
                and not seat.forfeited
                and now + EARLY >= seat.gone_since + self.clocks.grace
            ):
                self._forfeit(index, "disconnected", now)
        self._dirty = True

    def _clock_ran_out(self, index: int, now: float) -> None:
        seat = self.seats[index]
        assert seat.decision is not None
        decision_id = seat.decision.id
        legal = self.state.legal_actions(index)  # now, not the decision's list: others may have acted
        if not legal:
            seat.decision = None
            seat.acting_since = None
            return
        action = legal[0]
        events = self.state.apply(index, action, now)
        if seat.forfeited:
            auto: Record = {"t": "auto", "at": now, "seat": index, "action": str(action)}
            self._journal_applied(auto)
            seat.decision = None
            seat.acting_since = None
            self._tell(auto, events)
            return
        timeout: Record = {"t": "timeout", "at": now, "seat": index, "action": str(action), "d": decision_id}
        self._journal_applied(timeout)
        seat.decision = None
        seat.acting_since = None
        seat.timeouts += 1
        seat.bank = 0.0
        seat.resolved = (decision_id, "timeout", action)
        self._tell(timeout, events)
        if seat.holder is not None:
            seat.holder.send(self._result(index, decision_id, Result.TIMED_OUT, action))
            self._told.add(index)
        self.metrics.timeouts.inc()
        if seat.timeouts >= self.clocks.max_timeouts:
            self._forfeit(index, "timeouts", now)

    def _forfeit(self, index: int, reason: str, now: float) -> None:
        seat = self.seats[index]
        forfeit: Record = {"t": "forfeit", "at": now, "seat": index, "reason": reason}
        self._journal_first(forfeit)
        seat.forfeited = reason
        seat.bank = 0.0
        seat.decision = None
        seat.acting_since = None
        seat.gone_since = None
        self._tell(forfeit)
        self.log.info("seat forfeited", seat=index, reason=reason)
        if seat.holder is not None:
            seat.holder.send(self._forfeited_message(index))
            seat.holder = None
        self.on_released(self, index)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        self._timer_at = None

    def _arm_timer(self) -> None:
        due = [s.decision.deadline for s in self.seats if s.decision is not None]
        due += [s.gone_since + self.clocks.grace for s in self.seats if s.gone_since is not None]
        wake = None if self._regathering else self.state.wake_at()
        if wake is not None:
            due.append(wake)
        when = min(due) if due else None
        if when is None or (self._timer_at is not None and self._timer_at <= when):
            # A timer already due no later stays: firing early costs one idle tick, which arms the
            # next; cancelling and re-arming on every decision (a deadline moves on each) costs more.
            return
        self._cancel_timer()
        self._timer_at = when
        self._timer = asyncio.get_running_loop().call_at(self._origin + when, self._post_tick)

    # --- settling: after every job that changed the match ------------------------------------

    def _settle(self) -> None:
        self._dirty = False
        if self.status != Status.MATCH_STATUS_RUNNING:
            return
        if self._regathering:
            if any(s.holder is None and not s.forfeited for s in self.seats):
                self._arm_timer()  # the graces of the seats still away
                return
            recount: Record = {"t": "recount", "at": self.now()}
            self._journal_first(recount)  # a full disk: the match stays as it is, and tries again
            self._regathering = False
            self._tell(recount, self.state.recount(recount["at"]))
        while True:
            if self.state.is_over():
                self._finish()
                return
            to_act = self.state.to_act()
            if not to_act or not all(self.seats[s].forfeited for s in to_act):
                break
            index = min(to_act)
            legal = self.state.legal_actions(index)
            if not legal:
                break
            now = self.now()
            events = self.state.apply(index, legal[0], now)
            auto: Record = {"t": "auto", "at": now, "seat": index, "action": str(legal[0])}
            self._journal_applied(auto)
            self._tell(auto, events)
        self._publish(to_act)
        self._arm_timer()

    def _publish(self, to_act: frozenset[int]) -> None:
        """Open, re-open or close each seat's decision (``to_act``: the seats the game waits on);
        send what changed to each connected bot.

        A seat just told of its own action by an ActionResult gets no ViewUpdate for it (it knows
        what it did): the events wait for its next message. In a two-player game that makes a
        decision three messages (the Move, its ActionResult, the next seat's DecisionRequest)."""
        now = self.now()
        views_due = self._views_due or bool(self._events)
        events = [self.codec.event(e) for e in self._events]
        self._events = []
        self._views_due = False
        told, self._told = self._told, set()
        for index, seat in enumerate(self.seats):
            legal = self.state.legal_actions(index) if index in to_act else []
            opened = False
            if not legal:
                seat.decision = None
                seat.acting_since = None
            elif seat.decision is None or seat.decision.legal != legal:
                if seat.acting_since is None:
                    seat.acting_since = now
                seat.decisions += 1
                deadline = seat.acting_since + self.clocks.decision + seat.bank
                seat.decision = Decision(decision_id(self._epoch, index, seat.decisions), legal, deadline)
                opened = True
            if seat.holder is None or seat.forfeited:
                continue
            if opened:
                seat.holder.send(self._decision_message(index, now, self._unsent(seat, events)))
            elif views_due and index in told:
                seat.unsent.extend(events)
            elif views_due:
                seat.holder.send(self._view_message(index, self._unsent(seat, events)))

    @staticmethod
    def _unsent(seat: SeatState, events: list[games_pb2.Event]) -> list[games_pb2.Event]:
        """The events a message to ``seat`` carries: those held back for it, then ``events``."""
        if not seat.unsent:
            return events
        held, seat.unsent = seat.unsent, []
        return held + events

    def _send_current(self, index: int) -> None:
        """A (re)connected bot's catch-up: its open decision, else its view."""
        seat = self.seats[index]
        assert seat.holder is not None
        if seat.decision is not None:
            seat.holder.send(self._decision_message(index, self.now(), []))
        else:
            seat.holder.send(self._view_message(index, []))

    def _finish(self) -> None:
        now = self.now()
        outcome = self.state.outcome()
        end: Record = {
            "t": "end",
            "at": now,
            "seed": self._seed,
            "scores": list(outcome.scores),
            "engine_places": list(outcome.places),
            "places": final_places(outcome.places, [bool(s.forfeited) for s in self.seats]),
            "timeouts": [s.timeouts for s in self.seats],
            "refusals": [s.refusals for s in self.seats],
            "forfeited": [s.forfeited for s in self.seats],
        }
        self._journal_first(end)
        self.status = Status.MATCH_STATUS_FINISHED
        self.result = match_result(self.records[0], end)
        self._cancel_timer()
        self._tell(end)
        # The end record is in the OS's hands already; make it durable off the event loop, and only
        # then drop the seed file a resume would need.
        self._close(self.secret_path)
        if self.sealed():
            self._send_ended(lambda seat: self.codec.view(self.state.view(seat)), result=self.result)
        else:
            view = self.codec.view(self.state.full_view())
            self._send_ended(lambda _seat: view, result=self.result)
        self._end_feeds()
        self.metrics.finished.inc()
        self.log.info(
            "match finished",
            players=[p.name for p in self.players],
            places=end["places"],
            scores=end["scores"],
            timeouts=end["timeouts"],
            refusals=end["refusals"],
            forfeited=end["forfeited"],
            seconds=round(now, 3),
            journal=str(self.journal_path),
        )
        self.done.set()
        self.on_finished(self)

    def cancel(self, reason: str) -> asyncio.Future[None]:
        """Post the cancellation: the future is done once the match is over (cancelled, or finished
        first), or raises why it could not be cancelled (a full disk)."""
        outcome: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def job() -> None:
            try:
                self._cancel(reason)
            except ServiceError as exc:
                outcome.set_exception(exc)
                raise
            outcome.set_result(None)

        self.post(job)
        return outcome

    def _cancel(self, reason: str) -> None:
        """End the match without a result. Nothing hidden is revealed, not even the seed: a
        tournament may deal the same seed again (the seed file stays, for the admin)."""
        if self.done.is_set():
            return
        at = self.now() if self.status == Status.MATCH_STATUS_RUNNING else 0.0
        forfeited = [s.forfeited for s in self.seats]
        cancel: Record = {"t": "cancel", "at": at, "reason": reason, "forfeited": forfeited}
        self._journal_first(cancel)
        self.status = Status.MATCH_STATUS_CANCELLED
        self.cancel_reason = reason
        self._cancel_timer()
        self._tell(cancel)
        self._close(None)
        self._send_ended(lambda seat: self.codec.view(self.state.view(seat)), reason=reason)
        self._end_feeds()
        self.log.info("match cancelled", reason=reason, seconds=round(at, 3), journal=str(self.journal_path))
        self.done.set()
        self.on_finished(self)

    def _send_ended(self, view_of: Callable[[int], games_pb2.View], **ending: Any) -> None:
        """Tell every seated bot the match is over, with the events since its last message."""
        events = [self.codec.event(e) for e in self._events]
        self._events = []
        for index, seat in enumerate(self.seats):
            if seat.holder is not None:
                ended = bots_pb2.MatchEnded(
                    match_id=self.id,
                    seat=index,
                    view=view_of(index),
                    events=self._unsent(seat, events),
                    status=self.status,
                    **ending,
                )
                seat.holder.send(bots_pb2.ServerMessage(match_ended=ended))

    def _close(self, secret: Path | None) -> None:
        """Make the journal durable and close it off the event loop, then delete ``secret`` if given."""
        assert self._journal is not None
        asyncio.get_running_loop().run_in_executor(None, _close_for_good, self._journal, secret)

    def _end_feeds(self) -> None:
        for subscription in self.subscribers:
            subscription.frames.put_nowait(None)
        self.subscribers = []
        self.metrics.active_matches.dec()

    # --- the journal and the spectators --------------------------------------------------------

    def _journal_first(self, record: Record) -> None:
        """Journal a change about to be made: if the journal cannot take it (a full disk), nothing
        is changed, the match tries again in ``RETRY_SECONDS``, and JournalFull is raised (a bot's
        move is answered RESOURCE_EXHAUSTED)."""
        assert self._journal is not None
        try:
            self._journal.write(record)
        except OSError as exc:
            if self._retry is None and self._acting:  # said once per second at most
                self.log.warning("journal full: the match waits", error=exc.strerror, kind=record["t"])
                self._retry = asyncio.get_running_loop().call_later(
                    RETRY_SECONDS, self._post_retry, context=self._context
                )
            raise JournalFull(
                f"the referee cannot write match {self.id}'s journal ({exc.strerror}): nothing was "
                "played; send your move again (the match waits until its referee has room)"
            ) from None
        self.records.append(record)

    def _write_now(self, record: Record) -> None:
        """Journal a record before the actor runs (creating or reopening): ``OSError`` if it cannot."""
        assert self._journal is not None
        self._journal.write(record)
        self.records.append(record)

    def _journal_applied(self, record: Record) -> None:
        """Journal a change already made to the engine; if the journal cannot take it, undo it (the
        engine is rebuilt from the journal) before raising JournalFull."""
        try:
            self._journal_first(record)
        except JournalFull:
            self.state = replayed(self.spec, self.options, self._seed, self.records)
            raise

    def _post_retry(self) -> None:
        self._retry = None
        self.post(self._try_again)

    def _try_again(self) -> None:
        """After the journal could not be written: do what was due then."""
        if self.status == Status.MATCH_STATUS_WAITING and all(s.holder is not None for s in self.seats):
            self._start()
        self._tick()

    def _tell(self, record: Record, events: list[Event] | None = None) -> None:
        """Show a journaled change to the spectators; its events go to the bots when the match settles."""
        if record["t"] in ("match", "resume"):
            return
        self._dirty = True
        if events:
            self._events.extend(events)
        if self.subscribers:
            seq = len(self.records) - 1
            built: dict[bool, spectator_pb2.MatchFrame] = {}
            for subscription in list(self.subscribers):
                if subscription.frames.qsize() >= sessions.MAX_QUEUED:
                    subscription.overrun = True
                    subscription.frames.put_nowait(None)
                    self.subscribers.remove(subscription)
                    continue
                frame = built.get(subscription.admin)
                if frame is None:
                    frame = built[subscription.admin] = build_frame(
                        self.codec,
                        self.id,
                        seq,
                        record,
                        events or [],
                        self.state,
                        subscription.admin,
                        self.info,
                    )
                subscription.frames.put_nowait(frame)

    def subscribe(self, admin: bool, from_start: bool) -> tuple[Subscription, list[Record]]:
        """A live feed starting now, and the records before it (all of them if ``from_start``).

        Without ``from_start`` the feed begins with a snapshot of the match as it is.
        Both are taken at once, so the replayed records and the live frames meet exactly.
        """
        subscription = Subscription(admin)
        backlog = list(self.records) if from_start else []
        if not from_start:
            reveal = admin or self.status == Status.MATCH_STATUS_FINISHED
            view = self.state.full_view() if reveal else self.state.public_view()
            subscription.frames.put_nowait(
                spectator_pb2.MatchFrame(
                    match_id=self.id,
                    seq=len(self.records) - 1,
                    time_ms=_ms(self.records[-1].get("at", 0.0)),
                    step=spectator_pb2.Step(kind=Kind.SNAPSHOT),
                    view=self.codec.view(view),
                    info=self.info(),
                )
            )
        if self.done.is_set():
            subscription.frames.put_nowait(None)
        else:
            self.subscribers.append(subscription)
        return subscription, backlog

    def unsubscribe(self, subscription: Subscription) -> None:
        if subscription in self.subscribers:
            self.subscribers.remove(subscription)

    def replay_frames(self, records: list[Record], admin: bool) -> Iterator[spectator_pb2.MatchFrame]:
        """Frames of past records, re-run from the seed (in the spectator's coroutine, not the actor)."""
        reveal = admin or self.status == Status.MATCH_STATUS_FINISHED
        return replay_frames(self.spec, self.options, self._seed, records, reveal, self.info)

    # --- messages ----------------------------------------------------------------------------------

    def info(self) -> match_pb2.MatchInfo:
        finished = self.status == Status.MATCH_STATUS_FINISHED
        return match_pb2.MatchInfo(
            match_id=self.id,
            game=self.spec.name,
            options=self.options_pb,
            players=self.players_proto(),
            clocks=self.clocks.to_proto(),
            status=self.status,
            seed_sha256=self.seed_sha256,
            seed=self._seed if finished else None,
            result=self.result,
            created_unix_ms=self.created_ms,
            cancel_reason=self.cancel_reason,
        )

    def players_proto(self) -> list[match_pb2.Player]:
        return [
            match_pb2.Player(
                seat=i, name=p.name, bot_id=p.bot_id, connected=s.holder is not None, forfeited=s.forfeited
            )
            for i, (p, s) in enumerate(zip(self.players, self.seats, strict=True))
        ]

    def _started_message(self, index: int, resumed: bool) -> bots_pb2.ServerMessage:
        return bots_pb2.ServerMessage(
            match_started=bots_pb2.MatchStarted(
                match_id=self.id,
                game=self.spec.name,
                options=self.options_pb,
                seat=index,
                players=self.players_proto(),
                clocks=self.clocks.to_proto(),
                resumed=resumed,
                time_bank_ms=_ms(self.seats[index].bank),
            )
        )

    def _decision_message(
        self, index: int, now: float, events: list[games_pb2.Event]
    ) -> bots_pb2.ServerMessage:
        seat = self.seats[index]
        open_decision = seat.decision
        assert open_decision is not None
        return decision_request(
            self.id,
            index,
            open_decision.id,
            self.codec.view_bytes(self.state.view(index)),
            map(self.codec.action, open_decision.legal),
            deadline_ms=_ms(open_decision.deadline - now),
            time_bank_ms=_ms(seat.bank),
            last_think_ms=_ms(seat.last_think),
            events=events,
        )

    def _view_message(self, index: int, events: list[games_pb2.Event]) -> bots_pb2.ServerMessage:
        message = bots_pb2.ServerMessage()
        update = message.view_update
        update.match_id = self.id
        update.seat = index
        update.view.MergeFromString(self.codec.view_bytes(self.state.view(index)))
        update.events.extend(events)
        return message

    def _result(
        self,
        index: int,
        decision_id: int,
        status: bots_pb2.ActionResult.Status.ValueType,
        action: Action | None,
        reason: str = "",
        think: float = 0.0,
    ) -> bots_pb2.ServerMessage:
        seat = self.seats[index]
        return action_result(
            self.id,
            index,
            decision_id,
            status,
            self.codec.action(action) if action is not None else None,
            reason=reason,
            think_ms=_ms(think),
            refusals=seat.refusals,
            timeouts=seat.timeouts,
        )

    def _forfeited_message(self, index: int) -> bots_pb2.ServerMessage:
        reason = self.seats[index].forfeited
        return bots_pb2.ServerMessage(
            seat_forfeited=bots_pb2.SeatForfeited(match_id=self.id, seat=index, reason=reason)
        )


# --- shared with replays -------------------------------------------------------------------------


def final_places(engine_places: tuple[int, ...] | list[int], forfeited: list[bool]) -> list[int]:
    """The engine's ranking among the seats that played on, forfeited seats sharing the last place."""
    playing = [p for p, gone in zip(engine_places, forfeited, strict=True) if not gone]
    last = len(playing) + 1
    return [
        last if gone else 1 + sum(1 for other in playing if other < place)
        for place, gone in zip(engine_places, forfeited, strict=True)
    ]


def decision_id(epoch: int, seat: int, count: int) -> int:
    """The id of a seat's ``count``-th decision in run ``epoch`` of its match: unique in the match,
    growing for each seat across restarts, and telling a seat nothing about the others (a count
    shared by every seat would show how often the others were asked)."""
    return (epoch << 32) | (seat << 24) | count


def decision_request(
    match_id: str,
    seat: int,
    decision_id: int,
    view: bytes,
    legal_actions: Iterable[games_pb2.Action],
    *,
    deadline_ms: int,
    time_bank_ms: int,
    last_think_ms: int,
    events: list[games_pb2.Event],
) -> bots_pb2.ServerMessage:
    """A DecisionRequest, ``view`` given as the View's bytes (``GameCodec.view_bytes``).

    Filled in place: building the parts as messages and passing them in would copy each once more.
    """
    message = bots_pb2.ServerMessage()
    request = message.decision
    request.match_id = match_id
    request.seat = seat
    request.decision_id = decision_id
    request.view.MergeFromString(view)
    request.legal_actions.extend(legal_actions)
    request.deadline_ms = deadline_ms
    request.time_bank_ms = time_bank_ms
    request.last_think_ms = last_think_ms
    request.events.extend(events)
    return message


def action_result(
    match_id: str,
    seat: int,
    decision_id: int,
    status: bots_pb2.ActionResult.Status.ValueType,
    action: games_pb2.Action | None,
    *,
    reason: str = "",
    think_ms: int = 0,
    refusals: int = 0,
    timeouts: int = 0,
) -> bots_pb2.ServerMessage:
    """An ActionResult, filled in place (see ``decision_request``)."""
    message = bots_pb2.ServerMessage()
    result = message.action_result
    result.match_id = match_id
    result.seat = seat
    result.decision_id = decision_id
    result.status = status
    if action is not None:
        result.action.CopyFrom(action)
    result.reason = reason
    result.think_ms = think_ms
    result.refusals = refusals
    result.timeouts = timeouts
    return message


def match_result(header: Record, end: Record) -> match_pb2.MatchResult:
    """A finished match's result, from its journal's header and ``end`` records."""
    places = end["places"]
    return match_pb2.MatchResult(
        seats=[
            match_pb2.SeatResult(
                seat=i,
                name=player["name"],
                bot_id=player["bot_id"],
                place=places[i],
                score=end["scores"][i],
                timeouts=end["timeouts"][i],
                refusals=end["refusals"][i],
                forfeited=end["forfeited"][i],
            )
            for i, player in enumerate(header["players"])
        ],
        winners=[i for i, place in enumerate(places) if place == 1],
        duration_ms=_ms(end["at"]),
    )


def build_frame(
    codec: convert.GameCodec,
    match_id: str,
    seq: int,
    record: Record,
    events: list[Event],
    state: GameState[Any, Any],
    reveal: bool,
    info: Callable[[], match_pb2.MatchInfo] | None,
) -> spectator_pb2.MatchFrame:
    """A frame of one journal record, after it was applied to ``state``.

    Hidden cards and actions (which may name them) only if ``reveal`` or once the game is over;
    the match's ``info`` on the records that start and end it.
    """
    reveal = reveal or state.is_over()
    kind = record["t"]
    step = spectator_pb2.Step(kind=STEP_KINDS[kind], seat=record.get("seat"))
    if kind in ("forfeit", "cancel"):
        step.reason = record["reason"]
    elif reveal:
        if kind in ACTION_RECORDS:
            step.action.CopyFrom(codec.action(codec.spec.parse_action(record["action"])))
        elif kind == "refuse":
            step.reason = record["reason"]
            with contextlib.suppress(MalformedInput):  # an attempt that was no action: the reason says so
                step.action.CopyFrom(codec.action(codec.spec.parse_action(record["action"])))
    view = state.full_view() if reveal else state.public_view()
    return spectator_pb2.MatchFrame(
        match_id=match_id,
        seq=seq,
        time_ms=_ms(record.get("at", 0.0)),
        step=step,
        events=[codec.event(e) for e in events],
        view=codec.view(view),
        info=info() if info is not None and kind in EDGES else None,
    )


def replay_frames(
    spec: GameSpec[Any],
    options: Any,
    seed: int,
    records: list[Record],
    reveal: bool,
    info: Callable[[], match_pb2.MatchInfo] | None = None,
) -> Iterator[spectator_pb2.MatchFrame]:
    """The frames of a journal's records, re-run from the seed (the header is record 0)."""
    if not records:
        return
    codec = convert.codec(spec.name)
    state = spec.new_game(options, Rng(seed))
    match_id = records[0]["match_id"]
    for seq, record in enumerate(records):
        if record["t"] in ("match", "resume"):
            continue
        events = apply_record(spec, state, record)
        yield build_frame(codec, match_id, seq, record, events, state, reveal, info)


def _close_for_good(journal: JournalWriter, secret: Path | None) -> None:
    journal.sync()
    journal.close()
    if secret is not None:
        secret.unlink(missing_ok=True)


def _ms(seconds: float) -> int:
    """Whole milliseconds, rounded half up; never negative."""
    return int(seconds * 1000 + 0.5) if seconds > 0 else 0


def _describe(move: bots_pb2.Move) -> str:
    """A refused move that could not be read, for the journal."""
    choice = move.WhichOneof("choice")
    if choice == "index":
        return f"index {move.index}"
    if choice == "text":
        return move.text
    return str(choice or "nothing")
