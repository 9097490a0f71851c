"""One bot on several referees (the same id and token on each), and a referee naming itself."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from croupier.server.app import Croupier, create_server
from croupier.v1 import admin_pb2
from tests.server.botclient import ADMIN, ADMIN_TOKEN, Admin, Bot

SHARED_TOKEN = "bot_the-same-secret-on-every-replica"


async def register(
    admin: Admin, name: str, bot_id: str = "", token: str = ""
) -> admin_pb2.RegisterBotResponse:
    request = admin_pb2.RegisterBotRequest(name=name, bot_id=bot_id, token=token)
    response: admin_pb2.RegisterBotResponse = await admin.stub.RegisterBot(request, metadata=ADMIN)
    return response


async def refused(admin: Admin, name: str, bot_id: str, token: str) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await register(admin, name, bot_id, token)
    return error.value


async def bot_ids(admin: Admin) -> list[str]:
    reply = await admin.stub.ListBots(admin_pb2.ListBotsRequest(), metadata=ADMIN)
    return [bot.bot_id for bot in reply.bots]


@pytest.fixture
async def other(tmp_path: Path) -> AsyncIterator[Croupier]:
    """A second referee, with its own data: another replica."""
    croupier = await create_server(
        "127.0.0.1:0", tmp_path / "other", admin_token=ADMIN_TOKEN, advertise="replica-1.example:50051"
    )
    yield croupier
    await croupier.stop(grace=None)


async def test_one_bot_id_and_token_registered_on_two_referees_plays_on_both(
    channel: grpc.aio.Channel, admin: Admin, other: Croupier
) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{other.port}") as other_channel:
        other_admin = Admin(other_channel)
        for each in (admin, other_admin):
            reply = await register(each, "shared", "t-shared-1", SHARED_TOKEN)
            assert (reply.bot_id, reply.token) == ("t-shared-1", SHARED_TOKEN)
        for each_channel in (channel, other_channel):
            stream = Bot(each_channel, SHARED_TOKEN)
            welcome = await stream.hello()
            assert (welcome.bot_id, welcome.bot_name) == ("t-shared-1", "shared")
            await stream.close()


async def test_registering_the_same_bot_again_changes_nothing(
    referee: Croupier, admin: Admin, tmp_path: Path
) -> None:
    first = await register(admin, "shared", "t-shared-1", SHARED_TOKEN)
    again = await register(admin, "shared", "t-shared-1", SHARED_TOKEN)
    assert (again.bot_id, again.token) == (first.bot_id, first.token)
    assert await bot_ids(admin) == ["t-shared-1"]
    assert len((tmp_path / "data" / "bots.jsonl").read_text().splitlines()) == 1


async def test_a_registered_id_with_another_token_or_name_is_already_exists_and_changes_nothing(
    channel: grpc.aio.Channel, admin: Admin, tmp_path: Path
) -> None:
    await register(admin, "shared", "t-shared-1", SHARED_TOKEN)
    other_token = await refused(admin, "shared", "t-shared-1", SHARED_TOKEN + "-not")
    assert other_token.code() == grpc.StatusCode.ALREADY_EXISTS
    assert other_token.details() == "bot 't-shared-1' is already registered, with another token"
    other_name = await refused(admin, "someone-else", "t-shared-1", SHARED_TOKEN)
    assert other_name.code() == grpc.StatusCode.ALREADY_EXISTS
    assert other_name.details() == "bot 't-shared-1' is already registered, as 'shared'"
    taken_token = await refused(admin, "twin", "t-shared-2", SHARED_TOKEN)
    assert taken_token.code() == grpc.StatusCode.ALREADY_EXISTS
    assert "another bot's" in taken_token.details()
    assert await bot_ids(admin) == ["t-shared-1"]
    assert len((tmp_path / "data" / "bots.jsonl").read_text().splitlines()) == 1
    # the first registration still holds
    stream = Bot(channel, SHARED_TOKEN)
    assert (await stream.hello()).bot_id == "t-shared-1"
    await stream.close()


@pytest.mark.parametrize(
    ("bot_id", "token", "message"),
    [
        ("t-1", "", "give both bot_id and token (or neither: the referee picks them)"),
        ("", SHARED_TOKEN, "give both bot_id and token (or neither: the referee picks them)"),
        ("t 1", SHARED_TOKEN, "bot_id must be 1 to 64 letters, digits, '.', '_' or '-'"),
        ("t-" + "x" * 63, SHARED_TOKEN, "bot_id must be 1 to 64 letters, digits, '.', '_' or '-'"),
        ("t-1", "short", "token must be 24 to 200 printable ASCII characters without spaces"),
        ("t-1", "a token with spaces in it, long", "token must be 24 to 200 printable ASCII characters"),
    ],
)
async def test_an_unfit_shared_id_or_token_is_refused(
    admin: Admin, bot_id: str, token: str, message: str
) -> None:
    error = await refused(admin, "bot", bot_id, token)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details().startswith(message)
    assert await bot_ids(admin) == []


async def test_the_admin_token_is_no_bot_token(tmp_path: Path) -> None:
    admin_token = "admin_long-enough-to-be-a-bot-token"
    croupier = await create_server("127.0.0.1:0", tmp_path / "data", admin_token=admin_token)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{croupier.port}") as channel:
            stub = Admin(channel).stub
            request = admin_pb2.RegisterBotRequest(name="sneaky", bot_id="t-1", token=admin_token)
            with pytest.raises(grpc.aio.AioRpcError) as error:
                await stub.RegisterBot(request, metadata=[("croupier-token", admin_token)])
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert error.value.details() == "a bot token must not be the admin token"
    finally:
        await croupier.stop(grace=None)


async def test_a_shared_bot_is_still_the_same_after_a_restart(tmp_path: Path) -> None:
    for _ in range(2):
        croupier = await create_server("127.0.0.1:0", tmp_path / "data", admin_token=ADMIN_TOKEN)
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{croupier.port}") as channel:
                admin = Admin(channel)
                await register(admin, "shared", "t-shared-1", SHARED_TOKEN)
                assert (await refused(admin, "shared", "t-shared-1", "x" * 30)).code() == (
                    grpc.StatusCode.ALREADY_EXISTS
                )
        finally:
            await croupier.stop(grace=None)


async def test_a_referee_names_itself_and_the_matches_it_creates(
    referee: Croupier, admin: Admin, other: Croupier
) -> None:
    me = await admin.stub.GetReferee(admin_pb2.GetRefereeRequest(), metadata=ADMIN)
    assert me.address == f"127.0.0.1:{referee.port}"  # by default, where it listens
    created = await admin.create("chinese_ten", 2, {"target": 100})
    assert created.referee == me.address
    async with grpc.aio.insecure_channel(f"127.0.0.1:{other.port}") as other_channel:
        other_admin = Admin(other_channel)
        advertised = await other_admin.stub.GetReferee(admin_pb2.GetRefereeRequest(), metadata=ADMIN)
        assert advertised.address == "replica-1.example:50051"
        assert me.instance and advertised.instance and me.instance != advertised.instance
        assert (await other_admin.create("chinese_ten", 2, {"target": 100})).referee == advertised.address
        with pytest.raises(grpc.aio.AioRpcError) as error:
            await other_admin.stub.GetReferee(admin_pb2.GetRefereeRequest())
        assert error.value.code() == grpc.StatusCode.UNAUTHENTICATED
