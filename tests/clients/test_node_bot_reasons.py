"""The Node.js bot acts on the referee's Error reasons in real situations on a real referee: a seat
another stream takes over is let go (and counts as done), and an answer the referee could not
journal is sent again, so the decision is played and never times out."""

from __future__ import annotations

import grpc
import pytest

from croupier.server.app import Croupier
from tests.clients.foreign import lets_a_taken_over_seat_go, resends_what_the_referee_could_not_journal
from tests.clients.test_node_bot import NODE_DIR, node
from tests.server.botclient import Admin

__all__ = ["node"]


async def test_the_node_bot_lets_a_taken_over_seat_go_and_counts_it_done(
    node: str, referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    await lets_a_taken_over_seat_go([node, "bot.js"], referee, channel, admin, cwd=NODE_DIR)


async def test_the_node_bot_sends_an_answer_the_referee_could_not_journal_again(
    node: str, referee: Croupier, channel: grpc.aio.Channel, admin: Admin, monkeypatch: pytest.MonkeyPatch
) -> None:
    await resends_what_the_referee_could_not_journal(
        [node, "bot.js"], referee, channel, admin, monkeypatch, NODE_DIR
    )
