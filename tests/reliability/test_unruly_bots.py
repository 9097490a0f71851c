"""Bots that crash, hang, send garbage, flood actions, or disconnect and come back, all at once on
one referee, each against a well-behaved bot: every match finishes, the unruly seat gets exactly
its penalty, and nothing else is penalised (the good bots least of all)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import grpc

from croupier.server.app import Croupier
from croupier.v1 import bots_pb2, match_pb2
from croupier.wire import convert
from tests.server.botclient import Admin, Bot

Result = bots_pb2.ActionResult
CLOCKS = {"decision_ms": 2000, "bank_ms": 0, "max_timeouts": 2, "grace_ms": 3000}
"""Generous per-decision time (a loaded machine never times a good bot out), a short grace."""
FLOOD = 40
"""Extra messages a flooding bot sends with each answer."""


async def answer(bot: Bot, decision: bots_pb2.DecisionRequest) -> None:
    await bot.move(match_id=decision.match_id, decision_id=decision.decision_id, index=0)


async def good(bot: Bot) -> None:
    """Answers every decision with its first legal action until the match ends."""
    await bot.play()


async def crashes(bot: Bot) -> None:
    """Plays three decisions, then its process dies: the stream breaks and nobody comes back."""
    for _ in range(3):
        await answer(bot, (await bot.expect("decision")).decision)
    await bot.close()


async def hangs(bot: Bot) -> None:
    """Holds its stream and never answers (until the referee says its seat is forfeited)."""
    await bot.expect("seat_forfeited")


async def garbage(bot: Bot) -> None:
    """Before each right answer: an unreadable action, an index out of range, a move with no choice."""
    while (message := await bot.expect("decision", "match_ended")).WhichOneof("message") == "decision":
        decision = message.decision
        await bot.move(match_id=decision.match_id, decision_id=decision.decision_id, text="no such card")
        await bot.move(match_id=decision.match_id, decision_id=decision.decision_id, index=10_000)
        await bot.move(match_id=decision.match_id, decision_id=decision.decision_id)
        await answer(bot, decision)


async def floods(bot: Bot) -> None:
    """Each answer is followed at once by FLOOD copies of itself and FLOOD moves out of turn (the
    same action again, without a decision), until the referee forfeits it for its refusals."""
    codec = convert.codec("chinese_ten")
    while (message := await bot.expect("decision", "seat_forfeited")).WhichOneof("message") == "decision":
        decision = message.decision
        text = str(codec.action_from_proto(decision.legal_actions[0]))
        for _ in range(FLOOD + 1):
            await answer(bot, decision)
        for _ in range(FLOOD):
            await bot.move(match_id=decision.match_id, decision_id=0, text=text)


Behaviour = Callable[[Bot], Awaitable[None]]


async def test_unruly_bots_are_penalised_as_they_deserve_and_nobody_else(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    behaviours: dict[str, Behaviour] = {
        "crashes": crashes,
        "hangs": hangs,
        "garbage": garbage,
        "floods": floods,
        "comes back": good,  # drops its stream mid-match first: see below
    }
    matches: dict[str, str] = {}
    plays = []
    bots: dict[str, Bot] = {}
    for name, behaviour in behaviours.items():
        created = await admin.create("chinese_ten", 2, {"target": 100}, seed=len(matches) + 11, **CLOCKS)
        match_id = created.match.match_id
        matches[name] = match_id
        polite, unruly = (Bot(channel, t, name=f"{name}-{i}") for i, t in enumerate(created.seat_tokens))
        await polite.hello()
        await unruly.hello()
        bots[name] = unruly
        if name == "comes back":
            plays.append(comes_back(channel, unruly, created.seat_tokens[1]))
        else:
            plays.append(behaviour(unruly))
        plays.append(good(polite))
    await asyncio.wait_for(asyncio.gather(*plays), 120)

    results = {name: (await admin.wait(match_id)).result for name, match_id in matches.items()}
    for name, result in results.items():
        polite, unruly = result.seats
        assert (polite.forfeited, polite.timeouts, polite.refusals) == ("", 0, 0), name
        assert polite.place == 1 or not unruly.forfeited, name
    penalties = {
        name: (result.seats[1].forfeited, result.seats[1].timeouts, result.seats[1].refusals > 0)
        for name, result in results.items()
    }
    assert penalties == {
        "crashes": ("disconnected", 1, False),  # its clock ran out once within the grace
        "hangs": ("timeouts", 2, False),
        "garbage": ("", 0, True),
        "floods": ("refusals", 0, True),  # at the default max_refusals (garbage stays below it)
        "comes back": ("", 0, False),
    }
    garbage_bot, flooder = bots["garbage"], bots["floods"]
    assert results["garbage"].seats[1].refusals == 3 * len(garbage_bot.of_kind("decision"))
    flood_results = flooder.of_kind("action_result")
    answered = len(flooder.of_kind("decision"))
    # every answer is applied once, bar one to a decision that came as the seat was being forfeited
    assert answered - 1 <= sum(r.status == Result.ACCEPTED for r in flood_results) <= answered
    refused = [r for r in flood_results if r.status == Result.REFUSED]
    assert len(refused) == results["floods"].seats[1].refusals == 100
    assert all(r.reason for r in refused)  # each says why (not its turn, a card it no longer holds)
    # every copy is answered DUPLICATE and applied once, but those of the match's last move may come
    # after its end (answered with an error, after the bot stopped reading)
    assert sum(r.status == Result.DUPLICATE for r in flood_results) >= FLOOD * (answered - 1)


async def comes_back(channel: grpc.aio.Channel, first: Bot, seat_token: str) -> None:
    """Plays five decisions, drops its stream with a decision pending, reconnects at once with its seat
    token, is told the match resumed and given the same pending decision, then plays to the end."""
    for _ in range(5):
        await answer(first, (await first.expect("decision")).decision)
    pending = (await first.expect("decision")).decision
    await first.close()
    again = Bot(channel, seat_token, name="comes back again")
    await again.hello()
    started = (await again.expect("match_started")).match_started
    assert (started.match_id, started.resumed) == (pending.match_id, True)
    assert (await again.expect("decision")).decision.decision_id == pending.decision_id
    await answer(again, pending)
    await again.play()
    info_seen = [m for m in again.received if m.WhichOneof("message") == "match_ended"]
    assert info_seen[0].match_ended.result.seats[1].forfeited == ""
    assert started.players[1].connected
    assert match_pb2.MATCH_STATUS_RUNNING  # the match never stopped for it
