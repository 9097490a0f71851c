"""A match's actor without a network or a real clock: a clock that moves only when the test says,
bot sessions that only collect what they are sent, and a match built on both."""

from __future__ import annotations

import contextvars
import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from croupier.engine.games import get_game
from croupier.server.clocks import Clocks
from croupier.server.journal import Record, read_records
from croupier.server.lifecycle import Phase
from croupier.server.match import Match
from croupier.server.metrics import Metrics
from croupier.server.seats import Player
from croupier.server.session import Session
from croupier.v1 import bots_pb2
from croupier.wire.framing import Outgoing, parsed


@dataclass
class Call:
    when: float
    callback: Callable[[], None]
    context: contextvars.Context
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


class ManualClock:
    """Time that moves only through ``advance``; callbacks run in time order, none early, and work
    meant for off the loop runs at once."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self._due: list[tuple[float, int, Call]] = []
        self._order = itertools.count()

    def time(self) -> float:
        return self.now

    def call_soon(self, callback: Callable[[], None], context: contextvars.Context) -> Call:
        return self.call_at(self.now, callback, context)

    def call_at(self, when: float, callback: Callable[[], None], context: contextvars.Context) -> Call:
        call = Call(when, callback, context)
        heapq.heappush(self._due, (when, next(self._order), call))
        return call

    def off_loop(self, work: Callable[[], None]) -> None:
        work()

    def run(self) -> None:
        """Run every callback due by now, those they schedule for now included."""
        for _ in range(100_000):
            if not (self._due and self._due[0][0] <= self.now):
                return
            _, _, call = heapq.heappop(self._due)
            if not call.cancelled:
                call.context.run(call.callback)
        raise AssertionError("callbacks keep scheduling callbacks for now: time never moves on")

    def advance(self, seconds: float) -> None:
        """Move time on by ``seconds``, stopping at each callback due on the way."""
        until = self.now + seconds
        self.run()
        while self._due and self._due[0][0] <= until:
            self.now = max(self.now, self._due[0][0])
            self.run()
        self.now = until
        self.run()

    def pending(self) -> list[float]:
        """When the callbacks still to run are due (relative to nothing: the clock's own time)."""
        return sorted(when for when, _, call in self._due if not call.cancelled)


class FakeSession(Session):
    """A bot stream that keeps what it is sent."""

    def __init__(self, name: str = "bot") -> None:
        super().__init__(name, None, capacity=100)
        self.sent: list[bots_pb2.ServerMessage] = []

    def send(self, message: Outgoing) -> None:
        if not self.closed:
            self.sent.append(parsed(message))

    def kinds(self) -> list[str]:
        return [str(m.WhichOneof("message")) for m in self.sent]

    def of(self, kind: str) -> list[Any]:
        return [getattr(m, kind) for m in self.sent if m.WhichOneof("message") == kind]

    def take(self) -> list[bots_pb2.ServerMessage]:
        """What was sent since the last take."""
        taken, self.sent = self.sent, []
        return taken

    def open_decision(self) -> bots_pb2.DecisionRequest | None:
        """The last DecisionRequest, unless it was settled (a refusal leaves it open) or the match ended."""
        for message in reversed(self.sent):
            kind = message.WhichOneof("message")
            if kind == "decision":
                return message.decision
            if kind == "action_result" and message.action_result.status != bots_pb2.ActionResult.REFUSED:
                return None
            if kind in ("match_ended", "seat_forfeited"):
                return None
        return None


@dataclass
class Table:
    """A match on a manual clock, its seats held by fake sessions."""

    match: Match
    clock: ManualClock
    bots: list[FakeSession]
    released: list[int] = field(default_factory=list)
    finished: list[Match] = field(default_factory=list)

    def move(self, seat: int, **choice: Any) -> None:
        """Seat ``seat`` answers its open decision (by ``index`` 0 unless told otherwise)."""
        decision = self.bots[seat].open_decision()
        fields = {"decision_id": decision.decision_id if decision else 0, **(choice or {"index": 0})}
        move = bots_pb2.Move(match_id=self.match.id, **fields)
        self.match.move(self.bots[seat], move)
        self.clock.run()

    def play_out(self, seats: list[int] | None = None, limit: int = 10_000) -> None:
        """The ``seats`` (every one by default) answer each decision with its first action until the end."""
        playing = range(len(self.bots)) if seats is None else seats
        for _ in range(limit):
            if self.match.done.is_set():
                return
            asked = [s for s in playing if self.bots[s].open_decision() is not None]
            if not asked:
                self.clock.advance(0.5)  # the game's own clock, or a timeout
                continue
            self.move(asked[0])
        raise AssertionError("the match did not end")

    def journal(self) -> list[Record]:
        return read_records(self.match.journal_path)


def table(
    tmp_path: Path,
    game: str = "chinese_ten",
    players: int = 2,
    options: dict[str, Any] | None = None,
    seed: int = 7,
    clocks: Clocks | None = None,
    seated: bool = True,
) -> Table:
    """A match created on disk under ``tmp_path``, its actor started on a manual clock; with
    ``seated`` every seat is held by its fake bot (so the match has started)."""
    spec = get_game(game)
    clock = ManualClock()
    bots = [FakeSession(f"p{i}") for i in range(players)]
    made: list[Table] = []
    match = Match(
        match_id=f"m-{game}",
        spec=spec,
        options=spec.options({"players": players, **(options or {})}),
        seed=seed,
        clocks=clocks or Clocks(),
        players=[Player(f"p{i}", "", f"token{i}") for i in range(players)],
        created_ms=0,
        journal_path=tmp_path / f"m-{game}.jsonl",
        metrics=Metrics(),
        on_released=lambda _match, index: made[0].released.append(index),
        on_finished=lambda done: made[0].finished.append(done),
        clock=clock,
    )
    made.append(Table(match, clock, bots))
    match.create()
    match.start_actor()
    clock.run()
    if seated:
        for index, bot in enumerate(bots):
            match.attach(bot, index)
        clock.run()
    return made[0]


def resumed(before: Table, tmp_path: Path) -> Table:
    """The match of ``before`` as a restarted referee takes it up from its journal (its old actor
    stopped first), on a new manual clock at the same time, its seats held again by new bots."""
    old = before.match
    assert old.phase is Phase.STOPPED, "stop the old actor first (await match.stop_actor())"
    records = read_records(old.journal_path)
    secret = {"seed": old._seed, "seat_tokens": [p.token_sha256 for p in old.players]}
    clock = ManualClock(before.clock.now)
    made: list[Table] = []
    match, damage = Match.rebuild(
        old.journal_path,
        records,
        secret,
        Metrics(),
        lambda _match, index: made[0].released.append(index),
        lambda done: made[0].finished.append(done),
        clock,
    )
    assert not damage
    bots = [FakeSession(f"again{i}") for i in range(len(old.players))]
    made.append(Table(match, clock, bots))
    match.reopen()
    match.start_actor()
    clock.run()
    return made[0]
