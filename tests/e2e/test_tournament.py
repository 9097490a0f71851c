"""Whole tournaments through the ``croupier tournament`` command, with bots in subprocesses."""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

CLOCK = """
[clock]
decision_ms = 300
bank_ms = 0
max_timeouts = 2
grace_ms = 3000
"""

MISBEHAVING = f"""
name = "misbehaving"
concurrency = 6
rotations = "cyclic"  # the fewest matches: this is about misbehaving bots, not seating
{CLOCK}
[[games]]
game = "chinese_ten"
seats = 3
options = {{ target = 100 }}

[[bots]]
name = "alpha"
command = "croupier bot --strategy random"
[[bots]]
name = "beta"
command = "croupier bot --strategy random"
[[bots]]
name = "crasher"
command = "python -m croupier.clients.cli bot --strategy tests.e2e.misbehaving:CrashingBot"
[[bots]]
name = "late"
command = "python -m croupier.clients.cli bot --strategy tests.e2e.misbehaving:LateBot"
"""

STEADY = f"""
name = "steady"
concurrency = 4
{CLOCK}
[[games]]
game = "chinese_ten"
seats = 2
deals = 3
options = {{ target = 100 }}

[[bots]]
name = "alpha"
command = "croupier bot --strategy random"
[[bots]]
name = "beta"
command = "croupier bot --strategy random"
[[bots]]
name = "gamma"
command = "croupier bot --strategy random"
"""


def tournament(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "t.toml").write_text(text)
    return [
        sys.executable, "-m", "croupier.clients.cli", "tournament", str(tmp_path / "t.toml"),
        "--data", str(tmp_path / "data"), "--samples", "100",
    ]  # fmt: skip


def rows(tmp_path: Path, query: str) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(tmp_path / "data" / "results.db")) as db:
        return db.execute(query).fetchall()


def test_a_crashing_bot_and_a_late_bot_do_not_stop_the_tournament(tmp_path: Path) -> None:
    run = subprocess.run(tournament(tmp_path, MISBEHAVING), capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout + run.stderr
    # 4 groups of 3 out of 4 bots, one deal each, 3 rotations
    assert rows(tmp_path, "SELECT status, count(*) FROM matches GROUP BY status") == [("done", 12)]
    assert rows(tmp_path, "SELECT count(*) FROM results") == [(36,)]
    # the late bot answers after every deadline: the referee plays for it, forfeits it after two
    # timeouts and ranks it last
    late = rows(
        tmp_path,
        "SELECT r.timeouts, r.forfeited, r.note, "
        "r.place = (SELECT max(place) FROM results WHERE match_id = r.match_id) "
        "FROM results r WHERE r.bot = 'late'",
    )
    assert late == [(2, 1, "timeouts", 1)] * 9
    # every deal: each bot in each seat once, and every rotation started before any of them finished
    seating = rows(tmp_path, "SELECT round, grp, deal, seats, started_at, finished_at FROM matches")
    sets: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
    for round_number, group, deal, seats, started, finished in seating:
        sets.setdefault((round_number, group, deal), []).append((json.loads(str(seats)), started, finished))
    assert len(sets) == 4
    for matches in sets.values():
        bots = {bot for seats, _, _ in matches for bot in seats}
        assert {(bot, seat) for seats, _, _ in matches for seat, bot in enumerate(seats)} == {
            (bot, seat) for bot in bots for seat in range(3)
        }
        assert max(started for _, started, _ in matches) < min(finished for _, _, finished in matches)
    out = run.stdout
    assert "bots restarted after exiting: crasher" in out
    assert "chinese_ten: crosstable" in out and "chinese_ten: ratings of misbehaving run 1" in out
    incidents = {
        line.split("│")[1].strip(): [cell.strip() for cell in line.split("│")[2:6]]
        for line in out.splitlines()
        if line.startswith("│ late")
    }
    assert incidents["late"] == ["9", "18", "0", "9"]
    assert f"journals: 12 in {tmp_path / 'data' / 'referee' / 'matches'} (" in out


def test_a_killed_tournament_resumes_without_losing_or_repeating_a_match(tmp_path: Path) -> None:
    command = tournament(tmp_path, STEADY)
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_done(tmp_path, first, 2)
        first.send_signal(signal.SIGKILL)
    finally:
        first.wait(30)
    before = rows(tmp_path, "SELECT id, finished_at FROM matches WHERE status = 'done' ORDER BY id")
    assert 2 <= len(before) < 18
    # the sets the kill left half played are dealt again: their finished matches are set aside
    abandoned = rows(
        tmp_path,
        "SELECT d.id FROM matches d WHERE d.status = 'done' AND EXISTS (SELECT 1 FROM matches o "
        "WHERE o.grp = d.grp AND o.deal = d.deal AND o.round = d.round AND o.status != 'done')",
    )

    second = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert second.returncode == 0, second.stdout + second.stderr
    # 3 pairs x 3 deals x 2 rotations, each done once with its two seats
    assert rows(tmp_path, "SELECT status, count(*) FROM matches GROUP BY status") == [("done", 18)]
    assert rows(tmp_path, "SELECT count(*), count(DISTINCT match_id) FROM results") == [(36, 18)]
    assert rows(tmp_path, "SELECT count(*) FROM tournaments") == [(1,)]
    whole = [row for row in before if (row[0],) not in abandoned]
    kept = ",".join(str(row[0]) for row in whole)
    after = rows(tmp_path, f"SELECT id, finished_at FROM matches WHERE id IN ({kept}) ORDER BY id")
    assert after == whole  # what finished in a whole set before the kill was kept as it was
    voided = rows(tmp_path, "SELECT match_id FROM voided WHERE status = 'done' ORDER BY match_id")
    assert voided == abandoned

    again = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert again.returncode == 0
    assert "tournament steady (run 1) already finished" in again.stdout
    assert rows(tmp_path, "SELECT count(*) FROM results") == [(36,)]


def wait_for_done(
    tmp_path: Path, process: subprocess.Popen[str] | subprocess.Popen[bytes], count: int
) -> None:
    """Until ``count`` matches are done (the process must still be running)."""
    database = tmp_path / "data" / "results.db"
    while True:
        assert process.poll() is None, "the tournament ended too soon"
        time.sleep(0.05)
        if database.exists():
            try:
                if rows(tmp_path, "SELECT count(*) FROM matches WHERE status = 'done'")[0][0] >= count:
                    return
            except sqlite3.OperationalError:
                pass  # the schema is being created


def test_ctrl_c_finishes_the_matches_in_progress_and_stops(tmp_path: Path) -> None:
    runner = subprocess.Popen(
        tournament(tmp_path, STEADY), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    wait_for_done(tmp_path, runner, 2)
    runner.send_signal(signal.SIGINT)
    out, _ = runner.communicate(timeout=120)
    assert runner.returncode == 130
    assert "stopping once the matches in progress finish (Ctrl-C again to stop now)" in out
    assert out.rstrip().endswith("stopped early; run the same command again to play the rest")
    statuses = dict(rows(tmp_path, "SELECT status, count(*) FROM matches GROUP BY status"))
    assert "started" not in statuses and statuses["scheduled"] > 0 and statuses["done"] >= 2


def test_a_process_per_rotation_and_the_secret_revealed_at_the_end(tmp_path: Path) -> None:
    text = STEADY.replace('name = "steady"', 'name = "steady"\nprocesses = "per_rotation"')
    run = subprocess.run(tournament(tmp_path, text), capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout + run.stderr
    logs = sorted(path.name for path in (tmp_path / "data" / "logs" / "steady-1").iterdir())
    assert logs == [f"{bot}#{r}.log" for bot in ("alpha", "beta", "gamma") for r in (0, 1)]
    # rotation r of every set is played by each bot's instance r, and by no other instance
    players: dict[tuple[str, int], set[str]] = {}
    for rotation, journal in rows(tmp_path, "SELECT rotation, journal FROM matches"):
        header = json.loads(Path(journal).read_text().splitlines()[0])
        for player in header["players"]:
            players.setdefault((player["name"], rotation), set()).add(player["bot_id"])
    assert all(len(ids) == 1 for ids in players.values())
    for bot in ("alpha", "beta", "gamma"):
        assert players[bot, 0] != players[bot, 1]
    reveal = tmp_path / "data" / "reveals" / "steady-1.json"
    assert f"croupier verify {reveal}" in run.stdout
    check = subprocess.run(
        [sys.executable, "-m", "croupier.clients.cli", "verify", str(reveal)], capture_output=True, text=True
    )
    assert check.returncode == 0 and "all 18 deals of steady run 1 are the secret's" in check.stdout


def test_a_bad_file_is_refused_before_anything_starts(tmp_path: Path) -> None:
    run = subprocess.run(
        tournament(tmp_path, STEADY.replace("seats = 2", "seats = 5")),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert "games[0] (chinese_ten): Chinese Ten is played by 2 to 4 players, not 5" in run.stderr
    assert not (tmp_path / "data").exists()


def test_a_bot_that_plays_too_few_matches_at_once_for_a_duplicate_set_is_refused(tmp_path: Path) -> None:
    text = STEADY.replace("--strategy random", "--strategy random --max-matches 1", 1)
    run = subprocess.run(tournament(tmp_path, text), capture_output=True, text=True, timeout=120)
    assert run.returncode == 1
    assert (
        "bot alpha plays at most 1 match(es) at once, but each chinese_ten deal starts 2 together"
        in run.stderr
    )


def test_a_bot_command_that_fails_stops_the_tournament_with_its_log(tmp_path: Path) -> None:
    broken = """command = ["python", "-c", "raise SystemExit('no such strategy')"]"""
    text = STEADY.replace('command = "croupier bot --strategy random"', broken, 1)
    run = subprocess.run(tournament(tmp_path, text), capture_output=True, text=True, timeout=120)
    assert run.returncode == 1
    log = tmp_path / "data" / "logs" / "steady-1" / "alpha.log"
    assert run.stderr.splitlines() == [
        f"bot alpha never connected: it exited 3 times (last exit code 1); "
        f"its log ends 'no such strategy' (all of it: {log})"
    ]
