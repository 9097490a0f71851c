"""OpenSpiel's algorithms as Croupier bots: in-process in every game, and through the referee in a
tournament against the bundled bots (``croupier bot --openspiel ismcts``)."""

from __future__ import annotations

import contextlib
import functools
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspiel", reason="OpenSpiel is the openspiel extra (in the dev extras)")

from croupier.clients.bots import HeuristicBot
from croupier.clients.openspiel.searchers import Ismcts, Mcts, OpenSpielBot
from croupier.clients.sdk import play_offline
from croupier.engine.games import get_game

SHORT = {
    "chinese_ten": {"players": 2, "target": 100},
    "pair_battle": {"players": 2, "timing": "lockstep"},
    "platinum_fish": {"players": 2},
    "spoil_five": {"players": 2, "deals": 2},
}


@pytest.mark.parametrize("bot", [Ismcts, Mcts], ids=["ismcts", "mcts"])
@pytest.mark.parametrize("name", sorted(SHORT))
def test_an_openspiel_bot_plays_a_whole_match_of_every_game_from_its_view(
    name: str, bot: type[OpenSpielBot]
) -> None:
    spec = get_game(name)
    options = spec.options(SHORT[name])
    outcome = play_offline(spec, options, [functools.partial(bot, simulations=4), HeuristicBot], seed=2)
    assert sorted(outcome.places) in ([1, 2], [1, 1])
    again = play_offline(spec, options, [functools.partial(bot, simulations=4), HeuristicBot], seed=2)
    assert again == outcome, "a seed replays the match: the budget is simulations, not time"


TOURNAMENT = """
name = "openspiel"
concurrency = 4
[clock]
decision_ms = 20000
bank_ms = 0
[[games]]
game = "spoil_five"
seats = 2
options = { deals = 2 }
[[bots]]
name = "ismcts"
command = "croupier bot --openspiel ismcts --max-matches 4"
[[bots]]
name = "heuristic"
command = "croupier bot --strategy heuristic --max-matches 4"
[[bots]]
name = "random"
command = "croupier bot --strategy random --max-matches 4"
"""


def test_openspiels_ismcts_plays_a_tournament_against_the_bundled_bots_through_the_referee(
    tmp_path: Path,
) -> None:
    (tmp_path / "t.toml").write_text(TOURNAMENT)
    command = [
        sys.executable, "-m", "croupier.clients.cli", "tournament", str(tmp_path / "t.toml"),
        "--data", str(tmp_path / "data"), "--samples", "100",
    ]  # fmt: skip
    run = subprocess.run(command, capture_output=True, text=True, timeout=280)
    assert run.returncode == 0, run.stdout + run.stderr
    with contextlib.closing(sqlite3.connect(tmp_path / "data" / "results.db")) as db:
        ismcts = db.execute(
            "SELECT count(*), sum(timeouts), sum(refusals), sum(forfeited) FROM results WHERE bot = 'ismcts'"
        ).fetchone()
        done = db.execute("SELECT count(*) FROM matches WHERE status = 'done'").fetchone()[0]
    assert ismcts == (4, 0, 0, 0), "it played both rotations against each bundled bot, cleanly"
    assert done == 6
    assert "ismcts" in run.stdout
