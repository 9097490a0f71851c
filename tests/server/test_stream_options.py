"""Stream options (Hello.options): a bot that asks for none is sent exactly what protocol 1 always
sent, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest

from tests.server.botclient import Admin
from tests.server.streams import GAMES, digest, play_recorded

PROTOCOL_1 = Path(__file__).with_name("protocol_1.json")
"""What each stream of tests.server.streams' matches received before stream options existed (recorded
on commit 8d5ffcc): never rewritten to make this test pass, since bots in use rely on it."""


@pytest.mark.parametrize("game", sorted(GAMES))
async def test_a_bot_that_asks_for_no_option_gets_protocol_1_byte_for_byte(
    channel: grpc.aio.Channel, admin: Admin, game: str
) -> None:
    streams = await play_recorded(channel, admin, game, GAMES[game])
    expected = json.loads(PROTOCOL_1.read_text())[game]
    assert [digest(s) for s in streams] == expected, (
        "a bot that asks for no stream option must be sent what protocol 1 sent: this changes it"
    )
