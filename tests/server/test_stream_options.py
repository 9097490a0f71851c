"""Stream options (Hello.options): a bot that asks for none is sent exactly what protocol 1 always
sent, byte for byte; one that asks for any learns the same things from fewer messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import grpc
import pytest

from croupier.v1 import bots_pb2
from tests.server.botclient import Admin, Bot, first_legal
from tests.server.streams import GAMES, digest, normalized, play_recorded

PROTOCOL_1 = Path(__file__).with_name("protocol_1.json")
"""What each stream of tests.server.streams' matches received before stream options existed (recorded
on commit 8d5ffcc): never rewritten to make this test pass, since bots in use rely on it."""


@pytest.mark.parametrize("game", sorted(GAMES))
async def test_a_bot_that_asks_for_no_option_gets_protocol_1_byte_for_byte(
    channel: grpc.aio.Channel, admin: Admin, game: str
) -> None:
    streams = await play_recorded(channel, admin, game, GAMES[game])
    expected = json.loads(PROTOCOL_1.read_text())[game]
    assert [digest(without_later_fields(s)) for s in streams] == expected, (
        "a bot that asks for no stream option must be sent what protocol 1 sent: this changes it"
    )
    refused = [m.action_result for m in streams[0] if m.action_result.status == bots_pb2.ActionResult.REFUSED]
    assert [r.refusal_reason for r in refused] == [bots_pb2.ActionResult.REFUSAL_UNREADABLE]  # no such index


def without_later_fields(received: list[bots_pb2.ServerMessage]) -> list[bots_pb2.ServerMessage]:
    """The messages less the fields added since the recording, all additive (a bot of that commit
    skips them as unknown fields): #23's Error.reason, Error.seat and ActionResult.refusal_reason."""
    stripped = []
    for message in received:
        copy = bots_pb2.ServerMessage()
        copy.CopyFrom(message)
        if copy.HasField("action_result"):
            copy.action_result.ClearField("refusal_reason")
        if copy.HasField("error"):
            copy.error.ClearField("reason")
            copy.error.ClearField("seat")
        stripped.append(copy)
    return stripped


Updates = bots_pb2.StreamOptions.Updates
MODES = {
    "quiet acceptance": bots_pb2.StreamOptions(quiet_acceptance=True),
    "deferred updates": bots_pb2.StreamOptions(updates=Updates.UPDATES_WITH_NEXT),
    "batches": bots_pb2.StreamOptions(batches=True),
    "all three": bots_pb2.StreamOptions(
        quiet_acceptance=True, updates=Updates.UPDATES_WITH_NEXT, batches=True
    ),
}


def learned(received: list[bots_pb2.ServerMessage]) -> dict[str, Any]:
    """What a stream's bot learns, whichever messages carry it: every event in order, every
    decision (id, view, legal actions), the refusals, and the end."""
    events: list[bytes] = []
    decisions = []
    refusals = []
    ended = b""
    for message in received:
        kind = message.WhichOneof("message")
        inner = getattr(message, kind)
        if kind in ("view_update", "decision", "match_ended"):
            events += [e.SerializeToString() for e in inner.events]
        if kind == "decision":
            legal = [a.SerializeToString() for a in inner.legal_actions]
            decisions.append((inner.decision_id, inner.view.SerializeToString(), legal))
        elif kind == "action_result" and inner.status == bots_pb2.ActionResult.REFUSED:
            refusals.append((inner.decision_id, inner.reason))
        elif kind == "match_ended":
            ended = normalized(bots_pb2.ServerMessage(match_ended=bots_pb2.MatchEnded(
                result=inner.result, view=inner.view, status=inner.status
            )))  # fmt: skip
    return {"events": events, "decisions": decisions, "refusals": refusals, "ended": ended}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("game", sorted(GAMES))
async def test_every_stream_option_tells_each_seat_what_protocol_1_tells_it_in_fewer_messages(
    channel: grpc.aio.Channel, admin: Admin, game: str, mode: str
) -> None:
    asked = MODES[mode]
    plain = await play_recorded(channel, admin, game, GAMES[game])
    bots = await play_recorded(channel, admin, game, GAMES[game], options=asked, keep_bots=True)
    for seat, (before, bot) in enumerate(zip(plain, bots, strict=True)):
        now = bot.received
        assert learned(now) == learned(before), f"seat {seat} learns something else with {mode}"
        assert len(now) <= len(before)
        assert {m.WhichOneof("message") for m in now} <= {m.WhichOneof("message") for m in before}
        for message in now:  # a stream is only ever told about its own seat
            inner = getattr(message, message.WhichOneof("message"))
            assert getattr(inner, "seat", seat) == seat
        welcome = now[0].welcome
        assert welcome.options == asked, "the referee grants every option it knows"
        results = [m.action_result for m in now if m.HasField("action_result")]
        decisions = [m.decision for m in now if m.HasField("decision")]
        if asked.quiet_acceptance:
            assert all(r.status == bots_pb2.ActionResult.REFUSED for r in results)
            # each request counts the moves accepted before it: one per earlier request
            assert [d.accepted for d in decisions] == list(range(len(decisions)))
        else:
            assert len(results) == len(decisions) + (seat == 0)  # seat 0's refusal
            assert not any(d.accepted for d in decisions)
        if asked.updates == Updates.UPDATES_WITH_NEXT:
            assert not any(m.HasField("view_update") for m in now)
        if not asked.batches:
            assert bot.batches == 0
    # the first seat to act gets MatchStarted and its first request together, at least
    assert any(bot.batches for bot in bots) == asked.batches


async def test_several_moves_in_one_message_are_each_judged_as_if_it_came_alone(
    channel: grpc.aio.Channel, admin: Admin
) -> None:
    matches = [await admin.create("chinese_ten", 2, {"target": 100}, seed=seed) for seed in (1, 2)]
    tokens = [token for created in matches for token in created.seat_tokens]
    bot = Bot(channel, *tokens, options=bots_pb2.StreamOptions(quiet_acceptance=True, batches=True))
    await bot.hello()
    asked: dict[str, bots_pb2.DecisionRequest] = {}
    while len(asked) < 2:
        decision = (await bot.expect("decision")).decision
        asked[decision.match_id] = decision
    first, second = (first_legal(d) for d in asked.values())
    unknown = bots_pb2.Move(match_id="no-such-match", decision_id=1, index=0)
    await bot.write(bots_pb2.BotMessage(moves=bots_pb2.Moves(moves=[first, unknown, second, first])))
    told: dict[str, list[str]] = {}
    while sum(len(kinds) for kinds in told.values()) < 4:
        message = await bot.expect("decision", "action_result", "error")
        inner = getattr(message, message.WhichOneof("message"))
        what = message.WhichOneof("message")
        if what == "action_result":
            what = bots_pb2.ActionResult.Status.Name(inner.status)
        told.setdefault(inner.match_id, []).append(what)
    assert told == {
        first.match_id: ["decision", "DUPLICATE"],  # the other seat's turn, then the repeat
        second.match_id: ["decision"],
        "no-such-match": ["error"],
    }


async def test_real_time_pair_battle_streams_every_change_even_to_a_stream_that_defers_updates(
    channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("pair_battle", 2, {"countdown_tick": 0.05})
    deferred = bots_pb2.StreamOptions(updates=Updates.UPDATES_WITH_NEXT)
    bots = [Bot(channel, token, options=deferred) for token in created.seat_tokens]
    for bot in bots:
        await bot.hello()
    for bot in bots:  # the countdown, while nobody may play: every seat sees each step of it
        await bot.expect("decision")
        counted = [e.text for m in bot.of_kind("view_update") for e in m.events]
        assert [text for text in counted if text[0] in "321"] == ["3...", "2...", "1..."]


async def test_an_option_the_referee_does_not_know_is_not_granted(
    channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("chinese_ten", 2, {"target": 100})
    unknown = bots_pb2.StreamOptions(updates=7, batches=True)  # type: ignore[arg-type]  # a newer bot's
    welcome = await Bot(channel, created.seat_tokens[0], options=unknown).hello()
    assert welcome.options == bots_pb2.StreamOptions(updates=Updates.UPDATES_EVERY, batches=True)
