"""Damaged data files never brick the referee or make a match vanish: a damaged file is set aside with
its valid prefix kept and said at start; the match resumes up to the damage, or is listed DAMAGED."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
import pytest

from croupier.server.app import Croupier, create_server
from croupier.server.clocks import Clocks
from croupier.server.replay import replay_journal
from croupier.v1 import admin_pb2, bots_pb2, match_pb2, spectator_pb2
from tests.server.botclient import ADMIN, ADMIN_TOKEN, Admin, Bot, first_legal

ROOT = Path(__file__).resolve().parents[2]
DAMAGED = match_pb2.MATCH_STATUS_DAMAGED


@asynccontextmanager
async def referee_on(data: Path) -> AsyncIterator[tuple[Croupier, Admin, grpc.aio.Channel]]:
    croupier = await create_server("127.0.0.1:0", data, admin_token=ADMIN_TOKEN, clocks=Clocks(grace=60.0))
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{croupier.port}") as channel:
            yield croupier, Admin(channel), channel
    finally:
        await croupier.stop(grace=None)


async def unfinished_match(data: Path) -> tuple[str, list[str], list[int]]:
    """A two-seat match left with two moves played: its id, seat tokens and decision ids."""
    async with referee_on(data) as (_, admin, channel):
        created = await admin.create("chinese_ten", 2, {"target": 100})
        bots = [Bot(channel, token) for token in created.seat_tokens]
        for bot in bots:
            await bot.hello()
        ids = []
        for seat in (1, 0):
            decision = (await bots[seat].expect("decision")).decision
            ids.append(decision.decision_id)
            await bots[seat].write(bots_pb2.BotMessage(move=first_legal(decision)))
            await bots[seat].expect("action_result")
    return created.match.match_id, list(created.seat_tokens), ids


async def finished_match(data: Path) -> match_pb2.MatchInfo:
    async with referee_on(data) as (_, admin, channel):
        created = await admin.create("chinese_ten", 2, {"target": 100})
        bots = [Bot(channel, token) for token in created.seat_tokens]
        for bot in bots:
            await bot.hello()
        await asyncio.gather(*(bot.play() for bot in bots))
        return await admin.wait(created.match.match_id)


async def listed(admin: Admin, match_id: str) -> match_pb2.MatchInfo:
    """The match as anyone sees it in ListMatches."""
    response = await admin.spectator.ListMatches(spectator_pb2.ListMatchesRequest())
    [info] = [info for info in response.matches if info.match_id == match_id]
    return info


async def test_a_torn_last_line_in_the_bots_file_is_set_aside_and_the_bots_before_it_kept(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    async with referee_on(data) as (_, admin, _channel):
        tokens = {}
        for name in ("ann", "bob"):
            reply = await admin.stub.RegisterBot(admin_pb2.RegisterBotRequest(name=name), metadata=ADMIN)
            tokens[reply.bot_id] = reply.token
    bots = data / "bots.jsonl"
    whole = bots.read_bytes()
    bots.write_bytes(whole + b'{"bot_id": "b-torn", "na')  # a RegisterBot cut short by a full disk
    async with referee_on(data) as (croupier, admin, channel):
        assert croupier.referee.damaged == [
            f"{bots}: line 3 is not a registered bot (it is cut short); moved aside to "
            "bots.jsonl.damaged, its first 2 lines kept"
        ]
        known = await admin.stub.ListBots(admin_pb2.ListBotsRequest(), metadata=ADMIN)
        assert sorted(bot.name for bot in known.bots) == ["ann", "bob"]
        for bot_id, token in tokens.items():
            assert (await Bot(channel, token).hello()).bot_id == bot_id
        await admin.stub.RegisterBot(admin_pb2.RegisterBotRequest(name="cid"), metadata=ADMIN)
    assert (data / "bots.jsonl.damaged").read_bytes() == whole + b'{"bot_id": "b-torn", "na'
    assert len(bots.read_bytes().splitlines()) == 3
    async with referee_on(data) as (croupier, _admin, _channel):
        assert croupier.referee.damaged == []


async def test_an_invalid_record_appended_to_an_unfinished_journal_is_cut_off_and_the_match_resumes(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    match_id, tokens, ids_before = await unfinished_match(data)
    journal = data / "matches" / f"{match_id}.jsonl"
    whole = journal.read_bytes()
    bad = {"t": "act", "at": 9.0, "seat": 0, "action": "zz", "d": 1, "think": 0.0, "bank": 0.0}
    journal.write_bytes(whole + json.dumps(bad).encode() + b"\n")
    async with referee_on(data) as (croupier, admin, channel):
        [damage] = croupier.referee.damaged
        assert damage.startswith(f"{journal}: line {len(whole.splitlines()) + 1} does not apply (")
        assert damage.endswith(
            f"moved aside to {journal.name}.damaged, its first {len(whole.splitlines())} lines kept"
        )
        assert (await listed(admin, match_id)).status == match_pb2.MATCH_STATUS_RUNNING
        bots = [Bot(channel, token) for token in tokens]
        for bot in bots:
            await bot.hello()
        ended = await asyncio.gather(*(bot.play() for bot in bots))
        assert all(e[0].status == match_pb2.MATCH_STATUS_FINISHED for e in ended)
        ids_after = [m.decision.decision_id for bot in bots for m in bot.received if m.HasField("decision")]
        assert min(ids_after) > max(ids_before)  # a new run's ids: none repeats one sent before
    assert (
        (journal.parent / f"{journal.name}.damaged")
        .read_bytes()
        .endswith(b'"action": "zz"' + b', "d": 1, "think": 0.0, "bank": 0.0}\n')
    )
    assert journal.read_bytes().startswith(whole)
    replay_journal(journal)  # the result recorded is the one the records give


async def test_a_match_whose_seed_file_is_lost_is_listed_damaged_with_what_is_known(tmp_path: Path) -> None:
    data = tmp_path / "data"
    match_id, tokens, _ = await unfinished_match(data)
    (data / "matches" / f"{match_id}.secret").unlink()
    async with referee_on(data) as (croupier, admin, channel):
        assert croupier.referee.damaged == [
            f"{data / 'matches' / match_id}.jsonl: its seed file {match_id}.secret is missing: match "
            f"{match_id} is listed as DAMAGED (files left as they are)"
        ]
        info = await listed(admin, match_id)
        assert (info.status, info.damage, info.game) == (
            DAMAGED,
            f"its seed file {match_id}.secret is missing",
            "chinese_ten",
        )
        assert [p.name for p in info.players] == ["p0", "p1"] and info.seed_sha256
        assert (await admin.get(match_id)) == info
        with pytest.raises(grpc.aio.AioRpcError) as replay:
            await admin.spectator.GetRecord(spectator_pb2.GetRecordRequest(match_id=match_id))
        assert replay.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert f"match {match_id} is damaged (its seed file" in (replay.value.details() or "")
        with pytest.raises(grpc.aio.AioRpcError) as seat:
            await Bot(channel, tokens[0]).hello()
        assert seat.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_a_finished_match_keeps_its_result_whatever_follows_its_end(tmp_path: Path) -> None:
    data = tmp_path / "data"
    finished = await finished_match(data)
    journal = data / "matches" / f"{finished.match_id}.jsonl"
    whole = journal.read_bytes()
    journal.write_bytes(whole + b'{"t": "act", "at": 99.0}\n\x00\x00garbage')
    async with referee_on(data) as (croupier, admin, _channel):
        [damage] = croupier.referee.damaged
        assert damage.startswith(
            f"{journal}: line {len(whole.splitlines()) + 1} comes after the match's end;"
        )
        info = await listed(admin, finished.match_id)
        assert (info.status, info.result, info.seed) == (finished.status, finished.result, finished.seed)
        record = await admin.spectator.GetRecord(spectator_pb2.GetRecordRequest(match_id=finished.match_id))
        assert record.frames[-1].step.kind == spectator_pb2.Step.Kind.END
    assert journal.read_bytes() == whole


async def test_a_finished_match_whose_end_record_is_lost_is_listed_damaged(tmp_path: Path) -> None:
    data = tmp_path / "data"
    finished = await finished_match(data)
    journal = data / "matches" / f"{finished.match_id}.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join(lines[:-1]))  # the end record, and the seed it revealed, lost
    # the referee deletes the seed file once the end record is down, maybe just after WaitMatch answers
    (data / "matches" / f"{finished.match_id}.secret").unlink(missing_ok=True)
    async with referee_on(data) as (croupier, admin, _channel):
        assert len(croupier.referee.damaged) == 1
        info = await listed(admin, finished.match_id)
        assert (info.status, info.damage) == (DAMAGED, f"its seed file {finished.match_id}.secret is missing")
        assert info.players[0].name == finished.players[0].name


async def test_a_journal_without_a_header_is_listed_damaged_under_its_file_name(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "matches").mkdir(parents=True)
    (data / "matches" / "20990101-000000-abcdef.jsonl").write_bytes(b"\x00\x00\x00")
    async with referee_on(data) as (croupier, admin, _channel):
        assert len(croupier.referee.damaged) == 1
        info = await listed(admin, "20990101-000000-abcdef")
        assert (info.status, info.damage) == (DAMAGED, "line 1 is cut short: no match header")


async def test_a_journal_the_referee_cannot_read_is_listed_damaged_and_the_others_load(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    finished = await finished_match(data)
    (data / "matches" / "20990101-000000-abcdef.jsonl").mkdir()  # not a file at all
    async with referee_on(data) as (croupier, admin, _channel):
        assert len(croupier.referee.damaged) == 1
        info = await listed(admin, "20990101-000000-abcdef")
        assert (info.status, info.damage) == (DAMAGED, "it cannot be used (Is a directory)")
        assert (await listed(admin, finished.match_id)).status == match_pb2.MATCH_STATUS_FINISHED


async def test_croupier_serve_names_each_damaged_file_as_it_starts(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "bots.jsonl").write_text('{"bot_id": "b-1", "name": "ann", "token_sha256": "00"}\n{"bot_id"')
    process = subprocess.Popen(
        [sys.executable, "-m", "croupier.server.cli", "--address", "127.0.0.1:0", "--data", str(data),
         "--admin-token", ADMIN_TOKEN, "--metrics-address", "off"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        first = await asyncio.wait_for(asyncio.to_thread(process.stdout.readline), 60)
        second = await asyncio.wait_for(asyncio.to_thread(process.stdout.readline), 60)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)
    assert first == (
        f"croupier: damaged: {data / 'bots.jsonl'}: line 2 is not a registered bot (it is cut short); "
        "moved aside to bots.jsonl.damaged, its first line kept\n"
    )
    assert re.fullmatch(r"croupier: serving on 127\.0\.0\.1:\d+\n", second)
