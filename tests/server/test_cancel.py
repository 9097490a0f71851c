"""AdminService.CancelMatch: a match called off ends without a result, reveals nothing hidden,
tells its bots and spectators, and stays cancelled across a restart."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import grpc
import pytest

from croupier.engine.core import GameState
from croupier.server.app import create_server
from croupier.server.clocks import Clocks
from croupier.server.journal import read_private, read_records
from croupier.server.replay import replay_journal
from croupier.v1 import admin_pb2, match_pb2, spectator_pb2
from croupier.wire import convert
from tests.server.botclient import ADMIN, ADMIN_TOKEN, WAIT, Admin, Bot

Kind = spectator_pb2.Step.Kind
CANCELLED = match_pb2.MATCH_STATUS_CANCELLED


def cancel_request(match_id: str, reason: str = "the tournament moved on") -> admin_pb2.CancelMatchRequest:
    return admin_pb2.CancelMatchRequest(match_id=match_id, reason=reason)


def state_at_the_end(journal: Path) -> GameState[Any, Any]:
    """The engine's state after the journal's records, from the seed file only the referee reads."""
    state, _ = replay_journal(journal, read_private(journal.with_suffix(".secret"))["seed"])
    return state


async def test_a_running_match_cancelled_ends_for_bots_and_spectators_without_a_result(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    croupier = await create_server("127.0.0.1:0", data, admin_token=ADMIN_TOKEN, clocks=Clocks())
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{croupier.port}") as channel:
            admin = Admin(channel)
            created = await admin.create("chinese_ten", 2, {"target": 100})
            match_id = created.match.match_id
            watch = admin.spectator.WatchMatch(
                spectator_pb2.WatchMatchRequest(match_id=match_id, from_start=True)
            )
            bots = [Bot(channel, token) for token in created.seat_tokens]
            for bot in bots:
                await bot.hello()
            for seat in (1, 0):
                decision = (await bots[seat].expect("decision")).decision
                await bots[seat].move(match_id=match_id, decision_id=decision.decision_id, index=0)
                await bots[seat].expect("action_result")

            info = await admin.stub.CancelMatch(cancel_request(match_id), metadata=ADMIN)
            assert (info.status, info.cancel_reason) == (CANCELLED, "the tournament moved on")
            assert not info.HasField("result") and not info.HasField("seed")

            journal = data / "matches" / f"{match_id}.jsonl"
            state = state_at_the_end(journal)
            codec = convert.codec("chinese_ten")
            for seat, bot in enumerate(bots):
                ended = (await bot.expect("match_ended")).match_ended
                assert (ended.status, ended.reason) == (CANCELLED, "the tournament moved on")
                assert not ended.HasField("result")
                assert ended.view == codec.view(state.view(seat)), (
                    "a cancelled match shows a bot its own view only"
                )
            frames = [frame async for frame in watch]
            last = frames[-1]
            assert (last.step.kind, last.step.reason) == (Kind.CANCEL, "the tournament moved on")
            assert last.info.status == CANCELLED and not last.info.HasField("seed")
            assert last.view == codec.view(state.public_view())

            assert (await admin.wait(match_id)).status == CANCELLED
            again = await admin.stub.CancelMatch(cancel_request(match_id, "twice"), metadata=ADMIN)
            assert (again.status, again.cancel_reason) == (CANCELLED, "the tournament moved on")
            listed = await admin.spectator.ListMatches(spectator_pb2.ListMatchesRequest(status=CANCELLED))
            assert [m.match_id for m in listed.matches] == [match_id]

            # the record: public to anyone, every hand to the admin
            request = spectator_pb2.GetRecordRequest(match_id=match_id)
            public = await admin.spectator.GetRecord(request)
            assert public.frames[-1].step.kind == Kind.CANCEL
            assert public.frames[-1].view == codec.view(state.public_view())
            full = await admin.spectator.GetRecord(request, metadata=ADMIN)
            assert full.frames[-1].view == codec.view(state.full_view())

            await bots[0].move(match_id=match_id, decision_id=0, text="pass")
            error = (await bots[0].expect("error")).error
            assert error.match_id == match_id
    finally:
        await croupier.stop(grace=None)

    records = read_records(journal)
    assert [r.KIND for r in records] == ["match", "start", "act", "act", "cancel"]
    assert b'"seed":' not in journal.read_bytes(), "the seed stays secret: a tournament may deal it again"
    assert journal.with_suffix(".secret").exists()

    restarted = await create_server("127.0.0.1:0", data, admin_token=ADMIN_TOKEN, clocks=Clocks())
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{restarted.port}") as channel:
            after = await Admin(channel).get(match_id)
            assert (after.status, after.cancel_reason) == (CANCELLED, "the tournament moved on")
            assert not after.HasField("result") and not after.HasField("seed")
    finally:
        await restarted.stop(grace=None)


async def test_a_waiting_match_cancelled_frees_the_seat_it_held(
    channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("platinum_fish", 2)
    match_id = created.match.match_id
    lonely = Bot(channel, created.seat_tokens[0])
    await lonely.hello()
    info = await admin.stub.CancelMatch(cancel_request(match_id, "nobody came"), metadata=ADMIN)
    assert info.status == CANCELLED
    ended = (await lonely.expect("match_ended")).match_ended
    assert (ended.match_id, ended.seat, ended.status, ended.reason) == (match_id, 0, CANCELLED, "nobody came")
    late = Bot(channel, created.seat_tokens[1])
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await late.hello()
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED  # its seat token expired with it


async def test_cancel_leaves_a_finished_match_alone_and_refuses_bad_requests(
    channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("platinum_fish", 2)
    match_id = created.match.match_id
    bots = [Bot(channel, token) for token in created.seat_tokens]
    for bot in bots:
        await bot.hello()
    await asyncio.wait_for(asyncio.gather(*(bot.play() for bot in bots)), WAIT)
    finished = await admin.wait(match_id)
    info = await admin.stub.CancelMatch(cancel_request(match_id), metadata=ADMIN)
    assert info == finished and info.status == match_pb2.MATCH_STATUS_FINISHED and info.result.seats

    cases = [
        (cancel_request("nope"), ADMIN, grpc.StatusCode.NOT_FOUND),
        (cancel_request(match_id, " "), ADMIN, grpc.StatusCode.INVALID_ARGUMENT),
        (cancel_request(match_id), None, grpc.StatusCode.UNAUTHENTICATED),
    ]
    for request, metadata, code in cases:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await admin.stub.CancelMatch(request, metadata=metadata)
        assert refused.value.code() == code, request
