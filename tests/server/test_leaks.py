"""What the referee must not tell: a refusal's reason to anyone but the mover, another seat's
decisions through the ids of one's own, the data files to anyone but the referee's user, the
server's paths to anyone. The tests of what a bot is told run with every stream option
(Hello.options), whichever messages carry it."""

from __future__ import annotations

import asyncio
import itertools
import stat
from pathlib import Path

import grpc
import pytest

from croupier.clients.results.store import Store
from croupier.server.app import Croupier, create_server
from croupier.v1 import admin_pb2, admin_pb2_grpc, bots_pb2, spectator_pb2, spectator_pb2_grpc
from croupier.wire import convert
from tests.server.botclient import ADMIN, WAIT, Admin, Bot, first_legal

codec = convert.codec("pair_battle")
Updates = bots_pb2.StreamOptions.Updates
MODES = {
    "protocol 1": None,
    "quiet acceptance": bots_pb2.StreamOptions(quiet_acceptance=True),
    "deferred updates": bots_pb2.StreamOptions(updates=Updates.UPDATES_WITH_NEXT),
    "batches": bots_pb2.StreamOptions(batches=True),
    "all options": bots_pb2.StreamOptions(
        quiet_acceptance=True, updates=Updates.UPDATES_WITH_NEXT, batches=True
    ),
}
every_mode = pytest.mark.parametrize("mode", list(MODES))


@every_mode
async def test_a_penalty_shows_others_no_card_the_mover_holds(
    channel: grpc.aio.Channel, admin: Admin, mode: str
) -> None:
    created = await admin.create("pair_battle", 2, {"countdown_tick": 0.0})
    match_id = created.match.match_id
    anonymous = spectator_pb2_grpc.SpectatorServiceStub(channel)
    watch = anonymous.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id))
    mover, other = (Bot(channel, token, options=MODES[mode]) for token in created.seat_tokens)
    await mover.hello()
    await other.hello()
    hand = codec.view_from_proto((await mover.expect("decision")).decision.view).hands[0]
    low, high = next((a, b) for a in hand for b in hand if a.rank != b.rank)
    await mover.move(match_id=match_id, text=f"{low} {high}")
    refused = (await mover.expect("action_result")).action_result
    assert refused.status == bots_pb2.ActionResult.REFUSED
    assert f"{low} {high} is not a set" in refused.reason  # the mover is told why

    def penalty_told(events: list[object]) -> str | None:
        texts = [str(codec.event_from_proto(e)) for e in events]  # type: ignore[arg-type]
        return next((t for t in texts if "loses 10 points" in t), None)

    told = None
    while told is None:
        message = await other.expect("view_update", "decision")
        told = penalty_told(list(getattr(message, message.WhichOneof("message")).events))
    seen = None
    while seen is None:
        frame = await asyncio.wait_for(watch.read(), WAIT)
        seen = penalty_told(list(frame.events))
    watch.cancel()
    for text in (told, seen):
        assert text == "seat 0 loses 10 points for a refused play"
        assert str(low) not in text and str(high) not in text
    for message in other.received:  # neither the reason nor the cards, in any message
        assert str(low) + " " + str(high) not in str(message) and "is not a set" not in str(message)


@every_mode
async def test_a_seats_decision_ids_count_its_own_decisions_only(
    channel: grpc.aio.Channel, admin: Admin, mode: str
) -> None:
    created = await admin.create("chinese_ten", 2, {"target": 100})
    options = MODES[mode]
    bots = [Bot(channel, token, options=options) for token in created.seat_tokens]
    for bot in bots:
        await bot.hello()
    ids: list[list[int]] = [[], []]
    for _ in range(4):  # the seats take turns: each turn asks one seat, then the other
        for seat in (1, 0):
            decision = (await bots[seat].expect("decision")).decision
            ids[seat].append(decision.decision_id)
            await bots[seat].write(bots_pb2.BotMessage(move=first_legal(decision)))
            if not (options and options.quiet_acceptance):
                await bots[seat].expect("action_result")
    for mine in ids:  # one apart: the other seat's decisions in between leave no gap
        assert [b - a for a, b in itertools.pairwise(mine)] == [1, 1, 1]
    assert not set(ids[0]) & set(ids[1])


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_every_data_file_is_its_owners_only(tmp_path: Path) -> None:
    data = tmp_path / "data"
    croupier = await create_server("127.0.0.1:0", data)  # the admin token made and kept in DATA
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{croupier.port}") as chan:
            metadata = [("croupier-token", croupier.admin_token)]
            admin = admin_pb2_grpc.AdminServiceStub(chan)
            await admin.RegisterBot(admin_pb2.RegisterBotRequest(name="ann"), metadata=metadata)
            created = await admin.CreateMatch(
                admin_pb2.CreateMatchRequest(
                    options=convert.codec("chinese_ten").options(
                        convert.codec("chinese_ten").spec.options({"players": 2})
                    ),
                    seats=[admin_pb2.SeatSpec(name="a"), admin_pb2.SeatSpec(name="b")],
                ),
                metadata=metadata,
            )
    finally:
        await croupier.stop(grace=None)
    journal = Path(created.journal)
    assert journal == data / "matches" / f"{created.match.match_id}.jsonl"
    assert {p.name: mode(p) for p in (data, data / "matches")} == {"data": 0o700, "matches": 0o700}
    files = [journal, journal.with_suffix(".secret"), data / "bots.jsonl", data / "admin-token"]
    assert {p.name: mode(p) for p in files} == {p.name: 0o600 for p in files}
    with Store(tmp_path / "tournament" / "results.db") as store:
        store.open_tournament("t", "fp", {}, again=False)
    assert mode(tmp_path / "tournament" / "results.db") == 0o600


async def test_nobody_is_shown_where_the_journal_is_but_the_admin_who_created_it(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = await admin.create("chinese_ten", 2, {"target": 100})
    assert created.journal.endswith(f"matches/{created.match.match_id}.jsonl")
    bots = [Bot(channel, token) for token in created.seat_tokens]
    for bot in bots:
        await bot.hello()
    await asyncio.gather(*(bot.play() for bot in bots))
    data = str(referee.referee.data_dir)
    listed = await spectator_pb2_grpc.SpectatorServiceStub(channel).ListMatches(
        spectator_pb2.ListMatchesRequest()
    )
    waited = await admin.wait(created.match.match_id)
    for info in (
        *listed.matches,
        waited,
        await admin.stub.GetMatch(admin_pb2.GetMatchRequest(match_id=created.match.match_id), metadata=ADMIN),
    ):
        assert info.HasField("result")
        assert data not in str(info) and b"matches/" not in info.SerializeToString()
