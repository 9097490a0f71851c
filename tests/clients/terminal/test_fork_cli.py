"""``croupier replay MATCH --fork STEP --bot SPEC...``: a finished match played on from a step with
the same deal and history, by new bots (bundled or commands), on a referee embedded in the
command or on a running one (``--server``); never rated, replayable from its own journal."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

from croupier.clients.bots import RandomBot
from croupier.clients.scenes import from_journal
from croupier.server.app import Croupier
from croupier.server.journal import Fork, Header, read_records
from tests.clients.terminal.test_spectator_terminal import play, replay
from tests.server.botclient import WAIT, Admin


async def finished(referee: Croupier, admin: Admin, seed: int = 5) -> Path:
    created = await admin.create("chinese_ten", 2, {"target": 100}, seed=seed)
    await asyncio.wait_for(await play(referee, created, RandomBot), WAIT)
    await admin.wait(created.match.match_id)
    return Path(created.journal)


def fork_id(output: str) -> str:
    """The fork's id in ``forked ID at step N as FORK: ...`` (other lines may say "as" too)."""
    found = re.search(r"forked \S+ at step \d+ as ([^:\s]+):", output)
    assert found, output
    return found.group(1)


def forked_journal(data: Path, output: str) -> Path:
    return data / "referee" / "matches" / f"{fork_id(output)}.jsonl"


async def test_a_fork_plays_on_from_the_step_on_an_embedded_referee_and_replays_like_any_match(
    referee: Croupier, admin: Admin
) -> None:
    journal = await finished(referee, admin)
    data = journal.parent.parent
    command = f"{sys.executable} -m croupier.clients.cli bot --strategy random"
    done = await asyncio.to_thread(
        replay, journal.stem, "--data", str(data), "--fork", "4", "--bot", "heuristic", "--bot", command
    )
    output = done.stdout.replace("\n", " ")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"forked {journal.stem} at step 4 as " in output and "over (never rated)" in output
    path = forked_journal(data, output)
    assert f"replay it: croupier replay {path.stem} --data {data}" in output
    records = read_records(path)
    assert isinstance(records[0], Header) and records[0].forked_from == f"{journal.stem}@4"
    assert records[1:5] == read_records(journal)[1:5] and isinstance(records[5], Fork)
    ours, theirs = from_journal(journal).scenes, from_journal(path).scenes
    assert [s.view for s in theirs[:4]] == [s.view for s in ours[:4]]  # the same deal and history
    assert "✓" in from_journal(path).header.note  # it replays from its own journal
    checked = await asyncio.to_thread(replay, "--check", path.stem, "--data", str(data))
    assert checked.returncode == 0 and "ok:" in checked.stdout


async def test_a_fork_on_a_running_referee_is_asked_of_it(
    referee: Croupier, admin: Admin, tmp_path: Path
) -> None:
    journal = await finished(referee, admin)
    server = f"127.0.0.1:{referee.port}"
    elsewhere = tmp_path / "elsewhere"  # no journal here: the referee is asked
    done = await asyncio.to_thread(
        replay,
        journal.stem,
        "--data",
        str(elsewhere),
        "--server",
        server,
        "--fork",
        "3",
        "--bot",
        "random",
        "--bot",
        "random",
    )
    output = done.stdout.replace("\n", " ")
    assert done.returncode == 0, done.stdout + done.stderr
    fork = fork_id(output)
    assert f"replay it: croupier replay {fork} --server {server}" in output
    assert referee.referee.info(fork).forked_from == f"{journal.stem}@3"


async def test_a_fork_needs_a_finished_match_and_a_bot_per_seat(referee: Croupier, admin: Admin) -> None:
    journal = await finished(referee, admin)
    data = str(journal.parent.parent)
    alone = await asyncio.to_thread(replay, journal.stem, "--data", data, "--fork", "3", "--bot", "random")
    assert alone.returncode == 1 and "has 2 seats, not 1" in alone.stdout.replace("\n", " ")
    none = await asyncio.to_thread(replay, journal.stem, "--data", data, "--fork", "3")
    assert none.returncode == 2 and "one --bot per seat" in none.stdout
    unfinished = journal.with_name("unfinished.jsonl")
    unfinished.write_text("".join(journal.read_text().splitlines(keepends=True)[:6]))
    cut = await asyncio.to_thread(
        replay, str(unfinished), "--fork", "3", "--bot", "random", "--bot", "random"
    )
    assert cut.returncode == 1 and "not finished" in cut.stdout.replace("\n", " ")
    twin = await admin.create("chinese_ten", 2, {"target": 100}, seed=5)  # same deal, waiting
    sealed = await asyncio.to_thread(
        replay, journal.stem, "--data", data, "--fork", "3", "--bot", "random", "--bot", "random"
    )
    assert sealed.returncode == 1 and "sealed" in sealed.stdout.replace("\n", " "), sealed.stdout
    del twin
    assert not (journal.parent.parent / "referee" / "matches").exists() or not [
        p for p in (journal.parent.parent / "referee" / "matches").glob("*.jsonl")
    ]
