"""A full disk: whatever the journal cannot take is not played, memory and journal never drift apart,
callers get RESOURCE_EXHAUSTED, and the match goes on once there is room again.

The disk is made full through the one seam every data file is written through (``Disk``: part of
the bytes, then ENOSPC); where root may mount one, a real tiny tmpfs as well."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from croupier.server.app import Croupier, create_server
from croupier.server.clocks import Clocks
from croupier.server.match_journal import RETRY_SECONDS
from croupier.server.replay import replay_journal
from croupier.v1 import admin_pb2, bots_pb2, match_pb2
from tests.server.botclient import ADMIN, ADMIN_TOKEN, WAIT, Admin, Bot, first_legal
from tests.server.conftest import Disk
from tests.server.fakes import table

ERROR = bots_pb2.Error.Code


async def started(channel: grpc.aio.Channel, admin: Admin, **clocks: int) -> tuple[str, list[Bot]]:
    created = await admin.create("chinese_ten", 2, {"target": 100}, **clocks)
    bots = [Bot(channel, token) for token in created.seat_tokens]
    for bot in bots:
        await bot.hello()
    return created.match.match_id, bots


async def test_a_move_the_journal_cannot_take_is_not_played_and_can_be_sent_again(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin, disk: Disk
) -> None:
    match_id, bots = await started(channel, admin)
    journal = referee.referee.matches_dir / f"{match_id}.jsonl"
    decision = (await bots[1].expect("decision")).decision
    before = journal.read_bytes()
    disk.full = True
    for _ in range(3):
        await bots[1].write(bots_pb2.BotMessage(move=first_legal(decision)))
        error = (await bots[1].expect("error", "action_result")).error
        assert (error.code, error.match_id) == (ERROR.RESOURCE_EXHAUSTED, match_id)
        assert (
            "cannot write match" in error.message
            and "nothing was played; send your move again" in error.message
        )
    assert journal.read_bytes() == before  # nothing torn left behind
    disk.full = False
    await bots[1].write(bots_pb2.BotMessage(move=first_legal(decision)))  # the same decision: still open
    accepted = (await bots[1].expect("action_result")).action_result
    assert accepted.status == bots_pb2.ActionResult.ACCEPTED
    ended = await asyncio.gather(*(bot.play() for bot in bots))
    assert ended[0][0].status == match_pb2.MATCH_STATUS_FINISHED
    replay_journal(journal)  # memory and journal agree: the journal gives the result the bots were told
    assert not bots[1].of_kind("error")[3:]


def test_a_clock_that_runs_out_on_a_full_disk_is_played_once_there_is_room(
    tmp_path: Path, disk: Disk
) -> None:
    t = table(tmp_path, options={"target": 100}, clocks=Clocks(decision=0.05, bank=0, max_timeouts=5))
    records = len(t.journal())
    disk.full = True  # the clock runs out: its timeout cannot be journaled, so nothing is played
    t.clock.advance(0.05)
    t.clock.advance(RETRY_SECONDS)  # it tries again, and again finds no room
    assert disk.refused == 2
    assert len(t.journal()) == records
    assert not t.bots[1].of("action_result")
    disk.full = False
    t.clock.advance(RETRY_SECONDS)
    timed_out = t.bots[1].of("action_result")[-1]
    assert timed_out.status == bots_pb2.ActionResult.TIMED_OUT
    t.play_out()
    replay_journal(t.match.journal_path)  # memory and journal agree


async def test_admin_calls_on_a_full_disk_are_resource_exhausted_and_change_nothing(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin, disk: Disk
) -> None:
    match_id, _ = await started(channel, admin)
    bots_file = referee.referee.data_dir / "bots.jsonl"
    await admin.stub.RegisterBot(admin_pb2.RegisterBotRequest(name="ann"), metadata=ADMIN)
    before = bots_file.read_bytes()
    disk.full = True
    calls = {
        "RegisterBot": admin.stub.RegisterBot(admin_pb2.RegisterBotRequest(name="bob"), metadata=ADMIN),
        "CreateMatch": admin.create("chinese_ten", 2),
        "CancelMatch": admin.stub.CancelMatch(
            admin_pb2.CancelMatchRequest(match_id=match_id, reason="moved on"), metadata=ADMIN
        ),
    }
    for name, call in calls.items():
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await call
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, name
        assert "OSError" not in (refused.value.details() or ""), name
    disk.full = False
    assert bots_file.read_bytes() == before
    listed = await admin.stub.ListBots(admin_pb2.ListBotsRequest(), metadata=ADMIN)
    assert [bot.name for bot in listed.bots] == ["ann"]
    assert (await admin.get(match_id)).status == match_pb2.MATCH_STATUS_RUNNING
    assert len(referee.referee.matches) == 1
    await admin.stub.RegisterBot(admin_pb2.RegisterBotRequest(name="bob"), metadata=ADMIN)


@contextlib.contextmanager
def tiny_filesystem(where: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs at ``where`` (root only; skips where mounting is not allowed)."""
    where.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tiny tmpfs needs root and mount(8)")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


async def patient(bot: Bot, exhausted: asyncio.Event, room: asyncio.Event) -> None:
    """Play to the end; a move refused for want of room is sent again once there is room."""
    move = None
    while True:
        message = await bot.read()
        kind = message.WhichOneof("message")
        if kind == "decision":
            move = bots_pb2.BotMessage(move=first_legal(message.decision))
            await bot.write(move)
        elif kind == "error" and message.error.code == ERROR.RESOURCE_EXHAUSTED and move is not None:
            exhausted.set()
            await room.wait()
            await bot.write(move)
        elif kind == "match_ended":
            return


async def test_a_real_full_filesystem_answers_resource_exhausted_and_the_match_goes_on(
    tmp_path: Path,
) -> None:
    with tiny_filesystem(tmp_path / "disk") as disk:
        croupier = await create_server("127.0.0.1:0", disk / "data", admin_token=ADMIN_TOKEN, clocks=Clocks())
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{croupier.port}") as channel:
                admin = Admin(channel)
                created = await admin.create("chinese_ten", 2, {"target": 1000})  # long enough to fill it
                filler = disk / "filler"
                with contextlib.suppress(OSError), filler.open("wb") as file:
                    while True:
                        file.write(b"\0" * 4096)
                        file.flush()
                exhausted, room = asyncio.Event(), asyncio.Event()
                bots = [Bot(channel, token) for token in created.seat_tokens]
                for bot in bots:
                    await bot.hello()
                playing = asyncio.gather(*(patient(bot, exhausted, room) for bot in bots))
                await asyncio.wait_for(exhausted.wait(), WAIT)  # the journal's last page filled up
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await admin.stub.RegisterBot(admin_pb2.RegisterBotRequest(name="ann"), metadata=ADMIN)
                assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                filler.unlink()
                room.set()
                await asyncio.wait_for(playing, WAIT)
                assert (await admin.wait(created.match.match_id)).status == match_pb2.MATCH_STATUS_FINISHED
        finally:
            await croupier.stop(grace=None)
        replay_journal(disk / "data" / "matches" / f"{created.match.match_id}.jsonl")
