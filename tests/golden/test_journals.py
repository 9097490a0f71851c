"""Journals written by an earlier referee (tests/golden/journals/, made by journals.py) still read back
byte for byte, replay to what that referee showed, and the unfinished ones resume and play to the end
in today's referee: a change that breaks old journals fails here before it loses anyone's match."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from croupier.server.journal import KINDS, VERSION, Header, encode, read_private, scan
from croupier.server.replay import replay_journal
from croupier.v1 import match_pb2, spectator_pb2
from tests.golden.journals import FOLDER, frames_sha256
from tests.server.botclient import ADMIN, Bot, random_legal
from tests.server.test_damaged_files import referee_on

JOURNALS = sorted(FOLDER.glob("*.jsonl"))
BROKEN = "this changes the journal format: migrate or bump the version (tests/golden/README.md)"


def expected(path: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(path.with_suffix(".json").read_text())
    return found


def seed_of(path: Path) -> int | None:
    secret = path.with_suffix(".secret")
    return int(read_private(secret)["seed"]) if secret.exists() else None


def test_there_are_golden_journals_of_every_game_finished_and_not() -> None:
    kinds = {path.stem.split("-")[0] for path in JOURNALS}
    assert kinds == {"chinese_ten", "pair_battle", "platinum_fish", "spoil_five"}
    finished = {
        p.stem.split("-")[0] for p in JOURNALS if p.stem.endswith("finished") and "unfinished" not in p.stem
    }
    unfinished = {p.stem.split("-")[0] for p in JOURNALS if p.stem.endswith("-unfinished")}
    assert finished == unfinished == kinds
    written = {record.KIND for path in JOURNALS for record in scan(path).records}
    assert written == set(KINDS), f"no golden journal has a {sorted(set(KINDS) - written)} record"


@pytest.mark.parametrize("path", JOURNALS, ids=[p.stem for p in JOURNALS])
def test_every_line_reads_back_as_the_record_that_writes_it_again(path: Path) -> None:
    journal = scan(path)
    assert journal.damage == "", f"{path.name}: {journal.damage}: {BROKEN}"
    lines = path.read_bytes().splitlines(keepends=True)
    assert len(journal.records) == len(lines)
    if journal.migrated:  # written by an older version: it reads through MIGRATIONS, and is not written so
        return
    for number, (line, record) in enumerate(zip(lines, journal.records, strict=True), 1):
        assert encode(record) == line, f"{path.name} line {number} is written differently now: {BROKEN}"


@pytest.mark.parametrize("path", JOURNALS, ids=[p.stem for p in JOURNALS])
def test_every_golden_journal_replays_and_a_finished_one_to_its_recorded_result(path: Path) -> None:
    seed = seed_of(path)
    if path.stem == "chinese_ten-damaged":  # its seed file is lost: nothing can replay it
        assert seed is None
        return
    try:
        replay_journal(path, seed)
    except Exception as exc:
        raise AssertionError(f"{path.name} no longer replays ({exc}): {BROKEN}") from None


async def test_a_referee_takes_the_golden_journals_up_shows_what_it_showed_and_plays_the_rest_out(
    tmp_path: Path,
) -> None:
    matches = tmp_path / "data" / "matches"
    matches.mkdir(parents=True, mode=0o700)
    ids: dict[str, str] = {}
    for path in JOURNALS:
        header = scan(path).records[0]
        assert isinstance(header, Header)
        ids[path.stem] = header.match_id
        for suffix in (".jsonl", ".secret"):
            if path.with_suffix(suffix).exists():
                shutil.copyfile(path.with_suffix(suffix), matches / f"{header.match_id}{suffix}")
                (matches / f"{header.match_id}{suffix}").chmod(0o600)
    async with referee_on(tmp_path / "data") as (croupier, admin, channel):
        damaged = ids["chinese_ten-damaged"]
        assert croupier.referee.damaged == [
            f"{matches / damaged}.jsonl: its seed file {damaged}.secret is missing: match {damaged} is "
            "listed as DAMAGED (files left as they are)"
        ]
        assert (await admin.get(damaged)).status == match_pb2.MATCH_STATUS_DAMAGED
        over = [name for name in ids if "frames" in expected(FOLDER / f"{name}.jsonl")]
        for name in over:
            want = expected(FOLDER / f"{name}.jsonl")
            info = await admin.get(ids[name])
            request = spectator_pb2.GetRecordRequest(match_id=ids[name])
            record = await admin.spectator.GetRecord(request, metadata=ADMIN)
            seen = (match_pb2.MatchStatus.Name(info.status), json_format.MessageToDict(info.result))
            assert seen == (want["status"], want["result"]), f"{name}: {BROKEN}"
            assert (len(record.frames), frames_sha256(record.frames)) == (
                want["frames"],
                want["frames_sha256"],
            ), f"{name}: its record's frames are not the ones the referee that wrote it gave: {BROKEN}"
        resumable = [name for name in ids if "seat_tokens" in expected(FOLDER / f"{name}.jsonl")]
        resumable.remove("chinese_ten-damaged")
        bots = {
            name: [Bot(channel, token) for token in expected(FOLDER / f"{name}.jsonl")["seat_tokens"]]
            for name in resumable
        }
        for seated in bots.values():
            for bot in seated:
                await bot.hello()
        await asyncio.gather(
            *(bot.play(random_legal(seat)) for seated in bots.values() for seat, bot in enumerate(seated))
        )
        for name in resumable:
            info = await admin.wait(ids[name])
            assert info.status == match_pb2.MATCH_STATUS_FINISHED, f"{name} did not play to its end"
    for name in resumable:
        resumed = matches / f"{ids[name]}.jsonl"
        golden = (FOLDER / f"{name}.jsonl").read_bytes()
        if scan(FOLDER / f"{name}.jsonl").migrated:  # rewritten in today's version, the old kept beside
            version = json.loads(golden.splitlines()[0])["version"]
            assert resumed.with_name(f"{resumed.name}.v{version}").read_bytes() == golden
            lines, old = resumed.read_bytes().splitlines(), golden.splitlines()
            assert lines[1 : len(old)] == old[1:] and json.loads(lines[0])["version"] == VERSION
        else:
            assert resumed.read_bytes().startswith(golden)
        replay_journal(resumed)
