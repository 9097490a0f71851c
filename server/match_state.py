"""What one match holds (engine state, seats, clocks, journal, audience), set up once, and the
messages built from it. The rooms of the match (match.py, moves.py, timekeeping.py,
match_journal.py) add one job each to these fields; ``Match`` in match.py puts them together.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

from croupier.engine.core import Action, Event, GameSpec, GameState
from croupier.engine.rng import Rng
from croupier.server.clock import ActorClock, Handle, LoopClock
from croupier.server.clocks import Clocks
from croupier.server.journal import JournalWriter, Record, seed_sha256
from croupier.server.lifecycle import BadTransition, Phase, check_phase, check_status
from croupier.server.messages import Result, Status, Subscription, ms
from croupier.server.metrics import Metrics
from croupier.server.seats import Player, SeatState
from croupier.v1 import bots_pb2, match_pb2
from croupier.wire import convert, framing, seat_view


class MatchState:
    """One match's fields and messages; the methods one room of the match calls in another."""

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
        on_released: Callable[[Any, int], None],
        on_finished: Callable[[Any], None],
        clock: ActorClock | None = None,
        forked_from: str = "",
    ) -> None:
        self.id = match_id
        self.forked_from = forked_from
        """"ID@STEP" for a fork (``server/forks.py``): never rated, and it seals no other match."""
        self.forked_by = ""
        """The address of the caller who forked it, counted in that address's quota of live forks
        ("": the admin's, or resumed after a restart)."""
        self.clock: ActorClock = clock or LoopClock()
        """What the actor reads the time from and schedules on (a fake one in tests)."""
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
        self._retry: Handle | None = None
        """Armed while the journal cannot be written (a full disk): when to try again."""
        self._epoch = 1
        """Which run of the match this is (the first is 1): a part of every decision id."""
        self._events: list[Event] = []
        self._views_due = False
        """Every seated bot is owed a view at the next publish (the match has just started)."""
        self._shown = 0
        """Records told (to spectators, and their events queued for the bots): a rebuild tells the rest."""
        self._told: set[int] = set()
        """Seats told of their own action (ActionResult) since the last publish."""
        self.phase = Phase.NEW
        """Where the actor is in a job's cycle (lifecycle.py); moved only through ``_to``."""
        self._timer: Handle | None = None
        self._timer_at: float | None = None
        self._regathering = False
        """A resumed real-time match waits for every seat to be back (or forfeited), then the
        game counts down again: nobody plays while another seat is away."""
        self._context = contextvars.copy_context()
        """Where jobs run: the match's own log context, not that of whoever posted them."""
        self._context.run(structlog.contextvars.bind_contextvars, match_id=match_id)

    # --- its life: every move checked against lifecycle.py's tables ---

    def _to(self, phase: Phase) -> None:
        self.phase = check_phase(self.phase, phase)

    def _become(self, status: Status.ValueType) -> None:
        self.status = check_status(self.status, status)

    def _changed(self) -> None:
        """Something was told or a seat came or went: the match settles before the next job."""
        if self.phase is Phase.JOB:
            self._to(Phase.CHANGED)
        elif self.phase not in (Phase.CHANGED, Phase.SETTLING, Phase.FAILED):
            raise BadTransition(f"a match changed outside a job, its actor {self.phase.name}")

    @property
    def acting(self) -> bool:
        """The actor runs jobs (from start_actor until the match is over or the actor stopped)."""
        return self.phase not in (Phase.NEW, Phase.OVER, Phase.STOPPED)

    # --- what the match says about itself, and the messages built from its fields ---

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
            forked_from=self.forked_from,
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
                time_bank_ms=ms(self.seats[index].bank),
            )
        )

    def _decision_message(self, index: int, now: float, events: list[bytes]) -> bytes:
        """The seat's open decision, ``events`` (serialized) first: written as bytes (framing.py)."""
        seat = self.seats[index]
        open_decision = seat.decision
        assert open_decision is not None
        return framing.decision_request(
            self.id,
            index,
            open_decision.id,
            self.codec.view_bytes(seat_view.shown(self.state, index)),
            self.codec.actions_bytes(open_decision.legal),
            deadline_ms=ms(open_decision.deadline - now),
            time_bank_ms=ms(seat.bank),
            last_think_ms=ms(seat.last_think),
            events=events,
            accepted=seat.accepted,
        )

    def _view_message(self, index: int, events: list[bytes]) -> bytes:
        view = self.codec.view_bytes(seat_view.shown(self.state, index))
        return framing.view_update(self.id, index, view, events, self.seats[index].accepted)

    def _result(
        self,
        index: int,
        decision_id: int,
        status: Result.Status.ValueType,
        action: Action | None,
        reason: str = "",
        think: float = 0.0,
        refusal_reason: Result.RefusalReason.ValueType = Result.REFUSAL_UNSPECIFIED,
    ) -> bytes:
        seat = self.seats[index]
        return framing.action_result(
            self.id,
            index,
            decision_id,
            status,
            self.codec.action_bytes(action) if action is not None else None,
            reason=reason,
            think_ms=ms(think),
            refusals=seat.refusals,
            timeouts=seat.timeouts,
            refusal_reason=refusal_reason,
        )

    def _forfeited_message(self, index: int) -> bots_pb2.ServerMessage:
        reason = self.seats[index].forfeited
        return bots_pb2.ServerMessage(
            seat_forfeited=bots_pb2.SeatForfeited(match_id=self.id, seat=index, reason=reason)
        )

    # --- defined in another room: Match inherits that one first ---

    def post(self, job: Callable[[], None]) -> None:  # match.py
        raise NotImplementedError

    def run_now(self, job: Callable[[], None]) -> None:  # match.py
        raise NotImplementedError

    def now(self) -> float:  # match.py
        raise NotImplementedError

    def _start(self) -> None:  # match.py
        raise NotImplementedError

    def _tell(self, record: Record, events: list[Event] | None = None) -> None:  # match.py
        raise NotImplementedError

    def _tick(self) -> None:  # timekeeping.py
        raise NotImplementedError

    def _forfeit(self, index: int, reason: str, now: float) -> None:  # timekeeping.py
        raise NotImplementedError

    def _release_forfeited(self, index: int) -> None:  # timekeeping.py
        raise NotImplementedError

    def _cancel_timer(self) -> None:  # timekeeping.py
        raise NotImplementedError

    def _arm_timer(self) -> None:  # timekeeping.py
        raise NotImplementedError

    def _journal_first(self, record: Record) -> None:  # match_journal.py
        raise NotImplementedError

    def _journal_applied(self, record: Record) -> None:  # match_journal.py
        raise NotImplementedError

    def _close(self, secret: Path | None) -> None:  # match_journal.py
        raise NotImplementedError
