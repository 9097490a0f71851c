"""The web viewer under a crowd: one ``croupier web`` serving N browsers (server-sent events
clients) watching one live match, and how long each frame takes to reach them.

Usage: python -m bench.web_viewers [--viewers 100] [--seconds 20] [--move-ms 20] [--players 4]

A referee (``croupier serve``) and ``croupier web`` run in their own processes. This process
plays one long Spoil Five match (40 deals) with bots that wait ``--move-ms`` before each move
(a match that looks like play, not a flood), watches it directly over gRPC as a spectator (the
reference clock), and keeps N event-stream clients reading the viewer's live stream of it. A
frame's delivery time is from the moment the direct gRPC spectator has it to the moment a
viewer has it: what the web viewer adds (its own gRPC stream, the JSON, the fan-out, HTTP),
plus this process's own reading of N streams. Every viewer must get every frame sent after it
joined; the figures say how many did.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import re
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import grpc

from bench.harness import ADMIN, Server, cpu_seconds, machine, python, referee_argv, rss_bytes
from croupier.clients.bots import RandomBot
from croupier.clients.sdk import Client, Match
from croupier.v1 import admin_pb2, admin_pb2_grpc, match_pb2, spectator_pb2, spectator_pb2_grpc
from croupier.wire import convert

SCENE_SEQ = re.compile(rb'"scene":\{"seq":(\d+)')
"""A frame's number in a viewer's message, read without parsing the whole JSON."""


def play_bots(referee: str, tokens: list[str], delay: float) -> None:
    """The match's bots, in a process of their own (so they do not share the viewers' core)."""

    class Paced(RandomBot):
        async def choose(self, view: Any, legal: list[Any]) -> int:  # type: ignore[override]
            await asyncio.sleep(delay)
            return super().choose(view, legal)

    def factory(match: Match) -> RandomBot:
        return Paced(match)

    async def play() -> None:
        await asyncio.gather(*(Client(factory, referee, [t], stop_after=1).run() for t in tokens))

    asyncio.run(play())


GAME = "spoil_five"
LONG = {"deals": 40, "bank": 200}
"""Enough deals that the match outlasts the measurement."""


async def create(target: str, players: int) -> admin_pb2.CreateMatchResponse:
    codec = convert.codec(GAME)
    async with grpc.aio.insecure_channel(target) as channel:
        stub = admin_pb2_grpc.AdminServiceStub(channel)
        request = admin_pb2.CreateMatchRequest(
            options=codec.options(codec.spec.options({"players": players, **LONG})),
            seats=[admin_pb2.SeatSpec(name=f"bot{i}") for i in range(players)],
            clocks=match_pb2.Clocks(decision_ms=60_000, bank_ms=60_000),
        )
        response: admin_pb2.CreateMatchResponse = await stub.CreateMatch(request, metadata=ADMIN)
        return response


async def reference(target: str, match_id: str, seen: dict[int, float], stop: asyncio.Event) -> None:
    """The direct gRPC spectator: when each frame (by its journal number) reached this process."""
    async with grpc.aio.insecure_channel(target) as channel:
        stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
        async for frame in stub.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id)):
            seen.setdefault(frame.seq, time.monotonic())
            if stop.is_set():
                break


async def viewer(url: str, got: dict[int, float], joined: list[float], stop: asyncio.Event) -> None:
    """One browser's event stream: when each frame arrived."""
    timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
    async with aiohttp.ClientSession(timeout=timeout) as session, session.get(url) as response:
        joined.append(time.monotonic())
        pending = b""
        async for chunk in response.content.iter_any():  # whatever arrived: cheaper than by line
            now = time.monotonic()
            pending += chunk
            complete, _, pending = pending.rpartition(b"\n\n")
            for found in SCENE_SEQ.finditer(complete):
                got.setdefault(int(found.group(1)), now)
            if b"event: end" in complete or stop.is_set():
                return


async def run(args: argparse.Namespace, referee: str, web: str, web_pid: int) -> None:
    created = await create(referee, args.players)
    match_id = created.match.match_id
    bots = multiprocessing.get_context("spawn").Process(
        target=play_bots, args=(referee, list(created.seat_tokens), args.move_ms / 1000), daemon=True
    )
    bots.start()
    stop = asyncio.Event()
    seen: dict[int, float] = {}
    watching = asyncio.create_task(reference(referee, match_id, seen, stop))
    await asyncio.sleep(0.5)  # the match is under way: viewers join a live match
    url = f"http://{web}/api/matches/{match_id}/live"
    received: list[dict[int, float]] = [{} for _ in range(args.viewers)]
    joined: list[float] = []
    readers = [asyncio.create_task(viewer(url, got, joined, stop)) for got in received]
    while len(joined) < args.viewers:
        await asyncio.sleep(0.05)
    start = time.monotonic() + 0.5  # frames from here on: every viewer is reading
    cpu_before = cpu_seconds(web_pid)
    await asyncio.sleep(args.seconds)
    end = time.monotonic()
    cpu = cpu_seconds(web_pid) - cpu_before
    stop.set()
    await asyncio.sleep(1.0)  # frames of the window still on their way
    for task in [*readers, watching]:
        task.cancel()
    await asyncio.gather(*readers, watching, return_exceptions=True)
    bots.terminate()

    frames = {seq: at for seq, at in seen.items() if start <= at <= end}
    delays = [got[seq] - at for got in received for seq, at in frames.items() if seq in got]
    missing = sum(seq not in got for got in received for seq in frames)
    delays.sort()

    def pct(p: float) -> float:
        return 1000 * delays[min(len(delays) - 1, int(p / 100 * len(delays)))] if delays else 0.0

    print(f"{machine()}")
    print(
        f"{GAME}, {args.players} players, a move every {args.move_ms} ms: {len(frames)} frames "
        f"in {end - start:.1f} s ({len(frames) / (end - start):.0f}/s) to {args.viewers} viewers"
    )
    print(
        f"delivered {len(delays):,} of {len(frames) * args.viewers:,} frame-viewer pairs "
        f"(missing {missing}); delay after the direct gRPC spectator: p50 {pct(50):.1f} ms, "
        f"p90 {pct(90):.1f} ms, p99 {pct(99):.1f} ms, max {pct(100):.1f} ms"
        + (f", mean {1000 * statistics.fmean(delays):.1f} ms" if delays else "")
    )
    print(
        f"croupier web: {100 * cpu / (end - start):.0f}% of a core, "
        f"{rss_bytes(web_pid) / 1e6:.0f} MB resident"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--viewers", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--move-ms", type=int, default=20, help="each bot's pause before a move")
    parser.add_argument("--players", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, Server(referee_argv(Path(folder) / "data")) as referee:
        target = f"127.0.0.1:{referee.port}"
        web_argv = python("-m", "croupier.clients.cli", "web", "--server", target, "--address", "127.0.0.1:0")
        with Server([*web_argv, "--data", folder]) as web:
            asyncio.run(run(args, target, f"127.0.0.1:{web.port}", web.pid))


if __name__ == "__main__":
    main()
