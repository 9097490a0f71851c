"""Journals: `croupier replay` re-runs a match and checks its result; tampering is caught."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

import grpc
import pytest

from croupier.server import replay
from croupier.server.app import Croupier
from croupier.server.clocks import Clocks
from croupier.server.journal import Act, End, Header, Seated, encode, read_records, seed_sha256
from tests.server.botclient import Admin, Bot, random_legal

HEADER = Header(
    match_id="m",
    game="chinese_ten",
    options={"players": 2},
    players=(Seated("p0", "b0"), Seated("p1", "b1")),
    clocks=Clocks(),
    seed_sha256=seed_sha256(1),
    created_ms=0,
)


async def finished_journal(referee: Croupier, channel: grpc.aio.Channel, admin: Admin) -> Path:
    created = await admin.create("spoil_five", 3, {"deals": 2}, seed=99)
    bots = [Bot(channel, token) for token in created.seat_tokens]
    for bot in bots:
        await bot.hello()
    await asyncio.gather(*(bot.play(random_legal(seat)) for seat, bot in enumerate(bots)))
    await admin.wait(created.match.match_id)
    return referee.referee.matches_dir / f"{created.match.match_id}.jsonl"


def run_replay(capsys: pytest.CaptureFixture[str], *paths: Path) -> tuple[int, str]:
    parser = argparse.ArgumentParser()
    replay.add_arguments(parser)
    code = replay.run(parser.parse_args([str(p) for p in paths]))
    return code, capsys.readouterr().out


def rewrite(path: Path, change: dict[str, object], kind: str = "end") -> Path:
    """A copy of the journal with the first ``kind`` record changed, as someone editing the file would."""
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:
        if record["t"] == kind:
            record.update(change)
            break
    tampered = path.with_name("tampered.jsonl")
    tampered.write_text("".join(json.dumps(r) + "\n" for r in records))
    return tampered


async def test_a_journal_records_the_match_and_replays_to_its_result(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin, capsys: pytest.CaptureFixture[str]
) -> None:
    path = await finished_journal(referee, channel, admin)
    records = read_records(path)
    header, end = records[0], records[-1]
    assert isinstance(header, Header) and isinstance(end, End)
    assert (header.game, header.options["deals"]) == ("spoil_five", 2)
    assert header.seed_sha256 == seed_sha256(99) and b'"seed":' not in path.read_bytes().splitlines()[0]
    assert end.seed == 99
    times = [r.at for r in records[1:]]
    assert times == sorted(times)
    code, out = run_replay(capsys, path)
    assert code == 0
    assert out.startswith(f"{path}: ok: {len(records)} records reproduce the result")


async def test_replay_catches_a_journal_that_does_not_reproduce(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin, capsys: pytest.CaptureFixture[str]
) -> None:
    path = await finished_journal(referee, channel, admin)
    end = read_records(path)[-1]
    assert isinstance(end, End)
    wrong_scores = rewrite(path, {"scores": [s + 1 for s in end.scores]})
    code, out = run_replay(capsys, wrong_scores)
    assert code == 1 and "FAILED: " in out and "replay gives scores" in out
    wrong_seed = rewrite(path, {"seed": 100})
    code, out = run_replay(capsys, wrong_seed)
    assert code == 1 and "does not match the published hash" in out
    acts = [r for r in read_records(path) if isinstance(r, Act)]
    other = next(r.action for r in acts if r.action != acts[0].action)
    wrong_action = rewrite(path, {"action": other}, kind="act")
    code, out = run_replay(capsys, wrong_action)
    assert code == 1 and "FAILED" in out


def test_a_line_cut_short_by_a_crash_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_bytes(encode(HEADER) + b'{"t":"start","at":0.0}\n{"t":"act","at":0.5,"se')
    assert [r.KIND for r in read_records(path)] == ["match", "start"]
