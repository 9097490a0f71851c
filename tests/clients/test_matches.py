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
    for line in rows:
        seats = line.split("│")[4].strip()
        assert re.fullmatch(r"0 (careful|lucky) \d+ \([12]\) · 1 (careful|lucky) \d+ \([12]\)", seats), seats
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
