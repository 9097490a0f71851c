"""A referee that listens on a Unix socket as well as TCP (``croupier serve --unix-socket``):
what bots in containers without a network dial, through a mount of the socket's folder."""

from __future__ import annotations

import asyncio
import stat
import subprocess
import sys
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from croupier.clients.bots import RandomBot
from croupier.clients.sdk import Client
from croupier.server.app import create_server
from croupier.v1 import match_pb2
from tests.server.botclient import ADMIN_TOKEN, WAIT, Admin


async def test_bots_play_over_the_unix_socket_while_tcp_serves_too(tmp_path: Path) -> None:
    socket = tmp_path / "sock" / "referee.sock"
    socket.parent.mkdir()
    croupier = await create_server(
        "127.0.0.1:0", tmp_path / "data", admin_token=ADMIN_TOKEN, unix_socket=socket
    )
    try:
        assert stat.S_IMODE(socket.stat().st_mode) == 0o666  # a container's user may connect (with a token)
        async with grpc.aio.insecure_channel(f"unix:{socket}") as channel:
            health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
            assert health.status == health_pb2.HealthCheckResponse.SERVING
        async with grpc.aio.insecure_channel(f"127.0.0.1:{croupier.port}") as tcp:
            admin = Admin(tcp)
            created = await admin.create("platinum_fish", 2, seed=3)
            clients = [
                Client(RandomBot, f"unix:{socket}", [token], stop_after=1) for token in created.seat_tokens
            ]
            await asyncio.wait_for(asyncio.gather(*(c.run() for c in clients)), WAIT)
            info = await admin.wait(created.match.match_id)
            assert info.status == match_pb2.MATCH_STATUS_FINISHED
    finally:
        await croupier.stop(grace=None)


def test_serve_refuses_a_socket_path_too_long_to_bind(tmp_path: Path) -> None:
    path = tmp_path / ("x" * 120) / "referee.sock"
    served = subprocess.run(
        [sys.executable, "-m", "croupier.clients.cli", "serve", "--address", "127.0.0.1:0",
         "--data", str(tmp_path / "data"), "--metrics-address", "off", "--unix-socket", str(path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert served.returncode != 0
    assert "--unix-socket: a path of at most 107 bytes" in served.stderr
