"""A bot's comment on its move (Move.comment): kept in the journal, never sent to any bot (the other
seats' nor its own), never in a live spectator's frame, and shown next to its move once the match
is over. The secrets table's row: "a bot's comment on its move"."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import grpc
import pytest

from croupier.server.app import Croupier
from croupier.server.journal import Act, read_records
from croupier.server.moves import MAX_COMMENT
from croupier.v1 import bots_pb2, spectator_pb2, spectator_pb2_grpc
from tests.server.botclient import ADMIN, WAIT, Admin, Bot, Policy
from tests.server.test_full_matches import SHORT
from tests.server.test_leaks import MODES

Kind = spectator_pb2.Step.Kind


def commenting(seat: int) -> Policy:
    """Random legal moves, each with a comment that names the seat and the decision."""
    rng = random.Random(seat)

    def choose(decision: bots_pb2.DecisionRequest) -> bots_pb2.Move:
        return bots_pb2.Move(
            match_id=decision.match_id,
            decision_id=decision.decision_id,
            index=rng.randrange(len(decision.legal_actions)),
            comment=f"NOTE-{seat}-{decision.decision_id}: seat {1 - seat} holds the Ks, p=0.7",
        )

    return choose


async def first_decision(bots: list[Bot]) -> tuple[Bot, bots_pb2.DecisionRequest]:
    """The bot asked to move first, and its request (the others are told of the start)."""
    firsts = await asyncio.gather(*(bot.expect("decision", "view_update") for bot in bots))
    [(bot, decision)] = [(b, m.decision) for b, m in zip(bots, firsts, strict=True) if m.HasField("decision")]
    return bot, decision


async def moving(bot: Bot, policy: Policy, going: asyncio.Event) -> None:
    """``bot.play(policy)``, each answer held back while ``going`` is clear."""
    while True:
        message = await bot.read()
        if message.HasField("decision"):
            await going.wait()
            await bot.write(bots_pb2.BotMessage(move=policy(message.decision)))
        elif message.HasField("match_ended"):
            return


async def frames_of(call: Any) -> list[spectator_pb2.MatchFrame]:
    """The frames of a WatchMatch call to its end (read one by one: it may have been read before)."""
    frames = []
    while (frame := await asyncio.wait_for(call.read(), WAIT)) is not grpc.aio.EOF:
        frames.append(frame)
    return frames


CASES = [(game, SHORT[game][0], mode) for game in sorted(SHORT) for mode in ("protocol 1", "all options")]


@pytest.mark.parametrize(("game", "options", "mode"), CASES, ids=[f"{g}-{m}" for g, _, m in CASES])
async def test_comments_reach_no_bot_and_no_live_spectator_and_show_in_the_record_once_over(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin, game: str, options: dict[str, Any], mode: str
) -> None:
    created = await admin.create(game, options["players"], options, seed=5)
    match_id = created.match.match_id
    anonymous = spectator_pb2_grpc.SpectatorServiceStub(channel)
    # two anonymous spectators, both watching while the match runs: one from before it starts, one
    # from its start, asked mid-match (its past is replayed to it): all they are sent is kept
    before = anonymous.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id))
    live = [await asyncio.wait_for(before.read(), WAIT)]  # the waiting match's snapshot: subscribed
    bots = [Bot(channel, token, options=MODES[mode]) for token in created.seat_tokens]
    for bot in bots:
        await bot.hello()
    going = asyncio.Event()
    going.set()
    plays = [asyncio.ensure_future(moving(bot, commenting(seat), going)) for seat, bot in enumerate(bots)]
    while sum(f.step.kind == Kind.ACTION for f in live) < 3:
        live.append(await asyncio.wait_for(before.read(), WAIT))
    going.clear()  # the bots wait (the match cannot end) while the second spectator joins
    mid_match = anonymous.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id, from_start=True))
    live.append(await asyncio.wait_for(mid_match.read(), WAIT))
    going.set()
    await asyncio.wait_for(asyncio.gather(*plays), WAIT)
    live += await frames_of(before) + await frames_of(mid_match)
    assert any(f.step.kind == Kind.END for f in live)

    acts = [r for r in read_records(referee.referee.matches_dir / f"{match_id}.jsonl") if isinstance(r, Act)]
    comments = {act.comment for act in acts}
    assert acts and all(c.startswith("NOTE-") for c in comments)  # every accepted move's comment kept
    for bot in bots:  # whatever field, whatever message: no comment's bytes
        for message in bot.received:
            assert b"NOTE-" not in message.SerializeToString(), message
    for frame in live:
        assert b"NOTE-" not in frame.SerializeToString(), frame

    record = await anonymous.GetRecord(spectator_pb2.GetRecordRequest(match_id=match_id))
    shown = [(f.step.seat, f.step.comment) for f in record.frames if f.step.comment]
    assert shown == [(act.seat, act.comment) for act in acts]  # each next to its own move
    assert all(f.step.kind == Kind.ACTION for f in record.frames if f.step.comment)
    replayed = await frames_of(anonymous.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id)))
    assert [(f.step.seat, f.step.comment) for f in replayed if f.step.comment] == shown


async def test_the_admin_sees_comments_live(channel: grpc.aio.Channel, admin: Admin) -> None:
    created = await admin.create("chinese_ten", 2, {"target": 50})
    match_id = created.match.match_id
    stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
    request = spectator_pb2.WatchMatchRequest(match_id=match_id, from_start=True)
    watching = asyncio.ensure_future(frames_of(stub.WatchMatch(request, metadata=ADMIN)))
    bots = [Bot(channel, token) for token in created.seat_tokens]
    for bot in bots:
        await bot.hello()
    await asyncio.wait_for(asyncio.gather(*(b.play(commenting(s)) for s, b in enumerate(bots))), WAIT)
    actions = [f for f in await asyncio.wait_for(watching, WAIT) if f.step.kind == Kind.ACTION]
    assert actions and all(f.step.comment.startswith(f"NOTE-{f.step.seat}-") for f in actions)


async def test_a_long_comment_is_cut_and_its_control_characters_become_spaces(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("chinese_ten", 2, {"target": 50})
    match_id = created.match.match_id
    bots = [Bot(channel, token) for token in created.seat_tokens]
    for bot in bots:
        await bot.hello()
    mover, asked = await first_decision(bots)
    long = "\x1b[2J\x1b]0;owned\x07line\nbreak\u2028" + "é" * 400
    await mover.move(match_id=match_id, decision_id=asked.decision_id, index=0, comment=long)
    accepted = (await mover.expect("action_result")).action_result
    assert accepted.status == bots_pb2.ActionResult.ACCEPTED  # a comment too long costs the move nothing
    [act] = [r for r in read_records(referee.referee.matches_dir / f"{match_id}.jsonl") if isinstance(r, Act)]
    assert act.comment == (" [2J ]0;owned line break " + "é" * 400)[:MAX_COMMENT]
    assert len(act.comment) == MAX_COMMENT


async def test_a_comment_s_invisible_format_characters_are_stripped(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    """Bidi controls (U+202E right-to-left override, U+2066 left-to-right isolate, ...) would reorder
    how the replay reads the comment and its move; zero-width ones hide text: none is kept."""
    created = await admin.create("chinese_ten", 2, {"target": 50})
    match_id = created.match.match_id
    bots = [Bot(channel, token) for token in created.seat_tokens]
    for bot in bots:
        await bot.hello()
    mover, asked = await first_decision(bots)
    sly = "fold \u202eevom ylno\u202c \u2066isolated\u2069 zero\u200bwidth\ufeff \u00adsoft\U000e0041 tag"
    await mover.move(match_id=match_id, decision_id=asked.decision_id, index=0, comment=sly)
    assert (await mover.expect("action_result")).action_result.status == bots_pb2.ActionResult.ACCEPTED
    [act] = [r for r in read_records(referee.referee.matches_dir / f"{match_id}.jsonl") if isinstance(r, Act)]
    assert act.comment == "fold evom ylno isolated zerowidth soft tag"


async def test_a_refused_move_s_comment_is_not_kept(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("chinese_ten", 2, {"target": 50})
    match_id = created.match.match_id
    bots = [Bot(channel, token) for token in created.seat_tokens]
    for bot in bots:
        await bot.hello()
    mover, decision = await first_decision(bots)
    await mover.move(match_id=match_id, decision_id=decision.decision_id, text="roll", comment="REFUSED-NOTE")
    refused = (await mover.expect("action_result")).action_result
    assert refused.status == bots_pb2.ActionResult.REFUSED
    journal = (referee.referee.matches_dir / f"{match_id}.jsonl").read_bytes()
    assert b"REFUSED-NOTE" not in journal
