"""Whole matches between scripted streams, every message each stream receives kept in order, and a
digest of them with what varies from run to run (ids, clocks) cleared: what pins protocol 1's
messages byte for byte (tests/server/protocol_1.json) and compares the stream options with it."""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter
from typing import Any, Literal, overload

import grpc

from croupier.v1 import bots_pb2
from tests.server.botclient import WAIT, Admin, Bot

GAMES: dict[str, dict[str, Any]] = {
    "chinese_ten": {"players": 3, "target": 100},
    "spoil_five": {"players": 3, "deals": 2},
    "platinum_fish": {"players": 3},
}
"""The turn-based games: what each stream receives depends on the moves alone, never on timing
(in Pair Battle, even in lockstep, the order the seats' answers arrive in shows in the events)."""


def normalized(message: bots_pb2.ServerMessage) -> bytes:
    """The message's bytes without what differs between runs: the match id, deadlines, think times."""
    copy = bots_pb2.ServerMessage()
    copy.CopyFrom(message)
    inner = getattr(copy, copy.WhichOneof("message") or "welcome")
    if hasattr(inner, "match_id"):
        inner.match_id = "M"
    for clock in ("deadline_ms", "think_ms", "last_think_ms"):
        if hasattr(inner, clock):
            setattr(inner, clock, 0)
    if copy.HasField("match_ended"):
        copy.match_ended.result.duration_ms = 0
    return copy.SerializeToString(deterministic=True)


def digest(received: list[bots_pb2.ServerMessage]) -> dict[str, Any]:
    """A stream's messages: the SHA-256 of their normalized bytes, and how many of each kind."""
    sha = hashlib.sha256()
    for message in received:
        data = normalized(message)
        sha.update(len(data).to_bytes(4, "big") + data)
    kinds = Counter(m.WhichOneof("message") for m in received)
    return {"sha256": sha.hexdigest(), "kinds": dict(sorted(kinds.items()))}


async def first_legal_refusing_once(bot: Bot, refuse: bool) -> None:
    """Answer every request with the first legal action until the match ends; if ``refuse``, the
    first answer is an index out of range, refused, and answered again."""
    while True:
        message = await bot.read()
        kind = message.WhichOneof("message")
        if kind == "decision":
            decision = message.decision
            index, refuse = (999 if refuse else 0), False
            await bot.move(match_id=decision.match_id, decision_id=decision.decision_id, index=index)
        elif kind == "action_result" and message.action_result.status == bots_pb2.ActionResult.REFUSED:
            result = message.action_result
            await bot.move(match_id=result.match_id, decision_id=result.decision_id, index=0)
        elif kind == "match_ended":
            return


@overload
async def play_recorded(
    channel: grpc.aio.Channel, admin: Admin, game: str, rules: dict[str, Any], **hello: Any
) -> list[list[bots_pb2.ServerMessage]]: ...


@overload
async def play_recorded(
    channel: grpc.aio.Channel,
    admin: Admin,
    game: str,
    rules: dict[str, Any],
    *,
    keep_bots: Literal[True],
    **hello: Any,
) -> list[Bot]: ...


async def play_recorded(
    channel: grpc.aio.Channel,
    admin: Admin,
    game: str,
    rules: dict[str, Any],
    *,
    keep_bots: bool = False,
    **hello: Any,
) -> list[list[bots_pb2.ServerMessage]] | list[Bot]:
    """One match of ``game`` (seed 11), one scripted stream a seat (``hello``: Bot's options), each
    answering every request with the first legal action (seat 0's first answer refused); every
    message each stream received (or, ``keep_bots``, the streams)."""
    created = await admin.create(game, rules["players"], rules, seed=11)
    bots = [Bot(channel, token, **hello) for token in created.seat_tokens]
    for bot in bots:
        await bot.hello()
    plays = (first_legal_refusing_once(bot, seat == 0) for seat, bot in enumerate(bots))
    await asyncio.wait_for(asyncio.gather(*plays), WAIT)
    for bot in bots:
        await bot.close()
    return bots if keep_bots else [bot.received for bot in bots]
