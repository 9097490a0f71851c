"""Soak: hundreds of concurrent matches of every game for a bounded time, on loopback.

Usage: python -m bench.soak [--matches 200] [--seconds 60]

A referee runs in its own process (journals on disk, its log kept); this
process keeps N matches going, the four games in turn, two bots a match (one
stream per seat) choosing random legal actions at once; each finished match is
replaced. At the end it reports what went wrong (expected: nothing) and the
latency bots saw, and exits 1 if anything did:

- errors: refused actions, timeouts, forfeits, Error messages, broken streams,
  matches that did not end with every seat playing, errors in the referee's log,
  a referee that died or stopped answering health checks;
- not errors: a real-time game's answer to a decision the referee had already
  replaced (Pair Battle sends a new request whenever a view changes), counted apart.
Every loop ends by the deadline; nothing runs after it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.harness import (
    ADMIN,
    TOKEN,
    Latencies,
    Server,
    cpu_seconds,
    create_request,
    machine,
    referee_argv,
    rss_bytes,
)
from croupier.v1 import admin_pb2, admin_pb2_grpc, bots_pb2, bots_pb2_grpc

MAX_SECONDS = 3600.0
GAMES: dict[str, dict[str, object]] = {
    "chinese_ten": {"target": 300},
    "pair_battle": {},
    "platinum_fish": {},
    "spoil_five": {},
}
"""The games played in turn, two players each, with these options (defaults otherwise)."""
Result = bots_pb2.ActionResult


@dataclass
class Tally:
    decisions: int = 0
    matches: int = 0
    stale: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    latency: Latencies = field(default_factory=Latencies)
    per_game: Counter[str] = field(default_factory=Counter)

    def error(self, kind: str, example: str) -> None:
        self.errors[kind] += 1
        self.examples.setdefault(kind, example[:300])


class Soak:
    def __init__(self, channel: grpc.aio.Channel, matches: int, stop_at: float, tally: Tally) -> None:
        self.admin = admin_pb2_grpc.AdminServiceStub(channel)
        self.bots = bots_pb2_grpc.BotServiceStub(channel)
        self.matches = matches
        self.stop_at = stop_at
        self.tally = tally
        self.loop = asyncio.get_running_loop()

    async def run(self) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout_at(self.stop_at), asyncio.TaskGroup() as group:
                for slot in range(self.matches):
                    group.create_task(self.slot(slot))

    async def slot(self, slot: int) -> None:
        names = sorted(GAMES)
        for k in range(1_000_000):
            game = names[(slot + k) % len(names)]
            seats = [admin_pb2.SeatSpec(name=f"soak-{slot}-{i}") for i in range(2)]
            request = create_request(game, seats, slot * 1_000_000 + k, **GAMES[game])
            created = await self.admin.CreateMatch(request, metadata=ADMIN)
            rng = random.Random(slot * 1_000_000 + k)
            ended = await asyncio.gather(*(self.seat(token, rng) for token in created.seat_tokens))
            result = ended[0].result
            if any(seat.forfeited or seat.timeouts or seat.refusals for seat in result.seats):
                self.tally.error("match with a penalty", str(result))
            self.tally.matches += 1
            self.tally.per_game[game] += 1

    async def seat(self, token: str, rng: random.Random) -> bots_pb2.MatchEnded:
        call = self.bots.Play(metadata=[(TOKEN, token)])
        sent: dict[int, float] = {}
        try:
            await call.write(bots_pb2.BotMessage(hello=bots_pb2.Hello(protocol_version=1, name="soak")))
            while True:
                message = await call.read()
                if message is grpc.aio.EOF:
                    raise RuntimeError("the referee ended a bot stream before its match ended")
                kind = message.WhichOneof("message")
                if kind == "decision":
                    decision = message.decision
                    index = rng.randrange(len(decision.legal_actions))
                    sent[decision.decision_id] = self.loop.time()
                    move = bots_pb2.Move(
                        match_id=decision.match_id, decision_id=decision.decision_id, index=index
                    )
                    await call.write(bots_pb2.BotMessage(move=move))
                elif kind == "action_result":
                    result = message.action_result
                    started = sent.pop(result.decision_id, None)
                    if result.status == Result.ACCEPTED:
                        self.tally.decisions += 1
                        if started is not None:
                            self.tally.latency.add(self.loop.time() - started)
                    else:
                        self.tally.error(f"action {Result.Status.Name(result.status)}", str(result))
                elif kind == "error":
                    error = message.error
                    if error.code == bots_pb2.Error.FAILED_PRECONDITION and "is not open" in error.message:
                        self.tally.stale += 1  # a real-time decision replaced before our answer landed
                    else:
                        self.tally.error(f"error {bots_pb2.Error.Code.Name(error.code)}", error.message)
                elif kind == "seat_forfeited":
                    self.tally.error("seat forfeited", str(message.seat_forfeited))
                elif kind == "match_ended":
                    return message.match_ended
        except grpc.aio.AioRpcError as exc:
            self.tally.error("stream broken", f"{exc.code().name}: {exc.details()}")
            raise
        finally:
            call.cancel()


async def healthy(port: int) -> bool:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
        return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


async def soak(referee: Server, matches: int, seconds: float, log: Path) -> int:
    tally = Tally()
    loop = asyncio.get_running_loop()
    cpu_before = cpu_seconds(referee.pid)
    started = time.monotonic()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}") as channel:
        runner = Soak(channel, matches, loop.time() + seconds, tally)
        try:
            await runner.run()
        except* Exception as group:
            for exc in group.exceptions:
                tally.error(f"load failure {type(exc).__name__}", str(exc))
    elapsed = time.monotonic() - started
    alive = referee.process is not None and referee.process.poll() is None
    if not alive:
        tally.error("referee died", f"exit status {referee.process.poll() if referee.process else '?'}")
    elif not await healthy(referee.port):
        tally.error("referee not serving", "health check did not say SERVING")
    log_errors = [line for line in log.read_text(encoding="utf-8").splitlines() if '"level": "error"' in line]
    for line in log_errors:
        tally.error("referee log error", line)
    cpu = cpu_seconds(referee.pid) - cpu_before if alive else 0.0
    rss = rss_bytes(referee.pid) if alive else 0
    lat = tally.latency
    games = ", ".join(f"{game} {count}" for game, count in sorted(tally.per_game.items()))
    print(
        f"{matches} concurrent matches for {elapsed:.0f} s: {tally.matches:,} matches finished ({games}), "
        f"{tally.decisions:,} decisions ({tally.decisions / elapsed:,.0f}/s)"
    )
    print(
        f"decision round trip (move to accepted): p50 {lat.percentile(50) / 1000:,.1f} ms, "
        f"p99 {lat.percentile(99) / 1000:,.1f} ms, max {lat.percentile(100) / 1000:,.1f} ms"
    )
    print(
        f"referee: {cpu / elapsed:.0%} of a core, {rss / 2**20:.0f} MiB resident at the end; "
        f"stale real-time answers (not errors): {tally.stale:,}"
    )
    total = sum(tally.errors.values())
    print(f"errors: {total}")
    for kind, count in tally.errors.most_common():
        print(f"  {count:>6} {kind}: {tally.examples[kind]}")
    return 1 if total else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=200, help="concurrent matches (default 200)")
    parser.add_argument(
        "--seconds", type=float, default=60.0, help=f"how long (default 60, at most {MAX_SECONDS:g})"
    )
    args = parser.parse_args()
    seconds = min(args.seconds, MAX_SECONDS)
    print(machine())
    with tempfile.TemporaryDirectory(prefix="croupier-soak-") as tmp:
        log = Path(tmp) / "referee.log"
        with (
            log.open("w", encoding="utf-8") as log_file,
            Server(referee_argv(Path(tmp) / "data"), stderr=log_file) as ref,
        ):
            code = asyncio.run(soak(ref, args.matches, seconds, log))
    sys.exit(code)


if __name__ == "__main__":
    main()
