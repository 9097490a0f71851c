"""One client must not slow everyone else: what a caller sends is echoed back and journaled only
in part, and heavy reads are bounded."""

from __future__ import annotations

import grpc

from croupier.engine.cards import Card
from croupier.engine.games.pair_battle import Play
from croupier.server.app import Croupier
from croupier.server.journal import Refuse, encode
from croupier.server.moves import MAX_MOVE_TEXT
from croupier.v1 import bots_pb2
from croupier.wire import convert
from croupier.wire.errors import MAX_ECHO
from tests.server.botclient import Admin, Bot
from tests.server.test_moves import journal, two_bots

Result = bots_pb2.ActionResult
BIG = 900_000
"""A move near the referee's message limit (1 MiB)."""


async def test_a_huge_move_is_refused_with_a_short_reason_and_a_short_journal_record(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    match_id, _seat0, seat1, decision = await two_bots(channel, admin)
    d = decision.decision_id
    await seat1.move(match_id=match_id, decision_id=d, text="7h " * (BIG // 3))
    result = (await seat1.expect("action_result")).action_result
    assert result.status == Result.REFUSED
    assert result.reason == f"a move's text is at most {MAX_MOVE_TEXT} characters, not {BIG}"
    await seat1.move(match_id=match_id + "z" * BIG, decision_id=d, index=0)
    error = (await seat1.expect("error")).error
    assert error.code == bots_pb2.Error.Code.NOT_FOUND
    assert error.message.endswith("more characters)") and len(error.message) < MAX_ECHO + 50
    assert len(error.match_id) < 150
    records = journal(referee, match_id)
    assert [r.KIND for r in records[1:]] == ["start", "refuse"]
    assert all(len(encode(r)) < 2 * MAX_ECHO + 300 for r in records[1:])
    await seat1.move(match_id=match_id, decision_id=d, index=0)
    assert (await seat1.expect("action_result")).action_result.status == Result.ACCEPTED


async def test_a_refused_play_of_thousands_of_cards_is_journaled_in_a_few_hundred_characters(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("pair_battle", 2, {"countdown_tick": 0.0, "penalty": False})
    match_id = created.match.match_id
    bots = [Bot(channel, seat_token) for seat_token in created.seat_tokens]
    for bot in bots:
        await bot.hello()
    await bots[0].expect("decision")
    many = convert.codec("pair_battle").action(Play((Card.parse("7h"),) * 20_000))
    await bots[0].move(match_id=match_id, action=many)
    result = (await bots[0].expect("action_result")).action_result
    assert result.status == Result.REFUSED
    assert "20000 cards is not one set" in result.reason
    [refused] = [r for r in journal(referee, match_id) if isinstance(r, Refuse)]
    assert refused.action.startswith("7h 7h 7h") and refused.action.endswith("more characters)")
    assert len(refused.action) < MAX_ECHO + 50
