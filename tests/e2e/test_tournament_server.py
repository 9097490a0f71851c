"""``croupier tournament --server``: a referee already running, and a bot that connects by itself."""

from __future__ import annotations

import asyncio
import re
import sqlite3
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from croupier.clients.bots import RandomBot
from croupier.clients.sdk import Client
from croupier.server.app import Croupier, create_server

ADMIN_TOKEN = "admin-for-the-tournament-tests"

FILE = """
name = "served"
concurrency = 4
deals = "fresh"  # an external bot would hold every seat of a duplicate deal

[[games]]
game = "chinese_ten"
seats = 2
options = { target = 100 }

[[bots]]
name = "launched"
command = "croupier bot --strategy random"

[[bots]]
name = "visitor"
external = true
"""


@pytest.fixture
async def referee(tmp_path: Path) -> AsyncIterator[Croupier]:
    croupier = await create_server("127.0.0.1:0", tmp_path / "referee", admin_token=ADMIN_TOKEN)
    yield croupier
    await croupier.stop(grace=None)


def command(tmp_path: Path, referee: Croupier, token: str) -> list[str]:
    (tmp_path / "t.toml").write_text(FILE)
    return [
        sys.executable, "-m", "croupier.clients.cli", "tournament", str(tmp_path / "t.toml"),
        "--server", f"127.0.0.1:{referee.port}", "--admin-token", token,
        "--data", str(tmp_path / "data"), "--samples", "50",
    ]  # fmt: skip


async def test_a_tournament_on_a_running_referee_waits_for_its_external_bot(
    tmp_path: Path, referee: Croupier
) -> None:
    runner = await asyncio.create_subprocess_exec(
        *command(tmp_path, referee, ADMIN_TOKEN),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert runner.stdout is not None
    invitation = await asyncio.wait_for(runner.stdout.readline(), 60)
    # first the commitment to the schedule, and how the launched bot runs (not jailed here: the
    # referee was started without a Unix socket, the only way out of a jail)
    while invitation.startswith((b"schedule ", b"bots run as you")):
        invitation = await asyncio.wait_for(runner.stdout.readline(), 60)
    found = re.fullmatch(
        rb"waiting for external bot visitor: connect to (\S+) with token (\S+)\n", invitation
    )
    assert found is not None, invitation
    address, token = found.group(1).decode(), found.group(2).decode()
    assert address == f"127.0.0.1:{referee.port}"
    visitor = Client(RandomBot, address, [token], name="visitor", max_matches=2)
    playing = asyncio.create_task(visitor.run())
    out, err = await asyncio.wait_for(runner.communicate(), 120)
    visitor.stop()
    await playing
    assert runner.returncode == 0, (out + err).decode()
    with sqlite3.connect(tmp_path / "data" / "results.db") as db:
        assert db.execute("SELECT status, count(*) FROM matches GROUP BY status").fetchall() == [("done", 2)]
    assert "visitor" in out.decode() and "chinese_ten: ratings of " in out.decode()
    # the journals are the referee's, where it keeps them
    assert f"journals: 2 in {tmp_path / 'referee' / 'matches'} on the referee's machine" in out.decode()


async def test_a_wrong_admin_token_is_a_clear_error(tmp_path: Path, referee: Croupier) -> None:
    runner = await asyncio.create_subprocess_exec(
        *command(tmp_path, referee, "not-the-token"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(runner.communicate(), 60)
    assert runner.returncode == 1
    assert "PERMISSION_DENIED: that croupier-token is not the admin token" in err.decode()
