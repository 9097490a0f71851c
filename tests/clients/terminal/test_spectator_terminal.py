"""``croupier watch`` and ``croupier replay`` driven in a real terminal (tmux) and as plain commands:
what the screen shows, live and replayed, and that a spectator never sees a hidden card."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from croupier.clients.bots import RandomBot
from croupier.clients.results.luck import default_evaluator
from croupier.clients.results.luck_journal import records_luck
from croupier.clients.results.sets import seat_points
from croupier.clients.sdk import Client, Match
from croupier.server.app import Croupier
from croupier.server.journal import End, read_records
from croupier.v1 import admin_pb2
from tests.clients.terminal import REPO, WAIT, Terminal, croupier
from tests.server.botclient import ADMIN_TOKEN, Admin

SUITS = re.compile("[♠♥♦♣]")
SEAT_ROW = re.compile(r"^[│ ]*(▶)?\s*(\d) (p\d)\b(.*)$")


def seat_rows(screen: str) -> dict[int, str]:
    """The seats table's rows: seat number -> the row's text after the name."""
    rows = {}
    for line in screen.splitlines():
        found = SEAT_ROW.match(line)
        if found:
            rows[int(found.group(2))] = found.group(4)
    return rows


class Gate:
    """Lets the bots of a match make ``pause_at`` moves, then holds them until opened again."""

    def __init__(self, pause_at: int) -> None:
        self.open = asyncio.Event()
        self.open.set()
        self.paused = asyncio.Event()
        self.moves = 0
        self.pause_at = pause_at

    def bot(self, match: Match) -> RandomBot:
        gate = self

        class Gated(RandomBot):
            async def choose(self, view: Any, legal: list[Any]) -> int:  # type: ignore[override]
                await gate.open.wait()
                gate.moves += 1
                if gate.moves == gate.pause_at:
                    gate.open.clear()
                    gate.paused.set()
                return super().choose(view, legal)

        return Gated(match)


async def play(
    referee: Croupier, created: admin_pb2.CreateMatchResponse, factory: Any
) -> asyncio.Future[Any]:
    address = f"127.0.0.1:{referee.port}"
    clients = [Client(factory, address, [token], stop_after=1) for token in created.seat_tokens]
    return asyncio.gather(*(c.run() for c in clients))


@pytest.fixture
def terminals() -> Iterator[list[Terminal]]:
    opened: list[Terminal] = []
    yield opened
    for terminal in opened:
        terminal.close()


async def wait_for(terminal: Terminal, check: Any, what: str) -> str:
    return await asyncio.to_thread(terminal.wait_for, check, what)


@pytest.mark.parametrize("admin_token", [None, ADMIN_TOKEN], ids=["spectator", "admin"])
async def test_watch_draws_a_live_match_and_shows_hands_only_to_the_admin(
    referee: Croupier, admin: Admin, terminals: list[Terminal], admin_token: str | None
) -> None:
    created = await admin.create("chinese_ten", 3, {"target": 100}, seed=12)
    match_id = created.match.match_id
    command = croupier("watch", match_id, "--server", f"127.0.0.1:{referee.port}")
    if admin_token:
        command += ["--admin-token", admin_token]
    terminal = Terminal(command)
    terminals.append(terminal)
    await wait_for(terminal, lambda s: match_id in s, "the match")
    gate = Gate(pause_at=10)
    bots = await play(referee, created, gate.bot)
    await asyncio.wait_for(gate.paused.wait(), WAIT)
    # the screen drawn once the gate has paused play: every panel there (the first frames come first)
    live = await wait_for(
        terminal,
        lambda s: (
            "running" in s
            and "▶" in s
            and len(seat_rows(s)) == 3
            and "last events" in s
            and ("captures" in s or "joins the table" in s)
        ),
        "play",
    )
    assert "Chinese Ten" in live and "clock " in live and "table " in live and "stock " in live
    assert SUITS.search(live), "the table's cards are drawn with suit symbols"
    assert "last events" in live and ("captures" in live or "joins the table" in live)
    rows = seat_rows(live)
    if admin_token is None:
        assert "hands stay hidden" in live
        for seat, row in rows.items():
            assert "▮" in row and not SUITS.search(row), (
                f"seat {seat}'s hand is on a spectator's screen: {row}"
            )
    else:
        assert "every hand shown" in live
        assert all(SUITS.search(row) and "▮" not in row for row in rows.values())
    gate.open.set()
    await asyncio.wait_for(bots, WAIT)
    final = await wait_for(terminal, lambda s: "[exited with 0]" in s, "the end")
    assert "finished" in final and "result" in final and f"match {match_id} is finished" in final
    info = await admin.wait(match_id)
    for seat in info.result.seats:
        assert f"{seat.place}. seat {seat.seat} {seat.name}: {seat.score}" in final


async def test_watch_lists_the_live_matches(referee: Croupier, admin: Admin) -> None:
    created = [await admin.create(game, 2, {}, seed=1) for game in ("chinese_ten", "platinum_fish")]
    result = await asyncio.to_thread(
        subprocess.run,
        [*croupier("watch", "--list", "--server", f"127.0.0.1:{referee.port}")],
        cwd=REPO, capture_output=True, text=True, timeout=WAIT,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    for match in created:
        assert match.match.match_id in result.stdout
    assert "chinese_ten" in result.stdout and "platinum_fish" in result.stdout and "waiting" in result.stdout


@pytest.fixture
async def journal(referee: Croupier, admin: Admin) -> Path:
    """A finished three-player Chinese Ten match's journal."""
    created = await admin.create("chinese_ten", 3, {"target": 100}, seed=5)
    await asyncio.wait_for(await play(referee, created, RandomBot), WAIT)
    await admin.wait(created.match.match_id)
    return Path(created.journal)


async def test_replay_steps_forwards_and_backwards_with_every_hand_shown(
    journal: Path, terminals: list[Terminal]
) -> None:
    terminal = Terminal(croupier("replay", str(journal)))
    terminals.append(terminal)
    first = await wait_for(terminal, lambda s: "step 1 of" in s, "the first step")
    steps = int(re.search(r"step 1 of (\d+)", first).group(1))  # type: ignore[union-attr]
    assert "✓ the engine's re-run reproduces the recorded result" in first
    rows = seat_rows(first)
    assert len(rows) == 3 and all(len(SUITS.findall(row)) == 8 for row in rows.values()), (
        "8 cards each, shown"
    )
    terminal.keys("n")
    await wait_for(terminal, lambda s: "step 2 of" in s, "step 2")
    terminal.keys("End")
    last = await wait_for(terminal, lambda s: f"step {steps} of {steps}" in s, "the last step")
    assert "result" in last and "match over" in last
    terminal.keys("Left")
    await wait_for(terminal, lambda s: f"step {steps - 1} of {steps}" in s, "one step back")
    terminal.keys("Home")
    await wait_for(terminal, lambda s: "step 1 of" in s, "the first step again")
    terminal.keys("q")
    await wait_for(terminal, lambda s: "[exited with 0]" in s, "the viewer to quit")


def replay(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(croupier("replay", *args), cwd=REPO, capture_output=True, text=True, timeout=WAIT)


async def test_replay_prints_a_step_and_checks_journals_for_scripts(journal: Path, tmp_path: Path) -> None:
    shown = await asyncio.to_thread(replay, str(journal), "--at", "-1")
    assert shown.returncode == 0 and "result" in shown.stdout and "✓" in shown.stdout
    by_id = await asyncio.to_thread(replay, journal.stem, "--data", str(journal.parent.parent), "--at", "1")
    assert by_id.returncode == 0 and "step 1 of" in by_id.stdout
    checked = await asyncio.to_thread(replay, "--check", str(journal))
    assert checked.returncode == 0 and "ok:" in checked.stdout
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    records[-1]["scores"] = [s + 1 for s in records[-1]["scores"]]
    forged = tmp_path / "forged.jsonl"
    forged.write_text("".join(json.dumps(r) + "\n" for r in records))
    failed = await asyncio.to_thread(replay, "--check", str(forged))
    assert failed.returncode == 1 and "FAILED" in failed.stdout
    flagged = await asyncio.to_thread(replay, str(forged), "--at", "-1")
    assert "✗" in flagged.stdout and "replay gives scores" in flagged.stdout.replace("\n", " ").replace(
        "│", ""
    )


async def test_replay_shows_each_seats_luck_and_skill_in_a_game_with_chance_after_the_deal(
    journal: Path,
) -> None:
    shown = await asyncio.to_thread(replay, str(journal), "--at", "-1")
    records = read_records(journal)
    end = records[-1]
    assert shown.returncode == 0 and isinstance(end, End)
    luck = records_luck(records, end.seed, default_evaluator("chinese_ten"), fresh=False)
    assert all(value is not None for value in luck) and any(luck), "the stock's turn-ups gave someone luck"
    assert sum(luck) == pytest.approx(0, abs=1e-6)  # what one seat's draws gave, the others' lost
    names = [player.name for player in records[0].players]  # type: ignore[attr-defined]
    for seat, value in enumerate(luck):
        assert value is not None
        skill = seat_points(end.places, seat) - value
        line = f"seat {seat} {names[seat]}: {end.scores[seat]} · luck {value:+.2f}, skill {skill:.2f}"
        assert line in shown.stdout
    assert "result · luck: chance after the deal · skill: points less luck" in shown.stdout


async def test_replay_asks_the_referee_for_a_match_it_has_no_journal_of(
    referee: Croupier, journal: Path
) -> None:
    shown = await asyncio.to_thread(
        replay, journal.stem, "--data", "/nonexistent", "--server", f"127.0.0.1:{referee.port}", "--at", "-1"
    )
    assert shown.returncode == 0, shown.stdout
    assert "re-run by the referee" in shown.stdout and "result" in shown.stdout
    missing = await asyncio.to_thread(replay, "no-such-match", "--data", "/nonexistent")
    assert missing.returncode == 1 and "give --server" in missing.stdout


async def test_watch_without_a_match_id_asks_which_live_match_to_watch(
    referee: Croupier, admin: Admin, terminals: list[Terminal]
) -> None:
    first = await admin.create("spoil_five", 3, {"deals": 1}, seed=1)
    second = await admin.create("chinese_ten", 3, {"target": 50}, seed=2)
    terminal = Terminal(croupier("watch", "--server", f"127.0.0.1:{referee.port}"))
    terminals.append(terminal)
    listed = await wait_for(terminal, lambda s: "watch which?" in s, "the question")
    assert first.match.match_id in listed and second.match.match_id in listed
    terminal.keys("2", "Enter")
    await wait_for(terminal, lambda s: "Chinese Ten" in s and second.match.match_id in s, "the chosen match")
    await asyncio.wait_for(await play(referee, second, RandomBot), WAIT)
    final = await wait_for(terminal, lambda s: "[exited with 0]" in s, "the end")
    assert f"match {second.match.match_id} is finished" in final


async def test_watch_follow_watches_the_oldest_live_match_then_the_next_without_asking(
    referee: Croupier, admin: Admin, terminals: list[Terminal]
) -> None:
    first = await admin.create("spoil_five", 3, {"deals": 1}, seed=1)
    second = await admin.create("chinese_ten", 3, {"target": 50}, seed=2)
    terminal = Terminal(croupier("watch", "--server", f"127.0.0.1:{referee.port}", "--follow"))
    terminals.append(terminal)
    shown = await wait_for(terminal, lambda s: first.match.match_id in s, "the oldest live match")
    assert "watch which?" not in shown and "Spoil Five" in shown
    await asyncio.wait_for(await play(referee, first, RandomBot), WAIT)
    after = await wait_for(terminal, lambda s: second.match.match_id in s, "the next live match")
    assert "watch which?" not in after and "Chinese Ten" in after


async def test_watch_of_a_finished_match_prints_its_end_once_where_there_is_no_terminal(
    referee: Croupier, journal: Path
) -> None:
    result = await asyncio.to_thread(
        subprocess.run,
        croupier("watch", journal.stem, "--server", f"127.0.0.1:{referee.port}"),
        cwd=REPO, capture_output=True, text=True, timeout=WAIT,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("─ result ─") == 1 and f"match {journal.stem} is finished" in result.stdout
    # one consistent screen: the hands it shows are not said to be hidden, and no seat is to act
    assert "the match is over: every hand shown" in result.stdout and "hidden" not in result.stdout
    assert "▶" not in result.stdout
