"""The bare ceiling: a grpc.aio bidirectional-stream ping-pong with decision-sized messages.

Each stream sends a bot's Move (the real message, index 0) and waits for a real
DecisionRequest-sized ServerMessage back, over and over: one round trip per decision, with no
rules, no views and no journal. The relay (RELAY) pairs the streams and answers each Move on the
partner stream, as the seat layout's moves are: what the hand-off between two streams' tasks
costs is the difference between the two.

``python -m bench.throughput ceiling`` measures it; the referee's and the workers' figures
(``bench.throughput referee``, ``workers``) are read as fractions of it, in the same run. The
server runs in its own process: ``python -m bench.grpc_ceiling ADDRESS`` (``ceiling_server()``).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc

from bench.harness import Latencies, Server, cpu_seconds, python
from croupier.engine.games import get_game
from croupier.engine.rng import Rng
from croupier.v1 import bots_pb2
from croupier.wire import convert
from croupier.wire.framing import decision_request

METHOD = "/croupier.bench.Ceiling/PingPong"
RELAY = "/croupier.bench.Ceiling/Relay"
"""Each ping answered on another stream, its partner's (named in the call's metadata): the seat
layout's transport, where a move comes on one seat's stream and the next DecisionRequest goes out
on the other's. Each stream has a reader task and a writer fed by a queue, as the referee's have."""
SAMPLE_GAME = "chinese_ten"


def decision_sample(game: str = SAMPLE_GAME, players: int = 2, seed: int = 1) -> bots_pb2.ServerMessage:
    """A real DecisionRequest of median size over one match of ``game`` (first legal action each time)."""
    spec = get_game(game)
    codec = convert.codec(game)
    state = spec.new_game(spec.options({"players": players}), Rng(seed))
    requests = []
    decision_id = 1 << 32
    while not state.is_over():
        seat = min(state.to_act())
        legal = state.legal_actions(seat)
        decision_id += 1
        requests.append(
            bots_pb2.ServerMessage.FromString(
                decision_request(
                    "20250101-000000-abcdef",
                    seat,
                    decision_id,
                    codec.view_bytes(state.view(seat)),
                    codec.actions_bytes(legal),
                    deadline_ms=5000,
                    time_bank_ms=30000,
                    last_think_ms=0,
                    events=[],
                )
            )
        )
        state.apply(seat, legal[0])
    requests.sort(key=lambda m: m.ByteSize())
    return requests[len(requests) // 2]


def move_sample() -> bots_pb2.BotMessage:
    return bots_pb2.BotMessage(
        move=bots_pb2.Move(match_id="20250101-000000-abcdef", decision_id=(1 << 32) + 1, index=0)
    )


# --- the server ---------------------------------------------------------------------------------


async def serve(address: str) -> None:
    reply = decision_sample()

    async def ping_pong(
        requests: AsyncIterator[bots_pb2.BotMessage], context: Any
    ) -> AsyncIterator[bots_pb2.ServerMessage]:
        async for _ in requests:
            yield reply

    pairs: dict[str, tuple[asyncio.Queue[bots_pb2.ServerMessage], ...]] = {}

    async def relay(
        requests: AsyncIterator[bots_pb2.BotMessage], context: Any
    ) -> AsyncIterator[bots_pb2.ServerMessage]:
        asked = dict(context.invocation_metadata())
        queues = pairs.setdefault(asked["pair"], (asyncio.Queue(), asyncio.Queue()))
        side = int(asked["side"])
        mine, partner = queues[side], queues[1 - side]

        async def read() -> None:
            async for _ in requests:
                partner.put_nowait(reply)

        reader = asyncio.get_running_loop().create_task(read())
        try:
            while True:
                yield await mine.get()
        finally:
            reader.cancel()
            pairs.pop(asked["pair"], None)

    handlers = {
        name.rsplit("/", 1)[1]: grpc.stream_stream_rpc_method_handler(
            behaviour, bots_pb2.BotMessage.FromString, bots_pb2.ServerMessage.SerializeToString
        )
        for name, behaviour in ((METHOD, ping_pong), (RELAY, relay))
    }
    server = grpc.aio.server()
    service = METHOD.strip("/").split("/")[0]
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))
    port = server.add_insecure_port(address)
    await server.start()
    print(f"ceiling: serving on 127.0.0.1:{port}", flush=True)
    await server.wait_for_termination()


# --- the load ------------------------------------------------------------------------------------


@dataclass
class Figures:
    streams: int
    round_trips: int
    seconds: float
    latencies: Latencies
    server_cpu: float

    @property
    def per_second(self) -> float:
        return self.round_trips / self.seconds

    @property
    def server_cpu_us(self) -> float:
        """Server CPU microseconds per round trip."""
        return self.server_cpu / self.round_trips * 1e6


async def load(
    port: int,
    streams: int,
    seconds: float,
    server_pid: int,
    warmup: float = 0.5,
    relay: bool = False,
) -> Figures:
    """``streams`` concurrent ping-pong streams for ``seconds`` (after ``warmup``); bounded in time.
    ``relay``: as many pairs of streams, each ping answered on the partner's (see RELAY): a round
    trip is a hop, and a latency is two (from a stream's Move to the message its partner's Move
    brings back)."""
    if relay:
        return await _relay_load(port, streams, seconds, server_pid, warmup)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call_factory = channel.stream_stream(
            METHOD, bots_pb2.BotMessage.SerializeToString, bots_pb2.ServerMessage.FromString
        )
        move = move_sample()
        loop = asyncio.get_running_loop()
        start = loop.time()
        measure_from = start + warmup
        stop_at = measure_from + seconds
        counts = [0] * streams
        latencies = [Latencies() for _ in range(streams)]

        async def one(index: int) -> None:
            call = call_factory()
            lat = latencies[index]
            while (sent := loop.time()) < stop_at:
                await call.write(move)
                await call.read()
                if sent >= measure_from:
                    lat.add(loop.time() - sent)
                    counts[index] += 1
            await call.done_writing()
            call.cancel()

        await asyncio.sleep(0)
        cpu_before, *_ = await asyncio.gather(
            _cpu_seconds_at(measure_from, server_pid), *(one(i) for i in range(streams))
        )
        cpu = cpu_seconds(server_pid) - cpu_before
        return Figures(streams, sum(counts), seconds, Latencies.merged(latencies), cpu)


async def _relay_load(port: int, pairs: int, seconds: float, server_pid: int, warmup: float) -> Figures:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call_factory = channel.stream_stream(
            RELAY, bots_pb2.BotMessage.SerializeToString, bots_pb2.ServerMessage.FromString
        )
        move = move_sample()
        loop = asyncio.get_running_loop()
        measure_from = loop.time() + warmup
        stop_at = measure_from + seconds
        counts = [0] * pairs
        latencies = [Latencies() for _ in range(pairs)]

        async def side(pair: int, index: int) -> None:
            """One of a pair's streams: answers each message its partner's move brought."""
            call = call_factory(metadata=(("pair", str(pair)), ("side", str(index))))
            if index == 0:
                await call.write(move)
            sent = loop.time()
            while loop.time() < stop_at:
                await call.read()
                if sent >= measure_from:
                    latencies[pair].add(loop.time() - sent)
                    counts[pair] += 1
                sent = loop.time()
                await call.write(move)
            call.cancel()

        sides = [loop.create_task(side(p, i)) for p in range(pairs) for i in (0, 1)]
        cpu_before = await _cpu_seconds_at(measure_from, server_pid)
        await asyncio.sleep(max(0.0, stop_at - loop.time()))
        cpu = cpu_seconds(server_pid) - cpu_before
        await asyncio.wait(sides, timeout=1.0)  # a side whose partner stopped first waits for good
        for task in sides:
            task.cancel()
        await asyncio.gather(*sides, return_exceptions=True)
        return Figures(pairs, sum(counts), seconds, Latencies.merged(latencies), cpu)


async def _cpu_seconds_at(when: float, pid: int) -> float:
    """The process's CPU seconds so far, read at loop time ``when`` (the window's opening)."""
    loop = asyncio.get_running_loop()
    await asyncio.sleep(max(0.0, when - loop.time()))
    return cpu_seconds(pid)


def row(figures: Figures, kind: str = "ping-pong") -> str:
    lat = figures.latencies
    return (
        f"{figures.streams:>7} {kind:>9} {figures.per_second:>12,.0f} {lat.percentile(50):>9,.0f} "
        f"{lat.percentile(99):>9,.0f} {figures.server_cpu_us:>11,.1f}"
    )


HEADER = f"{'streams':>7} {'kind':>9} {'round trips/s':>12} {'p50 µs':>9} {'p99 µs':>9} {'server µs/rt':>11}"
"""A relay's streams column counts its pairs (the streams in flight), and a round trip is a hop."""


def ceiling_server() -> Server:
    """The ceiling's server in its own process."""
    return Server(python("-m", "bench.grpc_ceiling", "127.0.0.1:0"))


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1]))
