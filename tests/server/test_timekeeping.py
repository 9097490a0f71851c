"""Clocks and forfeits: a bot that runs out of time is played for, never silently corrected;
three timeouts or a long disconnection forfeit the seat, which is played on and ranked last."""

from __future__ import annotations

import asyncio

import grpc

from croupier.server.app import Croupier
from croupier.server.journal import read_records
from croupier.v1 import bots_pb2, match_pb2
from tests.server.botclient import Admin, Bot

Result = bots_pb2.ActionResult


async def test_a_silent_bot_is_played_for_and_forfeited_after_three_timeouts(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create(
        "chinese_ten", 2, {"target": 100}, decision_ms=300, bank_ms=2000, max_timeouts=3, grace_ms=60_000
    )
    match_id = created.match.match_id
    player, silent = Bot(channel, created.seat_tokens[0]), Bot(channel, created.seat_tokens[1])
    await player.hello()
    await silent.hello()
    playing = asyncio.ensure_future(player.play())
    timeouts: list[bots_pb2.ActionResult] = []
    decisions: dict[int, bots_pb2.DecisionRequest] = {}
    while (message := await silent.read()).WhichOneof("message") != "seat_forfeited":
        if message.WhichOneof("message") == "decision":
            decisions[message.decision.decision_id] = message.decision
        elif message.WhichOneof("message") == "action_result":
            timeouts.append(message.action_result)
    assert message.seat_forfeited.reason == "timeouts"
    assert [t.status for t in timeouts] == [Result.TIMED_OUT] * 3
    assert [t.timeouts for t in timeouts] == [1, 2, 3]
    for result in timeouts:  # the fallback is the first legal action of the decision, said so
        assert result.action == decisions[result.decision_id].legal_actions[0]
    [ended] = await playing
    info = await admin.wait(match_id)
    assert info.status == match_pb2.MATCH_STATUS_FINISHED
    seats = info.result.seats
    assert (seats[1].forfeited, seats[1].timeouts, seats[1].place) == ("timeouts", 3, 2)
    assert (seats[0].forfeited, seats[0].place) == ("", 1)
    assert ended.result == info.result
    kinds = [r.KIND for r in read_records(referee.referee.matches_dir / f"{match_id}.jsonl")]
    assert kinds.count("timeout") == 3
    assert kinds.count("forfeit") == 1
    assert "auto" in kinds  # the referee played the forfeited seat to the end
    assert not [m for m in silent.received if m.WhichOneof("message") == "match_ended"]


async def test_a_bot_gone_longer_than_the_grace_is_forfeited_and_the_match_plays_on(
    channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("spoil_five", 3, {"deals": 2}, grace_ms=100)
    bots = [Bot(channel, t) for t in created.seat_tokens]
    for bot in bots:
        await bot.hello()
    await bots[2].expect("match_started")
    await bots[2].close()
    ended = await asyncio.gather(bots[0].play(), bots[1].play())
    info = await admin.wait(created.match.match_id)
    seats = info.result.seats
    assert seats[2].forfeited == "disconnected"
    assert seats[2].place == 3
    assert sorted(s.place for s in seats[:2]) in ([1, 2], [1, 1])
    assert all(e.result == info.result for [e] in ended)
    assert info.players[2].forfeited == "disconnected"


async def test_a_forfeited_seat_in_a_real_time_race_is_played_on_to_the_end(
    channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create(
        "pair_battle", 2, {"countdown_tick": 0.0}, decision_ms=200, bank_ms=10_000, grace_ms=50
    )
    racer, quitter = Bot(channel, created.seat_tokens[0]), Bot(channel, created.seat_tokens[1])
    await racer.hello()
    await quitter.hello()
    await quitter.expect("match_started")
    await quitter.close()
    [ended] = await racer.play()
    info = await admin.wait(created.match.match_id)
    assert info.result.seats[1].forfeited == "disconnected"
    assert info.result.seats[0].place == 1
    assert ended.result == info.result


async def test_think_time_and_bank_travel_with_the_next_request(
    channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("chinese_ten", 2, {"target": 100}, decision_ms=4000, bank_ms=9000)
    seat0, seat1 = Bot(channel, created.seat_tokens[0]), Bot(channel, created.seat_tokens[1])
    await seat0.hello()
    await seat1.hello()
    first = (await seat1.expect("decision")).decision
    assert first.time_bank_ms == 9000
    assert 0 < first.deadline_ms <= 13_000
    assert first.last_think_ms == 0
    await seat1.move(match_id=first.match_id, decision_id=first.decision_id, index=0)
    accepted = (await seat1.expect("action_result")).action_result
    answered = (await seat0.expect("decision")).decision
    await seat0.move(match_id=answered.match_id, decision_id=answered.decision_id, index=0)
    second = (await seat1.expect("decision")).decision
    assert second.last_think_ms == accepted.think_ms
