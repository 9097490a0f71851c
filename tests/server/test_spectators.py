"""Spectators: public facts only until the end (checked against the engine's own views), the
admin token sees everything, finished matches give their whole record."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

import croupier.server.session
from croupier.engine.core import GameState
from croupier.engine.games import get_game
from croupier.engine.rng import Rng
from croupier.server.app import Croupier
from croupier.server.journal import apply_record, read_records
from croupier.v1 import match_pb2, spectator_pb2, spectator_pb2_grpc
from croupier.wire import convert
from tests.server.botclient import ADMIN, Admin, Bot, random_legal
from tests.server.test_full_matches import SHORT

Kind = spectator_pb2.Step.Kind


async def watch(
    stub: Any, match_id: str, from_start: bool, admin: bool = False
) -> list[spectator_pb2.MatchFrame]:
    request = spectator_pb2.WatchMatchRequest(match_id=match_id, from_start=from_start)
    return [frame async for frame in stub.WatchMatch(request, metadata=ADMIN if admin else None)]


Records = list[dict[str, Any]]


def engine_states(referee: Croupier, match_id: str) -> tuple[Records, dict[int, GameState[Any, Any]]]:
    """The journal's records and a copy of the engine's state after each one (by record number)."""
    records = read_records(referee.referee.matches_dir / f"{match_id}.jsonl")
    spec = get_game(records[0].game)
    state = spec.new_game(spec.options(records[0].options), Rng(records[-1].seed))
    after: dict[int, GameState[Any, Any]] = {}
    for seq, record in enumerate(records):
        apply_record(spec, state, record)
        after[seq] = state.copy()
    return records, after


def shown(records: Records) -> list[int]:
    """The numbers of the records a spectator sees a frame of (all that change the match)."""
    return [i for i, r in enumerate(records) if r.KIND not in ("match", "resume")]


async def play_match(channel: grpc.aio.Channel, tokens: list[str]) -> None:
    bots = [Bot(channel, token) for token in tokens]
    for bot in bots:
        await bot.hello()
    await asyncio.gather(*(bot.play(random_legal(seat)) for seat, bot in enumerate(bots)))


@pytest.mark.parametrize("game", sorted(SHORT))
async def test_a_live_spectator_never_receives_a_hidden_card(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin, game: str
) -> None:
    options = SHORT[game][0]
    created = await admin.create(game, options["players"], options)
    match_id = created.match.match_id
    watching = asyncio.ensure_future(watch(admin.spectator, match_id, from_start=True))
    await asyncio.sleep(0.05)  # let the spectator subscribe before play starts (either way is correct)
    await play_match(channel, list(created.seat_tokens))
    frames = await asyncio.wait_for(watching, 60)

    codec = convert.codec(game)
    records, after = engine_states(referee, match_id)
    assert [f.seq for f in frames] == shown(records)
    for frame in frames:
        state = after[frame.seq]
        if state.is_over():
            assert frame.view == codec.view(state.full_view())
            continue
        # while the match runs: exactly the engine's public view, no action, no refusal reason
        assert frame.view == codec.view(state.public_view()), f"frame {frame.seq} is not the public view"
        assert not frame.step.HasField("action")
        assert frame.step.kind == Kind.FORFEIT or not frame.step.reason
    end = frames[-1]
    assert end.step.kind == Kind.END
    assert end.info.status == match_pb2.MATCH_STATUS_FINISHED and end.info.HasField("seed")


async def test_the_admin_token_sees_hands_and_actions_during_the_match(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("spoil_five", 3, {"deals": 2})
    match_id = created.match.match_id
    watching = asyncio.ensure_future(watch(admin.spectator, match_id, from_start=True, admin=True))
    await asyncio.sleep(0.05)
    await play_match(channel, list(created.seat_tokens))
    frames = await asyncio.wait_for(watching, 60)
    codec = convert.codec("spoil_five")
    records, after = engine_states(referee, match_id)
    for frame in frames:
        assert frame.view == codec.view(after[frame.seq].full_view())
        if records[frame.seq].KIND == "act":
            assert codec.spec.parse_action(records[frame.seq].action) == codec.action_from_proto(
                frame.step.action
            )


async def test_spectators_joining_mid_match_get_a_snapshot_or_the_whole_story_without_gaps(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("chinese_ten", 3, {"target": 100})
    match_id = created.match.match_id
    bots = [Bot(channel, token) for token in created.seat_tokens]
    for bot in bots:
        await bot.hello()
    for seat in (1, 2, 0):  # three turns by hand, then the spectators arrive
        decision = (await bots[seat].expect("decision")).decision
        await bots[seat].move(match_id=match_id, decision_id=decision.decision_id, index=0)
        await bots[seat].expect("action_result")
    now = asyncio.ensure_future(watch(admin.spectator, match_id, from_start=False))
    start = asyncio.ensure_future(watch(admin.spectator, match_id, from_start=True))
    await asyncio.sleep(0.05)
    await asyncio.gather(*(bot.play(random_legal(seat)) for seat, bot in enumerate(bots)))
    from_now, from_start = await asyncio.wait_for(asyncio.gather(now, start), 60)

    records, after = engine_states(referee, match_id)
    assert [f.seq for f in from_start] == shown(records)
    snapshot = from_now[0]
    assert snapshot.step.kind == Kind.SNAPSHOT
    assert snapshot.info.status == match_pb2.MATCH_STATUS_RUNNING
    assert snapshot.view == convert.codec("chinese_ten").view(after[snapshot.seq].public_view())
    assert [f.seq for f in from_now[1:]] == [s for s in shown(records) if s > snapshot.seq]


async def test_a_finished_match_gives_its_whole_record_to_anyone(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("platinum_fish", 2)
    match_id = created.match.match_id
    request = spectator_pb2.GetRecordRequest(match_id=match_id)
    with pytest.raises(grpc.aio.AioRpcError) as early:
        await admin.spectator.GetRecord(request)
    assert early.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    await play_match(channel, list(created.seat_tokens))
    await admin.wait(match_id)
    record = await admin.spectator.GetRecord(request)
    codec = convert.codec("platinum_fish")
    records, after = engine_states(referee, match_id)
    assert record.info.status == match_pb2.MATCH_STATUS_FINISHED
    assert [f.seq for f in record.frames] == [
        i for i, r in enumerate(records) if r.KIND not in ("match", "resume")
    ]
    for frame in record.frames:
        assert frame.view == codec.view(after[frame.seq].full_view())
        if records[frame.seq].KIND == "act":
            assert frame.step.action == codec.action(codec.spec.parse_action(records[frame.seq].action))
    assert await watch(admin.spectator, match_id, from_start=False) == list(record.frames)


async def test_matches_are_listed_by_status_and_game(channel: grpc.aio.Channel, admin: Admin) -> None:
    waiting = await admin.create("chinese_ten", 2)
    finished = await admin.create("platinum_fish", 2)
    await play_match(channel, list(finished.seat_tokens))
    await admin.wait(finished.match.match_id)

    async def listed(**fields: Any) -> list[str]:
        response = await admin.spectator.ListMatches(spectator_pb2.ListMatchesRequest(**fields))
        return [m.match_id for m in response.matches]

    assert await listed() == [waiting.match.match_id, finished.match.match_id]
    assert await listed(status=match_pb2.MATCH_STATUS_WAITING) == [waiting.match.match_id]
    assert await listed(game="platinum_fish") == [finished.match.match_id]
    with pytest.raises(grpc.aio.AioRpcError) as missing:
        await watch(admin.spectator, "nope", from_start=True)
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND


async def test_a_spectator_that_does_not_read_is_cut_off_and_the_match_plays_on(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(croupier.server.session, "MAX_QUEUED", 5)
    created = await admin.create("chinese_ten", 2, {"target": 300})  # ~100 frames, ~50 KB
    match_id = created.match.match_id
    # a small receive window, never grown: unread frames soon back up in the referee
    options = [("grpc.http2.lookahead_bytes", 16_384), ("grpc.http2.bdp_probe", 0)]
    async with grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}", options=options) as narrow:
        stub = spectator_pb2_grpc.SpectatorServiceStub(narrow)
        call = stub.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id))
        await asyncio.sleep(0.2)  # subscribed (its snapshot is the first frame), then never read
        await play_match(channel, list(created.seat_tokens))
        assert (await admin.wait(match_id)).status == match_pb2.MATCH_STATUS_FINISHED
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            async for frame in call:
                assert frame.step.kind != Kind.END  # it was cut off before the end
    assert failure.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "read as you go" in (failure.value.details() or "")
