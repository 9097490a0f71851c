"""Bots written in other languages (Node.js, C++, Go) against a real referee: one helper plays a whole
match of every game between such a bot and the bundled Python bots, and checks what a user would see."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Awaitable, Sequence
from pathlib import Path

import grpc
import pytest

from croupier.clients.bots import HeuristicBot, RandomBot
from croupier.clients.checkbot.cli import CHECKS
from croupier.clients.sdk import Client
from croupier.server import datafiles
from croupier.server.app import Croupier
from croupier.server.journal import Act, read_records
from croupier.v1 import admin_pb2, bots_pb2, match_pb2
from tests.clients.sdk.test_sdk import SHORT
from tests.server.botclient import WAIT, Admin, Bot, first_legal
from tests.server.conftest import Disk
from tests.toolchains import missing, need

REPO = Path(__file__).resolve().parents[2]


def built(target: str, what: str) -> Path:
    """``make TARGET`` (cpp-bot, go-bot): the starter bot's binary, built once for its sources' content.
    A skip (a failure under CI) saying which Debian packages are missing; the tests never install them."""
    make = need("make", f"{what} is built with make")
    check = subprocess.run(
        [make, "-s", target.replace("-bot", "-toolchain"), "TOOLCHAIN_CHECK=--check"],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    if check.returncode:
        missing((check.stdout + check.stderr).strip())
    build = subprocess.run(
        [make, "-s", target, "TOOLCHAIN_CHECK=--check"], cwd=REPO, capture_output=True, text=True, timeout=900
    )
    assert build.returncode == 0, build.stdout + build.stderr
    binary = REPO / "build" / target / "croupier-bot"
    assert binary.is_file(), build.stdout
    return binary


async def run(command: Sequence[str], cwd: Path = REPO) -> tuple[int, str]:
    """Run a bot until it exits; its exit code and everything it printed."""
    process = await asyncio.create_subprocess_exec(
        *command, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    try:
        output, _ = await asyncio.wait_for(process.communicate(), WAIT)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode is not None
    return process.returncode, output.decode()


async def plays_every_game(command: Sequence[str], referee: Croupier, admin: Admin, cwd: Path = REPO) -> str:
    """The bot (seat 0, seat tokens, ``--matches``) plays one match of every game against the bundled
    bots, at tables where the Python streams speak both protocols (seat 1 the SDK's default stream
    options, seat 2 none: protocol 1); every match must finish with the bot's seat neither
    forfeited, timed out nor refused, and each of its moves journaled with the comment it sent
    (every starter shows how to send one). Its log."""
    address = f"127.0.0.1:{referee.port}"
    matches: list[admin_pb2.CreateMatchResponse] = []
    for game, options in SHORT.items():
        seats = [admin_pb2.SeatSpec(name="starter")] + [
            admin_pb2.SeatSpec(name=f"python{i}") for i in range(1, options["players"])
        ]
        matches.append(await admin.create(game, seats, options, seed=21))
    tokens = [arg for m in matches for arg in ("--token", m.seat_tokens[0])]
    pythons = [
        Client(
            HeuristicBot if seat % 2 else RandomBot,
            address,
            [token],
            stop_after=1,
            options=None if seat % 2 else bots_pb2.StreamOptions(),
        )
        for m in matches
        for seat, token in enumerate(m.seat_tokens[1:], start=1)
    ]
    bot = asyncio.ensure_future(
        run([*command, "--server", address, *tokens, "--matches", str(len(matches))], cwd)
    )
    await asyncio.wait_for(asyncio.gather(*(c.run() for c in pythons)), WAIT)
    code, log = await bot
    assert code == 0, log
    assert f"stopped after {len(matches)} match(es)" in log
    for created in matches:
        info = await admin.wait(created.match.match_id)
        assert info.status == match_pb2.MATCH_STATUS_FINISHED
        seat = info.result.seats[0]
        assert (seat.name, seat.forfeited, seat.timeouts, seat.refusals) == ("starter", "", 0, 0), log
        assert f"match {created.match.match_id} over: place {seat.place}" in log
        records = read_records(referee.referee.matches_dir / f"{created.match.match_id}.jsonl")
        acts = [r for r in records if isinstance(r, Act) and r.seat == 0]
        assert acts and all(act.comment for act in acts), acts[:3]
    return log


async def says_why_it_was_refused(command: Sequence[str], referee: Croupier, cwd: Path = REPO) -> None:
    """An unknown token: the bot exits with 2 and the referee's reason, without retrying."""
    code, log = await run([*command, "--server", f"127.0.0.1:{referee.port}", "--token", "nonsense"], cwd)
    assert code == 2, log
    assert "UNAUTHENTICATED" in log and "unknown token" in log
    assert "reconnecting" not in log


def check_bot(command: Sequence[str], *only: str, protocol_1: bool = False) -> tuple[int, dict[str, str]]:
    """``croupier check-bot`` on ``command`` (``only`` these checks; ``--protocol-1`` if ``protocol_1``):
    its exit code, and each check's row of the table (after the name), by name."""
    options = [arg for name in only for arg in ("--only", name)] + ["--protocol-1"] * protocol_1
    result = subprocess.run(
        [sys.executable, "-m", "croupier.clients.cli", "check-bot", *options, "--", *command],
        cwd=REPO, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    rows = {}
    for line in result.stdout.splitlines():
        name, _, rest = line.partition(" ")
        if name in CHECKS:
            rows[name] = rest.strip()
    assert result.returncode in (0, 1), result.stdout + result.stderr
    return result.returncode, rows


def passes_check_bot(command: Sequence[str], protocol_1: bool = False) -> dict[str, str]:
    """Every check of ``croupier check-bot`` passes, each row saying so; the rows, by name."""
    code, rows = check_bot(command, protocol_1=protocol_1)
    assert list(rows) == list(CHECKS), rows
    failed = {name: row for name, row in rows.items() if not row.startswith("pass")}
    assert not failed and code == 0, failed
    return rows


def one_match(command: Sequence[str], referee: Croupier, token: str, cwd: Path) -> Awaitable[tuple[int, str]]:
    """Run the bot with one seat token and ``--matches 1``: its exit code and output."""
    return run([*command, "--server", f"127.0.0.1:{referee.port}", "--token", token, "--matches", "1"], cwd)


async def lets_a_taken_over_seat_go(
    command: Sequence[str], referee: Croupier, channel: grpc.aio.Channel, admin: Admin, cwd: Path = REPO
) -> None:
    """The bot (seat 1, ``--matches 1``) has led when another stream takes its seat over
    (REASON_SEAT_TAKEN_OVER): it must count that match done and stop, saying why."""
    created = await admin.create("chinese_ten", 2, {"target": 100}, decision_ms=60_000)
    seat0 = Bot(channel, created.seat_tokens[0])
    await seat0.hello()
    bot = asyncio.ensure_future(one_match(command, referee, created.seat_tokens[1], cwd))
    await seat0.expect("decision")
    newcomer = Bot(channel, created.seat_tokens[1])
    await newcomer.hello()
    code, log = await bot
    assert code == 0, log
    assert "REASON_SEAT_TAKEN_OVER" in log and "stopped after 1 match(es)" in log
    await asyncio.gather(seat0.close(), newcomer.close())


class FullAfter(Disk):
    """The referee's data files on a disk that fills up once ``writes`` more writes have gone through."""

    def __init__(self, writes: int) -> None:
        super().__init__(datafiles.write_bytes)
        self.left = writes

    def write_bytes(self, fd: int, data: bytes) -> None:
        if self.left == 0:
            self.full = True
        self.left -= 1
        super().write_bytes(fd, data)


async def resends_what_the_referee_could_not_journal(
    command: Sequence[str],
    referee: Croupier,
    channel: grpc.aio.Channel,
    admin: Admin,
    monkeypatch: pytest.MonkeyPatch,
    cwd: Path = REPO,
) -> None:
    """The bot's (seat 0's) first answer meets a full disk (REASON_JOURNAL_FULL: nothing was played);
    once there is room it must send the answer again, so the match ends without a timeout."""
    created = await admin.create("chinese_ten", 2, {"target": 50}, seed=3)
    leader = Bot(channel, created.seat_tokens[1])  # seat 1 leads; the bot answers second
    await leader.hello()
    bot = asyncio.ensure_future(one_match(command, referee, created.seat_tokens[0], cwd))
    decision = (await leader.expect("decision")).decision
    disk = FullAfter(1)  # the leader's move goes in; the bot's answer meets a full disk
    monkeypatch.setattr(datafiles, "write_bytes", disk.write_bytes)
    await leader.write(bots_pb2.BotMessage(move=first_legal(decision)))
    while not disk.refused:
        await asyncio.sleep(0.01)
    disk.full = False
    await asyncio.wait_for(leader.play(), WAIT)
    code, log = await bot
    assert code == 0, log
    seats = (await admin.wait(created.match.match_id)).result.seats
    assert [(s.timeouts, s.refusals) for s in seats] == [(0, 0), (0, 0)], log
    assert "REASON_JOURNAL_FULL" in log
