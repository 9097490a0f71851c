"""croupier replay --server fetches a record over gRPC's 4 MB default: a flooding bot's refused
moves are a frame each, and a match created without a refusal cap (max_refusals 0) has no bound."""

from __future__ import annotations

import argparse
import asyncio

import grpc
import pytest

from croupier.clients.terminal import replay_cli as replay
from croupier.server.app import Croupier
from croupier.v1 import spectator_pb2
from tests.server.botclient import ADMIN, ADMIN_TOKEN, Admin, Bot

REFUSALS = 16_000
"""Enough refused moves at the start of a Platinum Fish match for a record over 4 MB (~290 bytes a
frame there; bench/record_size.py measures whole matches)."""


async def test_a_record_over_grpcs_default_limit_is_fetched_whole(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin, capsys: pytest.CaptureFixture[str]
) -> None:
    created = await admin.create("platinum_fish", 2, max_refusals=0)
    match_id = created.match.match_id
    bots = [Bot(channel, token) for token in created.seat_tokens]
    for bot in bots:
        await bot.hello()
    flooder = bots[0]
    for _ in range(REFUSALS):
        await flooder.move(match_id=match_id, text="nonsense")
    refused = 0
    while refused < REFUSALS:
        if (await flooder.expect("action_result")).action_result.reason:
            refused += 1

    request = spectator_pb2.GetRecordRequest(match_id=match_id)
    with pytest.raises(grpc.aio.AioRpcError) as too_big:
        await admin.spectator.GetRecord(request, metadata=ADMIN)  # this channel keeps the default
    assert too_big.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED

    parser = argparse.ArgumentParser()
    replay.add_arguments(parser)  # the command line a user types, every option's default included
    args = parser.parse_args(
        [match_id, "--data", "/nonexistent", "--server", f"127.0.0.1:{referee.port}",
         "--admin-token", ADMIN_TOKEN, "--at", "-1"]
    )  # fmt: skip
    capsys.readouterr()
    assert await asyncio.to_thread(replay.run, args) == 0
    shown = capsys.readouterr().out
    assert "croupier replay:" not in shown and shown.strip()
    for bot in bots:
        await bot.close()
