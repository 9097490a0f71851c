"""The Node.js bot (clients/node/bot.js, built only from the .proto files) plays a whole match of every
game against Python bots on a real referee, with its stream options and without. Skipped, saying
so, only where Node.js or npm is missing."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from croupier.server.app import Croupier
from tests.clients.foreign import passes_check_bot, plays_every_game, says_why_it_was_refused
from tests.server.botclient import WAIT, Admin
from tests.toolchains import need

NODE_DIR = Path(__file__).resolve().parents[2] / "clients" / "node"


@pytest.fixture(scope="module")
def node() -> str:
    """The node executable, with the bot's packages installed (``npm ci``, as ``make node`` does)."""
    node, npm = (
        need("node", "the Node.js bot's tests need it"),
        need("npm", "the Node.js bot's tests need it"),
    )
    if not (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir():
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=NODE_DIR, check=True, timeout=600
        )
    return node


@pytest.mark.parametrize("flags", [[], ["--no-stream-options"]], ids=["stream options", "protocol 1"])
async def test_the_node_bot_plays_a_full_match_of_every_game_against_python_bots(
    node: str, referee: Croupier, admin: Admin, flags: list[str]
) -> None:
    log = await plays_every_game([node, "bot.js", *flags], referee, admin, cwd=NODE_DIR)
    granted = "none" if flags else "quiet acceptance, deferred updates, batches"
    assert f"stream options: {granted}" in log


@pytest.mark.parametrize("protocol_1", [False, True], ids=["its-options", "protocol-1"])
def test_the_node_bot_passes_every_check_of_croupier_check_bot(node: str, protocol_1: bool) -> None:
    rows = passes_check_bot([node, str(NODE_DIR / "bot.js")], protocol_1)
    assert ("--protocol-1 took them out" in rows["hello"]) == protocol_1, rows["hello"]


async def test_the_node_bot_says_why_the_referee_refused_it(node: str, referee: Croupier) -> None:
    await says_why_it_was_refused([node, "bot.js"], referee, cwd=NODE_DIR)


async def test_the_node_bot_counts_a_forfeited_seat_as_a_match_done(
    node: str, referee: Croupier, admin: Admin
) -> None:
    """No clock at all: each seat times out at once and is forfeited, so no MatchEnded reaches the bot;
    with --matches 2 it must still stop."""
    created = await admin.create("chinese_ten", 2, {"target": 100}, decision_ms=0, bank_ms=0, max_timeouts=1)
    tokens = [arg for token in created.seat_tokens for arg in ("--token", token)]
    process = await asyncio.create_subprocess_exec(
        node, "bot.js", "--server", f"127.0.0.1:{referee.port}", *tokens, "--matches", "2",
        cwd=NODE_DIR, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    try:
        output, _ = await asyncio.wait_for(process.communicate(), WAIT)
    finally:
        if process.returncode is None:
            process.kill()
    log = output.decode()
    assert process.returncode == 0, log
    assert "was forfeited (timeouts)" in log
    assert "stopped after 2 match(es)" in log
