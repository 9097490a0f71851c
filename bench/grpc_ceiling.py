"""The raw ceiling: a bare grpc.aio bidirectional-stream ping-pong with decision-sized messages.

Usage: python -m bench.grpc_ceiling [--streams 1,64,512] [--seconds S] [--runs N] [--relay]

Each stream sends a bot's Move (the real message, index 0) and waits for a
real DecisionRequest-sized ServerMessage back, over and over: one round trip
per decision, with no rules, no views and no journal. The server runs in its
own process (``--serve``), like the referee in bench/referee_throughput.py,
whose figures are read as a fraction of these.

``--relay`` alternates each level's ping-pong with the relay (RELAY): as many
pairs of streams, each Move answered on the partner stream, as the seat
layout's moves are. What the hand-off between two streams' tasks costs is the
difference between the two rows.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc

from bench.harness import Latencies, Server, cpu_seconds, machine, python, spread
from croupier.engine.games import get_game
from croupier.engine.rng import Rng
from croupier.v1 import bots_pb2
from croupier.wire import convert
from croupier.wire.framing import action_result, decision_request

METHOD = "/croupier.bench.Ceiling/PingPong"
SHAPED = "/croupier.bench.Ceiling/Shaped"
"""Each ping answered with the messages a referee sends per decision in a two-player game: the
mover's ActionResult and the next seat's DecisionRequest (here on one stream)."""
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


def shaped_replies() -> list[bots_pb2.ServerMessage]:
    """An ActionResult and a DecisionRequest, sized like the real ones."""
    decision = decision_sample()
    asked = decision.decision
    accepted = bots_pb2.ActionResult.ACCEPTED
    action = asked.legal_actions[0].SerializeToString()
    result = bots_pb2.ServerMessage.FromString(
        action_result(asked.match_id, 1, asked.decision_id, accepted, action, think_ms=1)
    )
    return [result, decision]


async def serve(address: str) -> None:
    reply = decision_sample()
    shaped = shaped_replies()

    async def ping_pong(
        requests: AsyncIterator[bots_pb2.BotMessage], context: Any
    ) -> AsyncIterator[bots_pb2.ServerMessage]:
        async for _ in requests:
            yield reply

    async def shaped_pong(
        requests: AsyncIterator[bots_pb2.BotMessage], context: Any
    ) -> AsyncIterator[bots_pb2.ServerMessage]:
        async for _ in requests:
            for message in shaped:
                yield message

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
        for name, behaviour in ((METHOD, ping_pong), (SHAPED, shaped_pong), (RELAY, relay))
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
    shaped: bool = False,
    relay: bool = False,
) -> Figures:
    """``streams`` concurrent ping-pong streams for ``seconds`` (after ``warmup``); bounded in time.
    ``shaped``: each ping is answered with a decision's messages (see SHAPED). ``relay``: as many
    pairs of streams, each ping answered on the partner's (see RELAY): a round trip is a hop, and a
    latency is two (from a stream's Move to the message its partner's Move brings back)."""
    if relay:
        return await _relay_load(port, streams, seconds, server_pid, warmup)
    replies = len(shaped_replies()) if shaped else 1
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call_factory = channel.stream_stream(
            SHAPED if shaped else METHOD,
            bots_pb2.BotMessage.SerializeToString,
            bots_pb2.ServerMessage.FromString,
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
                for _ in range(replies):
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
        return Figures(streams, sum(counts), seconds, _merged(latencies), cpu)


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
        return Figures(pairs, sum(counts), seconds, _merged(latencies), cpu)


async def _cpu_seconds_at(when: float, pid: int) -> float:
    """The process's CPU seconds so far, read at loop time ``when`` (the window's opening)."""
    loop = asyncio.get_running_loop()
    await asyncio.sleep(max(0.0, when - loop.time()))
    return cpu_seconds(pid)


def _merged(latencies: list[Latencies]) -> Latencies:
    merged = Latencies()
    for each in latencies:
        merged.extend(each)
    return merged


def row(figures: Figures, kind: str = "ping-pong") -> str:
    lat = figures.latencies
    return (
        f"{figures.streams:>7} {kind:>9} {figures.per_second:>12,.0f} {lat.percentile(50):>9,.0f} "
        f"{lat.percentile(99):>9,.0f} {figures.server_cpu_us:>11,.1f}"
    )


HEADER = f"{'streams':>7} {'kind':>9} {'round trips/s':>12} {'p50 µs':>9} {'p99 µs':>9} {'server µs/rt':>11}"
"""A relay's streams column counts its pairs (the streams in flight), and a round trip is a hop."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", default="1,64,512", help="comma-separated concurrency levels")
    parser.add_argument("--seconds", type=float, default=3.0, help="measured time per level (default 3)")
    parser.add_argument("--runs", type=int, default=3, help="runs per level (default 3)")
    parser.add_argument(
        "--relay", action="store_true", help="alternate each ping-pong with the relay between paired streams"
    )
    parser.add_argument("--serve", metavar="ADDRESS", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.serve))
        return
    asyncio.run(run(args))


async def run(args: argparse.Namespace) -> None:
    levels = [int(x) for x in args.streams.split(",")]
    reply, move = decision_sample(), move_sample()
    print(machine())
    print(f"ping {move.ByteSize()} B (a Move), pong {reply.ByteSize()} B (a median {SAMPLE_GAME} decision)")
    print(HEADER)
    with Server(python("-m", "bench.grpc_ceiling", "--serve", "127.0.0.1:0")) as server:
        kinds = ("ping-pong", "relay") if args.relay else ("ping-pong",)
        for streams in levels:
            rates: dict[str, list[float]] = {kind: [] for kind in kinds}
            for _ in range(args.runs):
                for kind in kinds:
                    relay = kind == "relay"
                    figures = await load(server.port, streams, args.seconds, server.pid, relay=relay)
                    rates[kind].append(figures.per_second)
                    print(row(figures, kind), flush=True)
            for kind, values in rates.items():
                if len(values) > 1:
                    print(
                        f"{'':>7} {kind}: median {spread(values)} round trips/s, "
                        f"stdev {statistics.pstdev(values):,.0f}"
                    )


if __name__ == "__main__":
    main()
