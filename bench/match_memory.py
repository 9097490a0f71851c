"""Memory per live match, and how many matches one referee holds at once.

Usage: python -m bench.match_memory [--game chinese_ten] [--steps 500,1000,2000,4000] [--limit 20000]

A referee runs in its own process. Two bots join with room for every match
(a stream plays at most 1000 at once, so each opens as many as it needs); matches are created in steps
and start at once (every seat held), then wait on a long decision clock, as
matches do while bots think. After each step the referee's resident memory is
read: the slope is the memory a live match costs (engine state, journal file,
seat records, its actor task and queue, the messages sent so far).

``--limit`` goes on creating matches until the referee refuses one or the
limit is reached, and says what stopped it (memory, open files, ...). Last,
the referee is stopped (SIGTERM) and started again on its data: how long each
takes with that many live matches (the restart resumes every one).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import tempfile
import time
from pathlib import Path

import grpc

from bench.harness import ADMIN, TOKEN, Server, create_request, machine, referee_argv, rss_bytes
from croupier.server.bot_streams import MAX_MATCHES_PER_STREAM
from croupier.v1 import admin_pb2, admin_pb2_grpc, bots_pb2, bots_pb2_grpc


class Seats:
    """Two bot streams that take every match and never answer (a long think), reading what comes."""

    def __init__(self, channel: grpc.aio.Channel, players: int) -> None:
        self.admin = admin_pb2_grpc.AdminServiceStub(channel)
        self.bots = bots_pb2_grpc.BotServiceStub(channel)
        self.players = players
        self.bot_ids: list[str] = []
        self.started = 0
        self.readers: list[asyncio.Task[None]] = []

    async def connect(self, capacity: int) -> None:
        """Each bot opens enough streams for ``capacity`` matches (a stream plays at most 1000)."""
        streams = -(-capacity // MAX_MATCHES_PER_STREAM)
        hello = bots_pb2.Hello(protocol_version=1, name="thinker", max_matches=MAX_MATCHES_PER_STREAM)
        for i in range(self.players):
            request = admin_pb2.RegisterBotRequest(name=f"thinker-{i}")
            reply = await self.admin.RegisterBot(request, metadata=ADMIN)
            self.bot_ids.append(reply.bot_id)
            for _ in range(streams):
                call = self.bots.Play(metadata=[(TOKEN, reply.token)])
                await call.write(bots_pb2.BotMessage(hello=hello))
                self.readers.append(asyncio.create_task(self._read(call, count=i == 0)))

    async def _read(self, call: grpc.aio.StreamStreamCall, count: bool) -> None:  # type: ignore[type-arg]
        while (message := await call.read()) is not grpc.aio.EOF:
            if count and message.WhichOneof("message") == "match_started":
                self.started += 1

    async def create(self, game: str, seed: int) -> None:
        seats = [admin_pb2.SeatSpec(name=f"s{i}", bot_id=bot) for i, bot in enumerate(self.bot_ids)]
        request = create_request(game, seats, seed)
        request.clocks.decision_ms = 3_600_000
        request.clocks.bank_ms = 0
        await self.admin.CreateMatch(request, metadata=ADMIN)

    async def until_started(self, count: int) -> None:
        async with asyncio.timeout(600):
            while self.started < count:
                await asyncio.sleep(0.05)


async def run(port: int, pid: int, game: str, players: int, steps: list[int], limit: int) -> None:
    options = [("grpc.max_receive_message_length", 1 << 24)]
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=options) as channel:
        seats = Seats(channel, players)
        await seats.connect(capacity=max(limit, steps[-1]))
        await asyncio.sleep(0.5)
        base = rss_bytes(pid)
        print(f"referee resident memory with no match: {base / 2**20:.1f} MiB")
        print(f"{'live matches':>12} {'RSS MiB':>9} {'KiB/match':>10}  load average")
        created = 0
        for step in steps:
            while created < step:
                await seats.create(game, created)
                created += 1
            await seats.until_started(created)
            await asyncio.sleep(0.5)
            rss = rss_bytes(pid)
            load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
            print(
                f"{created:>12,} {rss / 2**20:>9.1f} {(rss - base) / created / 1024:>10.1f}  {load}",
                flush=True,
            )
        if limit <= created:
            return
        stopped = f"the limit of {limit:,} matches"
        try:
            while created < limit:
                await seats.create(game, created)
                created += 1
        except grpc.aio.AioRpcError as exc:
            stopped = f"the referee refusing match {created + 1:,}: {exc.code().name}: {exc.details()}"
        await asyncio.sleep(0.5)
        rss = rss_bytes(pid)
        figures = f"{created:>12,} {rss / 2**20:>9.1f} {(rss - base) / created / 1024:>10.1f}"
        print(f"{figures}  (stopped by {stopped})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="chinese_ten")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--steps", default="500,1000,2000,4000", help="live matches at each reading")
    parser.add_argument("--limit", type=int, default=0, help="then create matches up to this many (0: stop)")
    args = parser.parse_args()
    steps = [int(x) for x in args.steps.split(",")]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    print(machine())
    print(f"{args.game}, {args.players} players, default options; open files limit {soft} (hard {hard})")
    with tempfile.TemporaryDirectory(prefix="croupier-memory-") as data:
        referee = Server(referee_argv(Path(data)))
        with referee:
            asyncio.run(run(referee.port, referee.pid, args.game, args.players, steps, args.limit))
            stopping = time.monotonic()
        print(f"graceful stop (SIGTERM) with every match live: {time.monotonic() - stopping:.1f} s")
        starting = time.monotonic()
        with Server(referee_argv(Path(data))):  # listening means every journal was resumed
            print(f"restart, resuming every match from its journal: {time.monotonic() - starting:.1f} s")


if __name__ == "__main__":
    main()
