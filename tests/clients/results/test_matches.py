"""``croupier matches`` lists what a tournament played (as ``make run`` plays it: an embedded
referee, journals under DATA/referee/matches), and ``croupier replay ID`` finds those journals."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.clients.terminal import croupier

WAIT = 120
TOURNAMENT = """
name = "tiny"
[[games]]
game = "platinum_fish"
seats = 2
[[bots]]
name = "careful"
command = "croupier bot --strategy heuristic"
[[bots]]
name = "lucky"
command = "croupier bot --strategy random"
"""


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(croupier(*args), capture_output=True, text=True, timeout=WAIT)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The data directory of a finished two-match tournament."""
    folder = tmp_path_factory.mktemp("tournament")
    (folder / "tiny.toml").write_text(TOURNAMENT)
    played = run("tournament", str(folder / "tiny.toml"), "--data", str(folder / "data"), "--plain")
    assert played.returncode == 0, played.stdout + played.stderr
    assert re.search(
        r"referee on 127\.0\.0\.1:\d+; watch its matches: \S+ watch --server 127\.0\.0\.1:\d+ --follow",
        played.stdout,
    )
    return folder / "data"


def test_matches_lists_ids_seats_scores_and_places(data: Path) -> None:
    listed = run("matches", "--data", str(data))
    assert listed.returncode == 0, listed.stderr
    rows = [line for line in listed.stdout.splitlines() if "platinum_fish" in line and "done" in line]
    assert len(rows) == 2
    seat = r"(careful|lucky) \d+ \(([12]); luck ([+-]\d\.\d\d), skill (-?\d\.\d\d)\)"
    for line in rows:
        seats = line.split("│")[4].strip()
        found = re.fullmatch(rf"0 {seat} · 1 {seat}", seats)
        assert found, seats
        _, first, first_luck, first_skill, _, second, second_luck, second_skill = found.groups()
        assert float(first_luck) == -float(second_luck)  # a two-seat match's luck is one pair's
        points = 1.0 if first < second else 0.5 if first == second else 0.0
        assert float(first_skill) == pytest.approx(points - float(first_luck), abs=0.011)
        assert float(second_skill) == pytest.approx(1 - points - float(second_luck), abs=0.011)
    assert f"tiny (run 1): 2 matches in {data / 'results.db'}" in listed.stdout


def test_replay_finds_the_journals_of_the_embedded_referee(data: Path) -> None:
    listed = run("matches", "--tournament", "tiny", "--data", str(data))
    match_id = next(line.split("│")[1].strip() for line in listed.stdout.splitlines() if "done" in line)
    shown = run("replay", match_id, "--data", str(data), "--at", "-1")
    assert shown.returncode == 0, shown.stdout
    assert "result" in shown.stdout and match_id in shown.stdout


def test_an_unknown_tournament_is_one_line_with_what_was_meant(data: Path) -> None:
    listed = run("matches", "--tournament", "tiy", "--data", str(data))
    assert listed.returncode == 1
    assert listed.stderr.splitlines() == [
        f"no tournament 'tiy' in {data / 'results.db'} (did you mean tiny?); there: tiny"
    ]


def test_a_seat_that_forfeited_says_why_in_the_list(tmp_path: Path) -> None:
    """ "random 104 (2) · mybot 163 (3)" explains itself: the third place was a forfeit."""
    from croupier.clients.results.schedule import MatchKey, ScheduledMatch
    from croupier.clients.results.store import SeatResult, Store

    db = tmp_path / "results.db"
    with Store(db) as store:
        tournament = store.open_tournament("cup", "fingerprint", {}, again=False)
        key = MatchKey("platinum_fish", 1, 0, 0, 0)
        store.schedule(tournament.id, [ScheduledMatch(key, 5, ("random", "mybot", "other"))])
        record = store.matches(tournament.id)[key]
        store.mark_started(record.id, "m-1", None)
        results = [
            SeatResult(0, "random", 104, 2),
            SeatResult(1, "mybot", 163, 3, timeouts=3, forfeited=True, note="timeouts"),
            SeatResult(2, "other", 120, 1),
        ]
        store.record_result(record.id, results, None)
    listed = run("matches", "--db", str(db))
    assert listed.returncode == 0, listed.stderr
    assert "0 random 104 (2) · 1 mybot 163 (3, forfeited: timeouts) · 2 other 120 (1)" in listed.stdout


def test_a_ladder_s_versions_are_told_apart_and_no_name_is_cut_at_80_columns(tmp_path: Path) -> None:
    """Two registrations of mybot are mybot@1 and mybot@2, as the ladder rates them; a terminal of 80
    columns wraps a long name rather than cutting it off."""
    from rich.console import Console

    from croupier.clients.results.matches_cli import matches_table
    from croupier.clients.results.schedule import MatchKey, ScheduledMatch
    from croupier.clients.results.store import SeatResult, Store

    long = "a_bot_named_at_some_length_xyz"
    db = tmp_path / "results.db"
    with Store(db) as store:
        tournament = store.open_tournament("open", "fingerprint", {}, again=False)
        key = MatchKey("platinum_fish", 1, 0, 0, 0)
        store.schedule(tournament.id, [ScheduledMatch(key, 5, ("mybot@1", "mybot@2", long))])
        record = store.matches(tournament.id)[key]
        store.mark_started(record.id, "20250101-120000-abcdef", None)
        results = [
            SeatResult(0, "mybot", 104, 2, version="1"),
            SeatResult(1, "mybot", 163, 1, version="2"),
            SeatResult(2, long, 120, 3),
        ]
        store.record_result(record.id, results, None)
        shown = matches_table("open", list(store.matches(tournament.id).values()), {
            m.record.id: m for m in store.finished(tournament.id)
        })  # fmt: skip
    listed = run("matches", "--db", str(db))
    assert listed.returncode == 0, listed.stderr
    assert f"0 mybot@1 104 (2) · 1 mybot@2 163 (1) · 2 {long} 120 (3)" in listed.stdout
    console = Console(width=80, record=True)
    console.print(shown)
    screen = console.export_text()
    assert max(map(len, screen.splitlines())) <= 80 and "…" not in screen
    rows = [line.split("│") for line in screen.splitlines() if line.count("│") == 6]
    assert rows[0][1].strip() == "20250101-120000-abcdef"
    seats = "".join(row[4].strip() for row in rows)
    assert all(name in seats for name in ("mybot@1", "mybot@2", long)), screen
