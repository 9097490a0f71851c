"""After a referee restart a real-time Pair Battle waits for every seat to be back (or forfeited
at the end of its grace), then counts down again: the first bot back cannot play on alone."""

from __future__ import annotations

from pathlib import Path

import grpc

from croupier.engine.games.pair_battle import Countdown
from croupier.server.app import Croupier, create_server
from croupier.server.clocks import Clocks
from croupier.server.journal import read_records
from croupier.v1 import bots_pb2
from croupier.wire import convert
from tests.server.botclient import ADMIN_TOKEN, Admin, Bot
from tests.server.fakes import resumed, table

codec = convert.codec("pair_battle")
Code = bots_pb2.Error.Code


async def started_and_stopped(data: Path, **clocks: int) -> tuple[str, list[str]]:
    """A real-time Pair Battle for two that has passed "go", on a referee that then stops."""
    referee = await create_server("127.0.0.1:0", data, admin_token=ADMIN_TOKEN, clocks=Clocks())
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}") as channel:
            created = await Admin(channel).create("pair_battle", 2, {"countdown_tick": 0.01}, **clocks)
            bots = [Bot(channel, seat_token) for seat_token in created.seat_tokens]
            for bot in bots:
                await bot.hello()
            for bot in bots:
                await bot.expect("decision")  # past "go"
            return created.match.match_id, list(created.seat_tokens)
    finally:
        await referee.stop(grace=None)


def countdown_calls(messages: list[bots_pb2.ServerMessage]) -> list[str]:
    calls = []
    for message in messages:
        kind = message.WhichOneof("message")
        if kind in ("view_update", "decision"):
            for event in getattr(message, kind).events:
                engine_event = codec.event_from_proto(event)
                if isinstance(engine_event, Countdown):
                    calls.append(engine_event.call)
    return calls


async def restarted(data: Path) -> Croupier:
    return await create_server("127.0.0.1:0", data, admin_token=ADMIN_TOKEN, clocks=Clocks())


async def test_the_first_bot_back_waits_for_the_other_then_both_hear_a_new_countdown(tmp_path: Path) -> None:
    match_id, tokens = await started_and_stopped(tmp_path / "data")
    referee = await restarted(tmp_path / "data")
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}") as channel:
            first = Bot(channel, tokens[0])
            await first.hello()
            assert (await first.expect("match_started")).match_started.resumed
            view = codec.view_from_proto((await first.expect("view_update")).view_update.view)
            hand = view.hands[0]
            await first.move(match_id=match_id, text=str(hand[0]))
            error = (await first.expect("error")).error
            assert error.code == Code.FAILED_PRECONDITION
            assert error.message == (
                f"match {match_id} resumed after a referee restart: it waits for every seat to be back, "
                "then counts down again"
            )
            assert not first.of_kind("decision") and not first.of_kind("action_result")
            second = Bot(channel, tokens[1])
            await second.hello()
            for bot in (first, second):
                await bot.expect("decision")
                assert countdown_calls(bot.received) == ["3", "2", "1", "go"]
            kinds = [r.KIND for r in read_records(referee.referee.journal_path(match_id))]
            assert kinds[kinds.index("resume") :][:2] == ["resume", "recount"]
    finally:
        await referee.stop(grace=None)


async def test_a_seat_that_stays_away_is_forfeited_at_its_grace_and_the_match_then_counts_down(
    tmp_path: Path,
) -> None:
    before = table(tmp_path, "pair_battle", options={"countdown_tick": 0.01}, clocks=Clocks(grace=0.3))
    before.clock.advance(0.1)
    assert all(bot.open_decision() is not None for bot in before.bots)  # past "go"
    await before.match.stop_actor()
    t = resumed(before, tmp_path)
    alone = t.bots[0]
    t.match.attach(alone, 0)
    t.clock.advance(0.3 - 0.01)
    assert alone.open_decision() is None  # the other seat's grace still runs: nobody plays
    t.clock.advance(0.01 + 0.1)
    assert alone.open_decision() is not None
    assert countdown_calls(alone.sent) == ["3", "2", "1", "go"]
    records = t.journal()
    after = [(r.KIND, getattr(r, "seat", None)) for r in records[[r.KIND for r in records].index("resume") :]]
    assert after[:3] == [("resume", None), ("forfeit", 1), ("recount", None)]
    await t.match.stop_actor()
