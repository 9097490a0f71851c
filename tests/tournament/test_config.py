"""Reading a tournament file: every setting checked, errors that say where."""

from __future__ import annotations

from pathlib import Path

import pytest

from croupier.server.tournament.config import ConfigError, load, parse
from croupier.server.tournament.schedule import Rotations

EXAMPLE = """
name = "friday"
seed = 7
rounds = 2
rotations = "all"
concurrency = 12

[clock]
decision_ms = 500

[[games]]
game = "chinese_ten"
seats = 3
deals = 2
options = { target = 200, scoring = "red_frog" }
clock = { bank_ms = 0 }

[[games]]
game = "spoil_five"
seats = 2

[[bots]]
name = "alpha"
command = "croupier bot --strategy random --server {server}"
capacity = 8

[[bots]]
name = "beta"
command = ["python", "my_bot.py"]
games = ["chinese_ten"]

[[bots]]
name = "gamma"
external = true
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.toml"
    path.write_text(text)
    return path


def test_a_full_file_reads_into_settings(tmp_path: Path) -> None:
    config = load(write(tmp_path, EXAMPLE))
    assert (config.name, config.seed, config.rounds, config.rotations, config.concurrency) == (
        "friday",
        7,
        2,
        Rotations.ALL,
        12,
    )
    ten = config.game("chinese_ten")
    assert ten.seats == 3 and ten.deals == 2
    assert ten.options == {"players": 3, "scoring": "red_frog", "target": 200}
    assert ten.clock.as_dict() == {"decision_ms": 500, "bank_ms": 0}
    assert config.game("spoil_five").clock.as_dict() == {"decision_ms": 500}
    assert config.game("spoil_five").options["players"] == 2
    alpha, beta, gamma = config.bots
    assert alpha.command == ("croupier", "bot", "--strategy", "random", "--server", "{server}")
    assert alpha.capacity == 8 and alpha.games == ("chinese_ten", "spoil_five")
    assert beta.command == ("python", "my_bot.py") and beta.games == ("chinese_ten",)
    assert gamma.command is None
    assert config.bots_of("spoil_five") == ["alpha", "gamma"]


def test_seats_default_to_the_games_default_player_count() -> None:
    config = parse(
        {
            "name": "t",
            "games": [{"game": "chinese_ten"}],
            "bots": [{"name": n, "command": "x"} for n in "abc"],
        }
    )
    assert config.game("chinese_ten").seats == 3


def test_the_schedule_covers_every_game_and_group(tmp_path: Path) -> None:
    config = load(write(tmp_path, EXAMPLE))
    sets = config.schedule()
    # chinese_ten: one group of three, 2 rounds x 2 deals, 6 permutations each;
    # spoil_five: one pair (beta plays only chinese_ten), 2 rounds x 1 deal, 2 permutations each
    assert sum(1 for s in sets if s.key[0] == "chinese_ten") == 4
    assert sum(len(s.matches) for s in sets if s.key[0] == "chinese_ten") == 24
    assert sum(len(s.matches) for s in sets if s.key[0] == "spoil_five") == 4


def test_playing_again_deals_new_cards_to_the_same_groups(tmp_path: Path) -> None:
    config = load(write(tmp_path, EXAMPLE))
    first, second = config.schedule(run=1), config.schedule(run=2)
    assert [s.bots for s in first] == [s.bots for s in second]
    assert not {m.seed for s in first for m in s.matches} & {m.seed for s in second for m in s.matches}


def test_the_fingerprint_ignores_commands_and_concurrency_but_not_bots_or_options(tmp_path: Path) -> None:
    base = load(write(tmp_path, EXAMPLE)).fingerprint()
    assert load(write(tmp_path, EXAMPLE.replace("concurrency = 12", "concurrency = 6"))).fingerprint() == base
    assert load(write(tmp_path, EXAMPLE.replace("my_bot.py", "other.py"))).fingerprint() == base
    assert load(write(tmp_path, EXAMPLE.replace("target = 200", "target = 300"))).fingerprint() != base
    assert load(write(tmp_path, EXAMPLE.replace('"gamma"', '"delta"'))).fingerprint() != base


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("seed = 7", 'seed = "x"'), "seed: a whole number of at least 0"),
        (('rotations = "all"', 'rotations = "some"'), "rotations 'some': use 'cyclic' or 'all'"),
        (('game = "spoil_five"', 'game = "poker"'), "games\\[1\\]: unknown game 'poker'"),
        (("target = 200", "target = 200, colour = 1"), "unknown option\\(s\\) colour"),
        (("seats = 2", "seats = 11"), "Spoil Five is played by 2 to 10 players, not 11"),
        (("decision_ms = 500", "decision_ms = -1"), "clock.decision_ms: a whole number of at least 0"),
        (("decision_ms = 500", "decison_ms = 500"), "clock: unknown setting\\(s\\) decison_ms"),
        (("concurrency = 12", "concurency = 12"), "top level: unknown setting\\(s\\) concurency"),
        (
            ("concurrency = 12", "concurrency = 5"),
            "concurrency 5 is below the 6 rotations of each chinese_ten deal",
        ),
        (('name = "beta"', 'name = "alpha"'), "two bots are named 'alpha'"),
        (('name = "beta"', 'name = "be ta"'), "bot name 'be ta'"),
        (("external = true", 'external = true\ncommand = "x"'), "either a command .* or external = true"),
        (("external = true", "external = false"), "give a command to launch it"),
        (('games = ["chinese_ten"]', 'games = ["go"]'), "bot 'beta' plays go, not in this tournament"),
        (
            ('games = ["chinese_ten"]\n', 'games = ["chinese_ten"]\n[[games]]\ngame = "chinese_ten"\n'),
            "twice",
        ),
    ],
)
def test_a_bad_setting_is_named_in_the_error(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    text = EXAMPLE.replace(*change)
    assert text != EXAMPLE
    with pytest.raises(ConfigError, match=message):
        load(write(tmp_path, text))


def test_too_few_bots_for_a_table_is_refused(tmp_path: Path) -> None:
    text = EXAMPLE.replace("seats = 2\n", "seats = 4\n")
    with pytest.raises(ConfigError, match="spoil_five is played 4 to a table but only 2 bot\\(s\\) play it"):
        load(write(tmp_path, text))


def test_a_file_that_is_not_toml_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"t\.toml: not valid TOML"):
        load(write(tmp_path, "name = [unclosed"))


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load(tmp_path / "none.toml")
