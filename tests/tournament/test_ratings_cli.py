"""``croupier ratings``: the tables from the results database."""

from __future__ import annotations

from pathlib import Path

import pytest

from croupier.clients.cli import main
from croupier.server.tournament.schedule import game_schedule
from croupier.server.tournament.store import SeatResult, Store


def fill(db: Path) -> None:
    """Two games; in "g" ann always beats bob, who always beats cat."""
    with Store(db) as store:
        tournament = store.open_tournament("t", "fp", {}, again=False)
        for game in ("g", "h"):
            store.schedule(
                tournament.id,
                (m for d in game_schedule(game, ["ann", "bob", "cat"], 2, 2, 1, 0) for m in d.matches),
            )
        for record in store.matches(tournament.id).values():
            order = sorted(record.seats)
            store.record_result(
                record.id,
                [SeatResult(seat, bot, 0, 1 + order.index(bot)) for seat, bot in enumerate(record.seats)],
                None,
            )


def test_every_game_gets_its_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fill(tmp_path / "results.db")
    assert main(["ratings", "--data", str(tmp_path), "--samples", "50"]) == 0
    out = capsys.readouterr().out
    assert "g: ratings (Elo, maximum likelihood, 95% interval)" in out
    assert "h: ratings (Elo, maximum likelihood, 95% interval)" in out
    bots = [line.split("│")[2].strip() for line in out.splitlines() if line.startswith("│ ")]
    assert bots == ["ann", "bob", "cat"] * 2


def test_one_game_on_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fill(tmp_path / "results.db")
    assert main(["ratings", "--db", str(tmp_path / "results.db"), "--game", "h", "--samples", "50"]) == 0
    out = capsys.readouterr().out
    assert "h: ratings" in out and "g: ratings" not in out


def test_a_game_without_results_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fill(tmp_path / "results.db")
    assert main(["ratings", "--data", str(tmp_path), "--game", "spoil_five"]) == 1
    err = capsys.readouterr().err
    assert "no results for spoil_five in " in err
    assert "games with results: g, h" in err


def test_no_database_yet_says_what_to_do(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ratings", "--data", str(tmp_path)]) == 1
    assert "run a tournament first (croupier tournament FILE)" in capsys.readouterr().err
