"""``croupier ratings``: the tables from the results database."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from croupier.clients.cli import main
from croupier.clients.results.schedule import game_schedule
from croupier.clients.results.store import SeatResult, Store


def fill(db: Path, name: str = "t", bots: tuple[str, ...] = ("ann", "bob", "cat")) -> None:
    """Two games; in "g" ann always beats bob, who always beats cat (bots sorted by name win)."""
    with Store(db) as store:
        tournament = store.open_tournament(name, "fp", {}, again=False)
        for game in ("g", "h"):
            schedule = game_schedule(game, bots, 2, 2, 1, seed=0, secret=bytes(32))
            store.schedule(tournament.id, (m for d in schedule for m in d.matches))
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
    assert "g: ratings over every tournament" in out and "h: ratings over every tournament" in out
    assert "Elo scale, Plackett-Luce, 95% interval (bootstrap over sets)" in out
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


def test_only_the_tournaments_asked_for_and_groups_that_never_met_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fill(tmp_path / "results.db")
    fill(tmp_path / "results.db", "other", ("dan", "eve"))
    assert main(["ratings", "--data", str(tmp_path), "--game", "g", "--tournament", "other"]) == 0
    out = capsys.readouterr().out
    assert "g: ratings over other" in out and "ann" not in out
    assert main(["ratings", "--data", str(tmp_path), "--game", "g", "--samples", "50"]) == 0
    out = capsys.readouterr().out
    rows = [
        [cell.strip() for cell in line.split("│")[1:-1]] for line in out.splitlines() if line.startswith("│ ")
    ]
    # group, rank, bot, Elo, interval, LOS next: no LOS from the last of a group to the next group
    assert [(row[0], row[1], row[2]) for row in rows] == [
        ("1", "1", "ann"),
        ("1", "2", "bob"),
        ("1", "3", "cat"),
        ("2", "1", "dan"),
        ("2", "2", "eve"),
    ]
    assert rows[2][5] == "" and rows[4][5] == "" and rows[0][5].endswith("%")
    assert "2 groups" in out and "compare ratings within a group only" in out
    assert main(["ratings", "--data", str(tmp_path), "--tournament", "nope"]) == 1
    assert "no tournament nope" in capsys.readouterr().err


def test_json_and_csv_give_one_line_per_game_and_bot_for_programs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fill(tmp_path / "results.db")
    assert main(["ratings", "--data", str(tmp_path), "--samples", "50", "--format", "json"]) == 0
    lines = json.loads(capsys.readouterr().out)
    assert [(line["game"], line["rank"], line["bot"]) for line in lines] == [
        (game, rank, bot) for game in ("g", "h") for rank, bot in enumerate(("ann", "bob", "cat"), 1)
    ]
    first = lines[0]
    assert set(first) == {
        "game",
        "group",
        "rank",
        "bot",
        "elo",
        "low",
        "high",
        "los_next",
        "score",
        "results",
    }
    assert first["low"] < first["elo"] < first["high"] and first["group"] == 1 and first["results"] > 0
    assert lines[2]["los_next"] is None  # the last of its group
    assert (
        main(["ratings", "--data", str(tmp_path), "--samples", "50", "--format", "csv", "--game", "h"]) == 0
    )
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(row["game"], row["bot"]) for row in table] == [("h", "ann"), ("h", "bob"), ("h", "cat")]
    assert float(table[0]["elo"]) == next(line["elo"] for line in lines if line["game"] == "h")
    assert table[2]["los_next"] == ""


def test_luck_correction_rates_the_points_less_the_luck(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ann wins every match, each by luck worth more than the win (0.9 of a point): read plain she
    leads, read less her luck bob does; a match with no luck measured counts plain."""
    with Store(tmp_path / "results.db") as store:
        tournament = store.open_tournament("t", "fp", {}, again=False)
        schedule = game_schedule("g", ("ann", "bob"), 2, 6, 1, seed=0, secret=bytes(32))
        store.schedule(tournament.id, (m for d in schedule for m in d.matches))
        for number, record in enumerate(store.matches(tournament.id).values()):
            measured = number > 0
            store.record_result(
                record.id,
                [
                    SeatResult(
                        seat,
                        bot,
                        0,
                        1 if bot == "ann" else 2,
                        luck=(0.9 if bot == "ann" else -0.9) if measured else None,
                    )
                    for seat, bot in enumerate(record.seats)
                ],
                None,
            )

    def leader(*options: str) -> str:
        assert (
            main(["ratings", "--data", str(tmp_path), "--samples", "20", "--format", "json", *options]) == 0
        )
        return str(json.loads(capsys.readouterr().out)[0]["bot"])

    assert leader() == "ann"
    assert leader("--luck-correction") == "bob"
    assert main(["ratings", "--data", str(tmp_path), "--samples", "20", "--luck-correction"]) == 0
    assert "g: ratings over every tournament, less luck" in capsys.readouterr().out
