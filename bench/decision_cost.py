"""What a decision costs the referee: its building blocks stage by stage, its messages, the match
actor's Python, and a profile of a referee under load.

Usage: python -m bench.decision_cost stages [--game NAME] [--matches 20]
       python -m bench.decision_cost messages [--matches 20] [--passes 7]
       python -m bench.decision_cost actor [--game chinese_ten] [--matches 20] [--rounds 5]
                                           [--stream batching|"protocol 1"] [--side-by-side N]
       python -m bench.decision_cost profile [--matches 64] [--seconds 5] [--layout seats|bots]
                                             [--stream "protocol 1"|batching] [--top 30]

``stages`` (no gRPC, no actor): plays whole two-player matches with the first legal action and,
at each decision, does and times what the referee does for it with its own building blocks:
decode the Move, apply it (engine), journal it (written and flushed), build the ActionResult, the
next seat's legal actions and view (engine), convert the view, events and actions to bytes
(wire.convert), build the DecisionRequest, serialize both. Wall-clock µs per stage; the last line
is CPU µs per decision over the whole loop (a busy machine inflates wall clock, not CPU).

``messages``: a decision's two messages written as bytes (wire/framing.py) against the same built
as protobuf objects (the way before framing.py: the view parsed into the request, every action
and event copied in, the whole serialized), on the same decisions, alternating in one process:
CPU µs per decision, the best of ``--passes``.

``actor``: the real match actor (server/match.py: the move read, applied, journaled on disk, the
match settled, the next request built and handed to the stream) on a clock that stands still,
with sessions that only keep what they are sent (no gRPC, no event loop), one match after
another or ``--side-by-side`` (a move of each in turn, as a referee's matches interleave): CPU µs
of ``Match.move`` per decision, min and median of the rounds. Its excess over ``stages``' sum is
the actor's own glue.

``profile``: ``croupier serve`` under cProfile with bench/trivial_bots.py's N matches; stopped
gracefully so the profile is written; the functions by own time, then the hot path's stages as
cumulative µs per decision. cProfile slows Python about twofold: read shares, not costs.

What ``bench.throughput referee`` adds to these is gRPC, asyncio and the hand-offs between.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import functools
import logging
import pstats
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

from bench.harness import Server, machine, referee_argv
from bench.trivial_bots import OPTIONS, Load, play
from croupier.engine.core import Action
from croupier.engine.games import GAMES, get_game
from croupier.engine.rng import Rng
from croupier.server.clocks import Clocks
from croupier.server.journal import Act, JournalWriter
from croupier.server.match import Match
from croupier.server.metrics import Metrics
from croupier.server.seats import Player
from croupier.server.session import Options, Session
from croupier.v1 import bots_pb2, games_pb2
from croupier.wire import convert, framing, native

MATCH_ID = "20250101-000000-abcdef"
ACCEPTED = bots_pb2.ActionResult.ACCEPTED


def result(seat: int, decision_id: int, action: bytes) -> framing.Outgoing:
    return framing.action_result(MATCH_ID, seat, decision_id, ACCEPTED, action, think_ms=1)


def request(seat: int, decision_id: int, view: bytes, actions: Any, events: Any) -> framing.Outgoing:
    return framing.decision_request(
        MATCH_ID, seat, decision_id, view, actions,
        deadline_ms=5000, time_bank_ms=30000, last_think_ms=1, events=events,
    )  # fmt: skip


# --- stages ----------------------------------------------------------------------------------------

STAGES = (
    "decode Move",
    "engine: apply",
    "journal: write + flush",
    "build ActionResult",
    "engine: legal_actions",
    "engine: view",
    "convert: view",
    "convert: events",
    "convert: legal actions",
    "build DecisionRequest",
    "serialize 2 messages",
)


def stages_of(game: str, matches: int, journal: JournalWriter) -> tuple[dict[str, float], int, float]:
    """µs per decision of each stage, the decisions timed, and CPU µs per decision of the whole loop."""
    spec = get_game(game)
    codec = convert.codec(game)
    totals: dict[str, int] = defaultdict(int)
    decisions = 0
    cpu = time.process_time()
    clock = time.perf_counter_ns
    for seed in range(matches):
        state = spec.new_game(spec.options({"players": 2}), Rng(seed))
        now = 0.0
        legal: list[Action] = []
        decision_id = 1 << 32
        while not state.is_over():
            to_act = state.to_act()
            if not to_act:  # a countdown or window: time passes (Pair Battle)
                now, _ = state.wait_for_clock(now)
                continue
            seat = min(to_act)
            legal = state.legal_actions(seat)
            wire = bots_pb2.BotMessage(
                move=bots_pb2.Move(match_id=MATCH_ID, decision_id=decision_id, index=0)
            ).SerializeToString()
            now += 0.001

            t0 = clock()
            move = bots_pb2.BotMessage.FromString(wire).move
            t1 = clock()
            action = legal[move.index]
            events = state.apply(seat, action, now)
            t2 = clock()
            journal.write(Act(now, seat, str(action), decision_id, 0.0012, 30.0))
            t3 = clock()
            accepted = result(seat, decision_id, codec.action_bytes(action))
            t4 = clock()
            if state.is_over():
                break
            following = min(state.to_act() or {seat})
            legal = state.legal_actions(following)
            t5 = clock()
            view = state.view(following)
            t6 = clock()
            view_bytes = codec.view_bytes(view)
            t7 = clock()
            event_bytes = codec.events_bytes(events)
            t8 = clock()
            action_bytes = codec.actions_bytes(legal)
            t9 = clock()
            decision_id += 1
            asked = request(following, decision_id, view_bytes, action_bytes, event_bytes)
            t10 = clock()
            for message in (accepted, asked):
                framing.serialized(message)
            t11 = clock()

            marks = (t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11)
            for stage, start, end in zip(STAGES, marks[:-1], marks[1:], strict=True):
                totals[stage] += end - start
            decisions += 1
    cpu_per_decision = (time.process_time() - cpu) / decisions * 1e6
    return {stage: totals[stage] / decisions / 1000 for stage in STAGES}, decisions, cpu_per_decision


def stages(args: argparse.Namespace) -> None:
    games = [args.game] if args.game else sorted(GAMES)
    print("µs per decision, two players, default options, first legal action each time")
    with tempfile.TemporaryDirectory(prefix="croupier-decision-cost-") as tmp:
        journal = JournalWriter(Path(tmp) / "journal.jsonl")
        results = {game: stages_of(game, args.matches, journal) for game in games}
        journal.close()
    print(f"{'stage':<36}" + "".join(f"{game:>15}" for game in games))
    for stage in STAGES:
        print(f"{stage:<36}" + "".join(f"{results[game][0][stage]:>15.1f}" for game in games))
    print(f"{'total':<36}" + "".join(f"{sum(results[game][0].values()):>15.1f}" for game in games))
    print(f"{'decisions timed':<36}" + "".join(f"{results[game][1]:>15,}" for game in games))
    print(
        f"{'CPU µs per decision, whole loop':<36}" + "".join(f"{results[game][2]:>15.1f}" for game in games)
    )


# --- messages --------------------------------------------------------------------------------------

Decision = tuple[int, int, bytes, list[Any], list[Any], Any]
"""(seat, decision id, view bytes, legal actions, the events before it, the action played)."""


def decisions(game: str, matches: int) -> list[Decision]:
    spec = get_game(game)
    codec = convert.codec(game)
    found: list[Decision] = []
    for seed in range(matches):
        state = spec.new_game(spec.options({"players": 2}), Rng(seed))
        now, events, decision_id = 0.0, list(state.opening), 1 << 32
        while not state.is_over():
            if not state.to_act():
                now, happened = state.wait_for_clock(now)
                events += happened
                continue
            seat = min(state.to_act())
            legal = state.legal_actions(seat)
            found.append((seat, decision_id, codec.view_bytes(state.view(seat)), legal, events, legal[0]))
            now += 0.001
            decision_id += 1
            events = state.apply(seat, legal[0], now)
    return found


def as_bytes(codec: convert.GameCodec, found: list[Decision]) -> None:
    for seat, decision_id, view, legal, events, action in found:
        framing.serialized(result(seat, decision_id, codec.action_bytes(action)))
        framing.serialized(
            request(seat, decision_id, view, codec.actions_bytes(legal), codec.events_bytes(events))
        )


class AsProtobuf:
    """The referee's way before framing.py, its caches of messages kept from pass to pass."""

    def __init__(self, codec: convert.GameCodec) -> None:
        self.codec = codec
        self.actions: dict[Any, games_pb2.Action] = {}
        self.events: dict[Any, games_pb2.Event] = {}

    def action(self, value: Any) -> games_pb2.Action:
        pb = self.actions.get(value)
        if pb is None:
            pb = self.actions[value] = self.codec.action(value)
        return pb

    def event(self, value: Any) -> games_pb2.Event:
        pb = self.events.get(value)
        if pb is None:
            pb = self.events[value] = self.codec.event(value)
        return pb

    def __call__(self, found: list[Decision]) -> None:
        action, event = self.action, self.event
        for seat, decision_id, view, legal, events, played in found:
            message = bots_pb2.ServerMessage()
            answer = message.action_result
            answer.match_id, answer.seat, answer.decision_id = MATCH_ID, seat, decision_id
            answer.status = ACCEPTED
            answer.action.CopyFrom(action(played))
            answer.think_ms = 1
            message.SerializeToString()
            message = bots_pb2.ServerMessage()
            asked = message.decision
            asked.match_id, asked.seat, asked.decision_id = MATCH_ID, seat, decision_id
            asked.view.MergeFromString(view)
            asked.legal_actions.extend(map(action, legal))
            asked.deadline_ms, asked.time_bank_ms, asked.last_think_ms = 5000, 30000, 1
            asked.events.extend(map(event, events))
            message.SerializeToString()


def cpu(run: Callable[[], None]) -> float:
    start = time.process_time()
    run()
    return time.process_time() - start


def messages(args: argparse.Namespace) -> None:
    print("CPU µs per decision for its ActionResult and DecisionRequest, best pass")
    print(f"{'game':<16}{'protobuf':>10}{'bytes':>10}{'bytes/protobuf':>16}")
    for game in sorted(GAMES):
        codec = convert.codec(game)
        found = decisions(game, args.matches)
        ways: dict[str, Callable[[], None]] = {
            "protobuf": functools.partial(AsProtobuf(codec), found),
            "bytes": functools.partial(as_bytes, codec, found),
        }
        # alternating, so that a busy spell slows both; the first pass of each warms its caches
        times = [{way: cpu(run) for way, run in ways.items()} for _ in range(args.passes + 1)][1:]
        pb, raw = (min(t[way] for t in times) / len(found) * 1e6 for way in ways)
        print(f"{game:<16}{pb:>10.1f}{raw:>10.1f}{raw / pb:>16.2f}")


# --- actor -----------------------------------------------------------------------------------------

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
    """A stream that keeps what it is sent, read outside the timed moves."""

    def __init__(self, name: str, options: Options) -> None:
        super().__init__(name, None, capacity=1, options=options)
        self.sent: list[framing.Outgoing] = []

    def send(self, message: framing.Outgoing) -> None:
        self.sent.append(message)

    def request(self) -> bots_pb2.DecisionRequest | None:
        """The last DecisionRequest sent since the last look (parsed here, untimed)."""
        found = None
        for message in map(framing.parsed, self.sent):
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


def played(tables: list[Table]) -> tuple[int, float]:
    """The matches played out side by side, a move of each in turn: their decisions, and the CPU
    seconds spent in ``Match.move``."""
    count, spent = 0, 0.0
    while playing := [table for table in tables if not table.over()]:
        for table in playing:
            spent += table.move()
            count += 1
    return count, spent


def actor(args: argparse.Namespace) -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    metrics = Metrics([args.game])
    rounds: list[float] = []
    with tempfile.TemporaryDirectory(prefix="croupier-match-actor-") as tmp:
        folder, stream = Path(tmp), STREAMS[args.stream]
        played([Table(folder, args.game, 10**6, stream, metrics)])  # warm-up
        for number in range(args.rounds):
            count, spent = 0, 0.0
            seeds = range(number * args.matches, (number + 1) * args.matches)
            for first in range(seeds.start, seeds.stop, args.side_by_side):
                group = range(first, min(first + args.side_by_side, seeds.stop))
                more, cpu = played([Table(folder, args.game, seed, stream, metrics) for seed in group])
                count, spent = count + more, spent + cpu
            rounds.append(spent / count * 1e6)
    print(
        f"{args.game}, {args.stream}: Match.move, CPU µs per decision over {args.rounds} rounds of "
        f"{args.matches} matches, {args.side_by_side} side by side: min {min(rounds):.1f}, "
        f"median {statistics.median(rounds):.1f}"
    )


# --- profile ---------------------------------------------------------------------------------------

UPB_MESSAGE = "google._upb._message.Message"
PROFILED: dict[str, tuple[str, str]] = {
    # stage: (file suffix, function name) whose cumulative time is the stage's
    "decode a Move (gRPC parser)": ("wire/errors.py", "parse"),
    "route a Move to its match": ("server/bot_streams.py", "_read"),
    "match job: check + apply + journal + result": ("server/moves.py", "_play"),
    "engine: apply": ("", "apply"),
    "engine: legal_actions": ("", "legal_actions"),
    "engine: view": ("", "view"),
    "convert: view -> bytes": ("wire/convert.py", "view_bytes"),
    "convert: action -> bytes": ("wire/convert.py", "action_bytes"),
    "convert: event -> bytes": ("wire/convert.py", "event_bytes"),
    "journal: write": ("server/journal.py", "write"),
    "publish: decisions and views": ("server/match.py", "_publish"),
    "build DecisionRequest": ("server/match_state.py", "_decision_message"),
    "build ViewUpdate": ("server/match_state.py", "_view_message"),
    "build ActionResult": ("server/match_state.py", "_result"),
    "metrics": ("prometheus_client/metrics.py", "inc"),
    "send to the stream's outbox": ("server/session.py", "send"),
    "encode (SerializeToString)": ("~", f"<method 'SerializeToString' of '{UPB_MESSAGE}' objects>"),
    "write a Batch": ("wire/framing.py", "batch"),
}


def stage_costs(stats: pstats.Stats, decisions: int) -> list[tuple[str, float]]:
    """Cumulative µs per decision of each stage's function (summed over the games' modules for engine)."""
    table = stats.stats  # type: ignore[attr-defined]  # pstats keeps its table in .stats
    out = []
    for stage, (suffix, name) in PROFILED.items():
        total = 0.0
        for (file, _line, function), (_cc, _nc, _tt, ct, _callers) in table.items():
            if function != name:
                continue
            if suffix == "" and "engine/games/" not in file:
                continue
            if suffix not in ("", "~") and not file.endswith(suffix):
                continue
            total += ct
        out.append((stage, total / max(1, decisions) * 1e6))
    return out


def profile(args: argparse.Namespace) -> None:
    load = Load(args.game, 2, args.matches, args.layout, args.seconds, args.stream)
    with tempfile.TemporaryDirectory(prefix="croupier-profile-") as tmp:
        out = Path(tmp) / "referee.prof"
        argv = referee_argv(Path(tmp) / "data")
        argv[1:3] = ["-m", "cProfile", "-o", str(out), "-m", "croupier.server.cli"]
        with Server(argv) as referee:
            asyncio.run(play(f"127.0.0.1:{referee.port}", load))
        # the referee stops on SIGTERM and cProfile writes the file as it exits
        stats = pstats.Stats(str(out))
        total = acts_journaled(Path(tmp) / "data")
    print(
        f"{args.game}, {args.matches} matches, {args.layout} layout, {args.stream}: {total} decisions "
        "profiled (whole run, warm-up included)"
    )
    stats.sort_stats("tottime").print_stats(args.top)
    print(f"{'stage (cumulative, overlapping)':<46} {'µs/decision':>11}")
    for stage, us in stage_costs(stats, total):
        print(f"{stage:<46} {us:>11.1f}")


def acts_journaled(data: Path) -> int:
    """Every bot action the referee accepted in the run, from the journals."""
    count = 0
    for journal in (data / "matches").glob("*.jsonl"):
        with journal.open(encoding="utf-8") as file:
            count += sum(1 for line in file if line.startswith('{"t":"act"'))
    return count


# --- the command line ------------------------------------------------------------------------------


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    each = {
        "stages": commands.add_parser("stages", help="the building blocks, stage by stage"),
        "messages": commands.add_parser("messages", help="a decision's messages: bytes against protobuf"),
        "actor": commands.add_parser("actor", help="the match actor's Python, no gRPC"),
        "profile": commands.add_parser("profile", help="cProfile of a referee under trivial bots"),
    }
    each["stages"].add_argument("--game", choices=sorted(GAMES), help="one game (default: every game)")
    turn_based = sorted(g for g in GAMES if g != "pair_battle")
    each["actor"].add_argument("--game", default="chinese_ten", choices=turn_based)
    each["profile"].add_argument("--game", default="chinese_ten", choices=sorted(GAMES))
    for name in ("stages", "messages", "actor"):
        each[name].add_argument("--matches", type=int, default=20, help="matches per game or round (20)")
    each["messages"].add_argument("--passes", type=int, default=7, help="passes each way (7)")
    each["actor"].add_argument("--rounds", type=int, default=5, help="rounds (5)")
    each["actor"].add_argument(
        "--side-by-side", type=int, default=1, metavar="N",
        help="matches in play at once, a move of each in turn (1: one after another)",
    )  # fmt: skip
    each["actor"].add_argument("--stream", choices=list(STREAMS), default="batching")
    each["profile"].add_argument("--matches", type=int, default=64, help="matches kept running (64)")
    each["profile"].add_argument("--seconds", type=float, default=5.0, help="measured seconds (5)")
    each["profile"].add_argument("--layout", choices=("seats", "bots"), default="seats")
    each["profile"].add_argument("--stream", choices=list(OPTIONS), default="protocol 1")
    each["profile"].add_argument("--top", type=int, default=30, help="functions listed (30)")
    return parser.parse_args()


def main() -> None:
    args = arguments()
    print(machine())
    print(f"hot path: {native.build()}")
    {"stages": stages, "messages": messages, "actor": actor, "profile": profile}[args.command](args)


if __name__ == "__main__":
    main()
