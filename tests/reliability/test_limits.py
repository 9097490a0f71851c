"""A referee that runs out of room (open files: each live match keeps its journal open) refuses new
matches with RESOURCE_EXHAUSTED and a reason, leaves no half-made match behind, and goes on
playing the matches it has."""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
from collections.abc import Iterator

import grpc
import pytest

from croupier.server.app import Croupier
from tests.server.botclient import Admin, Bot

HEADROOM = 24
"""Open files allowed beyond those open now: room for a few matches, then none."""


@contextlib.contextmanager
def few_open_files() -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + HEADROOM, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts open files in /proc")
async def test_a_referee_out_of_open_files_refuses_new_matches_clearly_and_plays_on(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    first = await admin.create("chinese_ten", 2, {"target": 100})
    created = 1
    with few_open_files(), pytest.raises(grpc.aio.AioRpcError) as refused:
        for _ in range(HEADROOM * 2):
            await admin.create("chinese_ten", 2, {"target": 100})
            created += 1
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    details = refused.value.details()
    assert details.startswith(f"cannot create match files (Too many open files) with {created} matches live")
    assert "raise the referee's open-files limit" in details
    files = sorted(p.name for p in referee.referee.matches_dir.iterdir())
    journals = [name for name in files if name.endswith(".jsonl")]
    secrets = [name for name in files if name.endswith(".secret")]
    assert len(journals) == len(secrets) == created  # nothing left of the refused one
    assert len(referee.referee.matches) == created

    # the matches it holds go on to their end
    seats = [Bot(channel, token) for token in first.seat_tokens]
    for bot in seats:
        await bot.hello()
    for bot, [ended] in zip(seats, await asyncio.gather(*(bot.play() for bot in seats)), strict=True):
        assert ended.match_id == first.match.match_id
        assert [seat.forfeited for seat in ended.result.seats] == ["", ""]
        await bot.close()
