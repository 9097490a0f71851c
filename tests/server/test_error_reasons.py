"""Every Error reason and every refusal reason comes from a real situation over the real wire, with the
status code that goes with it; bots.proto documents each one and docs/protocol.md's table is its copy."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from croupier.clients.docgen import reasons_table as reason_docs
from croupier.server.app import Croupier, create_server
from croupier.server.clocks import Clocks
from croupier.v1 import bots_pb2
from croupier.wire import convert
from croupier.wire.reasons import CODES, Reason, Refusal
from tests.server.botclient import ADMIN_TOKEN, Admin, Bot
from tests.server.conftest import Disk
from tests.server.test_moves import HELLO, two_bots
from tests.server.test_resume_real_time import started_and_stopped

DOCS = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
Result = bots_pb2.ActionResult


@dataclass
class Table:
    """What a situation may use: the referee and the test's fixtures."""

    referee: Croupier
    channel: grpc.aio.Channel
    admin: Admin
    tmp_path: Path
    monkeypatch: pytest.MonkeyPatch


async def malformed(t: Table) -> bots_pb2.Error:
    created = await t.admin.create("chinese_ten", 2)
    raw = t.channel.stream_stream(
        "/croupier.v1.BotService/Play", lambda b: b, bots_pb2.ServerMessage.FromString
    )
    call = raw(metadata=[("croupier-token", created.seat_tokens[0])])
    await call.write(HELLO.SerializeToString())
    await call.write(b"\xff\xff\xff\xff")
    while (message := await call.read()).WhichOneof("message") != "error":
        pass
    call.cancel()
    error: bots_pb2.Error = message.error
    return error


async def empty(t: Table) -> bots_pb2.Error:
    _, seat0, _, _ = await two_bots(t.channel, t.admin)
    await seat0.write(bots_pb2.BotMessage())
    return (await seat0.expect("error")).error


async def hello_again(t: Table) -> bots_pb2.Error:
    _, seat0, _, _ = await two_bots(t.channel, t.admin)
    await seat0.write(HELLO)
    return (await seat0.expect("error")).error


async def unknown_match(t: Table) -> bots_pb2.Error:
    _, seat0, _, _ = await two_bots(t.channel, t.admin)
    await seat0.move(match_id="no-such-match", text="7h")
    return (await seat0.expect("error")).error


async def match_over(t: Table) -> bots_pb2.Error:
    created = await t.admin.create("platinum_fish", 2)
    both = Bot(t.channel, *created.seat_tokens)
    await both.hello()
    [ended] = await both.play()
    await both.move(match_id=ended.match_id, seat=0, text="draw")
    return (await both.expect("error")).error


async def not_started(t: Table) -> bots_pb2.Error:
    created = await t.admin.create("chinese_ten", 2)
    alone = Bot(t.channel, created.seat_tokens[0])
    await alone.hello()
    await alone.move(match_id=created.match.match_id, text="7h")
    return (await alone.expect("error")).error


async def regathering(t: Table) -> bots_pb2.Error:
    match_id, tokens = await started_and_stopped(t.tmp_path / "restarted")
    referee = await create_server(
        "127.0.0.1:0", t.tmp_path / "restarted", admin_token=ADMIN_TOKEN, clocks=Clocks()
    )
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}") as channel:
            first = Bot(channel, tokens[0])
            await first.hello()
            await first.expect("view_update")
            await first.move(match_id=match_id, text="2h 2d")
            return (await first.expect("error")).error
    finally:
        await referee.stop(grace=None)


async def no_such_seat(t: Table) -> bots_pb2.Error:
    match_id, seat0, _, _ = await two_bots(t.channel, t.admin)
    await seat0.move(match_id=match_id, seat=5, text="7h")
    return (await seat0.expect("error")).error


async def not_held(t: Table) -> bots_pb2.Error:
    match_id, seat0, _, decision = await two_bots(t.channel, t.admin)
    await seat0.move(match_id=match_id, seat=1, decision_id=decision.decision_id, index=0)
    return (await seat0.expect("error")).error


async def ambiguous(t: Table) -> bots_pb2.Error:
    created = await t.admin.create("chinese_ten", 2)
    both = Bot(t.channel, *created.seat_tokens)
    await both.hello()
    await both.expect("decision")
    await both.move(match_id=created.match.match_id, text="7h")
    return (await both.expect("error")).error


async def taken_over(t: Table) -> bots_pb2.Error:
    created = await t.admin.create("chinese_ten", 2)
    old = Bot(t.channel, created.seat_tokens[1])
    await old.hello()
    await Bot(t.channel, created.seat_tokens[1]).hello()
    error = (await old.expect("error")).error
    assert (error.HasField("seat"), error.seat, error.decision_id) == (True, 1, 0)
    return error


async def timed_out(t: Table) -> bots_pb2.Error:
    """The seat answers a decision the clock already played; the other seat then takes its time, so
    the seat's next decision cannot also have run out before the answer arrives."""
    created = await t.admin.create(
        "chinese_ten", 2, {"target": 100}, decision_ms=300, bank_ms=0, max_timeouts=9
    )
    seat0, late = Bot(t.channel, created.seat_tokens[0]), Bot(t.channel, created.seat_tokens[1])
    await seat0.hello()
    await late.hello()
    result = (await late.expect("action_result")).action_result
    assert result.status == Result.TIMED_OUT
    await late.move(match_id=result.match_id, decision_id=result.decision_id, index=0)
    return (await late.expect("error")).error


async def not_open(t: Table) -> bots_pb2.Error:
    match_id, _, seat1, decision = await two_bots(t.channel, t.admin)
    await seat1.move(match_id=match_id, decision_id=decision.decision_id + 5, index=0)
    return (await seat1.expect("error")).error


async def journal_full(t: Table) -> bots_pb2.Error:
    from croupier.server import datafiles

    match_id, _, seat1, decision = await two_bots(t.channel, t.admin)
    disk = Disk(datafiles.write_bytes)
    t.monkeypatch.setattr(datafiles, "write_bytes", disk.write_bytes)
    disk.full = True
    await seat1.move(match_id=match_id, decision_id=decision.decision_id, index=0)
    error = (await seat1.expect("error")).error
    disk.full = False
    return error


SITUATIONS: dict[str, Callable[[Table], Awaitable[bots_pb2.Error]]] = {
    "REASON_MALFORMED_MESSAGE": malformed,
    "REASON_EMPTY_MESSAGE": empty,
    "REASON_HELLO_REPEATED": hello_again,
    "REASON_UNKNOWN_MATCH": unknown_match,
    "REASON_MATCH_OVER": match_over,
    "REASON_MATCH_NOT_STARTED": not_started,
    "REASON_MATCH_REGATHERING": regathering,
    "REASON_NO_SUCH_SEAT": no_such_seat,
    "REASON_SEAT_NOT_HELD": not_held,
    "REASON_SEAT_AMBIGUOUS": ambiguous,
    "REASON_SEAT_TAKEN_OVER": taken_over,
    "REASON_DECISION_TIMED_OUT": timed_out,
    "REASON_DECISION_NOT_OPEN": not_open,
    "REASON_JOURNAL_FULL": journal_full,
}
"""A real situation for each reason the referee sends."""


@pytest.mark.parametrize("name", [value.name for value in Reason.DESCRIPTOR.values if value.number])
async def test_each_error_reason_is_sent_in_its_situation_with_its_code(
    name: str,
    referee: Croupier,
    channel: grpc.aio.Channel,
    admin: Admin,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert name in SITUATIONS, f"no test provokes {name}: add its situation to SITUATIONS"
    error = await SITUATIONS[name](Table(referee, channel, admin, tmp_path, monkeypatch))
    assert Reason.Name(error.reason) == name, error.message
    assert error.code == CODES[Reason.Value(name)].value[0]
    assert error.message


async def test_each_refusal_reason_is_sent_with_the_refusal_it_names(
    channel: grpc.aio.Channel, admin: Admin
) -> None:
    match_id, seat0, seat1, decision = await two_bots(channel, admin)
    hand = convert.codec("chinese_ten").view_from_proto(seat0.of_kind("view_update")[-1].view).hands[0]
    await seat0.move(match_id=match_id, text=str(hand[0]))  # seat 1 leads
    await seat1.move(match_id=match_id, decision_id=decision.decision_id, text="banana")
    await seat1.move(match_id=match_id, decision_id=decision.decision_id, text=str(hand[0]))  # seat 0's
    refused = [(await bot.expect("action_result")).action_result for bot in (seat0, seat1, seat1)]
    assert all(r.status == Result.REFUSED for r in refused)
    assert [Refusal.Name(r.refusal_reason) for r in refused] == [
        "REFUSAL_NOT_YOUR_TURN",
        "REFUSAL_UNREADABLE",
        "REFUSAL_ILLEGAL",
    ]
    assert refused[0].reason == "not your turn: seat 1 is to act"
    await seat1.move(match_id=match_id, decision_id=decision.decision_id, index=0)
    accepted = (await seat1.expect("action_result")).action_result
    assert (accepted.status, accepted.refusal_reason) == (Result.ACCEPTED, Refusal.REFUSAL_UNSPECIFIED)


async def test_pair_battle_lockstep_tells_a_seat_that_already_answered_its_tick_to_wait(
    channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("pair_battle", 2, {"timing": "lockstep", "countdown_tick": 0.0})
    first, other = (Bot(channel, token) for token in created.seat_tokens)
    await first.hello()
    await other.hello()
    decision = (await first.expect("decision")).decision
    await first.move(match_id=decision.match_id, decision_id=decision.decision_id, text="pass")
    assert (await first.expect("action_result")).action_result.status == Result.ACCEPTED
    await first.move(match_id=decision.match_id, text="pass")
    refused = (await first.expect("action_result")).action_result
    assert (refused.status, refused.refusal_reason) == (Result.REFUSED, Refusal.REFUSAL_NOT_YOUR_TURN)
    assert "wait for the others" in refused.reason
    await asyncio.gather(first.close(), other.close())


def test_docs_protocol_md_lists_every_reason_as_bots_proto_describes_it() -> None:
    assert reason_docs.section(DOCS.read_text(encoding="utf-8")) == reason_docs.markdown(), (
        "docs/protocol.md is out of date: run "
        ".venv/bin/python -m croupier.clients.docgen.reasons_table --write"
    )


def test_every_reason_says_when_it_is_sent_what_to_do_and_the_code_the_referee_sends() -> None:
    proto = reason_docs.PROTO.read_text(encoding="utf-8")
    errors, refusals = reason_docs.documented("Reason", proto), reason_docs.documented("RefusalReason", proto)
    assert list(errors) == list(Reason.keys()) and list(refusals) == list(Refusal.keys())
    assert all(value.when and value.do for value in [*errors.values(), *refusals.values()])
    said = {name: value.code for name, value in errors.items() if name != "REASON_UNSPECIFIED"}
    assert said == {Reason.Name(reason): code.name for reason, code in CODES.items()}


def test_the_generator_notices_a_reason_whose_comment_changed() -> None:
    proto = reason_docs.PROTO.read_text(encoding="utf-8")
    changed = proto.replace("Do: set Move.seat.", "Do: set Move.seat, always.")
    assert changed != proto and reason_docs.markdown(changed) != reason_docs.markdown(proto)
    assert "| Set Move.seat, always. |" in reason_docs.markdown(changed)
