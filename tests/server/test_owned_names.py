"""Names belong to their owners: a claimed name's new version needs its owner's token (the admin
token is not enough), an owner revokes a version, and strangers register themselves where the
operator opened registration, within limits per address."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from croupier.server.app import create_server
from croupier.server.clocks import Clocks
from croupier.server.registration import HOUR, Admissions, OpenRegistration
from croupier.v1 import admin_pb2, match_pb2
from croupier.wire.errors import ResourceExhausted
from tests.server.botclient import ADMIN, ADMIN_TOKEN, Admin, Bot, token

Status = match_pb2.MatchStatus
TAKEN = (
    "the name alice is claimed by its first registration: a new version needs the token of one of "
    "its live versions (croupier register alice --owner-token TOKEN)"
)


async def register(
    admin: Admin,
    name: str,
    *,
    claim: bool = True,
    owner_token: str = "",
    metadata: list[tuple[str, str]] | None = ADMIN,
) -> admin_pb2.RegisterBotResponse:
    request = admin_pb2.RegisterBotRequest(name=name, claim=claim, owner_token=owner_token)
    response: admin_pb2.RegisterBotResponse = await admin.stub.RegisterBot(request, metadata=metadata)
    return response


async def refusal(call: asyncio.Future[object] | object) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call  # type: ignore[misc]
    return raised.value


async def names(admin: Admin) -> list[str]:
    listed = await admin.stub.ListBots(admin_pb2.ListBotsRequest(), metadata=ADMIN)
    return [f"{bot.name} {bot.bot_id}" for bot in listed.bots]


async def test_a_second_registration_of_a_claimed_name_without_its_owner_token_is_refused(
    admin: Admin,
) -> None:
    first = await register(admin, "alice")
    refused = await refusal(register(admin, "alice"))
    assert refused.code() == grpc.StatusCode.ALREADY_EXISTS
    assert refused.details() == TAKEN  # one line, saying what to do
    assert await names(admin) == [f"alice {first.bot_id}"]  # no second token was issued


async def test_with_its_owner_token_a_claimed_name_gets_a_new_version(admin: Admin) -> None:
    first = await register(admin, "alice")
    second = await register(admin, "alice", owner_token=first.token)
    assert second.bot_id != first.bot_id and second.token != first.token
    third = await register(admin, "alice", owner_token=second.token)  # the newest version's will do
    assert await names(admin) == [f"alice {b.bot_id}" for b in (first, second, third)]


async def test_the_admin_token_alone_cannot_add_a_version_to_a_claimed_name(admin: Admin) -> None:
    owner = await register(admin, "alice")
    other = await register(admin, "mallory")
    for name in ("alice", "alice#1"):  # as a tournament runner registers its launched bots, unclaimed
        refused = await refusal(register(admin, name, claim=False))
        assert refused.code() == grpc.StatusCode.ALREADY_EXISTS, name
    wrong = await refusal(register(admin, "alice", owner_token=other.token))
    assert wrong.details() == "the name alice is claimed, and that owner token is none of its live versions'"
    assert await names(admin) == [f"alice {owner.bot_id}", f"mallory {other.bot_id}"]


async def test_unclaimed_names_register_as_a_tournament_runner_does_every_run(admin: Admin) -> None:
    one = await register(admin, "house", claim=False)
    two = await register(admin, "house", claim=False)
    assert one.bot_id != two.bot_id


async def test_a_revoked_version_opens_nothing_and_its_results_stay(
    tmp_path: Path, channel: grpc.aio.Channel, admin: Admin
) -> None:
    alice = await register(admin, "alice")
    newer = await register(admin, "alice", owner_token=alice.token)
    bob = await register(admin, "bob")
    seats = [admin_pb2.SeatSpec(bot_id=alice.bot_id), admin_pb2.SeatSpec(bot_id=bob.bot_id)]
    created = await admin.create("chinese_ten", seats, {"target": 100})
    playing = Bot(channel, alice.token, max_matches=2)
    other = Bot(channel, bob.token)
    await playing.hello()
    await other.hello()
    await asyncio.gather(playing.play(), other.play())
    finished = await admin.wait(created.match.match_id)
    assert finished.status == Status.MATCH_STATUS_FINISHED

    not_owner = await refusal(
        admin.stub.RevokeBot(admin_pb2.RevokeBotRequest(bot_id=alice.bot_id), metadata=token(bob.token))
    )
    assert not_owner.code() == grpc.StatusCode.PERMISSION_DENIED
    revoked = await admin.stub.RevokeBot(  # by the owner: the newer version's token
        admin_pb2.RevokeBotRequest(bot_id=alice.bot_id), metadata=token(newer.token)
    )
    assert (revoked.bot_id, revoked.name) == (alice.bot_id, "alice")

    with pytest.raises(grpc.aio.AioRpcError) as ended:  # its live stream is ended ...
        while True:
            await playing.read()
    assert ended.value.code() == grpc.StatusCode.PERMISSION_DENIED
    again = Bot(channel, alice.token)  # ... and a new one refused
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await again.hello()
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert refused.value.details() == f"that token's bot, alice ({alice.bot_id}), was revoked"
    assert await names(admin) == [f"alice {newer.bot_id}", f"bob {bob.bot_id}"]
    kept = await admin.get(created.match.match_id)  # its results stay
    assert kept.status == Status.MATCH_STATUS_FINISHED and kept.result == finished.result
    assert [p.name for p in kept.players] == ["alice", "bob"]
    # and its token cannot prove ownership any more
    assert (await refusal(register(admin, "alice", owner_token=alice.token))).code() == (
        grpc.StatusCode.ALREADY_EXISTS
    )


async def test_a_revocation_outlives_a_restart(tmp_path: Path) -> None:
    data = tmp_path / "kept"
    first = await create_server("127.0.0.1:0", data, admin_token=ADMIN_TOKEN, clocks=Clocks())
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{first.port}") as channel:
            alice = await register(Admin(channel), "alice")
            await Admin(channel).stub.RevokeBot(
                admin_pb2.RevokeBotRequest(bot_id=alice.bot_id), metadata=token(alice.token)
            )
    finally:
        await first.stop(grace=None)
    second = await create_server("127.0.0.1:0", data, admin_token=ADMIN_TOKEN, clocks=Clocks())
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{second.port}") as channel:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await Bot(channel, alice.token).hello()
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
            assert (await refusal(register(Admin(channel), "alice"))).details() == TAKEN  # still claimed
    finally:
        await second.stop(grace=None)


@pytest.fixture
async def arena(tmp_path: Path) -> AsyncIterator[Admin]:
    """A referee taking open registrations: two an hour per address."""
    croupier = await create_server(
        "127.0.0.1:0",
        tmp_path / "arena",
        admin_token=ADMIN_TOKEN,
        open_registration=OpenRegistration(per_address=2, per_hour=100),
    )
    async with grpc.aio.insecure_channel(f"127.0.0.1:{croupier.port}") as channel:
        yield Admin(channel)
    await croupier.stop(grace=None)


async def test_open_registration_takes_a_stranger_without_the_admin_token(arena: Admin) -> None:
    mine = await register(arena, "stranger", claim=False, metadata=None)  # claimed all the same
    assert (await refusal(register(arena, "stranger", metadata=None))).details() == TAKEN.replace(
        "alice", "stranger"
    )
    await register(arena, "stranger", owner_token=mine.token, metadata=None)  # a new version: the second
    over = await refusal(register(arena, "another", metadata=None))
    assert over.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert over.details() == (
        "your address has made 2 open registrations in the last hour, the most this referee takes: "
        "try again in 60 minutes"
    )
    assert "another" not in " ".join(await names(arena))  # nothing issued
    sneaky = await refusal(
        arena.stub.RegisterBot(admin_pb2.RegisterBotRequest(name="x", bot_id="x-1", token="t" * 30))
    )
    assert sneaky.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_without_open_registration_a_stranger_is_refused(admin: Admin) -> None:
    refused = await refusal(register(admin, "stranger", metadata=None))
    assert refused.code() == grpc.StatusCode.UNAUTHENTICATED
    assert refused.details() == (
        "this referee takes no open registrations: RegisterBot needs the admin token as "
        "croupier-token metadata (ask the arena's organiser)"
    )
    assert await names(admin) == []


def test_open_registrations_are_counted_per_address_and_in_all_over_the_last_hour() -> None:
    now = [0.0]
    admissions = Admissions(OpenRegistration(per_address=2, per_hour=3), clock=lambda: now[0])
    for address in ("ipv4:10.0.0.1", "ipv4:10.0.0.1", "ipv4:10.0.0.2"):
        admissions.check(address)
        admissions.count(address)
    with pytest.raises(ResourceExhausted, match=r"^your address has made 2"):
        admissions.check("ipv4:10.0.0.1")
    with pytest.raises(ResourceExhausted, match=r"^this referee has taken 3 open registrations"):
        admissions.check("ipv4:10.0.0.3")
    now[0] = HOUR + 1  # an hour on, each may register again
    admissions.check("ipv4:10.0.0.1")
