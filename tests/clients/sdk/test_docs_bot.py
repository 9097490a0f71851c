"""The random bot of docs/bots.md, exactly as printed there, plays a whole match on a real referee."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

import pytest

from croupier.clients.bots import HeuristicBot
from croupier.clients.sdk import Client
from croupier.server.app import Croupier
from croupier.v1 import match_pb2
from tests.server.botclient import WAIT, Admin

REPO = Path(__file__).resolve().parents[3]


def python_block(heading: str) -> str:
    """The first python block under ``heading`` in docs/bots.md, exactly as printed."""
    text = (REPO / "docs" / "bots.md").read_text(encoding="utf-8")
    section = text.split(heading, 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found, f"docs/bots.md shows a python block under {heading!r}"
    return found.group(1)


def documented_bot() -> str:
    return python_block("### A complete random bot")


def test_the_documented_random_bot_fits_in_about_fifteen_lines() -> None:
    assert len(documented_bot().strip().splitlines()) <= 15


async def test_the_documented_random_bot_plays_a_match(
    referee: Croupier, admin: Admin, tmp_path: Path
) -> None:
    script = tmp_path / "mybot.py"
    script.write_text(documented_bot(), encoding="utf-8")
    created = await admin.create("platinum_fish", 2, {}, seed=3)
    address = f"127.0.0.1:{referee.port}"
    bot = await asyncio.create_subprocess_exec(
        sys.executable, str(script), "--server", address, "--token", created.seat_tokens[0], "--matches", "1",
        env={**os.environ, "PYTHONPATH": str(REPO)}, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    other = Client(HeuristicBot, address, [created.seat_tokens[1]], stop_after=1)
    await asyncio.wait_for(other.run(), WAIT)
    _, log = await asyncio.wait_for(bot.communicate(), WAIT)
    assert bot.returncode == 0, log.decode()
    info = await admin.wait(created.match.match_id)
    assert info.status == match_pb2.MATCH_STATUS_FINISHED
    assert info.result.seats[0].timeouts == 0 and not info.result.seats[0].forfeited


async def test_croupier_bot_runs_the_documented_bot_class_from_the_current_directory(
    referee: Croupier, admin: Admin, tmp_path: Path
) -> None:
    console_script = Path(sys.executable).parent / "croupier"
    if not console_script.exists():
        pytest.skip(f"no croupier command beside {sys.executable} (install the package: make)")
    (tmp_path / "mybot.py").write_text(documented_bot(), encoding="utf-8")
    created = await admin.create("chinese_ten", 2, {"target": 50}, seed=3)
    address = f"127.0.0.1:{referee.port}"
    bot = await asyncio.create_subprocess_exec(
        str(console_script), "bot", "--strategy", "mybot:RandomBot", "--server", address,
        "--token", created.seat_tokens[0], "--matches", "1",
        cwd=tmp_path, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    other = Client(HeuristicBot, address, [created.seat_tokens[1]], stop_after=1)
    await asyncio.wait_for(other.run(), WAIT)
    _, log = await asyncio.wait_for(bot.communicate(), WAIT)
    assert bot.returncode == 0, log.decode()
    info = await admin.wait(created.match.match_id)
    assert info.status == match_pb2.MATCH_STATUS_FINISHED and info.result.seats[0].timeouts == 0
