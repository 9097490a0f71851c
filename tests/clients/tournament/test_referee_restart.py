"""The runner's start-up rides out a referee that restarts (it resumes from its data directory,
its bots kept), as play does: every call waits for it, with growing pauses."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from croupier.clients.tournament import referee_client as runner_side
from croupier.clients.tournament.referee_client import RefereeError, Replicas
from croupier.server.app import Croupier, create_server
from croupier.wire.errors import no_referee

ADMIN_TOKEN = "admin-for-the-restart-tests"
DOWN_SECONDS = 1.5


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def start(port: int, data: Path) -> Croupier:
    return await create_server(f"127.0.0.1:{port}", data, admin_token=ADMIN_TOKEN)


async def restart_later(port: int, data: Path) -> Croupier:
    await asyncio.sleep(DOWN_SECONDS)
    return await start(port, data)


async def test_registering_and_listing_bots_wait_for_a_referee_restarting_meanwhile(tmp_path: Path) -> None:
    port = free_port()
    first = await start(port, tmp_path / "referee")
    referees = await Replicas.connect(f"127.0.0.1:{port}", ADMIN_TOKEN)
    ann, _ = await referees.register_bot("ann")
    await first.stop(grace=None)  # the restart begins after the runner's first calls
    again = asyncio.create_task(restart_later(port, tmp_path / "referee"))
    try:
        bob, _ = await referees.register_bot("bob")
        status = await referees.bots()
        assert {bot.name for bot in status[f"127.0.0.1:{port}"].values()} == {"ann", "bob"}
        assert {ann, bob} <= set(status[f"127.0.0.1:{port}"])
    finally:
        await referees.close()
        await (await again).stop(grace=None)


async def test_the_first_call_waits_for_a_referee_that_is_restarting(tmp_path: Path) -> None:
    port = free_port()
    again = asyncio.create_task(restart_later(port, tmp_path / "referee"))
    try:
        referees = await Replicas.connect(f"127.0.0.1:{port}", ADMIN_TOKEN)
        await referees.register_bot("ann")
        await referees.close()
    finally:
        await (await again).stop(grace=None)


async def test_no_referee_at_all_is_told_once_the_first_call_gives_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(runner_side, "FIRST_CONTACT_SECONDS", 0.5)
    port = free_port()
    with pytest.raises(RefereeError) as raised:
        await Replicas.connect(f"127.0.0.1:{port}", ADMIN_TOKEN)
    assert str(raised.value) == no_referee(f"127.0.0.1:{port}")
