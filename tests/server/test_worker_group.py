"""The workers of one ``croupier serve --workers``: each writes only its own data, and a bot
registered through any of them is known to all (server/group.py)."""

from __future__ import annotations

import fcntl
import os
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from croupier.server import group
from croupier.server.app import Croupier, create_server
from croupier.server.group import Siblings, worker_data, write_addresses
from croupier.server.referee import Referee
from croupier.v1 import admin_pb2
from croupier.wire.errors import AlreadyExists, Unauthenticated, Unavailable
from tests.server.botclient import ADMIN, ADMIN_TOKEN, Admin

TOKEN = "bot_one-secret-for-the-whole-group"


@pytest.fixture
async def workers(tmp_path: Path) -> AsyncIterator[list[Croupier]]:
    """Two workers of a group under tmp_path, in this process."""
    started = [
        await create_server("127.0.0.1:0", worker_data(tmp_path, i), admin_token=ADMIN_TOKEN, group=tmp_path)
        for i in range(2)
    ]
    yield started
    for croupier in started:
        await croupier.stop(grace=None)


def referees(workers: list[Croupier]) -> tuple[Referee, Referee]:
    return workers[0].referee, workers[1].referee


async def test_a_bot_registered_through_one_worker_is_known_to_the_other_at_once(
    workers: list[Croupier], tmp_path: Path
) -> None:
    one, other = referees(workers)
    bot, token = one.register_bot("alpha")
    assert other.identify([token]).bot == bot
    assert [b.bot_id for b in other.bot_summaries()] == [bot.bot_id]
    # written once, by the worker it was registered through
    assert not (worker_data(tmp_path, 1) / "bots.jsonl").exists()


async def test_one_bot_id_never_gets_two_tokens_over_the_group(
    workers: list[Croupier], tmp_path: Path
) -> None:
    one, other = referees(workers)
    one.register_bot("alpha", "alpha-1", TOKEN)
    with pytest.raises(AlreadyExists, match="with another token"):
        other.register_bot("alpha", "alpha-1", "bot_" + "x" * 30)
    with pytest.raises(AlreadyExists, match="another bot's"):
        other.register_bot("beta", "beta-1", TOKEN)
    again, _ = other.register_bot("alpha", "alpha-1", TOKEN)  # as the runner does on every replica
    assert again.bot_id == "alpha-1"
    assert not (worker_data(tmp_path, 1) / "bots.jsonl").exists()


async def test_an_unknown_token_stays_unknown_on_every_worker(workers: list[Croupier]) -> None:
    one, other = referees(workers)
    one.register_bot("alpha")
    with pytest.raises(Unauthenticated, match="plays only on the worker holding its match"):
        other.identify(["bot_" + "y" * 30])


async def test_a_worker_started_later_knows_the_bots_registered_before(tmp_path: Path) -> None:
    first = await create_server(
        "127.0.0.1:0", worker_data(tmp_path, 0), admin_token=ADMIN_TOKEN, group=tmp_path
    )
    try:
        bot, _ = first.referee.register_bot("alpha")
        second = await create_server(
            "127.0.0.1:0", worker_data(tmp_path, 1), admin_token=ADMIN_TOKEN, group=tmp_path
        )
        try:
            assert second.referee.bots == {bot.bot_id: bot}
        finally:
            await second.stop(grace=None)
    finally:
        await first.stop(grace=None)


def test_a_line_being_appended_is_read_once_it_is_whole(tmp_path: Path) -> None:
    writer = worker_data(tmp_path, 0)
    writer.mkdir()
    reader = Siblings(tmp_path, worker_data(tmp_path, 1))
    line = b'{"bot_id": "b-1", "name": "alpha", "token_sha256": "00"}\n'
    (writer / "bots.jsonl").write_bytes(line[:20])
    assert reader.new_bot_lines() == []
    with (writer / "bots.jsonl").open("ab") as file:
        file.write(line[20:])
    assert reader.new_bot_lines() == [line]
    assert reader.new_bot_lines() == []


def test_a_file_its_worker_rewrote_is_read_again_from_its_start(tmp_path: Path) -> None:
    writer = worker_data(tmp_path, 0)
    writer.mkdir()
    reader = Siblings(tmp_path, worker_data(tmp_path, 1))
    line = b'{"bot_id": "b-1", "name": "alpha", "token_sha256": "00"}\n'
    (writer / "bots.jsonl").write_bytes(line + b"damaged\n")
    assert reader.new_bot_lines() == [line, b"damaged\n"]
    (writer / "bots.jsonl.new").write_bytes(line)  # as set_aside keeps the valid prefix
    os.replace(writer / "bots.jsonl.new", writer / "bots.jsonl")
    assert reader.new_bot_lines() == [line]


async def test_get_referee_names_every_worker_once_the_parent_has(
    workers: list[Croupier], tmp_path: Path
) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{workers[1].port}") as channel:
        admin = Admin(channel)
        before = await admin.stub.GetReferee(admin_pb2.GetRefereeRequest(), metadata=ADMIN)
        assert list(before.workers) == []
        write_addresses(tmp_path, ["127.0.0.1:1", "127.0.0.1:2"])
        after = await admin.stub.GetReferee(admin_pb2.GetRefereeRequest(), metadata=ADMIN)
        assert list(after.workers) == ["127.0.0.1:1", "127.0.0.1:2"]


async def test_only_the_admin_learns_the_workers_addresses(workers: list[Croupier], tmp_path: Path) -> None:
    """RefereeInfo (the workers' addresses) is the operator's: no card secret of DESIGN.md's table,
    an admin endpoint. An anonymous caller, or a bot with its own token, asking any worker is
    refused and learns no address."""
    write_addresses(tmp_path, ["127.0.0.1:1", "127.0.0.1:2"])
    _, token = workers[0].referee.register_bot("alpha")
    for worker in workers:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{worker.port}") as channel:
            stub = Admin(channel).stub
            for metadata, code in (
                ((), grpc.StatusCode.UNAUTHENTICATED),
                ((("croupier-token", token),), grpc.StatusCode.PERMISSION_DENIED),
            ):
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await stub.GetReferee(admin_pb2.GetRefereeRequest(), metadata=metadata)
                assert refused.value.code() == code
                assert "127.0.0.1:1" not in (refused.value.details() or "")


async def test_a_bot_registered_before_the_data_had_workers_keeps_its_token(tmp_path: Path) -> None:
    alone = await create_server("127.0.0.1:0", tmp_path, admin_token=ADMIN_TOKEN)  # no --workers
    bot, token = alone.referee.register_bot("alpha")
    await alone.stop(grace=None)
    worker = await create_server(
        "127.0.0.1:0", worker_data(tmp_path, 0), admin_token=ADMIN_TOKEN, group=tmp_path
    )
    try:
        assert worker.referee.identify([token]).bot == bot
    finally:
        await worker.stop(grace=None)


async def test_a_registration_stuck_on_another_worker_is_unavailable_not_a_frozen_worker(
    workers: list[Croupier], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(group, "LOCK_SECONDS", 0.05)
    one, _ = referees(workers)
    with (tmp_path / "bots.lock").open("ab") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as a worker stopped mid-registration holds it
        with pytest.raises(Unavailable, match="nothing was registered; try again"):
            one.register_bot("alpha")
    assert one.bots == {}
    assert one.register_bot("alpha")[0].name == "alpha"
