"""Journal records are typed: one class per kind, read strictly (an unknown or malformed record is damage
named by file, line and kind, never a crash or a silent skip), and versioned (newer: refused; older:
migrated)."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any, get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from croupier.engine.games import GAMES
from croupier.engine.rng import Rng
from croupier.server import journal
from croupier.server.journal import (
    KINDS,
    Act,
    Record,
    RecordError,
    encode,
    from_json,
    read_line,
    scan,
    to_json,
)
from croupier.server.replay import replay_journal
from croupier.v1 import match_pb2
from tests.server.botclient import Bot
from tests.server.test_damaged_files import finished_match, listed, referee_on, unfinished_match

ACT = {"t": "act", "at": 1.5, "seat": 0, "action": "7h", "d": 4294967297, "think": 0.25, "bank": 30}


def test_every_kind_of_the_union_is_read_by_its_class() -> None:
    assert set(get_args(Record)) == set(KINDS.values())
    assert all(name == kind.KIND for name, kind in KINDS.items())


def test_a_record_reads_into_its_class_and_writes_back_the_same_json() -> None:
    record = from_json(ACT)
    assert record == Act(at=1.5, seat=0, action="7h", decision_id=4294967297, think=0.25, bank=30)
    assert to_json(record) == ACT and list(to_json(record)) == list(ACT)  # the keys in their order too


def json_line(record: Record) -> bytes:
    """A record's line as json itself writes it (what ``encode`` must write, whatever its shortcuts)."""
    return json.dumps(to_json(record), separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def same_line(record: Record) -> None:
    try:
        expected = json_line(record)
    except (UnicodeError, ValueError) as exc:  # a lone surrogate; an int of more than 4300 digits
        with pytest.raises(type(exc)):
            encode(record)
        return
    assert encode(record) == expected


NUMBERS = st.floats() | st.integers() | st.integers(min_value=-(10**5000), max_value=10**5000)
"""Any float (NaN and the infinities too), ints of any size (past what str() may write)."""


@given(
    at=NUMBERS,
    seat=st.integers() | st.booleans(),
    action=st.text()
    | st.text(st.characters(max_codepoint=0x7F))
    | st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)),
    decision_id=st.integers(min_value=0, max_value=1 << 64) | st.booleans(),
    think=NUMBERS,
    bank=NUMBERS,
)
def test_an_act_line_is_byte_for_byte_what_json_writes(
    at: Any, seat: Any, action: str, decision_id: Any, think: Any, bank: Any
) -> None:
    same_line(Act(at, seat, action, decision_id, think, bank))
    same_line(Act(abs(at), 1, action, decision_id, abs(think), bank))


def test_a_comment_is_written_after_the_act_s_fields_and_an_act_without_one_is_written_as_before() -> None:
    commented = {**ACT, "comment": "seat 1 holds the K♠, p=0.7"}
    record = from_json(commented)
    assert record == Act(1.5, 0, "7h", 4294967297, 0.25, 30, comment="seat 1 holds the K♠, p=0.7")
    assert list(to_json(record)) == list(commented) and to_json(from_json(ACT)) == ACT
    assert encode(from_json(ACT)) == json_line(from_json(ACT)) and b"comment" not in encode(from_json(ACT))


@given(comment=st.text(), action=st.text(), at=NUMBERS)
def test_a_commented_act_line_is_byte_for_byte_what_json_writes(comment: str, action: str, at: Any) -> None:
    same_line(Act(at, 0, action, 3, 0.5, 30.0, comment))
    if comment:
        assert from_json(json.loads(json_line(Act(1.0, 0, action, 3, 0.5, 30.0, comment)))).comment == comment


@pytest.mark.parametrize(
    "text", ["", '"7h"', "back\\slash", "tab\tline\n", "\x00\x1f\x7f", "é ♠ 🂡", "\u2028\u2029", "\ud800"]
)
@pytest.mark.parametrize("number", [0, 0.1, 1e-7, 1e300, 10**400, -0.0, float("nan"), float("inf")])
def test_an_act_of_strings_to_escape_and_unusual_numbers_is_written_as_json_writes_it(
    text: str, number: float
) -> None:
    same_line(Act(number, 1, text, 1 << 40, number, number))
    same_line(Act(1.5, 0, text, 4294967297, 0.25, number))


def test_every_game_s_actions_in_acts_at_a_referee_s_times_are_written_as_json_writes_them() -> None:
    chooser = random.Random(21)
    acts = 0
    for name, spec in GAMES.items():
        for options in spec.test_variants:
            state = spec.new_game(options, Rng(chooser.randrange(1 << 32)))
            now = 0.0
            while not state.is_over():
                now += chooser.expovariate(1000)
                wake = state.wake_at()
                seats = sorted(s for s in state.to_act() if state.legal_actions(s))
                if not seats:
                    assert wake is not None, name
                    now = max(now, wake)
                    state.advance(now)
                    continue
                seat = chooser.choice(seats)
                action = chooser.choice(state.legal_actions(seat))
                think, bank = chooser.expovariate(50), chooser.choice([0.0, 30, chooser.uniform(0, 30)])
                same_line(Act(now, seat, str(action), (2 << 32) | (seat << 24) | acts, think, bank))
                state.apply(seat, action, now)
                acts += 1
    assert acts > 1000


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ({"t": "bet", "at": 1.0}, "is a record of unrecognized kind 'bet'"),
        ({"at": 1.0}, "is not a journal record"),
        ([1, 2], "is not a journal record"),
        ({**ACT, "seat": "0"}, "is an act record whose seat is '0', not of its type"),
        ({**ACT, "seat": True}, "is an act record whose seat is True, not of its type"),
        ({k: v for k, v in ACT.items() if k != "d"}, "is an act record whose d is missing"),
        ({**ACT, "extra": 1}, "is an act record with unknown fields extra"),
        ({**ACT, "comment": 7}, "is an act record whose comment is 7, not of its type"),
        ({**ACT, "comment": ""}, "is an act record whose comment is '', not of its type"),
        ({"t": "end", "at": 1.0, "seed": 1}, "is an end record whose scores is missing"),
    ],
)
def test_a_line_that_is_no_record_of_its_kind_says_why(data: Any, why: str) -> None:
    with pytest.raises(RecordError) as raised:
        from_json(data)
    assert str(raised.value) == why


def test_a_reason_quotes_a_damaged_line_in_a_few_words_whatever_its_size() -> None:
    for data in (
        {"t": "x" * 100_000},
        {"t": "clock", "at": "9" * 100_000},
        {"t": "start", "at": 0, "z" * 10**5: 1},
    ):
        with pytest.raises(RecordError) as raised:
            from_json(data)
        assert len(str(raised.value)) < 200 and "more characters)" in str(raised.value)


async def test_an_unknown_kind_in_an_unfinished_journal_is_damage_named_by_file_line_and_kind(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    match_id, tokens, _ = await unfinished_match(data)
    path = data / "matches" / f"{match_id}.jsonl"
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"t":"bet","at":9.0,"seat":0}\n' + b'{"t":"clock","at":9.5}\n')
    line = len(whole.splitlines()) + 1
    async with referee_on(data) as (croupier, admin, channel):
        assert croupier.referee.damaged == [
            f"{path}: line {line} is a record of unrecognized kind 'bet'; moved aside to "
            f"{path.name}.damaged, its first {line - 1} lines kept"
        ]
        bots = [Bot(channel, token) for token in tokens]
        for bot in bots:
            await bot.hello()
        await asyncio.gather(*(bot.play() for bot in bots))
        assert (await listed(admin, match_id)).status == match_pb2.MATCH_STATUS_FINISHED
    replay_journal(path)


def newer(path: Path) -> bytes:
    """The journal as a newer Croupier (the next version) might have written it."""
    lines = path.read_bytes().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["version"] = journal.VERSION + 1
    path.write_bytes(json.dumps(header).encode() + b"\n" + b"".join(lines[1:]))
    return path.read_bytes()


async def test_a_journal_of_a_newer_version_is_listed_damaged_and_left_as_it_is(tmp_path: Path) -> None:
    data = tmp_path / "data"
    match_id, _, _ = await unfinished_match(data)
    done = await finished_match(data)
    written = {m: newer(data / "matches" / f"{m}.jsonl") for m in (match_id, done.match_id)}
    async with referee_on(data) as (croupier, admin, _channel):
        now = journal.VERSION
        reason = (
            f"line 1 is journal version {now + 1}, newer than this Croupier reads ({now}): upgrade Croupier"
        )
        assert sorted(croupier.referee.damaged) == sorted(
            f"{data / 'matches' / m}.jsonl: {reason}: match {m} is listed as DAMAGED (files left as they are)"
            for m in written
        )
        for m in written:
            info = await listed(admin, m)
            assert (info.status, info.damage) == (match_pb2.MATCH_STATUS_DAMAGED, reason)
    assert {m: (data / "matches" / f"{m}.jsonl").read_bytes() for m in written} == written
    assert (data / "matches" / f"{match_id}.secret").exists()
    assert not list((data / "matches").glob("*.damaged*"))


async def test_a_journal_of_an_older_version_is_migrated_and_an_unfinished_one_rewritten_when_resumed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    match_id, tokens, _ = await unfinished_match(data)
    done = await finished_match(data)
    path = data / "matches" / f"{match_id}.jsonl"
    old = path.read_bytes()
    migrated: list[str] = []

    def to_next(record: dict[str, Any]) -> dict[str, Any]:
        migrated.append(record["t"])
        return record

    was = journal.VERSION
    monkeypatch.setattr(journal, "VERSION", was + 1)
    monkeypatch.setitem(journal.MIGRATIONS, was, to_next)
    assert scan(path).migrated and read_line(json.loads(old.splitlines()[0]), was).version == was + 1
    migrated.clear()
    async with referee_on(data) as (croupier, admin, channel):
        assert croupier.referee.damaged == []
        assert (await admin.get(done.match_id)).result == done.result  # read in memory, as it was
        assert {"match", "start", "act", "end"} <= set(migrated)  # both journals, read through it
        bots = [Bot(channel, token) for token in tokens]
        for bot in bots:
            await bot.hello()
        await asyncio.gather(*(bot.play() for bot in bots))
    assert path.with_name(f"{path.name}.v{was}").read_bytes() == old
    lines = path.read_bytes().splitlines(keepends=True)
    assert json.loads(lines[0])["version"] == was + 1
    assert lines[1 : len(old.splitlines())] == old.splitlines(keepends=True)[1:]
    replay_journal(path)
