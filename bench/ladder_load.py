"""A ladder under a crowd: do two innocent bots keep playing while 100 more bots connect and 50
watchers poll the leaderboard? (issue #39, item 3: at least 80% of their matches a minute, and
their move round trip's p99 within 100 ms of what it was.)

Usage: python -m bench.ladder_load [--seconds 60] [--extra 100] [--watchers 50] [--poll 1] [--move-ms 20]

``croupier ladder`` runs in its own process with its embedded referee and its web viewer
(``--web``), open registration on. Two innocent bots (random moves, in this process) register
themselves and play each other; their matches a minute and the round trip of each move (Move sent
to its ActionResult read) are measured over ``--seconds`` alone, then over as long again while
another process keeps ``--extra`` more bots connected (registered openly, each declaring
``--max-matches 1``: fewer than a Platinum Fish set's two rotations, so the ladder weighs them at
every look and seats none: the point is load, not diluting the innocents' pairings) and
``--watchers`` clients each fetch the board (``/api/ladders/NAME``) every ``--poll`` seconds.
Figures, not a test: the machine's load is printed with them.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from bench.harness import Latencies, cpu_seconds, machine, python
from croupier.v1 import admin_pb2, admin_pb2_grpc, bots_pb2, bots_pb2_grpc

NAME = "open"
LADDER = f"""\
name = "{NAME}"
[clock]
decision_ms = 2000
[[games]]
game = "platinum_fish"
seats = 2
[registration]
open = true
per_address = 1000
per_hour = 1000
"""
WHERE = re.compile(r"on the referee at (\S+)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def register(target: str, name: str) -> str:
    """A bot's token, registered as a stranger would (no admin token)."""
    async with grpc.aio.insecure_channel(target) as channel:
        reply = await admin_pb2_grpc.AdminServiceStub(channel).RegisterBot(
            admin_pb2.RegisterBotRequest(name=name, claim=True)
        )
    return reply.token


@dataclass
class Player:
    """One bot stream playing random legal moves, timing each move's answer."""

    token: str
    max_matches: int
    seed: int
    think: float = 0.0
    """Seconds it waits before each move."""
    ended: list[float] = field(default_factory=list)
    """When each of its matches ended (monotonic)."""
    round_trips: list[tuple[float, float]] = field(default_factory=list)
    """(when, seconds) of each move's Move-to-ActionResult."""
    connected: asyncio.Event = field(default_factory=asyncio.Event)

    async def play(self, channel: grpc.aio.Channel) -> None:
        rng = random.Random(self.seed)
        stub = bots_pb2_grpc.BotServiceStub(channel)
        call = stub.Play(metadata=(("croupier-token", self.token),))  # type: ignore[call-arg]
        hello = bots_pb2.Hello(protocol_version=1, name="bench", max_matches=self.max_matches)
        await call.write(bots_pb2.BotMessage(hello=hello))
        sent: dict[tuple[str, int], float] = {}
        while (message := await call.read()) is not grpc.aio.EOF:  # type: ignore[attr-defined]
            assert isinstance(message, bots_pb2.ServerMessage)
            kind = message.WhichOneof("message")
            if kind == "welcome":
                self.connected.set()
            elif kind == "decision":
                decision = message.decision
                key = (decision.match_id, decision.decision_id)
                if self.think:
                    await asyncio.sleep(self.think)
                sent[key] = time.perf_counter()
                move = bots_pb2.Move(
                    match_id=decision.match_id,
                    decision_id=decision.decision_id,
                    index=rng.randrange(len(decision.legal_actions)),
                )
                await call.write(bots_pb2.BotMessage(move=move))
            elif kind == "action_result":
                result = message.action_result
                started = sent.pop((result.match_id, result.decision_id), None)
                if started is not None:
                    self.round_trips.append((time.monotonic(), time.perf_counter() - started))
            elif kind == "match_ended":
                self.ended.append(time.monotonic())


def crowd(
    target: str, web: str, extra: int, watchers: int, poll: float, ready: Any, stop: Any, out: Any
) -> None:
    """The load, in a process of its own: ``extra`` bots connected, ``watchers`` polling the board."""

    async def main() -> None:
        import aiohttp

        tokens = [await register(target, f"extra-{i}") for i in range(extra)]
        async with grpc.aio.insecure_channel(target) as channel:
            players = [Player(token, 1, i) for i, token in enumerate(tokens)]
            tasks = [asyncio.create_task(p.play(channel)) for p in players]
            await asyncio.gather(*(p.connected.wait() for p in players))
            board = Latencies()
            failures = [0]

            async def watch(session: aiohttp.ClientSession, offset: float) -> None:
                await asyncio.sleep(offset)
                while True:
                    started = time.perf_counter()
                    try:
                        async with session.get(f"{web}/api/ladders/{NAME}") as response:
                            await response.read()
                            ok = response.status == 200
                    except aiohttp.ClientError:
                        ok = False
                    if ok:
                        board.add(time.perf_counter() - started)
                    else:
                        failures[0] += 1
                    await asyncio.sleep(max(0.0, poll - (time.perf_counter() - started)))

            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
                polls = [
                    asyncio.create_task(watch(session, poll * i / max(watchers, 1))) for i in range(watchers)
                ]
                ready.set()
                await asyncio.to_thread(stop.wait)
                for task in [*polls, *tasks]:
                    task.cancel()
                await asyncio.gather(*polls, *tasks, return_exceptions=True)
            out.put((board.percentile(50) / 1e3, board.percentile(99) / 1e3, len(board), failures[0]))

    asyncio.run(main())


@dataclass
class Window:
    """What the innocents did over one stretch of time."""

    start: float
    end: float
    players: list[Player]
    cpu: float
    """CPU seconds the ladder process (referee, ladder, viewer) used meanwhile."""

    def per_minute(self, player: Player) -> float:
        return sum(self.start <= t < self.end for t in player.ended) * 60 / (self.end - self.start)

    def round_trips(self) -> Latencies:
        return Latencies([s for p in self.players for t, s in p.round_trips if self.start <= t < self.end])


async def measure(players: list[Player], seconds: float, pid: int) -> Window:
    cpu = cpu_seconds(pid)
    start = time.monotonic()
    await asyncio.sleep(seconds)
    return Window(start, time.monotonic(), players, cpu_seconds(pid) - cpu)


def drain(process: subprocess.Popen[str], lines: list[str]) -> None:
    """Read the ladder's output to its end, so its pipe never fills and blocks it."""
    assert process.stdout is not None
    for line in process.stdout:
        lines.append(line)


async def bench(args: argparse.Namespace, folder: Path) -> None:
    (folder / "ladder.toml").write_text(LADDER)
    web = f"127.0.0.1:{free_port()}"
    argv = python(
        "-m", "croupier.clients.cli", "ladder", "ladder.toml", "--listen", "127.0.0.1:0", "--web", web
    )
    ladder = subprocess.Popen(
        [*argv, "--data", "data", "--plain"],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    threading.Thread(target=drain, args=(ladder, lines), daemon=True).start()
    try:
        deadline = time.monotonic() + 60
        while not any("leaderboard:" in line for line in lines):
            if ladder.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the ladder did not start:\n" + "".join(lines))
            await asyncio.sleep(0.1)
        target = next(m.group(1) for line in lines if (m := WHERE.search(line)))
        print(f"ladder at {target}, viewer at http://{web}/ladders/{NAME}", file=sys.stderr)
        think = args.move_ms / 1000
        innocents = [
            Player(await register(target, name), 2, i, think) for i, name in enumerate(("ann", "bob"))
        ]
        async with grpc.aio.insecure_channel(target) as channel:
            tasks = [asyncio.create_task(p.play(channel)) for p in innocents]
            while not all(p.ended for p in innocents):  # a set over: the ladder is under way
                if ladder.poll() is not None:
                    raise SystemExit("the ladder stopped:\n" + "".join(lines[-20:]))
                await asyncio.sleep(0.5)
            print(f"warmed up; measuring {args.seconds:g} s alone", file=sys.stderr)
            load_before = os.getloadavg()[0]
            before = await measure(innocents, args.seconds, ladder.pid)
            context = multiprocessing.get_context("spawn")
            ready, stop, out = context.Event(), context.Event(), context.Queue()
            load = context.Process(
                target=crowd,
                args=(target, f"http://{web}", args.extra, args.watchers, args.poll, ready, stop, out),
            )
            load.start()
            connecting = time.monotonic()
            await asyncio.to_thread(ready.wait, 300)
            print(
                f"{args.extra} bots connected and {args.watchers} watchers polling in "
                f"{time.monotonic() - connecting:.0f} s; measuring {args.seconds:g} s",
                file=sys.stderr,
            )
            load_during = os.getloadavg()[0]
            during = await measure(innocents, args.seconds, ladder.pid)
            stop.set()
            board = await asyncio.to_thread(out.get, True, 60)
            load.join(30)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        ladder.terminate()
        try:
            ladder.wait(15)
        except subprocess.TimeoutExpired:
            ladder.kill()
    report(args, before, during, board, (load_before, load_during))


def report(
    args: argparse.Namespace,
    before: Window,
    during: Window,
    board: tuple[float, float, int, int],
    loads: tuple[float, float],
) -> None:
    print(machine())
    print(
        f"ladder {NAME}: Platinum Fish, 2 seats, 2 innocents (random, {args.move_ms:g} ms a move, "
        f"--max-matches 2); windows of "
        f"{args.seconds:g} s; load: {args.extra} more bots (--max-matches 1), {args.watchers} watchers "
        f"each fetching the board every {args.poll:g} s"
    )
    print(f"{'':28} {'alone':>12} {'under load':>12}")
    for index, name in enumerate(("ann", "bob")):
        a, b = before.per_minute(before.players[index]), during.per_minute(during.players[index])
        kept = b / a if a else 0.0
        print(f"{name + ' matches a minute':28} {a:12.1f} {b:12.1f}   kept {kept:.0%} (wanted >= 80%)")
    trips = before.round_trips(), during.round_trips()
    for p in (50, 99):
        a, b = (t.percentile(p) / 1e3 for t in trips)
        wanted = "   (wanted within +100 ms)" if p == 99 else ""
        print(f"{f'move round trip p{p}, ms':28} {a:12.1f} {b:12.1f}   {b - a:+.1f} ms{wanted}")
    print(f"{'moves timed':28} {len(trips[0]):12,} {len(trips[1]):12,}")
    print(f"{'ladder process CPU s':28} {before.cpu:12.1f} {during.cpu:12.1f}")
    print(f"{'1-min load average at start':28} {loads[0]:12.2f} {loads[1]:12.2f}")
    p50, p99, polls, failures = board
    print(f"board fetches: {polls:,} answered, p50 {p50:.1f} ms, p99 {p99:.1f} ms, {failures} failed")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=60.0, help="each window (default 60)")
    parser.add_argument("--extra", type=int, default=100, help="bots connecting for the load (default 100)")
    parser.add_argument("--watchers", type=int, default=50, help="board pollers (default 50)")
    parser.add_argument(
        "--poll", type=float, default=1.0, help="seconds between a watcher's fetches (default 1)"
    )
    parser.add_argument(
        "--move-ms",
        type=float,
        default=20.0,
        help="an innocent's thinking before each move (default 20): bots that play, not a flood that "
        "keeps the referee's core busy, where any other process would cost matches",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ladder-load-") as folder:
        asyncio.run(bench(args, Path(folder)))


if __name__ == "__main__":
    main()
