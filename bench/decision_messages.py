"""A decision's messages written as bytes (wire/framing.py) against the same built as protobuf
objects, on the same decisions, alternating in one process: CPU µs per decision, the best pass.

Usage: python -m bench.decision_messages [--matches N] [--passes N]

For every decision of whole two-player matches (first legal action each time), both ways build
what the referee sends for it with every stream option off: the mover's ActionResult and the next
seat's DecisionRequest (its view, legal actions and the move's events), serialized. The protobuf
way is what the referee did before framing.py: actions and events cached as messages by value,
the view parsed into the request, every part copied in, the whole serialized. The best of
``--passes`` alternating passes is kept: a pass a busy machine slowed is not.
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable
from typing import Any

from bench.harness import machine
from croupier.engine.games import GAMES, get_game
from croupier.engine.rng import Rng
from croupier.v1 import bots_pb2, games_pb2
from croupier.wire import convert, framing, native

MATCH_ID = "20250101-000000-abcdef"
ACCEPTED = bots_pb2.ActionResult.ACCEPTED
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
        played = codec.action_bytes(action)
        result = framing.action_result(MATCH_ID, seat, decision_id, ACCEPTED, played, think_ms=1)
        request = framing.decision_request(
            MATCH_ID,
            seat,
            decision_id,
            view,
            codec.actions_bytes(legal),
            deadline_ms=5000,
            time_bank_ms=30000,
            last_think_ms=1,
            events=codec.events_bytes(events),
        )
        framing.serialized(result)
        framing.serialized(request)


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
            result = message.action_result
            result.match_id, result.seat, result.decision_id = MATCH_ID, seat, decision_id
            result.status = ACCEPTED
            result.action.CopyFrom(action(played))
            result.think_ms = 1
            message.SerializeToString()
            message = bots_pb2.ServerMessage()
            request = message.decision
            request.match_id, request.seat, request.decision_id = MATCH_ID, seat, decision_id
            request.view.MergeFromString(view)
            request.legal_actions.extend(map(action, legal))
            request.deadline_ms, request.time_bank_ms, request.last_think_ms = 5000, 30000, 1
            request.events.extend(map(event, events))
            message.SerializeToString()


def cpu(run: Callable[[], None]) -> float:
    start = time.process_time()
    run()
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=20, help="matches per game (default 20)")
    parser.add_argument("--passes", type=int, default=7, help="passes each way (default 7)")
    args = parser.parse_args()
    print(machine())
    print(f"hot path: {native.build()}")
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


if __name__ == "__main__":
    main()
