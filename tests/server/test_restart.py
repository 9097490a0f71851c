"""A referee killed with SIGKILL and started again resumes every unfinished match from its journal."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import stat
import subprocess
import sys
from pathlib import Path

import grpc

from croupier.server.journal import read_records
from croupier.server.replay import replay_journal
from croupier.v1 import admin_pb2, match_pb2
from tests.server.botclient import ADMIN_TOKEN, Admin, Bot, first_legal

ROOT = Path(__file__).resolve().parents[2]


class RefereeProcess:
    """``python -m croupier.server.cli`` in a subprocess, as a user runs it."""

    def __init__(self, data: Path, log: Path, *args: str) -> None:
        self.log = log.open("a")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "croupier.server.cli", "--address", "127.0.0.1:0", "--data", str(data),
             "--admin-token", ADMIN_TOKEN, "--metrics-address", "off", *args],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=self.log, text=True,
        )  # fmt: skip

    async def port(self) -> int:
        assert self.process.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(self.process.stdout.readline), 60)
        found = re.fullmatch(r"croupier: serving on 127\.0\.0\.1:(\d+)\n", line)
        assert found, f"unexpected first line {line!r}"
        return int(found.group(1))

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(30)


async def test_a_killed_referee_resumes_its_matches_and_bots_finish_them(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = RefereeProcess(data, tmp_path / "referee.log")
    try:
        port = await first.port()
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            admin = Admin(channel)
            created = await admin.create("chinese_ten", 3, {"target": 100}, seed=5)
            match_id = created.match.match_id
            bots = [Bot(channel, token) for token in created.seat_tokens]
            for bot in bots:
                await bot.hello()
            for seat in (1, 2, 0, 1):  # four turns, then the referee dies with seat 2 to act
                decision = (await bots[seat].expect("decision")).decision
                await bots[seat].move(match_id=match_id, decision_id=decision.decision_id, index=0)
                await bots[seat].expect("action_result")
            pending = (await bots[2].expect("decision")).decision
            before = {d.decision_id for bot in bots for d in bot.of_kind("decision")}
            waiting = await admin.create("platinum_fish", 2, seed=6)  # one seat held: not started
            lonely = Bot(channel, waiting.seat_tokens[0])
            await lonely.hello()
            first.kill()
    finally:
        if first.process.poll() is None:
            first.kill()

    journal = data / "matches" / f"{match_id}.jsonl"
    secret = journal.with_suffix(".secret")
    assert [r.KIND for r in read_records(journal)] == ["match", "start", "act", "act", "act", "act"]
    assert stat.S_IMODE(os.stat(secret).st_mode) == 0o600

    second = RefereeProcess(data, tmp_path / "referee.log")
    try:
        port = await second.port()
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            admin = Admin(channel)
            assert (await admin.get(match_id)).status == match_pb2.MATCH_STATUS_RUNNING
            bots = [Bot(channel, token) for token in created.seat_tokens]
            for bot in bots:
                await bot.hello()
            resumed = (await bots[2].expect("match_started")).match_started
            assert (resumed.match_id, resumed.seat, resumed.resumed) == (match_id, 2, True)
            decision = (await bots[2].expect("decision")).decision
            assert (decision.view, decision.legal_actions) == (pending.view, pending.legal_actions)
            await bots[2].move(match_id=match_id, decision_id=decision.decision_id, index=0)
            ended = await asyncio.gather(*(bot.play(first_legal) for bot in bots))
            after = {d.decision_id for bot in bots for d in bot.of_kind("decision")}
            assert after and not after & before, "a decision id of the first run was issued again"
            info = await admin.wait(match_id)
            assert (await admin.get(waiting.match.match_id)).status == match_pb2.MATCH_STATUS_WAITING
            pair = [Bot(channel, token) for token in waiting.seat_tokens]
            for bot in pair:
                await bot.hello()
            await asyncio.gather(*(bot.play(first_legal) for bot in pair))
            assert (await admin.wait(waiting.match.match_id)).status == match_pb2.MATCH_STATUS_FINISHED
        assert second.stop() == 0
    finally:
        if second.process.poll() is None:
            second.kill()

    assert info.status == match_pb2.MATCH_STATUS_FINISHED
    assert all(not s.forfeited for s in info.result.seats)
    assert all(e.result == info.result for [e] in ended)
    state, records = replay_journal(journal)
    assert [s.score for s in info.result.seats] == list(state.outcome().scores)
    assert [r.KIND for r in records].count("resume") == 1
    assert not secret.exists()
    # one JSON log line per finished match (stderr is no terminal here)
    logged = [
        json.loads(line) for line in (tmp_path / "referee.log").read_text().splitlines() if line[:1] == "{"
    ]
    finished = [entry["match_id"] for entry in logged if entry["event"] == "match finished"]
    assert sorted(finished) == sorted([match_id, waiting.match.match_id])


async def test_after_a_restart_a_stream_holding_an_ended_matchs_token_is_seated_in_its_live_ones(
    tmp_path: Path,
) -> None:
    """A bot given the seat tokens of several matches reconnects with all of them after a kill,
    one of those matches having ended meanwhile: its live seats are held (the stale token grants
    nothing), not refused whole and forfeited "disconnected" when the grace runs out."""
    data = tmp_path / "data"
    first = RefereeProcess(data, tmp_path / "referee.log")
    try:
        port = await first.port()
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            admin = Admin(channel)
            ended = await admin.create("platinum_fish", 2, seed=3)
            live = await admin.create("platinum_fish", 2, seed=4)
            await admin.stub.CancelMatch(
                admin_pb2.CancelMatchRequest(match_id=ended.match.match_id, reason="over"),
                metadata=[("croupier-token", ADMIN_TOKEN)],
            )
            first.kill()
    finally:
        if first.process.poll() is None:
            first.kill()

    second = RefereeProcess(data, tmp_path / "referee.log")
    try:
        port = await second.port()
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stale = Bot(channel, ended.seat_tokens[0], live.seat_tokens[0], name="both")
            other = Bot(channel, live.seat_tokens[1], name="other")
            await stale.hello()
            await other.hello()
            results = await asyncio.gather(stale.play(), other.play())
            assert [r[0].match_id for r in results] == [live.match.match_id] * 2
            assert results[0][0].status == match_pb2.MATCH_STATUS_FINISHED
            assert not any(seat.forfeited for seat in results[0][0].result.seats)  # both seats played it out
            await stale.close()
            await other.close()
            alone = Bot(channel, ended.seat_tokens[0], name="stale")  # a stale token alone: refused
            with contextlib.suppress(grpc.aio.AioRpcError):
                await alone.hello()
            assert alone.call.code is not None
            assert await alone.call.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        assert second.stop() == 0
