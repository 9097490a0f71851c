"""Whole matches of every game, played over the wire by scripted bots."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest
from croupier.v1 import match_pb2

from engine.games import GAMES
from server import convert
from server.app import Croupier
from server.journal import replay_journal
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
    assert sum(r["t"] == "act" for r in records) > 0
    for bot in bots:
        await bot.close()
