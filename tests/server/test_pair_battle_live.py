"""Pair Battle over the wire: plays at any time, views pushed on every change, refusals and their
penalties reported to everyone; and lockstep ticks."""

from __future__ import annotations

import grpc

from croupier.v1 import bots_pb2
from croupier.wire import convert
from tests.server.botclient import Admin, Bot

Result = bots_pb2.ActionResult
codec = convert.codec("pair_battle")


async def test_a_play_before_go_is_refused_and_its_penalty_shown_to_everyone(
    channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("pair_battle", 2, {"countdown_tick": 60.0})  # "go" is far away
    early, other = Bot(channel, created.seat_tokens[0]), Bot(channel, created.seat_tokens[1])
    await early.hello()
    await other.hello()
    view = codec.view_from_proto((await early.expect("view_update")).view_update.view)
    hand = view.hands[0]
    await early.move(match_id=created.match.match_id, text=f"{hand[0]} {hand[1]}")
    refused = (await early.expect("action_result")).action_result
    assert refused.status == Result.REFUSED
    assert refused.reason.startswith("too early: play starts at go")
    assert refused.decision_id == 0
    await other.expect("view_update")  # the start
    update = (await other.expect("view_update")).view_update
    assert codec.view_from_proto(update.view).scores == (-10, 0)
    [penalty] = [codec.event_from_proto(e) for e in update.events]
    assert (type(penalty).__name__, penalty.seat, penalty.points) == ("Penalized", 0, 10)


async def test_real_time_plays_need_no_request_and_every_change_is_pushed(
    channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("pair_battle", 2, {"countdown_tick": 0.0})
    match_id = created.match.match_id
    fast, watcher = Bot(channel, created.seat_tokens[0]), Bot(channel, created.seat_tokens[1])
    await fast.hello()
    await watcher.hello()
    decision = (await fast.expect("decision")).decision
    play = decision.legal_actions[0]
    await fast.move(match_id=match_id, action=play)  # no decision id: a play at any time
    accepted = (await fast.expect("action_result")).action_result
    assert (accepted.status, accepted.decision_id, accepted.action) == (Result.ACCEPTED, 0, play)
    laid = codec.action_from_proto(play).cards
    while True:  # the other seat sees the cards laid on the table, pushed to it
        message = await watcher.expect("view_update", "decision")
        pushed = getattr(message, message.WhichOneof("message"))
        if codec.view_from_proto(pushed.view).laid[0] == laid:
            break
    assert any(type(codec.event_from_proto(e)).__name__ == "Laid" for e in pushed.events)


async def test_lockstep_asks_every_seat_each_tick_and_hides_answers_until_the_tick_resolves(
    channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("pair_battle", 2, {"timing": "lockstep"})
    match_id = created.match.match_id
    first, second = Bot(channel, created.seat_tokens[0]), Bot(channel, created.seat_tokens[1])
    await first.hello()
    await second.hello()
    d0 = (await first.expect("decision")).decision
    d1 = (await second.expect("decision")).decision
    assert codec.view_from_proto(d0.view).tick == codec.view_from_proto(d1.view).tick == 1
    assert codec.action_from_proto(d0.legal_actions[-1]) == codec.spec.parse_action("pass")
    await first.move(match_id=match_id, decision_id=d0.decision_id, index=0)
    assert (await first.expect("action_result")).action_result.status == Result.ACCEPTED
    # the other seat learns that seat 0 answered, not what: its decision stays open
    update = (await second.expect("view_update")).view_update
    seen = codec.view_from_proto(update.view)
    assert seen.submitted == (True, False) and seen.submissions == (None, None)
    await second.move(match_id=match_id, decision_id=d1.decision_id, index=len(d1.legal_actions) - 1)
    assert (await second.expect("action_result")).action_result.status == Result.ACCEPTED
    next_tick = (await second.expect("decision")).decision
    assert codec.view_from_proto(next_tick.view).tick == 2
