"""A referee that runs out of room (open files: each live match keeps its journal open) refuses new
matches with RESOURCE_EXHAUSTED and a reason, keeps open files in reserve so that health checks
and new connections still work, leaves no half-made match behind, and goes on playing the matches
it has."""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from croupier.server import openfiles
from croupier.server.app import Croupier
from croupier.v1 import admin_pb2, spectator_pb2, spectator_pb2_grpc
from tests.server.botclient import Admin, Bot
from tests.server.test_restart import ROOT

HEADROOM = 24
"""Open files allowed beyond those open now: room for a few matches, then none."""


@contextlib.contextmanager
def few_open_files(headroom: int = HEADROOM) -> Iterator[int]:
    """A soft limit ``headroom`` above the files open now; yields that limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = len(os.listdir("/proc/self/fd")) + headroom
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
    try:
        yield limit
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def plays_to_its_end(channel: grpc.aio.Channel, created: admin_pb2.CreateMatchResponse) -> None:
    """The match a full referee holds goes on to its end, nobody forfeited."""
    seats = [Bot(channel, token) for token in created.seat_tokens]
    for bot in seats:
        await bot.hello()
    for bot, [ended] in zip(seats, await asyncio.gather(*(bot.play() for bot in seats)), strict=True):
        assert ended.match_id == created.match.match_id
        assert [seat.forfeited for seat in ended.result.seats] == ["", ""]
        await bot.close()


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts open files in /proc")
async def test_a_referee_keeps_open_files_for_connections_and_health_checks_when_full_of_matches(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    first = await admin.create("chinese_ten", 2, {"target": 100})
    created = 1
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    with few_open_files(openfiles.reserve(100) + 12) as limit:
        kept = openfiles.reserve(limit)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            for _ in range(100):
                await admin.create("chinese_ten", 2, {"target": 100})
                created += 1
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert refused.value.details().startswith(f"no room for another match with {created} matches live (")
        assert refused.value.details().endswith(
            f" of the referee's {limit} open files are in use, and {kept} are kept for connections and "
            "health checks): raise the referee's open-files limit, or use another referee"
        )
        assert created > 1
        # new connections, health checks included, are still taken
        for _ in range(5):
            options = [("grpc.use_local_subchannel_pool", 1)]
            async with grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}", options=options) as fresh:
                health = await health_pb2_grpc.HealthStub(fresh).Check(health_pb2.HealthCheckRequest())
                assert health.status == health_pb2.HealthCheckResponse.SERVING
                listed = await spectator_pb2_grpc.SpectatorServiceStub(fresh).ListMatches(
                    spectator_pb2.ListMatchesRequest()
                )
                assert len(listed.matches) == created
    assert soft == resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    await plays_to_its_end(channel, first)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts open files in /proc")
async def test_a_referee_out_of_open_files_refuses_new_matches_clearly_and_plays_on(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files opened by others than the matches may still use the reserve up: the OS's refusal."""
    monkeypatch.setattr(openfiles, "room_for_a_match", lambda: None)
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
    await plays_to_its_end(channel, first)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads the referee's limits in /proc")
async def test_croupier_serve_raises_its_soft_open_files_limit_to_the_hard_one(tmp_path: Path) -> None:
    hard = min(resource.getrlimit(resource.RLIMIT_NOFILE)[1], 4096)

    def low_soft_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))

    command = [sys.executable, "-m", "croupier.server.cli", "--address", "127.0.0.1:0",
               "--data", str(tmp_path / "data"), "--metrics-address", "off"]  # fmt: skip
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        preexec_fn=low_soft_limit,
    )
    try:
        assert process.stdout is not None
        assert (await asyncio.to_thread(process.stdout.readline)).startswith("croupier: serving on")
        limits = Path(f"/proc/{process.pid}/limits").read_text()
        [line] = [line for line in limits.splitlines() if line.startswith("Max open files")]
        assert line.split()[3:5] == [str(hard), str(hard)]
    finally:
        process.kill()
        process.wait(30)
