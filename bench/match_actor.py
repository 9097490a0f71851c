"""The match actor's CPU per decision, without gRPC: a move through ``Match.move`` to the next request.

Usage: python -m bench.match_actor [--game chinese_ten] [--matches 20] [--rounds 5]
                                   [--stream "protocol 1"|batching]

Plays whole two-player matches through the real match actor (server/match.py: the move read,
applied, journaled on disk, the match settled, the next DecisionRequest built and handed to the
stream) on a hand-driven clock, with sessions that only keep the last request (no gRPC, no
event loop). Each bot answers index 0. Prints the CPU time of ``Match.move`` per decision, the
minimum and median of the rounds: what the referee's own Python costs per decision, beside
bench/hot_path.py's building blocks (their sum is the engine and the messages; the rest is the
actor's glue) and bench/referee_throughput.py's whole referee.
"""

from __future__ import annotations

import argparse
import contextvars
import logging
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import structlog

from bench.harness import machine
from croupier.engine.games import GAMES, get_game
from croupier.server import native
from croupier.server.clocks import Clocks
from croupier.server.framing import Outgoing, parsed
from croupier.server.match import Match
from croupier.server.metrics import Metrics
from croupier.server.seats import Player
from croupier.server.session import Options, Session
from croupier.v1 import bots_pb2

STREAMS = {"protocol 1": Options(), "batching": Options(True, True, True)}


class Call:
    def __init__(self, clock: StillClock, callback: Callable[[], None], context: contextvars.Context) -> None:
        self.callback, self.context, self.cancelled = callback, context, False
        clock.due.append(self)

    def cancel(self) -> None:
        self.cancelled = True


class StillClock:
    """Time that stands still: callbacks wait for ``run`` (timers never come due)."""

    def __init__(self) -> None:
        self.due: list[Call] = []

    def time(self) -> float:
        return 1000.0

    def call_soon(self, callback: Callable[[], None], context: contextvars.Context) -> Call:
        return Call(self, callback, context)

    def call_at(self, when: float, callback: Callable[[], None], context: contextvars.Context) -> Call:
        return Call(self, callback, context) if when <= self.time() else _never

    def off_loop(self, work: Callable[[], None]) -> None:
        work()

    def run(self) -> None:
        while self.due:
            call = self.due.pop(0)
            if not call.cancelled:
                call.context.run(call.callback)


class _Never:
    def cancel(self) -> None:
        pass


_never = _Never()


class Bot(Session):
    """A stream that keeps the last DecisionRequest it was sent."""

    def __init__(self, name: str, options: Options) -> None:
        super().__init__(name, None, capacity=1, options=options)
        self.sent: list[Outgoing] = []
        """What the match sent since the last look: read outside the timed moves."""

    def send(self, message: Outgoing) -> None:
        self.sent.append(message)

    def request(self) -> bots_pb2.DecisionRequest | None:
        """The last DecisionRequest sent since the last look (parsed here, untimed)."""
        found = None
        for message in map(parsed, self.sent):
            if message.WhichOneof("message") == "decision":
                found = message.decision
        self.sent.clear()
        return found


def play(folder: Path, game: str, seed: int, options: Options, metrics: Metrics) -> tuple[int, float]:
    """One match played out: its decisions, and the CPU seconds spent in ``Match.move``."""
    spec = get_game(game)
    clock = StillClock()
    bots = [Bot(f"p{i}", options) for i in range(2)]
    match = Match(
        match_id=f"bench-{seed}",
        spec=spec,
        options=spec.options({"players": 2}),
        seed=seed,
        clocks=Clocks(),
        players=[Player(f"p{i}", "", f"token{i}") for i in range(2)],
        created_ms=0,
        journal_path=folder / f"bench-{seed}.jsonl",
        metrics=metrics,
        on_released=lambda _match, _seat: None,
        on_finished=lambda _match: None,
        clock=clock,
    )
    match.create()
    match.start_actor()
    for index, bot in enumerate(bots):
        match.attach(bot, index)
    clock.run()
    decisions, spent = 0, 0.0
    requests: list[bots_pb2.DecisionRequest | None] = [None] * len(bots)
    while not match.done.is_set():
        for i, bot in enumerate(bots):
            if (sent := bot.request()) is not None:
                requests[i] = sent
        asked = [i for i, request in enumerate(requests) if request is not None]
        if not asked:
            raise RuntimeError(f"{game}: nobody is asked to decide (a game that waits on time?)")
        bot, request = bots[asked[0]], requests[asked[0]]
        requests[asked[0]] = None
        assert request is not None  # for mypy: asked holds only seats with one
        move = bots_pb2.Move(match_id=match.id, decision_id=request.decision_id, index=0)
        started = time.process_time()
        match.move(bot, move)
        spent += time.process_time() - started
        decisions += 1
        clock.run()
    return decisions, spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--game", default="chinese_ten", choices=sorted(g for g in GAMES if g != "pair_battle")
    )
    parser.add_argument("--matches", type=int, default=20, help="matches per round (default 20)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    parser.add_argument(
        "--stream", choices=list(STREAMS), default="batching", help="the bots' stream options"
    )
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    print(machine())
    print(f"hot path: {native.build()}")
    metrics = Metrics([args.game])
    rounds: list[float] = []
    with tempfile.TemporaryDirectory(prefix="croupier-match-actor-") as tmp:
        play(Path(tmp), args.game, 10**6, STREAMS[args.stream], metrics)  # warm-up
        for number in range(args.rounds):
            decisions, spent = 0, 0.0
            for seed in range(number * args.matches, (number + 1) * args.matches):
                played, cpu = play(Path(tmp), args.game, seed, STREAMS[args.stream], metrics)
                decisions, spent = decisions + played, spent + cpu
            rounds.append(spent / decisions * 1e6)
    print(
        f"{args.game}, {args.stream}: Match.move, CPU µs per decision over {args.rounds} rounds of "
        f"{args.matches} matches: min {min(rounds):.1f}, median {statistics.median(rounds):.1f}"
    )


if __name__ == "__main__":
    main()
