"""Referee throughput: decisions per second and decision round trips, against the raw gRPC ceiling.

Usage: python -m bench.referee_throughput [--matches 1,64,512] [--seconds S] [--runs N]
                                          [--game chinese_ten] [--layouts seats,bots]
                                          [--modes "protocol 1,batching"] [--latency-matches 64]

A referee runs in its own process (``croupier serve``, journals on disk,
metrics off). This process keeps N matches running: trivial bots answer every
DecisionRequest with index 0 the moment it arrives, through the real bot
stream, and a finished match is replaced by a new one. Measured over the
window after every match has started:

- decisions/s: requests answered per second;
- round trip: from a bot sending its Move to the match's next DecisionRequest
  arriving (the whole hot path: decode, engine, journal, views, encode);
- server µs/decision: the referee's CPU time over the window per decision.

In the same run, bench/grpc_ceiling.py's bare ping-pong with N streams and
messages of the same size gives the ceiling; the referee's throughput is
printed as a fraction of it. Layouts: ``seats`` gives every seat its own
stream (seat tokens; the ceiling's N streams each carry one chain of round
trips, as each match is one chain of decisions); ``bots`` gives two registered
bots one stream each, carrying every match (as in a tournament). Each runs with
protocol 1 and with every stream option ("batching": no ACCEPTED, no ViewUpdate
between a seat's decisions, batches both ways; a bot answers all one read brought
in one message). Then real-time Pair Battle: from a play's sending to the other
seat's message showing it, p50 and p99, beside the ceiling's round trip.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from bench import grpc_ceiling
from bench.harness import Latencies, Server, cpu_seconds, machine, python, rss_bytes
from croupier.engine.games import get_game
from croupier.v1 import admin_pb2, admin_pb2_grpc, bots_pb2, bots_pb2_grpc
from croupier.wire import convert

ADMIN_TOKEN = "bench-admin-token"
TOKEN = "croupier-token"


def referee_argv(data: Path, *extra: str) -> list[str]:
    return python(
        "-m",
        "croupier.server.cli",
        "--address",
        "127.0.0.1:0",
        "--data",
        str(data),
        "--admin-token",
        ADMIN_TOKEN,
        "--metrics-address",
        "off",
        *extra,
    )


def create_request(
    game: str, seats: list[admin_pb2.SeatSpec], seed: int, **options: object
) -> admin_pb2.CreateMatchRequest:
    """A match of ``game`` for ``seats``: ``options`` over the defaults, the referee's clocks."""
    values = get_game(game).options({"players": len(seats), **options})
    return admin_pb2.CreateMatchRequest(options=convert.codec(game).options(values), seats=seats, seed=seed)


@dataclass
class Window:
    """Counts inside the measured window."""

    start: float
    stop: float
    decisions: int = 0
    matches_finished: int = 0
    round_trips: Latencies = field(default_factory=Latencies)
    latencies: Latencies = field(default_factory=Latencies)
    """Real-time Pair Battle: from a play's sending to another seat's message showing it."""
    decision_bytes: list[int] = field(default_factory=list)

    def inside(self, t: float) -> bool:
        return self.start <= t < self.stop


OPTIONS = {
    "protocol 1": None,
    "batching": bots_pb2.StreamOptions(
        quiet_acceptance=True, updates=bots_pb2.StreamOptions.UPDATES_WITH_NEXT, batches=True
    ),
}
"""The streams' Hello.options: none, or every option (no ACCEPTED, no ViewUpdates between a seat's
decisions, batches both ways): "with and without batching"."""


class TrivialBots:
    """N matches kept running with bots that always answer index 0 at once."""

    def __init__(
        self,
        channel: grpc.aio.Channel,
        game: str,
        players: int,
        matches: int,
        layout: str,
        window: Window,
        options: bots_pb2.StreamOptions | None = None,
        **rules: object,
    ) -> None:
        self.admin = admin_pb2_grpc.AdminServiceStub(channel)
        self.bots = bots_pb2_grpc.BotServiceStub(channel)
        self.game = game
        self.players = players
        self.matches = matches
        self.layout = layout
        self.window = window
        self.options = options
        self.rules = rules
        self.racing = game == "pair_battle"
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
                if self.layout == "bots":
                    for i in range(self.players):
                        reply = await self.admin.RegisterBot(
                            admin_pb2.RegisterBotRequest(name=f"trivial-{i}"), metadata=[(TOKEN, ADMIN_TOKEN)]
                        )
                        self.bot_ids.append(reply.bot_id)
                        group.create_task(self.stream([reply.token], self.matches, forever=True))
                for slot in range(self.matches):
                    group.create_task(self.slot(slot))

    async def slot(self, slot: int) -> None:
        """One of the N places: a match, then another when it ends."""
        for k in range(1_000_000):
            if self.layout == "bots":
                seats = [admin_pb2.SeatSpec(name=f"s{i}", bot_id=b) for i, b in enumerate(self.bot_ids)]
            else:
                seats = [admin_pb2.SeatSpec(name=f"s{i}") for i in range(self.players)]
            created = await self.admin.CreateMatch(
                create_request(self.game, seats, seed=slot * 1_000_000 + k, **self.rules),
                metadata=[(TOKEN, ADMIN_TOKEN)],
            )
            if k == 0:
                self.started += 1
                if self.started == self.matches:
                    self.all_started.set()
            match_id = created.match.match_id
            if self.layout == "bots":
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
            hello = bots_pb2.Hello(
                protocol_version=1, name="trivial", max_matches=max_matches, options=self.options
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


@dataclass
class Figures:
    matches: int
    window: Window
    server_cpu: float
    client_cpu: float
    server_rss: int

    @property
    def seconds(self) -> float:
        return self.window.stop - self.window.start

    @property
    def per_second(self) -> float:
        return self.window.decisions / self.seconds

    @property
    def server_cpu_us(self) -> float:
        return self.server_cpu / max(1, self.window.decisions) * 1e6


@dataclass(frozen=True)
class Load:
    """What a referee is measured under: N matches of a game, by layout and stream options."""

    game: str
    players: int
    matches: int
    layout: str
    seconds: float
    options: bots_pb2.StreamOptions | None = None
    rules: dict[str, object] = field(default_factory=dict)
    """Game options over the defaults."""


async def measure(port: int, pid: int, load: Load) -> Figures:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        loop = asyncio.get_running_loop()
        far = loop.time() + 3600
        window = Window(start=far, stop=far + load.seconds)
        bots = TrivialBots(
            channel, load.game, load.players, load.matches, load.layout, window, load.options, **load.rules
        )
        runner = asyncio.create_task(bots.run())
        await asyncio.wait_for(bots.all_started.wait(), 120)
        await asyncio.sleep(0.5)  # every match under way before measuring
        bots.measure_from_now(load.seconds)
        cpu, client = cpu_seconds(pid), time.process_time()
        await asyncio.sleep(load.seconds)
        server_cpu, client_cpu = cpu_seconds(pid) - cpu, time.process_time() - client
        rss = rss_bytes(pid)
        await runner
        if bots.errors:
            raise RuntimeError(f"{len(bots.errors)} errors, the first: {bots.errors[0]}")
        return Figures(load.matches, window, server_cpu, client_cpu / load.seconds, rss)


async def run_referee(load: Load, serve_flags: list[str]) -> Figures:
    """A fresh referee (empty data directory) measured under ``load``."""
    with (
        tempfile.TemporaryDirectory(prefix="croupier-bench-") as data,
        Server(referee_argv(Path(data), *serve_flags)) as ref,
    ):
        return await measure(ref.port, ref.pid, load)


def main() -> None:
    asyncio.run(run(arguments()))


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", default="1,64,512", help="comma-separated concurrency levels")
    parser.add_argument("--seconds", type=float, default=3.0, help="measured time per run (default 3)")
    parser.add_argument("--runs", type=int, default=3, help="runs per level (default 3)")
    parser.add_argument("--game", default="chinese_ten", help="the game played (default chinese_ten)")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--layouts", default="seats,bots", help="comma-separated: seats, bots (default both)")
    parser.add_argument(
        "--modes", default=",".join(OPTIONS), help=f"comma-separated stream options: {', '.join(OPTIONS)}"
    )
    parser.add_argument(
        "--latency-matches",
        type=int,
        default=64,
        help="real-time Pair Battle matches for the latency figures (0: none; default 64)",
    )
    parser.add_argument(
        "--event-loop",
        choices=("uvloop", "asyncio"),
        help="the referee's event loop (default: its own default)",
    )
    return parser.parse_args()


async def run(args: argparse.Namespace) -> None:
    """Everything on one event loop (grpc.aio keeps its poller on the first loop it meets)."""
    levels = [int(x) for x in args.matches.split(",")]
    layouts = args.layouts.split(",")
    modes = args.modes.split(",")
    flags = ["--event-loop", args.event_loop] if args.event_loop else []
    print(machine())
    print(
        f"{args.game}, {args.players} players, default options; layouts {', '.join(layouts)}; "
        f"stream options: {', '.join(modes)}; {args.seconds:g} s per run, {args.runs} runs per level, "
        "the ceiling and every referee alternating"
    )
    print(
        f"{'matches':>7} {'layout':>6} {'stream':>10} {'ceiling/s':>10} {'decisions/s':>11} {'ratio':>6}"
        f" {'p50 µs':>8} {'p99 µs':>8} {'ceil p50':>8} {'ceil p99':>8} {'srv µs/dec':>10}"
        f" {'ceil µs/rt':>10} {'client cpu':>10} {'dec B':>6}"
    )
    with Server(python("-m", "bench.grpc_ceiling", "--serve", "127.0.0.1:0")) as ceiling_server:
        for matches in levels:
            ratios: defaultdict[tuple[str, str], list[float]] = defaultdict(list)
            for _ in range(args.runs):
                ceiling = await grpc_ceiling.load(
                    ceiling_server.port, matches, args.seconds, ceiling_server.pid
                )
                for layout in layouts:
                    for mode in modes:
                        load = Load(args.game, args.players, matches, layout, args.seconds, OPTIONS[mode])
                        referee = await run_referee(load, flags)
                        ratio = referee.per_second / ceiling.per_second
                        ratios[(layout, mode)].append(ratio)
                        sizes = referee.window.decision_bytes
                        print(
                            f"{matches:>7} {layout:>6} {mode:>10} {ceiling.per_second:>10,.0f}"
                            f" {referee.per_second:>11,.0f} {ratio:>6.2f}"
                            f" {referee.window.round_trips.percentile(50):>8,.0f}"
                            f" {referee.window.round_trips.percentile(99):>8,.0f}"
                            f" {ceiling.latencies.percentile(50):>8,.0f}"
                            f" {ceiling.latencies.percentile(99):>8,.0f}"
                            f" {referee.server_cpu_us:>10,.1f} {ceiling.server_cpu_us:>10,.1f}"
                            f" {referee.client_cpu:>9.0%} {statistics.mean(sizes) if sizes else 0:>6,.0f}",
                            flush=True,
                        )
            for (layout, mode), values in ratios.items():
                print(
                    f"{'':>7} {matches} matches, {layout} layout, {mode}: ratio to the ceiling median "
                    f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})",
                    flush=True,
                )
        if args.latency_matches:
            await latency(args, ceiling_server, modes, flags)


async def latency(
    args: argparse.Namespace, ceiling_server: Server, modes: list[str], flags: list[str]
) -> None:
    """Real-time Pair Battle (two seats a match, seat layout): from a play's sending to another seat's
    message showing it, beside the ceiling's round trip at as many streams, alternating."""
    matches = args.latency_matches
    print(
        f"real-time Pair Battle, 2 players, countdown 0, {matches} matches: play sent -> the opponent's "
        "message showing it (µs)"
    )
    header = ("stream", "p50", "p99", "samples", "ceil p50", "ceil p99", "p99 ratio")
    print(" ".join(f"{h:>{w}}" for h, w in zip(header, (10, 8, 8, 8, 8, 8, 9), strict=True)))
    for _ in range(args.runs):
        ceiling = await grpc_ceiling.load(ceiling_server.port, matches, args.seconds, ceiling_server.pid)
        for mode in modes:
            rules: dict[str, object] = {"countdown_tick": 0.0}
            load = Load("pair_battle", 2, matches, "seats", args.seconds, OPTIONS[mode], rules)
            referee = await run_referee(load, flags)
            seen = referee.window.latencies
            ceiling_p99 = ceiling.latencies.percentile(99)
            print(
                f"{mode:>10} {seen.percentile(50):>8,.0f} {seen.percentile(99):>8,.0f} {len(seen):>8}"
                f" {ceiling.latencies.percentile(50):>8,.0f} {ceiling_p99:>8,.0f}"
                f" {seen.percentile(99) / ceiling_p99:>9.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
