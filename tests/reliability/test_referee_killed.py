"""A referee killed with SIGKILL in the middle of a tournament and started again on the same data.

The tournament runs with ``--server`` against a ``croupier serve`` process; its
bots (``croupier bot``) reconnect, the restarted referee resumes the unfinished
matches from their journals, and the runner waits for it. The tournament ends
in the same run, every match done once with all its results.
"""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from croupier.server.journal import End, read_records

ADMIN_TOKEN = "reliability-admin-token"
WAIT = 60.0
"""Seconds before a step gives up: a guard against hangs, never a timing check."""

TOURNAMENT = """
name = "killed-referee"
concurrency = 6

[clock]
decision_ms = 2000
bank_ms = 0
max_timeouts = 50
grace_ms = 30000

[[games]]
game = "chinese_ten"
seats = 2
deals = 3
options = { target = 200 }

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
MATCHES = 18
"""3 pairs x 3 deals x 2 rotations."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def croupier(*args: str) -> list[str]:
    return [sys.executable, "-m", "croupier.clients.cli", *args]


def start_referee(port: int, data: Path, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        process = subprocess.Popen(
            croupier(
                "serve",
                "--address",
                f"127.0.0.1:{port}",
                "--data",
                str(data),
                "--admin-token",
                ADMIN_TOKEN,
                "--metrics-address",
                "off",
            ),
            stdout=out,
            stderr=out,
        )
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return process
        time.sleep(0.05)
    raise AssertionError(f"the referee did not listen on {port}: {log.read_text()}")


def done_matches(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db) as connection:
        try:
            (count,) = connection.execute("SELECT count(*) FROM matches WHERE status = 'done'").fetchone()
        except sqlite3.OperationalError:  # not created yet
            return 0
    return int(count)


def in_progress(referee_data: Path) -> int:
    """Matches the referee has journaled but not ended: the ones a kill now leaves to resume."""
    journals = (read_records(path) for path in (referee_data / "matches").glob("*.jsonl"))
    return sum(1 for records in journals if records and not isinstance(records[-1], End))


def rows(db: Path, query: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as connection:
        return connection.execute(query).fetchall()


@pytest.mark.timeout(300)
def test_a_referee_killed_mid_tournament_and_restarted_loses_and_repeats_nothing(tmp_path: Path) -> None:
    port = free_port()
    referee_data = tmp_path / "referee"
    referee_log = tmp_path / "referee.log"
    (tmp_path / "tournament.toml").write_text(TOURNAMENT, encoding="utf-8")
    db = tmp_path / "runner" / "results.db"
    referee = start_referee(port, referee_data, referee_log)
    env = {**os.environ, "CROUPIER_ADMIN_TOKEN": ADMIN_TOKEN}
    runner = subprocess.Popen(
        croupier(
            "tournament",
            str(tmp_path / "tournament.toml"),
            "--server",
            f"127.0.0.1:{port}",
            "--data",
            str(tmp_path / "runner"),
            "--plain",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
    )
    try:
        deadline = time.monotonic() + WAIT * 3
        # a few results recorded and matches under way: under a loaded machine the runner can be
        # between matches for a moment, and a kill then tests no resume
        while done_matches(db) < 3 or in_progress(referee_data) < 2:
            assert runner.poll() is None, runner.communicate()[0].decode()
            assert time.monotonic() < deadline, "the tournament did not get going"
            time.sleep(0.05)
        referee.send_signal(signal.SIGKILL)
        referee.wait(WAIT)
        killed_at = done_matches(db)
        assert killed_at < MATCHES, "the tournament ended before the referee was killed"
        referee = start_referee(port, referee_data, referee_log)
        output = runner.communicate(timeout=WAIT * 3)[0].decode()
    finally:
        runner.kill()
        referee.send_signal(signal.SIGTERM)
        referee.wait(WAIT)

    assert runner.returncode == 0, output
    assert rows(db, "SELECT status, count(*) FROM matches GROUP BY status") == [("done", MATCHES)]
    assert rows(db, "SELECT count(*), count(DISTINCT match_id) FROM results") == [(2 * MATCHES, MATCHES)]
    # every recorded match finished on the referee, with the result the runner holds
    recorded = rows(
        db,
        "SELECT m.referee_match_id, r.place, r.score FROM results r JOIN matches m ON m.id = r.match_id"
        " ORDER BY m.id, r.seat",
    )
    journals = {path.stem: read_records(path) for path in (referee_data / "matches").glob("*.jsonl")}
    resumed = [match_id for match_id, records in journals.items() if any(r.KIND == "resume" for r in records)]
    assert resumed, "no match was in progress when the referee was killed"
    by_match: dict[str, list[tuple[object, object]]] = {}
    for match_id, place, score in recorded:
        by_match.setdefault(str(match_id), []).append((place, score))
    assert len(by_match) == MATCHES
    for match_id, results in by_match.items():
        end = journals[match_id][-1]
        assert isinstance(end, End), f"{match_id} did not end on the referee"
        assert results == list(zip(end.places, end.scores, strict=True))
    assert "tournament stopped" not in output
