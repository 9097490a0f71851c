"""The match actor's CPU per decision, without gRPC: a move through ``Match.move`` to the next request.

Usage: python -m bench.match_actor [--game chinese_ten] [--matches 20] [--rounds 5]
                                   [--stream "protocol 1"|batching] [--side-by-side N]

Plays whole two-player matches through the real match actor (server/match.py: the move read,
applied, journaled on disk, the match settled, the next DecisionRequest built and handed to the
stream) on a hand-driven clock, with sessions that only keep the last request (no gRPC, no
event loop), one after another or ``--side-by-side`` (a move of each in turn, as a referee's
matches interleave). Each bot answers index 0. Prints the CPU time of ``Match.move`` per
decision, the minimum and median of the rounds: what the referee's own Python costs per decision, beside
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
from croupier.server.clocks import Clocks
from croupier.server.match import Match
from croupier.server.metrics import Metrics
from croupier.server.seats import Player
from croupier.server.session import Options, Session
from croupier.v1 import bots_pb2
from croupier.wire import native
from croupier.wire.framing import Outgoing, parsed

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


class Table:
    """One match and its two bots, played one move at a time."""

    def __init__(self, folder: Path, game: str, seed: int, options: Options, metrics: Metrics) -> None:
        spec = get_game(game)
        self.game = game
        self.clock = StillClock()
        self.bots = [Bot(f"p{i}", options) for i in range(2)]
        self.match = Match(
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
            clock=self.clock,
        )
        self.match.create()
        self.match.start_actor()
        for index, bot in enumerate(self.bots):
            self.match.attach(bot, index)
        self.clock.run()
        self.requests: list[bots_pb2.DecisionRequest | None] = [None] * len(self.bots)

    def over(self) -> bool:
        return self.match.done.is_set()

    def move(self) -> float:
        """The next move (index 0): the CPU seconds spent in ``Match.move``."""
        for i, bot in enumerate(self.bots):
            if (sent := bot.request()) is not None:
                self.requests[i] = sent
        asked = [i for i, request in enumerate(self.requests) if request is not None]
        if not asked:
            raise RuntimeError(f"{self.game}: nobody is asked to decide (a game that waits on time?)")
        bot, request = self.bots[asked[0]], self.requests[asked[0]]
        self.requests[asked[0]] = None
        assert request is not None  # for mypy: asked holds only seats with one
        move = bots_pb2.Move(match_id=self.match.id, decision_id=request.decision_id, index=0)
        started = time.process_time()
        self.match.move(bot, move)
        spent = time.process_time() - started
        self.clock.run()
        return spent


def play(tables: list[Table]) -> tuple[int, float]:
    """The matches played out side by side, a move of each in turn, as a referee's matches
    interleave: their decisions, and the CPU seconds spent in ``Match.move``."""
    decisions, spent = 0, 0.0
    while playing := [table for table in tables if not table.over()]:
        for table in playing:
            spent += table.move()
            decisions += 1
    return decisions, spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--game", default="chinese_ten", choices=sorted(g for g in GAMES if g != "pair_battle")
    )
    parser.add_argument("--matches", type=int, default=20, help="matches per round (default 20)")
    parser.add_argument(
        "--side-by-side",
        type=int,
        default=1,
        metavar="N",
        help="matches in play at once, a move of each in turn (default 1: one after another)",
    )
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
        folder, stream = Path(tmp), STREAMS[args.stream]
        play([Table(folder, args.game, 10**6, stream, metrics)])  # warm-up
        for number in range(args.rounds):
            decisions, spent = 0, 0.0
            seeds = range(number * args.matches, (number + 1) * args.matches)
            for first in range(seeds.start, seeds.stop, args.side_by_side):
                group = range(first, min(first + args.side_by_side, seeds.stop))
                played, cpu = play([Table(folder, args.game, seed, stream, metrics) for seed in group])
                decisions, spent = decisions + played, spent + cpu
            rounds.append(spent / decisions * 1e6)
    print(
        f"{args.game}, {args.stream}: Match.move, CPU µs per decision over {args.rounds} rounds of "
        f"{args.matches} matches, {args.side_by_side} side by side: min {min(rounds):.1f}, "
        f"median {statistics.median(rounds):.1f}"
    )


if __name__ == "__main__":
    main()
