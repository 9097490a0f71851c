"""N matches kept running on a referee by trivial bots (index 0 the moment a request arrives, over
the real bot stream), measured over a window once every match is under way: what
``bench.throughput`` and ``bench.decision_cost profile`` put a referee under.

Layouts: ``seats`` gives every seat its own stream (seat tokens; a match is one chain of
decisions, as each of the ceiling's streams is one chain of round trips); ``bots`` gives the
registered bots one stream each, carrying every match (as in a tournament). Stream options:
"protocol 1" (none) or "batching" (every option: no ACCEPTED, no ViewUpdate between a seat's
decisions, batches both ways; a bot answers all one read brought in one message).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import grpc

from bench.harness import ADMIN, TOKEN, Latencies, cpu_seconds, create_request
from croupier.v1 import admin_pb2, admin_pb2_grpc, bots_pb2, bots_pb2_grpc

OPTIONS = {
    "protocol 1": None,
    "batching": bots_pb2.StreamOptions(
        quiet_acceptance=True, updates=bots_pb2.StreamOptions.UPDATES_WITH_NEXT, batches=True
    ),
}
"""The streams' Hello.options, by name."""


@dataclass(frozen=True)
class Load:
    """What a referee is measured under: N matches of a game, by layout and stream options."""

    game: str
    players: int
    matches: int
    layout: str
    seconds: float
    stream: str = "batching"
    """A key of OPTIONS."""
    rules: dict[str, object] = field(default_factory=dict)
    """Game options over the defaults."""


@dataclass
class Window:
    """Counts inside the measured window."""

    start: float
    stop: float
    decisions: int = 0
    matches_finished: int = 0
    round_trips: Latencies = field(default_factory=Latencies)
    """From a bot sending its Move to the match's next DecisionRequest arriving."""
    latencies: Latencies = field(default_factory=Latencies)
    """Real-time Pair Battle: from a play's sending to another seat's message showing it."""
    decision_bytes: list[int] = field(default_factory=list)

    def inside(self, t: float) -> bool:
        return self.start <= t < self.stop


@dataclass
class Figures:
    window: Window
    server_cpu: float
    """The referee's CPU seconds over the window (0 when not measured here)."""
    client_cpu: float
    """This process's (the bots') CPU seconds over the window."""
    late: bool = False
    """Not every match was under way by the window's appointed start."""

    @property
    def seconds(self) -> float:
        return self.window.stop - self.window.start

    @property
    def per_second(self) -> float:
        return self.window.decisions / self.seconds

    @property
    def server_cpu_us(self) -> float:
        return self.server_cpu / max(1, self.window.decisions) * 1e6


class TrivialBots:
    """N matches kept running with bots that always answer index 0 at once."""

    def __init__(self, channel: grpc.aio.Channel, load: Load, window: Window) -> None:
        self.admin = admin_pb2_grpc.AdminServiceStub(channel)
        self.bots = bots_pb2_grpc.BotServiceStub(channel)
        self.load = load
        self.window = window
        self.racing = load.game == "pair_battle"
        """Real time: seats race, so a play may be refused or answer a request already replaced."""
        self.loop = asyncio.get_running_loop()
        self.sent: dict[str, float] = {}
        """When each match's last Move was sent (cleared when its next decision arrives)."""
        self.plays: dict[tuple[str, int, tuple[int, ...]], float] = {}
        """Real-time Pair Battle: when each play was sent, by (match, seat, its cards)."""
        self.ended: defaultdict[str, asyncio.Event] = defaultdict(asyncio.Event)
        self.started = 0
        self.all_started = asyncio.Event()
        self.bot_ids: list[str] = []
        self.errors: list[str] = []
        self.deadline = asyncio.timeout_at(window.stop)

    def measure_from_now(self, seconds: float) -> None:
        """Open the window now; play stops when it closes."""
        self.window.start = self.loop.time()
        self.window.stop = self.window.start + seconds
        self.deadline.reschedule(self.window.stop)

    async def run(self) -> None:
        """Play until the window closes; every loop here ends by then."""
        with contextlib.suppress(TimeoutError):
            async with self.deadline, asyncio.TaskGroup() as group:
                if self.load.layout == "bots":
                    for i in range(self.load.players):
                        request = admin_pb2.RegisterBotRequest(name=f"trivial-{i}")
                        reply = await self.admin.RegisterBot(request, metadata=ADMIN)
                        self.bot_ids.append(reply.bot_id)
                        group.create_task(self.stream([reply.token], self.load.matches, forever=True))
                for slot in range(self.load.matches):
                    group.create_task(self.slot(slot))

    async def slot(self, slot: int) -> None:
        """One of the N places: a match, then another when it ends."""
        load = self.load
        for k in range(1_000_000):
            if load.layout == "bots":
                seats = [admin_pb2.SeatSpec(name=f"s{i}", bot_id=b) for i, b in enumerate(self.bot_ids)]
            else:
                seats = [admin_pb2.SeatSpec(name=f"s{i}") for i in range(load.players)]
            request = create_request(load.game, seats, seed=slot * 1_000_000 + k, **load.rules)
            created = await self.admin.CreateMatch(request, metadata=ADMIN)
            if k == 0:
                self.started += 1
                if self.started == load.matches:
                    self.all_started.set()
            match_id = created.match.match_id
            if load.layout == "bots":
                await self.ended[match_id].wait()
            else:
                await asyncio.gather(*(self.stream([t], 1, forever=False) for t in created.seat_tokens))
            self.ended.pop(match_id, None)

    async def stream(self, tokens: list[str], max_matches: int, forever: bool) -> None:
        """A bot stream: answer every decision with index 0; return when its match ends (unless forever).
        Everything one read brings is answered in one message when the referee takes batches."""
        call = self.bots.Play(metadata=[(TOKEN, t) for t in tokens])
        loop, window, sent = self.loop, self.window, self.sent
        batches = False
        try:
            options = OPTIONS[self.load.stream]
            hello = bots_pb2.Hello(
                protocol_version=1, name="trivial", max_matches=max_matches, options=options
            )
            await call.write(bots_pb2.BotMessage(hello=hello))
            while True:
                message = await call.read()
                if message is grpc.aio.EOF:
                    raise RuntimeError("the referee ended a bot stream")
                now = loop.time()
                moves = []
                over = False
                for each in message.batch.messages if message.HasField("batch") else [message]:
                    kind = each.WhichOneof("message")
                    if kind == "decision":
                        moves.append(self.decided(each.decision, now))
                    elif kind == "view_update":
                        self.saw(
                            each.view_update.match_id, each.view_update.seat, each.view_update.events, now
                        )
                    elif kind == "action_result":
                        status = each.action_result.status
                        lost = self.racing and status == bots_pb2.ActionResult.REFUSED  # a race lost
                        if status != bots_pb2.ActionResult.ACCEPTED and not lost:
                            self.errors.append(str(each.action_result))
                    elif kind == "error" and not self.racing:  # racing: a request replaced meanwhile
                        self.errors.append(each.error.message)
                    elif kind == "welcome":
                        batches = each.welcome.options.batches
                    elif kind == "match_ended":
                        match_id = each.match_ended.match_id
                        sent.pop(match_id, None)
                        if window.inside(now):
                            window.matches_finished += 1
                        self.ended[match_id].set()
                        over = not forever
                if len(moves) > 1 and batches:
                    await call.write(bots_pb2.BotMessage(moves=bots_pb2.Moves(moves=moves)))
                else:
                    for move in moves:
                        await call.write(bots_pb2.BotMessage(move=move))
                if window.inside(now):
                    window.decisions += len(moves)
                if over:
                    return
        finally:
            call.cancel()

    def decided(self, decision: bots_pb2.DecisionRequest, now: float) -> bots_pb2.Move:
        """The answer to a request (index 0), noting the round trip it closes."""
        match_id = decision.match_id
        self.saw(match_id, decision.seat, decision.events, now)
        previous = self.sent.pop(match_id, None)
        window = self.window
        if previous is not None and window.inside(previous):
            window.round_trips.add(now - previous)
            if len(window.round_trips) % 64 == 0:
                window.decision_bytes.append(decision.ByteSize())
        self.sent[match_id] = now
        if decision.legal_actions[0].HasField("pair_battle"):
            cards = tuple(sorted(decision.legal_actions[0].pair_battle.play.cards))
            self.plays[(match_id, decision.seat, cards)] = now
        return bots_pb2.Move(match_id=match_id, decision_id=decision.decision_id, index=0)

    def saw(self, match_id: str, seat: int, events: Any, now: float) -> None:
        """Real-time Pair Battle: another seat's play reaching this one closes its latency."""
        if not self.racing:
            return
        for event in events:
            if event.pair_battle.HasField("laid") and event.pair_battle.laid.seat != seat:
                laid = event.pair_battle.laid
                at = self.plays.pop((match_id, laid.seat, tuple(sorted(laid.cards))), None)
                if at is not None and self.window.inside(at):
                    self.window.latencies.add(now - at)


async def play(target: str, load: Load, server_pid: int | None = None, at: float | None = None) -> Figures:
    """``load`` on the referee at ``target``, measured over ``load.seconds`` once every match is under
    way (half a second after, or at wall-clock time ``at`` to share a window with other processes);
    ``server_pid``: the referee's CPU over the window too."""
    async with grpc.aio.insecure_channel(target) as channel:
        far = asyncio.get_running_loop().time() + 3600
        window = Window(start=far, stop=far + load.seconds)
        bots = TrivialBots(channel, load, window)
        runner = asyncio.create_task(bots.run())
        await asyncio.wait_for(bots.all_started.wait(), 120)
        late = at is not None and time.time() > at
        await asyncio.sleep(0.5 if at is None else max(0.0, at - time.time()))
        bots.measure_from_now(load.seconds)
        server, client = cpu_seconds(server_pid) if server_pid else 0.0, time.process_time()
        await asyncio.sleep(load.seconds)
        server_cpu = cpu_seconds(server_pid) - server if server_pid else 0.0
        client_cpu = time.process_time() - client
        await runner
        if bots.errors:
            raise RuntimeError(f"{len(bots.errors)} errors, the first: {bots.errors[0]}")
        return Figures(window, server_cpu, client_cpu, late)
