"""Clocks and forfeits: a bot that runs out of time is played for, never silently corrected;
three timeouts or a long disconnection forfeit the seat, which is played on and ranked last.
The match's own clock is a manual one (tests/server/fakes.py): nothing here waits on real time."""

from __future__ import annotations

from pathlib import Path

import grpc

from croupier.server.clocks import Clocks
from croupier.v1 import bots_pb2, match_pb2
from tests.server.botclient import Admin, Bot
from tests.server.fakes import table

Result = bots_pb2.ActionResult


def test_a_silent_bot_is_played_for_and_forfeited_after_three_timeouts(tmp_path: Path) -> None:
    t = table(
        tmp_path, options={"target": 100}, clocks=Clocks(decision=0.3, bank=2.0, max_timeouts=3, grace=60)
    )
    player, silent = t.bots
    t.play_out(seats=[0])
    kinds = silent.kinds()
    assert kinds.count("action_result") == 3 and kinds[-1] == "seat_forfeited"
    assert silent.of("seat_forfeited")[0].reason == "timeouts"
    timeouts = silent.of("action_result")
    assert [r.status for r in timeouts] == [Result.TIMED_OUT] * 3
    assert [r.timeouts for r in timeouts] == [1, 2, 3]
    decisions = {d.decision_id: d for d in silent.of("decision")}
    for result in timeouts:  # the fallback is the first legal action of the decision, said so
        assert result.action == decisions[result.decision_id].legal_actions[0]
    [ended] = player.of("match_ended")
    info = t.match.info()
    assert info.status == match_pb2.MATCH_STATUS_FINISHED
    seats = info.result.seats
    assert (seats[1].forfeited, seats[1].timeouts, seats[1].place) == ("timeouts", 3, 2)
    assert (seats[0].forfeited, seats[0].place) == ("", 1)
    assert ended.result == info.result
    kinds = [r.KIND for r in t.journal()]
    assert kinds.count("timeout") == 3
    assert kinds.count("forfeit") == 1
    assert "auto" in kinds  # the referee played the forfeited seat to the end
    assert not silent.of("match_ended")
    assert t.released == [1]


def test_a_bot_gone_longer_than_the_grace_is_forfeited_and_the_match_plays_on(tmp_path: Path) -> None:
    t = table(tmp_path, "spoil_five", 3, {"deals": 2}, clocks=Clocks(grace=0.1))
    t.match.detach(t.bots[2], 2)
    t.clock.advance(0.1)
    assert ("forfeit", 2, "disconnected") in [
        (r.KIND, getattr(r, "seat", None), getattr(r, "reason", None)) for r in t.journal()
    ]
    assert t.released == [2]
    t.play_out(seats=[0, 1])
    info = t.match.info()
    seats = info.result.seats
    assert seats[2].forfeited == "disconnected"
    assert seats[2].place == 3
    assert sorted(s.place for s in seats[:2]) in ([1, 2], [1, 1])
    assert all(bot.of("match_ended")[0].result == info.result for bot in t.bots[:2])
    assert info.players[2].forfeited == "disconnected"


def test_a_forfeited_seat_in_a_real_time_race_is_played_on_to_the_end(tmp_path: Path) -> None:
    clocks = Clocks(decision=0.2, bank=10.0, grace=0.05)
    t = table(tmp_path, "pair_battle", options={"countdown_tick": 0.0}, clocks=clocks)
    t.match.detach(t.bots[1], 1)
    t.play_out(seats=[0])
    info = t.match.info()
    assert info.result.seats[1].forfeited == "disconnected"
    assert info.result.seats[0].place == 1
    assert t.bots[0].of("match_ended")[0].result == info.result


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
