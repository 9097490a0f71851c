"""A bot that thinks in several matches at once (clients/sdk/bot.py): an ``async def choose`` of one
match does not hold up the others, and a plain ``def choose`` runs off the stream's loop, one call
at a time."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from croupier.clients.bots import HeuristicBot
from croupier.clients.sdk import Bot, Client
from croupier.server.app import Croupier
from croupier.v1 import admin_pb2, match_pb2
from tests.server.botclient import ADMIN, WAIT, Admin

THINK = 0.3
"""Seconds each decision takes the thinking bot."""
GAME, OPTIONS = "spoil_five", {"deals": 1}


async def play_matches(
    referee: Croupier, admin: Admin, thinker: type[Bot], matches: int, decision_ms: int
) -> list[match_pb2.MatchInfo]:
    """``matches`` matches of ``thinker`` against the heuristic, one stream each bot, started together."""
    registered = [
        await admin.stub.RegisterBot(admin_pb2.RegisterBotRequest(name=name), metadata=ADMIN)
        for name in ("thinker", "heuristic")
    ]
    seats = [admin_pb2.SeatSpec(bot_id=r.bot_id) for r in registered]
    ids = [
        (
            await admin.create(GAME, seats, OPTIONS, seed=seed, decision_ms=decision_ms, bank_ms=0)
        ).match.match_id
        for seed in range(matches)
    ]
    address = f"127.0.0.1:{referee.port}"
    clients = [
        Client(factory, address, [r.token], max_matches=matches, stop_after=matches)
        for factory, r in zip((thinker, HeuristicBot), registered, strict=True)
    ]
    assert await asyncio.wait_for(asyncio.gather(*(c.run() for c in clients)), WAIT) == [0, 0]
    return [await admin.wait(match_id) for match_id in ids]


async def test_an_async_choose_thinks_in_every_match_at_once_and_no_match_waits_for_another(
    referee: Croupier, admin: Admin
) -> None:
    matches = 8
    thinking = most = 0

    class Thinker(HeuristicBot):
        async def choose(self, view: Any, legal: list[Any]) -> Any:  # type: ignore[override]
            nonlocal thinking, most
            thinking += 1
            most = max(most, thinking)
            await asyncio.sleep(THINK)
            thinking -= 1
            return super().choose(view, legal)

    # one after another, a decision would wait for up to 7 others: 8 * THINK is past the clock
    infos = await play_matches(
        referee, admin, Thinker, matches, decision_ms=int(matches * THINK * 1000 * 0.8)
    )
    assert all(info.status == match_pb2.MATCH_STATUS_FINISHED for info in infos)
    thinker = [seat for info in infos for seat in info.result.seats if seat.name == "thinker"]
    assert [seat.forfeited for seat in thinker] == [""] * matches
    assert most == matches, f"at most {most} of {matches} matches were thought about at once"


async def test_a_plain_choose_runs_off_the_streams_loop_one_call_at_a_time(
    referee: Croupier, admin: Admin
) -> None:
    ticks = thinking = most = 0
    ticked: list[int] = []

    class Sleeper(HeuristicBot):
        def choose(self, view: Any, legal: list[Any]) -> Any:
            nonlocal thinking, most
            thinking += 1
            most = max(most, thinking)
            before = ticks
            time.sleep(THINK)  # blocking, as a search in plain Python would
            ticked.append(ticks - before)
            thinking -= 1
            return super().choose(view, legal)

    async def heartbeat() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    beating = asyncio.create_task(heartbeat())
    try:
        infos = await play_matches(referee, admin, Sleeper, 3, decision_ms=10_000)
    finally:
        beating.cancel()
    assert all(info.status == match_pb2.MATCH_STATUS_FINISHED for info in infos)
    assert most == 1, "a plain choose is called one at a time, whatever the number of matches"
    assert ticked and max(ticked) > 0, f"the event loop stood still during a choose: ticks {ticked}"
