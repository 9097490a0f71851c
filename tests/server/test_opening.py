"""The events of a match's start (Spoil Five's cut and antes, Platinum Fish's deal rolls) reach every
bot and spectator once, and stay in the record."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from croupier.engine.rng import Rng
from croupier.v1 import games_pb2, spectator_pb2
from croupier.wire import convert
from tests.server.botclient import ADMIN, WAIT, Admin, Bot

Kind = spectator_pb2.Step.Kind


def first_events(message: object) -> list[games_pb2.Event]:
    """The events of a bot's first ViewUpdate or DecisionRequest."""
    kind = message.WhichOneof("message")  # type: ignore[attr-defined]
    assert kind in ("view_update", "decision"), f"unexpected {kind}"
    return list(getattr(message, kind).events)


def kinds(events: list[games_pb2.Event], game: str) -> set[str]:
    return {getattr(e, game).WhichOneof("event") for e in events}


@pytest.mark.parametrize(
    ("game", "players", "expected_kinds"),
    [
        ("spoil_five", 3, {"cut", "dealer_chosen", "antes_paid", "deal_started"}),
        ("platinum_fish", 2, {"dealt"}),
    ],
)
async def test_bots_and_spectators_are_told_how_the_match_opened_once(
    channel: grpc.aio.Channel, admin: Admin, game: str, players: int, expected_kinds: set[str]
) -> None:
    created = await admin.create(game, players, seed=11)
    match_id = created.match.match_id
    codec = convert.codec(game)
    options = codec.spec.options({"players": players})
    opening = [codec.event(e) for e in codec.spec.new_game(options, Rng(11)).opening]
    assert expected_kinds <= kinds(opening, game)

    # a spectator watching before the start: the live start frame carries them
    watch = admin.spectator.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id, from_start=True))
    bots = [Bot(channel, token) for token in created.seat_tokens]
    for bot in bots:
        await bot.hello()
    start = await asyncio.wait_for(watch.read(), WAIT)
    watch.cancel()
    assert start.step.kind == Kind.START
    assert list(start.events) == opening

    for bot in bots:
        await bot.expect("match_started")
        assert first_events(await bot.read()) == opening

    # the record (re-run from the journal) has them in its start frame too
    record = await admin.spectator.GetRecord(
        spectator_pb2.GetRecordRequest(match_id=match_id), metadata=ADMIN
    )
    assert record.frames[0].step.kind == Kind.START
    assert list(record.frames[0].events) == opening

    # a bot that reconnects is told where the match is, not the opening again
    await bots[0].close()
    again = Bot(channel, created.seat_tokens[0])
    await again.hello()
    resumed = (await again.expect("match_started")).match_started
    assert resumed.resumed
    assert first_events(await again.read()) == []
    await again.close()
    for bot in bots[1:]:
        await bot.close()
