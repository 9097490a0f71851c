"""Matches dealt the same cards: while one of them can still be played, nobody but the admin sees
another's seed, result or record. Attacked as an anonymous client would, with raw stubs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest

from croupier.engine.games import get_game
from croupier.engine.rng import Rng
from croupier.server.app import Croupier
from croupier.server.journal import apply_record, read_records, seed_sha256
from croupier.v1 import admin_pb2, bots_pb2, match_pb2, spectator_pb2, spectator_pb2_grpc
from croupier.wire import convert
from tests.server.botclient import ADMIN, WAIT, Admin, Bot, random_legal

GAME, OPTIONS, SEED = "platinum_fish", {"players": 2}, 424242


@pytest.fixture
async def anonymous(referee: Croupier) -> AsyncIterator[spectator_pb2_grpc.SpectatorServiceStub]:
    """A client of its own, with no token at all."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}") as channel:
        yield spectator_pb2_grpc.SpectatorServiceStub(channel)


async def play_to_the_end(channel: grpc.aio.Channel, tokens: list[str]) -> list[bots_pb2.MatchEnded]:
    bots = [Bot(channel, token) for token in tokens]
    for bot in bots:
        await bot.hello()
    ended = await asyncio.gather(*(bot.play(random_legal(seat)) for seat, bot in enumerate(bots)))
    for bot in bots:
        await bot.close()
    return [match[0] for match in ended]


async def refused(call: object) -> grpc.StatusCode:
    """The status code of a call that must fail (a unary call, or a stream read to its end)."""
    with pytest.raises(grpc.aio.AioRpcError) as error:
        if isinstance(call, grpc.aio.UnaryStreamCall):
            while await asyncio.wait_for(call.read(), WAIT) is not grpc.aio.EOF:
                pass
        else:
            await call  # type: ignore[misc]
    code: grpc.StatusCode = error.value.code()
    return code


def listed(reply: spectator_pb2.ListMatchesResponse, match_id: str) -> match_pb2.MatchInfo:
    return next(info for info in reply.matches if info.match_id == match_id)


def end_views(referee: Croupier, match_id: str) -> tuple[list[object], object]:
    """Each seat's own view and the full view at the end, from the journal through the engine."""
    records = read_records(referee.referee.matches_dir / f"{match_id}.jsonl")
    spec = get_game(GAME)
    state = spec.new_game(spec.options(records[0].options), Rng(records[-1].seed))
    for record in records:
        apply_record(spec, state, record)
    codec = convert.codec(GAME)
    return [codec.view(state.view(seat)) for seat in range(2)], codec.view(state.full_view())


async def test_a_finished_twin_shows_anyone_nothing_while_its_twin_can_still_be_played(
    referee: Croupier,
    channel: grpc.aio.Channel,
    admin: Admin,
    anonymous: spectator_pb2_grpc.SpectatorServiceStub,
) -> None:
    played = await admin.create(GAME, 2, OPTIONS, seed=SEED)
    waiting = await admin.create(GAME, 2, OPTIONS, seed=SEED)  # its twin, by hand: nobody plays it yet
    match_id = played.match.match_id
    ended = await play_to_the_end(channel, list(played.seat_tokens))
    assert (await admin.wait(match_id)).status == match_pb2.MATCH_STATUS_FINISHED

    # its own bots are told how it ended, but shown only what their seat saw, not every hand
    own, full = end_views(referee, match_id)
    assert [end.view for end in ended] == own and all(view != full for view in own)

    # the attacker: the listing, the record, a replay; then the same asks with a guessed "token"
    info = listed(await anonymous.ListMatches(spectator_pb2.ListMatchesRequest()), match_id)
    assert info.status == match_pb2.MATCH_STATUS_FINISHED
    assert info.seed_sha256 == waiting.match.seed_sha256 == seed_sha256(SEED)  # the commitment stays
    assert not info.HasField("seed") and not info.HasField("result")
    record = spectator_pb2.GetRecordRequest(match_id=match_id)
    assert await refused(anonymous.GetRecord(record)) == grpc.StatusCode.FAILED_PRECONDITION
    watch = spectator_pb2.WatchMatchRequest(match_id=match_id, from_start=True)
    assert await refused(anonymous.WatchMatch(watch)) == grpc.StatusCode.FAILED_PRECONDITION
    guessed = [("croupier-token", "admin")]
    assert await refused(anonymous.GetRecord(record, metadata=guessed)) == grpc.StatusCode.FAILED_PRECONDITION

    # the admin sees everything
    assert (await admin.spectator.GetRecord(record, metadata=ADMIN)).info.seed == SEED

    # once the twin is over (here called off), the finished match is anyone's to read
    await admin.stub.CancelMatch(
        admin_pb2.CancelMatchRequest(match_id=waiting.match.match_id, reason="test"), metadata=ADMIN
    )
    opened = await anonymous.GetRecord(record)
    assert opened.info.seed == SEED and opened.frames[-1].view == full
    assert listed(await anonymous.ListMatches(spectator_pb2.ListMatchesRequest()), match_id).seed == SEED


async def test_twins_waiting_or_live_cannot_be_watched_or_read_by_anyone_but_the_admin(
    admin: Admin, anonymous: spectator_pb2_grpc.SpectatorServiceStub
) -> None:
    first = await admin.create(GAME, 2, OPTIONS, seed=SEED)
    second = await admin.create(GAME, 2, OPTIONS, seed=SEED)
    lone = await admin.create(GAME, 2, OPTIONS, seed=SEED + 1)
    for created in (first, second):
        watch = spectator_pb2.WatchMatchRequest(match_id=created.match.match_id, from_start=True)
        assert await refused(anonymous.WatchMatch(watch)) == grpc.StatusCode.FAILED_PRECONDITION
        record = spectator_pb2.GetRecordRequest(match_id=created.match.match_id)
        assert await refused(anonymous.GetRecord(record)) == grpc.StatusCode.FAILED_PRECONDITION
    # a match dealt cards of its own can be watched as always; the admin watches the twins
    stream = anonymous.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=lone.match.match_id))
    assert (await stream.read()).match_id == lone.match.match_id
    stream.cancel()
    admin_stream = admin.spectator.WatchMatch(
        spectator_pb2.WatchMatchRequest(match_id=first.match.match_id), metadata=ADMIN
    )
    assert (await admin_stream.read()).match_id == first.match.match_id
    admin_stream.cancel()


async def test_a_spectator_watching_is_cut_off_when_a_twin_is_dealt(
    channel: grpc.aio.Channel, admin: Admin, anonymous: spectator_pb2_grpc.SpectatorServiceStub
) -> None:
    watched = await admin.create(GAME, 2, OPTIONS, seed=SEED)
    stream = anonymous.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=watched.match.match_id))
    await stream.read()  # the snapshot: nothing sealed yet
    await admin.create(GAME, 2, OPTIONS, seed=SEED)
    play = asyncio.create_task(play_to_the_end(channel, list(watched.seat_tokens)))
    assert await refused(stream) == grpc.StatusCode.FAILED_PRECONDITION
    await play
