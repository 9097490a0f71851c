"""One of two referee replicas killed with SIGKILL in the middle of a tournament spread over both,
and started again on its port and data.

The runner (``--server ipv4:A,B``) goes on creating matches on the replica that
is up, waits for the killed one's matches, and follows them on it once it is
back: the tournament ends in the same run, every match done once, each result
the one the journal of the replica recorded for it holds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from croupier.server.journal import End, read_records
from tests.reliability.test_referee_killed import (
    ADMIN_TOKEN,
    TOURNAMENT,
    WAIT,
    croupier,
    done_matches,
    free_port,
    rows,
    start_referee,
)

MATCHES = 18
"""3 pairs x 3 deals x 2 rotations (the tournament of test_referee_killed)."""


def playing(data: Path) -> bool:
    """Whether the replica with this data has a match under way (a journal without its end)."""
    for path in (data / "matches").glob("*.jsonl"):
        lines = path.read_text(encoding="utf-8").splitlines()
        try:
            last = json.loads(lines[-1])
        except (IndexError, ValueError):
            continue  # being written: look again
        if last["t"] not in ("end", "cancel") and len(lines) > 2:
            return True
    return False


def start_runner(tmp_path: Path, server: str) -> tuple[subprocess.Popen[bytes], Path]:
    """``croupier tournament`` of TOURNAMENT on ``server``, and its results database."""
    (tmp_path / "tournament.toml").write_text(TOURNAMENT, encoding="utf-8")
    command = croupier(
        "tournament", str(tmp_path / "tournament.toml"), "--server", server,
        "--data", str(tmp_path / "runner"), "--plain",
    )  # fmt: skip
    runner = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "CROUPIER_ADMIN_TOKEN": ADMIN_TOKEN},
    )
    return runner, tmp_path / "runner" / "results.db"


def wait_until_playing(runner: subprocess.Popen[bytes], db: Path, data: Path) -> None:
    """Until a few matches are done and the referee with ``data`` has one under way."""
    deadline = time.monotonic() + WAIT * 3
    while done_matches(db) < 3 or not playing(data):
        assert runner.poll() is None, runner.communicate()[0].decode()
        assert time.monotonic() < deadline, f"the tournament did not get going on {data.name}"
        time.sleep(0.05)


@pytest.mark.timeout(300)
def test_a_replica_killed_mid_tournament_and_restarted_loses_and_repeats_nothing(tmp_path: Path) -> None:
    ports = [free_port(), free_port()]
    addresses = [f"127.0.0.1:{port}" for port in ports]
    data = [tmp_path / f"referee-{i}" for i in range(2)]
    logs = [tmp_path / f"referee-{i}.log" for i in range(2)]
    referees = [start_referee(port, data[i], logs[i]) for i, port in enumerate(ports)]
    runner, db = start_runner(tmp_path, "ipv4:" + ",".join(addresses))
    try:
        wait_until_playing(runner, db, data[0])
        referees[0].send_signal(signal.SIGKILL)
        referees[0].wait(WAIT)
        assert done_matches(db) < MATCHES, "the tournament ended before the replica was killed"
        referees[0] = start_referee(ports[0], data[0], logs[0])
        output = runner.communicate(timeout=WAIT * 3)[0].decode()
    finally:
        runner.kill()
        for referee in referees:
            referee.send_signal(signal.SIGTERM)
            referee.wait(WAIT)

    assert runner.returncode == 0, output
    assert rows(db, "SELECT status, count(*) FROM matches GROUP BY status") == [("done", MATCHES)]
    assert rows(db, "SELECT count(*), count(DISTINCT match_id) FROM results") == [(2 * MATCHES, MATCHES)]
    journals = {
        address: {path.stem: read_records(path) for path in (folder / "matches").glob("*.jsonl")}
        for address, folder in zip(addresses, data, strict=True)
    }
    resumed = [
        match_id
        for match_id, records in journals[addresses[0]].items()
        if any(r.KIND == "resume" for r in records)
    ]
    assert resumed, "no match was in progress on the replica when it was killed"
    # every recorded match finished on the replica recorded for it, with the result the runner holds
    recorded = rows(
        db,
        "SELECT m.replica, m.referee_match_id, r.place, r.score FROM results r"
        " JOIN matches m ON m.id = r.match_id ORDER BY m.id, r.seat",
    )
    by_match: dict[tuple[str, str], list[tuple[object, object]]] = {}
    for replica, match_id, place, score in recorded:
        by_match.setdefault((str(replica), str(match_id)), []).append((place, score))
    assert len(by_match) == MATCHES
    for (replica, match_id), results in by_match.items():
        end = journals[replica][match_id][-1]
        assert isinstance(end, End), f"{match_id} did not end on {replica}"
        assert results == list(zip(end.places, end.scores, strict=True))
    assert "tournament stopped" not in output
