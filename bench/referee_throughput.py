"""Referee throughput: decisions per second and decision round trips, against the raw gRPC ceiling.

Usage: python -m bench.referee_throughput [--matches 1,64,512] [--seconds S] [--runs N]
                                          [--game chinese_ten] [--layout seats|bots]

A referee runs in its own process (``croupier serve``, journals on disk,
metrics off). This process keeps N matches running: trivial bots answer every
DecisionRequest with index 0 the moment it arrives, through the real bot
stream, and a finished match is replaced by a new one. Measured over the
window after every match has started:

- decisions/s: ACCEPTED action results per second;
- round trip: from a bot sending its Move to the match's next DecisionRequest
  arriving (the whole hot path: decode, engine, journal, views, encode);
- server µs/decision: the referee's CPU time over the window per decision.

In the same run, bench/grpc_ceiling.py's bare ping-pong with N streams and
messages of the same size gives the ceiling; the referee's throughput is
printed as a fraction of it. Layouts: ``seats`` gives every seat its own
stream (seat tokens; the ceiling's N streams each carry one chain of round
trips, as each match is one chain of decisions); ``bots`` gives two registered
bots one stream each, carrying every match (as in a tournament).
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

import grpc

from bench import grpc_ceiling
from bench.harness import Latencies, Server, cpu_seconds, machine, python, rss_bytes
from croupier.engine.games import get_game
from croupier.server import convert
from croupier.v1 import admin_pb2, admin_pb2_grpc, bots_pb2, bots_pb2_grpc

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
    decision_bytes: list[int] = field(default_factory=list)

    def inside(self, t: float) -> bool:
        return self.start <= t < self.stop


class TrivialBots:
    """N matches kept running with bots that always answer index 0 at once."""

    def __init__(
        self, channel: grpc.aio.Channel, game: str, players: int, matches: int, layout: str, window: Window
    ) -> None:
        self.admin = admin_pb2_grpc.AdminServiceStub(channel)
        self.bots = bots_pb2_grpc.BotServiceStub(channel)
        self.game = game
        self.players = players
        self.matches = matches
        self.layout = layout
        self.window = window
        self.loop = asyncio.get_running_loop()
        self.sent: dict[str, float] = {}
        """When each match's last Move was sent (cleared when its next decision arrives)."""
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
                create_request(self.game, seats, seed=slot * 1_000_000 + k), metadata=[(TOKEN, ADMIN_TOKEN)]
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
        """A bot stream: answer every decision with index 0; return when its match ends (unless forever)."""
        call = self.bots.Play(metadata=[(TOKEN, t) for t in tokens])
        loop, window, sent = self.loop, self.window, self.sent
        try:
            hello = bots_pb2.Hello(protocol_version=1, name="trivial", max_matches=max_matches)
            await call.write(bots_pb2.BotMessage(hello=hello))
            while True:
                message = await call.read()
                if message is grpc.aio.EOF:
                    raise RuntimeError("the referee ended a bot stream")
                now = loop.time()
                kind = message.WhichOneof("message")
                if kind == "decision":
                    decision = message.decision
                    match_id = decision.match_id
                    previous = sent.pop(match_id, None)
                    if previous is not None and window.inside(previous):
                        window.round_trips.add(now - previous)
                        if len(window.round_trips) % 64 == 0:
                            window.decision_bytes.append(message.ByteSize())
                    sent[match_id] = loop.time()
                    await call.write(
                        bots_pb2.BotMessage(
                            move=bots_pb2.Move(match_id=match_id, decision_id=decision.decision_id, index=0)
                        )
                    )
                elif kind == "action_result":
                    if message.action_result.status != bots_pb2.ActionResult.ACCEPTED:
                        self.errors.append(str(message.action_result))
                    elif window.inside(now):
                        window.decisions += 1
                elif kind == "error":
                    self.errors.append(message.error.message)
                elif kind == "match_ended":
                    match_id = message.match_ended.match_id
                    sent.pop(match_id, None)
                    if window.inside(now):
                        window.matches_finished += 1
                    self.ended[match_id].set()
                    if not forever:
                        return
        finally:
            call.cancel()


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


async def measure(
    port: int, pid: int, game: str, players: int, matches: int, layout: str, seconds: float
) -> Figures:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        loop = asyncio.get_running_loop()
        far = loop.time() + 3600
        window = Window(start=far, stop=far + seconds)
        bots = TrivialBots(channel, game, players, matches, layout, window)
        runner = asyncio.create_task(bots.run())
        await asyncio.wait_for(bots.all_started.wait(), 120)
        await asyncio.sleep(0.5)  # every match under way before measuring
        bots.measure_from_now(seconds)
        cpu, client = cpu_seconds(pid), time.process_time()
        await asyncio.sleep(seconds)
        server_cpu, client_cpu = cpu_seconds(pid) - cpu, time.process_time() - client
        rss = rss_bytes(pid)
        await runner
        if bots.errors:
            raise RuntimeError(f"{len(bots.errors)} errors, the first: {bots.errors[0]}")
        return Figures(matches, window, server_cpu, client_cpu / seconds, rss)


async def run_referee(
    game: str, players: int, matches: int, layout: str, seconds: float, *serve_flags: str
) -> Figures:
    """A fresh referee (empty data directory) measured under N matches."""
    with (
        tempfile.TemporaryDirectory(prefix="croupier-bench-") as data,
        Server(referee_argv(Path(data), *serve_flags)) as ref,
    ):
        return await measure(ref.port, ref.pid, game, players, matches, layout, seconds)


def main() -> None:
    asyncio.run(run(arguments()))


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", default="1,64,512", help="comma-separated concurrency levels")
    parser.add_argument("--seconds", type=float, default=3.0, help="measured time per run (default 3)")
    parser.add_argument("--runs", type=int, default=3, help="runs per level (default 3)")
    parser.add_argument("--game", default="chinese_ten", help="the game played (default chinese_ten)")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--layout", choices=("seats", "bots"), default="seats")
    parser.add_argument(
        "--event-loop",
        choices=("uvloop", "asyncio"),
        help="the referee's event loop (default: its own default)",
    )
    return parser.parse_args()


async def run(args: argparse.Namespace) -> None:
    """Everything on one event loop (grpc.aio keeps its poller on the first loop it meets)."""
    levels = [int(x) for x in args.matches.split(",")]
    print(machine())
    print(
        f"{args.game}, {args.players} players, default options; layout {args.layout}; "
        f"{args.seconds:g} s per run, {args.runs} runs per level, ceiling and referee alternating"
    )
    print(
        f"{'matches':>7} {'ceiling/s':>10} {'decisions/s':>11} {'fraction':>8} {'p50 µs':>8} {'p99 µs':>8}"
        f" {'ceil p50':>8} {'ceil p99':>8} {'srv µs/dec':>10} {'ceil µs/rt':>10} {'client cpu':>10}"
        f" {'dec B':>6} {'shaped ceil/s':>13} {'shaped µs/rt':>12}"
    )
    with Server(python("-m", "bench.grpc_ceiling", "--serve", "127.0.0.1:0")) as ceiling_server:
        for matches in levels:
            fractions: list[float] = []
            shaped_fractions: list[float] = []
            for _ in range(args.runs):
                ceiling = await grpc_ceiling.load(
                    ceiling_server.port, matches, args.seconds, ceiling_server.pid
                )
                shaped = await grpc_ceiling.load(
                    ceiling_server.port, matches, args.seconds, ceiling_server.pid, shaped=True
                )
                flags = ["--event-loop", args.event_loop] if args.event_loop else []
                referee = await run_referee(
                    args.game, args.players, matches, args.layout, args.seconds, *flags
                )
                fraction = referee.per_second / ceiling.per_second
                fractions.append(fraction)
                shaped_fractions.append(referee.per_second / shaped.per_second)
                sizes = referee.window.decision_bytes
                print(
                    f"{matches:>7} {ceiling.per_second:>10,.0f} {referee.per_second:>11,.0f} {fraction:>8.2f}"
                    f" {referee.window.round_trips.percentile(50):>8,.0f}"
                    f" {referee.window.round_trips.percentile(99):>8,.0f}"
                    f" {ceiling.latencies.percentile(50):>8,.0f} {ceiling.latencies.percentile(99):>8,.0f}"
                    f" {referee.server_cpu_us:>10,.1f} {ceiling.server_cpu_us:>10,.1f}"
                    f" {referee.client_cpu:>9.0%} {statistics.mean(sizes) if sizes else 0:>6,.0f}"
                    f" {shaped.per_second:>13,.0f} {shaped.server_cpu_us:>12,.1f}",
                    flush=True,
                )
            print(
                f"{'':>7} fraction of the ceiling at {matches}: median {statistics.median(fractions):.2f} "
                f"({min(fractions):.2f}-{max(fractions):.2f}); of the shaped ceiling (its own messages): "
                f"{statistics.median(shaped_fractions):.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
