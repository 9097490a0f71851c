"""Whole matches of every game, played over the wire by scripted bots."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from croupier.engine.games import GAMES, get_game
from croupier.server.app import Croupier
from croupier.server.journal import Record
from croupier.server.messages import replay_frames
from croupier.server.replay import replay_journal
from croupier.v1 import bots_pb2, games_pb2, match_pb2
from croupier.wire import convert
from tests.server.botclient import Admin, Bot, random_legal

SHORT: dict[str, list[dict[str, Any]]] = {
    "chinese_ten": [{"players": 3, "target": 100}, {"players": 2, "scoring": "red_frog", "target": 100}],
    "spoil_five": [{"players": 3, "deals": 2}, {"players": 4, "deals": 2, "ranking": "classic"}],
    "platinum_fish": [{"players": 2}, {"players": 3, "ask": "named", "targets": "faces_and_sum"}],
    "pair_battle": [
        {"players": 2, "countdown_tick": 0.0},
        {"players": 3, "countdown_tick": 0.01, "window": 0.0},
        {"players": 4, "timing": "lockstep"},
    ],
}
"""Short variants of each game (every registered game must have some)."""

CASES = [(game, options) for game in GAMES for options in SHORT[game]]


def test_every_game_has_a_short_variant() -> None:
    assert set(SHORT) == set(GAMES)


@pytest.mark.parametrize(("game", "options"), CASES, ids=[f"{g}-{i}" for i, (g, _) in enumerate(CASES)])
async def test_a_full_match_is_played_to_its_result(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin, game: str, options: dict[str, Any]
) -> None:
    created = await admin.create(game, options["players"], options, seed=11)
    match_id = created.match.match_id
    assert created.match.status == match_pb2.MATCH_STATUS_WAITING
    bots = [Bot(channel, tok, name=f"p{i}") for i, tok in enumerate(created.seat_tokens)]
    for bot in bots:
        await bot.hello()
    ended = await asyncio.gather(*(bot.play(random_legal(i)) for i, bot in enumerate(bots)))

    info = await admin.wait(match_id)
    assert info.status == match_pb2.MATCH_STATUS_FINISHED
    result = info.result
    for seat, (bot, [match_end]) in enumerate(zip(bots, ended, strict=True)):
        started = bot.of_kind("match_started")
        assert [(s.match_id, s.seat, s.resumed) for s in started] == [(match_id, seat, False)]
        assert match_end.result == result
        assert match_end.seat == seat
    # the referee's result is the engine's, re-run from the journal with the revealed seed
    state, records = replay_journal(referee.referee.matches_dir / f"{match_id}.jsonl")
    outcome = state.outcome()
    assert [s.score for s in result.seats] == list(outcome.scores)
    assert [s.place for s in result.seats] == list(outcome.places)
    assert info.seed_sha256 and info.HasField("seed")
    # the final view every bot receives shows everything: it is the engine's full view
    codec = convert.codec(game)
    assert codec.view_from_proto(ended[0][0].view) == state.full_view()
    assert sum(r.KIND == "act" for r in records) > 0
    # every bot is told every event of the match once, in order (its own moves' with its next message)
    for bot in bots:
        assert events_told(bot.received) == events_of(game, records)
    for bot in bots:
        await bot.close()


def events_told(received: list[bots_pb2.ServerMessage]) -> list[games_pb2.Event]:
    """The events a bot was sent, in the order it received them."""
    told = []
    for message in received:
        kind = message.WhichOneof("message")
        if kind in ("view_update", "decision", "match_ended"):
            told.extend(getattr(message, kind).events)
    return told


def events_of(game: str, records: list[Record]) -> list[games_pb2.Event]:
    """Every event of a finished match, re-run from its journal (as an admin's replay shows them)."""
    spec = get_game(game)
    options = spec.options(records[0].options)
    frames = replay_frames(spec, options, records[-1].seed, records, reveal=True)
    return [event for frame in frames for event in frame.events]


async def test_a_bot_hears_of_its_own_move_from_its_result_and_of_its_events_with_its_next_request(
    channel: grpc.aio.Channel, admin: Admin
) -> None:
    """No ViewUpdate follows a bot's accepted move (its ActionResult told it): in a two-player
    game a decision is three messages, and the move's events come with the bot's next request."""
    created = await admin.create("chinese_ten", 2, {"target": 100}, seed=5)
    seat0, seat1 = (Bot(channel, tok, name=f"p{i}") for i, tok in enumerate(created.seat_tokens))
    for bot in (seat0, seat1):
        await bot.hello()
    first = (await seat1.expect("decision")).decision  # seat 1, left of the dealer, leads
    await seat1.move(match_id=first.match_id, decision_id=first.decision_id, index=0)
    result = (await seat1.read()).action_result
    assert result.status == bots_pb2.ActionResult.ACCEPTED

    await seat0.expect("decision")
    second = seat0.received[-1].decision
    own_events = list(second.events)  # seat 1's play, as seat 0 is told of it
    assert own_events
    await seat0.move(match_id=second.match_id, decision_id=second.decision_id, index=0)
    assert (await seat0.read()).action_result.status == bots_pb2.ActionResult.ACCEPTED

    message = await seat1.read()
    assert message.WhichOneof("message") == "decision"
    assert list(message.decision.events[: len(own_events)]) == own_events
    assert len(message.decision.events) > len(own_events)  # then seat 0's play
    for bot in (seat0, seat1):
        await bot.close()
