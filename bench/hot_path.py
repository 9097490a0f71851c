"""The referee's work per decision, stage by stage, without gRPC: what each part of the hot path costs.

Usage: python -m bench.hot_path [--game NAME] [--matches N]

Plays whole two-player matches with the first legal action and, at every
decision, does and times what the referee does for it, with the referee's
own building blocks (the engine, server.convert, the journal writer, the
messages of server.messages):
  decode the bot's Move (protobuf), read the action, apply it (engine),
  journal the record (JSON line, written and flushed), build the ActionResult,
  list the next seat's legal actions, build its view (engine), convert it and
  the events (server.convert), build the DecisionRequest, and serialize the
  two messages (the mover hears of its move from the ActionResult alone;
  server.framing writes both as bytes, so the last stage is nearly nothing).
bench/referee_throughput.py measures the whole referee's CPU per decision
under load; what it adds to this sum is gRPC, asyncio and the glue between.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from bench.harness import machine
from croupier.engine.core import Action
from croupier.engine.games import GAMES, get_game
from croupier.engine.rng import Rng
from croupier.server.journal import Act, JournalWriter
from croupier.v1 import bots_pb2
from croupier.wire import convert, framing, native

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


def measure(game: str, matches: int, journal: JournalWriter) -> tuple[dict[str, float], int, float]:
    spec = get_game(game)
    codec = convert.codec(game)
    totals: dict[str, int] = defaultdict(int)
    decisions = 0
    cpu = time.process_time()
    clock = time.perf_counter_ns
    match_id = "20250101-000000-abcdef"
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
                move=bots_pb2.Move(match_id=match_id, decision_id=decision_id, index=0)
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
            accepted = bots_pb2.ActionResult.ACCEPTED
            result = framing.action_result(
                match_id, seat, decision_id, accepted, codec.action_bytes(action), think_ms=1
            )
            t4 = clock()
            if state.is_over():
                break
            following = min(state.to_act() or {seat})
            legal = state.legal_actions(following)
            t5 = clock()
            view = state.view(following)
            t6 = clock()
            decision_view = codec.view_bytes(view)
            t7 = clock()
            event_bytes = codec.events_bytes(events)
            t8 = clock()
            action_bytes = codec.actions_bytes(legal)
            t9 = clock()
            decision_id += 1
            request = framing.decision_request(
                match_id,
                following,
                decision_id,
                decision_view,
                action_bytes,
                deadline_ms=5000,
                time_bank_ms=30000,
                last_think_ms=1,
                events=event_bytes,
            )
            t10 = clock()
            for message in (result, request):
                framing.serialized(message)
            t11 = clock()

            marks = (t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11)
            for stage, start, end in zip(STAGES, marks[:-1], marks[1:], strict=True):
                totals[stage] += end - start
            decisions += 1
    cpu_per_decision = (time.process_time() - cpu) / decisions * 1e6
    return {stage: totals[stage] / decisions / 1000 for stage in STAGES}, decisions, cpu_per_decision


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=sorted(GAMES), help="one game (default: every game)")
    parser.add_argument("--matches", type=int, default=20, help="matches per game (default 20)")
    args = parser.parse_args()
    games = [args.game] if args.game else sorted(GAMES)
    print(machine())
    print(f"hot path: {native.build()}")
    print("µs per decision, two players, default options, first legal action each time")
    with tempfile.TemporaryDirectory(prefix="croupier-hot-path-") as tmp:
        journal = JournalWriter(Path(tmp) / "journal.jsonl")
        results = {game: measure(game, args.matches, journal) for game in games}
        journal.close()
    print(f"{'stage':<36}" + "".join(f"{game:>15}" for game in games))
    for stage in STAGES:
        print(f"{stage:<36}" + "".join(f"{results[game][0][stage]:>15.1f}" for game in games))
    print(f"{'total':<36}" + "".join(f"{sum(results[game][0].values()):>15.1f}" for game in games))
    print(f"{'decisions timed':<36}" + "".join(f"{results[game][1]:>15,}" for game in games))
    # the stages are wall-clock time, which a busy machine inflates; this is CPU time, whole matches
    print(
        f"{'CPU µs per decision, whole loop':<36}" + "".join(f"{results[game][2]:>15.1f}" for game in games)
    )


if __name__ == "__main__":
    main()
