"""Bots that act out of turn, for another seat, with garbage, with old decision ids: a clear
error each time, and the match goes on as if nothing happened."""

from __future__ import annotations

import grpc
import pytest

import croupier.server.bot_streams
import croupier.server.session
from croupier.engine.core import MalformedInput
from croupier.server.app import Croupier
from croupier.server.journal import read_records
from croupier.v1 import admin_pb2, bots_pb2, bots_pb2_grpc, games_pb2, match_pb2
from croupier.wire import convert
from tests.server.botclient import ADMIN, Admin, Bot, token

Result = bots_pb2.ActionResult
Code = bots_pb2.Error.Code
Status = grpc.StatusCode
HELLO = bots_pb2.BotMessage(hello=bots_pb2.Hello(protocol_version=1))


SEAT_TOKENS: dict[str, list[str]] = {}


async def two_bots(channel: grpc.aio.Channel, admin: Admin) -> tuple[str, Bot, Bot, bots_pb2.DecisionRequest]:
    """A Chinese Ten match for two, started: seat 1 (left of the dealer) is asked to act."""
    created = await admin.create("chinese_ten", 2, {"target": 100})
    SEAT_TOKENS[created.match.match_id] = list(created.seat_tokens)
    seat0, seat1 = (Bot(channel, t, name=f"p{i}") for i, t in enumerate(created.seat_tokens))
    await seat0.hello()
    await seat1.hello()
    await seat0.expect("view_update")
    decision = (await seat1.expect("decision")).decision
    return created.match.match_id, seat0, seat1, decision


def engine_refusal(game: str, text: str) -> str:
    """What the game's own parser says of ``text``: the referee passes it on unchanged."""
    try:
        convert.codec(game).spec.parse_action(text)
    except MalformedInput as exc:
        return str(exc)
    raise AssertionError(f"{text!r} parses")


def journal(referee: Croupier, match_id: str) -> list[dict[str, object]]:
    return read_records(referee.referee.matches_dir / f"{match_id}.jsonl")


async def test_acting_out_of_turn_is_refused_with_a_reason_and_changes_nothing(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    match_id, seat0, seat1, decision = await two_bots(channel, admin)
    hand = convert.codec("chinese_ten").view_from_proto(seat0.of_kind("view_update")[-1].view).hands[0]
    await seat0.move(match_id=match_id, text=str(hand[0]))
    result = (await seat0.expect("action_result")).action_result
    assert result.status == Result.REFUSED
    assert result.reason == "not your turn: seat 1 is to act"
    assert result.refusals == 1
    # seat 1's decision is still open and still answers by index
    await seat1.move(match_id=match_id, decision_id=decision.decision_id, index=0)
    accepted = (await seat1.expect("action_result")).action_result
    assert (accepted.status, accepted.decision_id) == (Result.ACCEPTED, decision.decision_id)
    assert [r.KIND for r in journal(referee, match_id)[1:]] == ["start", "refuse", "act"]


async def test_acting_for_a_seat_you_do_not_hold_is_permission_denied(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    match_id, seat0, seat1, decision = await two_bots(channel, admin)
    await seat0.move(match_id=match_id, seat=1, decision_id=decision.decision_id, index=0)
    error = (await seat0.expect("error")).error
    assert error.code == Code.PERMISSION_DENIED
    assert error.message == f"you do not hold seat 1 of match {match_id}"
    await seat0.move(match_id=match_id, seat=5, text="7h")
    assert (await seat0.expect("error")).error.code == Code.INVALID_ARGUMENT
    assert [r.KIND for r in journal(referee, match_id)[1:]] == ["start"]
    await seat1.move(match_id=match_id, decision_id=decision.decision_id, index=0)
    assert (await seat1.expect("action_result")).action_result.status == Result.ACCEPTED


async def test_garbage_moves_are_refused_with_reasons_and_the_decision_stays_open(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    match_id, _seat0, seat1, decision = await two_bots(channel, admin)
    d = decision.decision_id
    spoil_five_play = games_pb2.Action(spoil_five={"play": {"card": 144}})
    no_card = games_pb2.Action(chinese_ten={"play": {}})
    attempts = [
        ({"index": len(decision.legal_actions)}, f"index {len(decision.legal_actions)} is out of range"),
        ({"text": "banana"}, engine_refusal("chinese_ten", "banana")),
        ({"action": spoil_five_play}, "the action is for spoil_five, but this match plays chinese_ten"),
        ({"action": no_card}, "chinese_ten play.card: 0 is not a card"),
        ({}, "a move needs a choice: set index, action or text"),
    ]
    for fields, reason in attempts:
        await seat1.move(match_id=match_id, decision_id=d, **fields)
        result = (await seat1.expect("action_result")).action_result
        assert result.status == Result.REFUSED
        assert reason in result.reason
    assert result.refusals == len(attempts)
    await seat1.move(match_id=match_id, decision_id=d, index=0)
    assert (await seat1.expect("action_result")).action_result.status == Result.ACCEPTED
    kinds = [r.KIND for r in journal(referee, match_id)[1:]]
    assert kinds == ["start", *["refuse"] * len(attempts), "act"]


async def test_undecodable_bytes_on_a_bot_stream_get_an_error_and_the_stream_goes_on(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("chinese_ten", 2, {"target": 100})
    raw = grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}")
    play = raw.stream_stream("/croupier.v1.BotService/Play", lambda b: b, bots_pb2.ServerMessage.FromString)
    call = play(metadata=token(created.seat_tokens[1]))
    await call.write(bots_pb2.BotMessage(hello=bots_pb2.Hello(protocol_version=1)).SerializeToString())
    assert (await call.read()).WhichOneof("message") == "welcome"
    await call.write(b"\xff\xff\xff\xff")
    error = await call.read()
    assert error.error.code == Code.INVALID_ARGUMENT
    assert error.error.message.startswith("not a valid croupier.v1.BotMessage")
    seat0 = Bot(channel, created.seat_tokens[0])
    await seat0.hello()
    while (message := await call.read()).WhichOneof("message") != "decision":
        pass
    move = bots_pb2.Move(match_id=created.match.match_id, decision_id=message.decision.decision_id, index=0)
    await call.write(bots_pb2.BotMessage(move=move).SerializeToString())
    while (message := await call.read()).WhichOneof("message") != "action_result":
        pass
    assert message.action_result.status == Result.ACCEPTED
    await raw.close()


async def test_old_decision_ids_are_an_error_and_a_repeated_answer_is_applied_once(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    match_id, seat0, seat1, decision = await two_bots(channel, admin)
    answer = bots_pb2.Move(match_id=match_id, decision_id=decision.decision_id, index=0)
    await seat1.write(bots_pb2.BotMessage(move=answer))
    await seat1.write(bots_pb2.BotMessage(move=answer))
    first = (await seat1.expect("action_result")).action_result
    second = (await seat1.expect("action_result")).action_result
    assert first.status == Result.ACCEPTED
    assert second.status == Result.DUPLICATE
    assert second.action == first.action
    await seat1.move(match_id=match_id, decision_id=decision.decision_id - 1, index=0)
    error = (await seat1.expect("error")).error
    assert error.code == Code.FAILED_PRECONDITION
    assert error.message.startswith(f"decision {decision.decision_id - 1} is not open")
    assert [r.KIND for r in journal(referee, match_id)[1:]] == ["start", "act"]
    # seat 0 answering seat 1's old decision is no better
    await seat0.move(match_id=match_id, decision_id=decision.decision_id, index=0)
    assert (await seat0.expect("error")).error.code == Code.FAILED_PRECONDITION


async def test_unknown_match_ids_are_not_found(channel: grpc.aio.Channel, admin: Admin) -> None:
    _match_id, _seat0, seat1, _decision = await two_bots(channel, admin)
    await seat1.move(match_id="no-such-match", decision_id=1, index=0)
    error = (await seat1.expect("error")).error
    assert (error.code, error.match_id) == (Code.NOT_FOUND, "no-such-match")


@pytest.mark.parametrize(
    ("tokens", "first", "code"),
    [
        ([], HELLO, Status.UNAUTHENTICATED),
        (["nobody"], HELLO, Status.UNAUTHENTICATED),
        (["SEAT"], bots_pb2.BotMessage(move=bots_pb2.Move(match_id="m")), Status.INVALID_ARGUMENT),
        (["SEAT"], bots_pb2.BotMessage(hello=bots_pb2.Hello(protocol_version=2)), Status.FAILED_PRECONDITION),
    ],
    ids=["no token", "unknown token", "no hello", "wrong protocol"],
)
async def test_a_stream_that_starts_wrong_is_ended_with_a_clear_status(
    channel: grpc.aio.Channel, admin: Admin, tokens: list[str], first: bots_pb2.BotMessage, code: Status
) -> None:
    created = await admin.create("chinese_ten", 2)
    metadata = [("croupier-token", created.seat_tokens[0] if t == "SEAT" else t) for t in tokens]
    call = bots_pb2_grpc.BotServiceStub(channel).Play(metadata=metadata)
    await call.write(first)
    with pytest.raises(grpc.aio.AioRpcError) as failure:
        await call.read()
    assert failure.value.code() == code


async def test_an_oversized_message_ends_that_stream_only(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    match_id, _seat0, seat1, decision = await two_bots(channel, admin)
    await seat1.move(match_id=match_id, decision_id=decision.decision_id, text="x" * (2 << 20))
    with pytest.raises(grpc.aio.AioRpcError) as failure:
        await seat1.expect("action_result")
    assert failure.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert (await admin.get(match_id)).status == match_pb2.MATCH_STATUS_RUNNING
    assert [r.KIND for r in journal(referee, match_id)[1:]] == ["start"]
    again = Bot(channel, SEAT_TOKENS[match_id][1])
    await again.hello()
    assert (await again.expect("match_started")).match_started.resumed
    assert (await again.expect("decision")).decision.decision_id == decision.decision_id


async def test_admin_calls_need_the_admin_token_and_valid_requests(
    channel: grpc.aio.Channel, admin: Admin
) -> None:
    three = [admin_pb2.SeatSpec(name="a")] * 3
    chinese_ten = games_pb2.GameOptions(chinese_ten={})
    good = admin_pb2.CreateMatchRequest(options=chinese_ten, seats=three)
    nine = admin_pb2.CreateMatchRequest(
        options=games_pb2.GameOptions(chinese_ten={"players": 9}), seats=three
    )
    ghosts = admin_pb2.CreateMatchRequest(
        options=chinese_ten, seats=[admin_pb2.SeatSpec(bot_id="b-none")] * 3
    )
    cases = [
        (None, good, Status.UNAUTHENTICATED),
        (token("wrong"), good, Status.PERMISSION_DENIED),
        (ADMIN, admin_pb2.CreateMatchRequest(seats=three), Status.INVALID_ARGUMENT),
        (ADMIN, admin_pb2.CreateMatchRequest(options=chinese_ten), Status.INVALID_ARGUMENT),
        (ADMIN, nine, Status.INVALID_ARGUMENT),
        (ADMIN, ghosts, Status.NOT_FOUND),
    ]
    for metadata, bad, code in cases:
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            await admin.stub.CreateMatch(bad, metadata=metadata)
        assert failure.value.code() == code, failure.value.details()
        assert failure.value.details()
    with pytest.raises(grpc.aio.AioRpcError) as missing:
        await admin.get("no-such-match")
    assert missing.value.code() == Status.NOT_FOUND
    get_match = channel.unary_unary("/croupier.v1.AdminService/GetMatch", lambda b: b, lambda b: b)
    with pytest.raises(grpc.aio.AioRpcError) as undecodable:
        await get_match(b"\x0a\xff", metadata=ADMIN)
    assert undecodable.value.code() == Status.INVALID_ARGUMENT
    watch = channel.unary_stream("/croupier.v1.SpectatorService/WatchMatch", lambda b: b, lambda b: b)
    with pytest.raises(grpc.aio.AioRpcError) as undecodable_stream:
        async for _ in watch(b"\x0a\xff"):
            pass
    assert undecodable_stream.value.code() == Status.INVALID_ARGUMENT


async def test_a_move_for_a_finished_match_is_told_the_match_is_over(
    channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("platinum_fish", 2)
    both = Bot(channel, *created.seat_tokens)
    await both.hello()
    [ended] = await both.play()
    await both.move(match_id=ended.match_id, seat=0, text="draw")
    error = (await both.expect("error")).error
    assert (error.code, error.message) == (Code.FAILED_PRECONDITION, f"match {ended.match_id} is over")


async def test_a_seat_that_keeps_sending_refused_moves_is_forfeited_at_max_refusals(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("chinese_ten", 2, {"target": 100}, max_refusals=5)
    match_id = created.match.match_id
    seat0, seat1 = (Bot(channel, t, name=f"p{i}") for i, t in enumerate(created.seat_tokens))
    await seat0.hello()
    await seat1.hello()
    hand = convert.codec("chinese_ten").view_from_proto((await seat0.expect("view_update")).view_update.view)
    for _ in range(5):  # out of turn: seat 1 leads
        await seat0.move(match_id=match_id, text=str(hand.hands[0][0]))
    refused = [(await seat0.expect("action_result")).action_result for _ in range(5)]
    assert [r.refusals for r in refused] == [1, 2, 3, 4, 5]
    forfeited = (await seat0.expect("seat_forfeited")).seat_forfeited
    assert (forfeited.match_id, forfeited.reason) == (match_id, "refusals")

    await seat1.play()  # the referee plays seat 0 on; seat 1 plays to the end
    result = (await admin.wait(match_id)).result
    assert [(s.forfeited, s.refusals, s.place) for s in result.seats] == [("refusals", 5, 2), ("", 0, 1)]
    assert sum(r.KIND == "refuse" for r in journal(referee, match_id)) == 5


async def test_a_stream_silent_after_connecting_is_ended_for_want_of_a_hello(
    channel: grpc.aio.Channel, admin: Admin, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(croupier.server.bot_streams, "HELLO_SECONDS", 0.2)
    created = await admin.create("chinese_ten", 2)
    call = bots_pb2_grpc.BotServiceStub(channel).Play(metadata=token(created.seat_tokens[0]))
    with pytest.raises(grpc.aio.AioRpcError) as failure:
        await call.read()
    assert failure.value.code() == Status.DEADLINE_EXCEEDED
    assert "Hello" in (failure.value.details() or "")


async def test_a_bot_that_sends_without_reading_is_cut_off_and_nobody_else_suffers(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its unread answers pile up to MAX_QUEUED, then its stream ends: the referee's memory is
    bounded, and the match goes on (the seat may be taken back within the grace)."""
    monkeypatch.setattr(croupier.server.session, "MAX_QUEUED", 50)
    created = await admin.create("chinese_ten", 2, {"target": 100}, decision_ms=600_000)
    match_id = created.match.match_id
    stale = bots_pb2.BotMessage(move=bots_pb2.Move(match_id="no-such-match", decision_id=1, index=0))
    # a small receive window, never grown: the bot's unread messages soon back up in the referee
    options = [("grpc.http2.lookahead_bytes", 16_384), ("grpc.http2.bdp_probe", 0)]
    async with grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}", options=options) as narrow:
        seat0, flooder = Bot(channel, created.seat_tokens[0]), Bot(narrow, created.seat_tokens[1])
        await seat0.hello()
        await flooder.hello()
        decision = (await flooder.expect("decision")).decision
        for _ in range(5_000):  # each is answered NOT_FOUND, which this bot does not read
            await flooder.write(stale)
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            await flooder.expect("match_ended")  # reading at last: what was sent, then the end
    assert failure.value.code() == Status.RESOURCE_EXHAUSTED
    assert "read your stream" in (failure.value.details() or "")
    assert len(flooder.of_kind("error")) < 5_000
    assert (await admin.get(match_id)).status == match_pb2.MATCH_STATUS_RUNNING
    again = Bot(channel, created.seat_tokens[1])
    await again.hello()
    assert (await again.expect("match_started")).match_started.resumed
    assert (await again.expect("decision")).decision.decision_id == decision.decision_id
    await seat0.close()
