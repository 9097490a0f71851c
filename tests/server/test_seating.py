"""Seating bots: seat tokens, bot tokens within max_matches, reconnecting mid-match."""

from __future__ import annotations

import asyncio

import grpc

from croupier.v1 import admin_pb2, bots_pb2, match_pb2
from croupier.wire import convert
from tests.server.botclient import ADMIN, Admin, Bot, first_legal

Status = match_pb2.MatchStatus


def first_action(decision: bots_pb2.DecisionRequest) -> object:
    codec = convert.codec("chinese_ten")
    return codec.action_from_proto(decision.legal_actions[0])


async def register(admin: Admin, name: str) -> admin_pb2.RegisterBotResponse:
    response: admin_pb2.RegisterBotResponse = await admin.stub.RegisterBot(
        admin_pb2.RegisterBotRequest(name=name), metadata=ADMIN
    )
    return response


async def test_a_bot_reconnecting_with_its_seat_token_gets_its_view_and_pending_decision(
    channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("chinese_ten", 2, {"target": 100})
    match_id = created.match.match_id
    seat0, seat1 = Bot(channel, created.seat_tokens[0]), Bot(channel, created.seat_tokens[1])
    await seat0.hello()
    await seat1.hello()
    pending = (await seat1.expect("decision")).decision
    await seat1.close()
    again = Bot(channel, created.seat_tokens[1])
    await again.hello()
    started = (await again.expect("match_started")).match_started
    assert (started.match_id, started.seat, started.resumed) == (match_id, 1, True)
    resent = (await again.expect("decision")).decision
    assert resent.decision_id == pending.decision_id
    assert resent.view == pending.view
    assert resent.legal_actions == pending.legal_actions
    await again.move(match_id=match_id, decision_id=resent.decision_id, index=0)
    assert (await again.expect("action_result")).action_result.status == bots_pb2.ActionResult.ACCEPTED
    ended = await asyncio.gather(seat0.play(), again.play())
    info = await admin.wait(match_id)
    assert all((s.forfeited, s.timeouts) == ("", 0) for s in info.result.seats)
    assert all(e.result == info.result for [e] in ended)


async def test_a_new_stream_with_the_same_seat_token_takes_the_seat_over(
    channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("chinese_ten", 2, {"target": 100})
    seat0, old = Bot(channel, created.seat_tokens[0]), Bot(channel, created.seat_tokens[1])
    await seat0.hello()
    await old.hello()
    pending = (await old.expect("decision")).decision
    new = Bot(channel, created.seat_tokens[1])
    await new.hello()
    assert (await new.expect("decision")).decision.decision_id == pending.decision_id
    notice = (await old.expect("error")).error
    assert notice.code == bots_pb2.Error.FAILED_PRECONDITION
    assert "taken over" in notice.message
    await old.move(match_id=pending.match_id, decision_id=pending.decision_id, index=0)
    assert (await old.expect("error")).error.code == bots_pb2.Error.PERMISSION_DENIED


async def test_invited_bots_are_seated_one_whole_match_at_a_time_within_max_matches(
    channel: grpc.aio.Channel, admin: Admin
) -> None:
    alice, bob = await register(admin, "alice"), await register(admin, "bob")
    seats = [admin_pb2.SeatSpec(bot_id=alice.bot_id), admin_pb2.SeatSpec(bot_id=bob.bot_id)]
    first = await admin.create("chinese_ten", seats, {"target": 100})
    second = await admin.create("chinese_ten", seats[::-1], {"target": 100})
    assert [p.name for p in first.match.players] == ["alice", "bob"]
    a = Bot(channel, alice.token, name="alice-process", max_matches=1)
    b = Bot(channel, bob.token, max_matches=2)
    welcome = await a.hello()
    assert (welcome.bot_id, welcome.bot_name) == (alice.bot_id, "alice")
    await b.hello()
    started = (await a.expect("match_started")).match_started
    assert started.match_id == first.match.match_id
    assert (await b.expect("match_started")).match_started.match_id == first.match.match_id
    # alice plays one match at a time: the second waits for the first to end
    assert (await admin.get(second.match.match_id)).status == Status.MATCH_STATUS_WAITING
    bots = {
        b.bot_id: b for b in (await admin.stub.ListBots(admin_pb2.ListBotsRequest(), metadata=ADMIN)).bots
    }
    assert (bots[alice.bot_id].streams, bots[alice.bot_id].max_matches, bots[alice.bot_id].matches) == (
        1,
        1,
        1,
    )
    assert bots[bob.bot_id].max_matches == 2
    ended_a, ended_b = await asyncio.gather(a.play(first_legal, matches=2), b.play(first_legal, matches=2))
    assert [e.match_id for e in ended_a] == [first.match.match_id, second.match.match_id]
    assert {e.match_id for e in ended_b} == {first.match.match_id, second.match.match_id}
    assert [e.seat for e in ended_a] == [0, 1]
    info = await admin.wait(second.match.match_id)
    assert info.status == Status.MATCH_STATUS_FINISHED


async def test_an_invited_bot_reconnecting_with_its_bot_token_resumes_its_seats(
    channel: grpc.aio.Channel, admin: Admin
) -> None:
    alice, bob = await register(admin, "alice"), await register(admin, "bob")
    seats = [admin_pb2.SeatSpec(bot_id=alice.bot_id), admin_pb2.SeatSpec(bot_id=bob.bot_id)]
    created = await admin.create("platinum_fish", seats)
    a, b = Bot(channel, alice.token), Bot(channel, bob.token)
    await a.hello()
    await b.hello()
    await a.expect("match_started")
    await a.close()
    back = Bot(channel, alice.token)
    await back.hello()
    resumed = (await back.expect("match_started")).match_started
    assert (resumed.match_id, resumed.seat, resumed.resumed) == (created.match.match_id, 0, True)
    ended = await asyncio.gather(back.play(), b.play())
    info = await admin.wait(created.match.match_id)
    assert all(not s.forfeited for s in info.result.seats)
    assert all(e.result == info.result for [e] in ended)


async def test_one_stream_may_hold_several_seats_and_says_which_acts(
    channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("chinese_ten", 2, {"target": 100})
    both = Bot(channel, *created.seat_tokens)
    await both.hello()
    decision = (await both.expect("decision")).decision
    assert decision.seat == 1
    await both.move(match_id=decision.match_id, text="pass")
    error = (await both.expect("error")).error
    assert error.code == bots_pb2.Error.INVALID_ARGUMENT
    assert "say which one acts" in error.message
    await both.move(match_id=decision.match_id, seat=1, text=str(first_action(decision)))
    assert (await both.expect("action_result")).action_result.status == bots_pb2.ActionResult.ACCEPTED
    [ended] = await both.play(matches=1)
    assert ended.match_id == created.match.match_id
    assert [s.timeouts for s in ended.result.seats] == [0, 0]
