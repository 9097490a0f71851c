"""The SDK acts on the referee's Error reasons, in real situations on a real referee: a seat another
stream takes over is let go, and an answer the referee could not journal is sent again."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import grpc
import pytest

from croupier.clients.bots import RandomBot
from croupier.clients.sdk import Client
from croupier.server.app import Croupier
from croupier.server.journal import Act, Timeout, read_records
from tests.server.botclient import WAIT, Admin, Bot
from tests.server.conftest import Disk, disk

__all__ = ["disk"]


async def test_a_seat_another_stream_takes_over_is_let_go_and_counts_as_done(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin, caplog: pytest.LogCaptureFixture
) -> None:
    created = await admin.create("chinese_ten", 2, {"target": 100}, decision_ms=60_000)
    client = Client(RandomBot, f"127.0.0.1:{referee.port}", [created.seat_tokens[1]], stop_after=1)
    running = asyncio.ensure_future(client.run())
    seat0 = Bot(channel, created.seat_tokens[0])
    await seat0.hello()
    await seat0.expect("decision")  # seat 1 (the SDK's) has led: the match is under way
    with caplog.at_level(logging.WARNING, logger="croupier.bot"):
        newcomer = Bot(channel, created.seat_tokens[1])
        await newcomer.hello()
        assert await asyncio.wait_for(running, WAIT) == 0  # stop_after=1: the taken seat was its match
    assert client.finished == 1 and not client.seats
    assert any("REASON_SEAT_TAKEN_OVER" in r.getMessage() for r in caplog.records)
    await asyncio.gather(seat0.close(), newcomer.close())


async def test_an_answer_the_referee_could_not_journal_is_sent_again_and_played(
    referee: Croupier, admin: Admin, disk: Disk
) -> None:
    class FillsTheDisk(RandomBot):
        """Its first answer meets a full disk."""

        def choose(self, view: Any, legal: list[Any]) -> int:
            if not disk.refused:
                disk.full = True
            return super().choose(view, legal)

    created = await admin.create("chinese_ten", 2, {"target": 50}, seed=3)
    address = f"127.0.0.1:{referee.port}"
    clients = [
        Client(RandomBot, address, [created.seat_tokens[0]], stop_after=1),
        Client(FillsTheDisk, address, [created.seat_tokens[1]], stop_after=1),
    ]
    playing = asyncio.gather(*(c.run() for c in clients))
    while not disk.refused:  # the answer was not journaled: the referee said REASON_JOURNAL_FULL
        await asyncio.sleep(0.01)
    disk.full = False
    assert await asyncio.wait_for(playing, WAIT) == [0, 0]
    info = await admin.wait(created.match.match_id)
    assert [(s.timeouts, s.refusals) for s in info.result.seats] == [(0, 0), (0, 0)]
    journal = read_records(referee.referee.journal_path(created.match.match_id))
    first = next(r for r in journal if isinstance(r, Act | Timeout))
    assert isinstance(first, Act) and first.seat == 1  # played as the bot answered, not by the clock
