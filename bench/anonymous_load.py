"""Anonymous load against a live match: does one spectator slow everyone else?

Usage: python -m bench.anonymous_load [--seconds S] [--watchers N] [--replays N]
                                      [--listed N] [--source DIR]

A referee runs in its own process (``croupier serve``, journals on disk). Two
prompt bots play a long live match (Spoil Five for two, 1000 deals; index 0 at
once, 250 ms per decision, no bank) while, in another process, anonymous
clients do one of:

- quiet: nothing;
- watchers: N WatchMatch streams on the live match that never read (8 per
  connection);
- replays: N clients calling GetRecord of a finished 10-player Spoil Five
  match in a loop, each on its own connection;
- listing: N clients calling ListMatches (no page size) in a loop, with
  ``--listed`` matches on the referee.

For each it prints the live match's decisions/s, the round trip from a bot's
Move to the next DecisionRequest (p50, p99, max), the live match's timeouts,
and what the load got (streams held, calls answered, calls refused).
``--source`` runs the referee from another checkout (its gen/ built), for
before-and-after figures: ``git archive main | tar -x -C /tmp/before``, then
``python proto/build_stubs.py`` there (``gen --links`` in a checkout older than the committed namespace).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import grpc

from bench.harness import ADMIN, TOKEN, Latencies, Server, create_request, machine, python, referee_argv
from croupier.v1 import (
    admin_pb2,
    admin_pb2_grpc,
    bots_pb2,
    bots_pb2_grpc,
    match_pb2,
    spectator_pb2,
    spectator_pb2_grpc,
)

LOADS = ("quiet", "watchers", "replays", "listing")
PER_CONNECTION = 8


def own_connection(port: int) -> grpc.aio.Channel:
    options = [("grpc.use_local_subchannel_pool", 1), ("grpc.max_receive_message_length", 1 << 28)]
    return grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=options)


async def play(
    channel: grpc.aio.Channel, tokens: list[str], seconds: float, latencies: Latencies, counts: Counter[str]
) -> None:
    """Both seats answer index 0 at once until ``seconds`` pass; round trips go to ``latencies``."""
    stub = bots_pb2_grpc.BotServiceStub(channel)
    loop = asyncio.get_running_loop()
    sent: list[float] = []

    async def seat(seat_token: str) -> None:
        call = stub.Play(metadata=[(TOKEN, seat_token)])
        try:
            await call.write(bots_pb2.BotMessage(hello=bots_pb2.Hello(protocol_version=1)))
            while (message := await call.read()) is not grpc.aio.EOF:
                kind = message.WhichOneof("message")
                if kind == "decision":
                    if sent:
                        latencies.add(loop.time() - sent.pop())
                    counts["decisions"] += 1
                    move = bots_pb2.Move(
                        match_id=message.decision.match_id, decision_id=message.decision.decision_id
                    )
                    move.index = 0
                    sent[:] = [loop.time()]
                    await call.write(bots_pb2.BotMessage(move=move))
                elif (
                    kind == "action_result"
                    and message.action_result.status == bots_pb2.ActionResult.TIMED_OUT
                ):
                    counts["timeouts"] += 1
                elif kind == "match_ended":
                    counts["ended"] += 1
                    return
        finally:
            call.cancel()

    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await asyncio.gather(*(seat(t) for t in tokens))


async def finished_record(admin: admin_pb2_grpc.AdminServiceStub, channel: grpc.aio.Channel) -> str:
    """A whole 10-player Spoil Five match, played at once: the record the replay load asks for."""
    seats = [admin_pb2.SeatSpec(name=f"r{i}") for i in range(10)]
    created = await admin.CreateMatch(create_request("spoil_five", seats, seed=11), metadata=ADMIN)
    await play(channel, list(created.seat_tokens), 600, Latencies(), Counter())
    return str(created.match.match_id)


async def scenario(port: int, load: str, args: argparse.Namespace, record: str) -> dict[str, object]:
    async with own_connection(port) as channel:
        admin = admin_pb2_grpc.AdminServiceStub(channel)
        seats = [admin_pb2.SeatSpec(name="a"), admin_pb2.SeatSpec(name="b")]
        request = create_request("spoil_five", seats, seed=5, deals=1000)
        request.clocks.CopyFrom(match_pb2.Clocks(decision_ms=250, bank_ms=0, max_timeouts=1000))
        live = await admin.CreateMatch(request, metadata=ADMIN)
        loader = await asyncio.create_subprocess_exec(
            *python("-m", "bench.anonymous_load", "--load-for", str(port), load, live.match.match_id, record,
                    str(args.watchers if load == "watchers" else args.replays), str(args.seconds + 30)),
            stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert loader.stdout is not None
        await loader.stdout.readline()  # the load is on
        latencies, counts = Latencies(), Counter[str]()
        started = time.monotonic()
        await play(channel, list(live.seat_tokens), args.seconds, latencies, counts)
        elapsed = time.monotonic() - started
        loader.terminate()
        got = json.loads((await loader.stdout.read()).decode() or "{}")
        await loader.wait()
        await admin.CancelMatch(
            admin_pb2.CancelMatchRequest(match_id=live.match.match_id, reason="bench"), metadata=ADMIN
        )
    return {
        "load": load,
        "decisions/s": counts["decisions"] / elapsed,
        "p50 ms": latencies.percentile(50) / 1000,
        "p99 ms": latencies.percentile(99) / 1000,
        "max ms": max(latencies.samples, default=0.0) * 1000,
        "timeouts": counts["timeouts"],
        "load got": got,
    }


async def generate_load(port: int, load: str, live: str, record: str, n: int, seconds: float) -> None:
    """In its own process: the anonymous load, until terminated; prints what it got as JSON."""
    got: Counter[str] = Counter()
    channels: list[grpc.aio.Channel] = []
    tasks: list[asyncio.Task[None]] = []
    calls: list[object] = []

    def channel() -> grpc.aio.Channel:
        channels.append(own_connection(port))
        return channels[-1]

    async def replay_loop(stub: spectator_pb2_grpc.SpectatorServiceStub) -> None:
        while True:
            try:
                await stub.GetRecord(spectator_pb2.GetRecordRequest(match_id=record))
                got["records"] += 1
            except grpc.aio.AioRpcError as exc:
                got[exc.code().name] += 1
                await asyncio.sleep(0.05)

    async def list_loop(stub: spectator_pb2_grpc.SpectatorServiceStub) -> None:
        while True:
            reply = await stub.ListMatches(spectator_pb2.ListMatchesRequest())
            got["listings"] += 1
            got["matches listed"] = len(reply.matches)

    if load == "watchers":
        for k in range(n):
            if k % PER_CONNECTION == 0:
                stub = spectator_pb2_grpc.SpectatorServiceStub(channel())
            call = stub.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=live))
            calls.append(call)
        await asyncio.sleep(1)  # every stream is open (or refused) before play is measured
    elif load in ("replays", "listing"):
        loop_of = replay_loop if load == "replays" else list_loop
        tasks = [
            asyncio.ensure_future(loop_of(spectator_pb2_grpc.SpectatorServiceStub(channel())))
            for _ in range(n)
        ]
    print("loading", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(15, stop.set)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
    for call in calls:
        done = call.done()  # type: ignore[attr-defined]
        got["streams refused" if done else "streams held"] += 1
    for task in tasks:
        task.cancel()
    print(json.dumps(dict(got)), flush=True)
    os._exit(0)  # the channels' shutdown is not what is measured


async def main(args: argparse.Namespace) -> None:
    print(machine())
    source = Path(args.source).resolve() if args.source else None
    env = None
    if source is not None:
        env = {**os.environ, "PYTHONPATH": str(source / "gen")}
    with tempfile.TemporaryDirectory() as data, Server(referee_argv(Path(data)), env=env) as referee:
        async with own_connection(referee.port) as channel:
            admin = admin_pb2_grpc.AdminServiceStub(channel)
            record = await finished_record(admin, channel)
            if "listing" in args.loads:
                seats = [admin_pb2.SeatSpec(name="w0"), admin_pb2.SeatSpec(name="w1")]
                for k in range(args.listed):  # seeds apart from the loads' own: a twin deal seals a match
                    listed = create_request("chinese_ten", seats, seed=1_000_000 + k)
                    await admin.CreateMatch(listed, metadata=ADMIN)
        print(
            f"referee from {source or 'this checkout'}; {args.seconds:g} s per load; {args.watchers} "
            f"watchers, {args.replays} replay or listing clients, {args.listed} matches listed"
        )
        print("| load | decisions/s | round trip p50 ms | p99 ms | max ms | timeouts | the load got |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
        for load in args.loads:
            row = await scenario(referee.port, load, args, record)
            print(
                f"| {row['load']} | {row['decisions/s']:,.0f} | {row['p50 ms']:.2f} | {row['p99 ms']:.1f} "
                f"| {row['max ms']:.0f} | {row['timeouts']} | {row['load got']} |",
                flush=True,
            )


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--watchers", type=int, default=1000)
    parser.add_argument("--replays", type=int, default=10)
    parser.add_argument("--listed", type=int, default=2000)
    parser.add_argument("--loads", default=",".join(LOADS), type=lambda text: text.split(","))
    parser.add_argument("--source", help="run the referee from this checkout (for before-and-after figures)")
    parser.add_argument("--load-for", nargs=6, help=argparse.SUPPRESS)
    return parser.parse_args()


if __name__ == "__main__":
    arguments = parse()
    if arguments.load_for:
        port, load, live, record, n, seconds = arguments.load_for
        asyncio.run(generate_load(int(port), load, live, record, int(n), float(seconds)))
    sys.exit(asyncio.run(main(arguments)))
