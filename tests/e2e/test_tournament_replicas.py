"""One tournament spread over two ``croupier serve`` replicas: ``croupier tournament --server
ipv4:A,B`` creates its matches round robin and follows each on the replica holding it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import grpc
import pytest

from croupier.v1 import admin_pb2, admin_pb2_grpc, match_pb2
from tests.reliability.test_referee_killed import ADMIN_TOKEN, WAIT, croupier, free_port, rows, start_referee

TOURNAMENT = """
name = "replicated"
concurrency = 6

[clock]
decision_ms = 2000
bank_ms = 0
max_timeouts = 50

[[games]]
game = "chinese_ten"
seats = 2
deals = 2
options = { target = 100 }

[[bots]]
name = "alpha"
command = "croupier bot --strategy random --max-matches 4"
[[bots]]
name = "beta"
command = "croupier bot --strategy random --max-matches 4"
[[bots]]
name = "gamma"
command = "croupier bot --strategy random --max-matches 4"
"""
MATCHES = 12
"""3 pairs x 2 deals x 2 rotations."""
METADATA = (("croupier-token", ADMIN_TOKEN),)


def admin(address: str) -> tuple[grpc.Channel, admin_pb2_grpc.AdminServiceStub]:
    channel = grpc.insecure_channel(address)
    return channel, admin_pb2_grpc.AdminServiceStub(channel)


@pytest.mark.timeout(300)
def test_a_tournament_over_two_replicas_plays_every_match_once_on_one_of_them(tmp_path: Path) -> None:
    ports = [free_port(), free_port()]
    addresses = [f"127.0.0.1:{port}" for port in ports]
    referees = [
        start_referee(port, tmp_path / f"referee-{i}", tmp_path / f"referee-{i}.log")
        for i, port in enumerate(ports)
    ]
    (tmp_path / "tournament.toml").write_text(TOURNAMENT, encoding="utf-8")
    db = tmp_path / "runner" / "results.db"
    command = croupier(
        "tournament", str(tmp_path / "tournament.toml"), "--server", "ipv4:" + ",".join(addresses),
        "--data", str(tmp_path / "runner"), "--plain", "--samples", "50",
    )  # fmt: skip
    try:
        result = subprocess.run(
            command,
            capture_output=True,
            text=True,
            env={**os.environ, "CROUPIER_ADMIN_TOKEN": ADMIN_TOKEN},
            timeout=WAIT * 4,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        # every match once, each recorded with the replica that holds it; both replicas played
        assert rows(db, "SELECT status, count(*) FROM matches GROUP BY status") == [("done", MATCHES)]
        assert rows(db, "SELECT count(*), count(DISTINCT match_id) FROM results") == [(2 * MATCHES, MATCHES)]
        recorded = rows(
            db,
            "SELECT m.replica, m.referee_match_id, r.place, r.score FROM results r "
            "JOIN matches m ON m.id = r.match_id ORDER BY m.id, r.seat",
        )
        held: dict[str, dict[str, list[tuple[object, object]]]] = {address: {} for address in addresses}
        for replica, match_id, place, score in recorded:
            held[str(replica)].setdefault(str(match_id), []).append((place, score))
        assert all(held.values()), f"a replica played no match: {held}"
        # ask each replica: it holds the matches recorded for it, with the recorded results, and one
        # registered bot per tournament bot, the same ids on both
        bot_ids = []
        for address in addresses:
            channel, stub = admin(address)
            with channel:
                for match_id, results in held[address].items():
                    info = stub.GetMatch(admin_pb2.GetMatchRequest(match_id=match_id), metadata=METADATA)
                    assert info.status == match_pb2.MATCH_STATUS_FINISHED
                    assert [(seat.place, seat.score) for seat in info.result.seats] == results
                bots = stub.ListBots(admin_pb2.ListBotsRequest(), metadata=METADATA).bots
                bot_ids.append(sorted((bot.name, bot.bot_id) for bot in bots))
        assert bot_ids[0] == bot_ids[1] and [name for name, _ in bot_ids[0]] == ["alpha", "beta", "gamma"]
        assert sum(map(len, held.values())) == MATCHES
        assert "chinese_ten: ratings of " in result.stdout
        assert "on the referees' machines" in result.stdout
    finally:
        for referee in referees:
            referee.terminate()
            referee.wait(WAIT)
