"""The organiser's spectator token (``referee.organiser_token``): it watches a sealed match while
it runs and sees exactly what anyone sees of a match dealt cards of its own (public views, no seed,
nothing revealed at the end while a twin plays on), and nothing else the admin token may do.
Anonymous callers, guessed tokens, bot and seat tokens stay sealed out. Raw stubs, as an attacker
would have them."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from croupier.engine.games import get_game
from croupier.engine.rng import Rng
from croupier.server.app import Croupier
from croupier.server.journal import apply_record, read_records
from croupier.server.messages import shown
from croupier.server.referee import ORGANISER_PREFIX, organiser_token
from croupier.v1 import admin_pb2, admin_pb2_grpc, spectator_pb2, spectator_pb2_grpc
from croupier.wire import convert
from tests.server.botclient import ADMIN_TOKEN, WAIT, Admin, Bot, token
from tests.server.test_sealed_deals import GAME, OPTIONS, SEED, listed, play_to_the_end, refused

ORGANISER = token(organiser_token(ADMIN_TOKEN))
Code = grpc.StatusCode


def public_views(referee: Croupier, match_id: str) -> dict[int, object]:
    """Per record number, the public view after it: what anyone may see of a match alone."""
    records = read_records(referee.referee.matches_dir / f"{match_id}.jsonl")
    spec = get_game(GAME)
    state = spec.new_game(spec.options(records[0].options), Rng(records[-1].seed))
    codec = convert.codec(GAME)
    views = {}
    for seq, record in enumerate(records):
        apply_record(spec, state, record)
        if seq == 0 or shown(record):
            views[seq] = codec.view(state.public_view())
    return views


async def test_the_organiser_watches_a_sealed_match_as_anyone_watches_one_alone(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    played = await admin.create(GAME, 2, OPTIONS, seed=SEED)
    twin = await admin.create(GAME, 2, OPTIONS, seed=SEED)  # waits: the deal stays secret
    match_id = played.match.match_id
    spectator = spectator_pb2_grpc.SpectatorServiceStub(channel)
    listing = await spectator.ListMatches(spectator_pb2.ListMatchesRequest())
    assert listed(listing, match_id).sealed and listed(listing, twin.match.match_id).sealed

    stream = spectator.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id), metadata=ORGANISER)
    frames = [await asyncio.wait_for(stream.read(), WAIT)]  # the snapshot, before any move
    play = asyncio.create_task(play_to_the_end(channel, list(played.seat_tokens)))
    while (frame := await asyncio.wait_for(stream.read(), WAIT)) is not grpc.aio.EOF:
        frames.append(frame)
    await play

    public = public_views(referee, match_id)
    assert len(frames) > 10 and [f.view for f in frames] == [public[f.seq] for f in frames]
    ending = frames[-1].info
    assert ending.status and not ending.HasField("seed") and not ending.HasField("result")
    assert not any(f.step.HasField("action") for f in frames), "actions may name hidden cards"

    # over, while its twin waits: its record is the twin's deal, sealed to the organiser too
    record = spectator_pb2.GetRecordRequest(match_id=match_id)
    assert await refused(spectator.GetRecord(record, metadata=ORGANISER)) == Code.FAILED_PRECONDITION
    again = spectator_pb2.WatchMatchRequest(match_id=match_id, from_start=True)
    assert await refused(spectator.WatchMatch(again, metadata=ORGANISER)) == Code.FAILED_PRECONDITION
    listing = await spectator.ListMatches(spectator_pb2.ListMatchesRequest(), metadata=ORGANISER)
    finished = listed(listing, match_id)
    assert finished.sealed and not finished.HasField("seed") and not finished.HasField("result")


async def test_no_other_caller_watches_a_sealed_match_and_the_organiser_is_no_admin(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    first = await admin.create(GAME, 2, OPTIONS, seed=SEED)
    await admin.create(GAME, 2, OPTIONS, seed=SEED)
    register = admin_pb2.RegisterBotRequest(name="peeker")
    bot_token = (await admin.stub.RegisterBot(register, metadata=token(ADMIN_TOKEN))).token
    watch = spectator_pb2.WatchMatchRequest(match_id=first.match.match_id)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}") as own:
        anonymous = spectator_pb2_grpc.SpectatorServiceStub(own)
        for metadata in (
            None,
            token(ORGANISER_PREFIX + "0" * 64),  # a guessed one
            token(organiser_token("another referee's admin token")),
            token(bot_token),
            token(first.seat_tokens[0]),
        ):
            assert await refused(anonymous.WatchMatch(watch, metadata=metadata)) == Code.FAILED_PRECONDITION

        # the organiser's token opens no admin call, and plays no seat
        stub = admin_pb2_grpc.AdminServiceStub(own)
        cancel = admin_pb2.CancelMatchRequest(match_id=first.match.match_id, reason="seen enough")
        assert await refused(stub.CancelMatch(cancel, metadata=ORGANISER)) == Code.PERMISSION_DENIED
        with pytest.raises(grpc.aio.AioRpcError) as error:
            await Bot(own, organiser_token(ADMIN_TOKEN)).hello()
        assert error.value.code() == Code.UNAUTHENTICATED
