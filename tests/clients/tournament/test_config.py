"""Reading a tournament file: every setting checked, errors that say where."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from croupier.clients.results.schedule import Deals, Rotations
from croupier.clients.tournament.config import ConfigError, load, parse

SECRET = bytes(32)

EXAMPLE = """
name = "friday"
seed = 7
rounds = 2
deals = "fresh"  # gamma connects by itself: never dealt a duplicate set
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


def test_the_defaults_are_williams_rotations_duplicate_deals_one_process_and_room_for_a_set() -> None:
    config = parse(
        {
            "name": "t",
            "games": [{"game": "chinese_ten", "seats": 3}, {"game": "spoil_five", "seats": 2}],
            "bots": [{"name": n, "command": "x"} for n in "abc"],
        }
    )
    assert (config.rotations, config.deals, config.processes, config.isolation) == (
        Rotations.WILLIAMS,
        Deals.DUPLICATE,
        "shared",
        "auto",
    )
    assert config.concurrency == 6  # a three-seat Williams set starts 6 matches together
    assert [config.instances(bot) for bot in "abc"] == [1, 1, 1]


def test_fresh_deals_and_a_process_per_rotation() -> None:
    config = parse(
        {
            "name": "t",
            "deals": "fresh",
            "processes": "per_rotation",
            "games": [{"game": "chinese_ten", "seats": 3}, {"game": "spoil_five", "seats": 2}],
            "bots": [
                *({"name": n, "command": "x"} for n in "abc"),
                {"name": "d", "command": "x", "games": ["spoil_five"]},
            ],
        }
    )
    assert config.deals is Deals.FRESH and config.per_rotation
    assert config.instances("a") == 6 and config.instances("d") == 2
    seeds = [m.seed for d in config.schedule(SECRET) for m in d.matches]
    assert len(set(seeds)) == len(seeds)


def test_a_bots_version_is_the_files_or_a_digest_of_its_command(tmp_path: Path) -> None:
    alpha, beta, gamma = load(write(tmp_path, EXAMPLE)).bots
    assert len(alpha.version) == 8 and alpha.identity == f"alpha@{alpha.version}"
    assert gamma.version == "" and gamma.identity == "gamma"
    changed = load(write(tmp_path, EXAMPLE.replace("my_bot.py", "my_bot2.py"))).bots[1]
    assert changed.version != beta.version
    pinned = load(write(tmp_path, EXAMPLE.replace('name = "gamma"', 'name = "gamma"\nversion = "2.1"')))
    assert pinned.bots[2].identity == "gamma@2.1"


def test_the_schedule_covers_every_game_and_group(tmp_path: Path) -> None:
    config = load(write(tmp_path, EXAMPLE))
    sets = config.schedule(SECRET)
    # chinese_ten: one group of three, 2 rounds x 2 deals, 6 permutations each;
    # spoil_five: one pair (beta plays only chinese_ten), 2 rounds x 1 deal, 2 permutations each
    assert sum(1 for s in sets if s.key[0] == "chinese_ten") == 4
    assert sum(len(s.matches) for s in sets if s.key[0] == "chinese_ten") == 24
    assert sum(len(s.matches) for s in sets if s.key[0] == "spoil_five") == 4


def test_playing_again_deals_new_cards_to_the_same_groups(tmp_path: Path) -> None:
    config = load(write(tmp_path, EXAMPLE))
    first, second = config.schedule(SECRET, run=1), config.schedule(secrets.token_bytes(32), run=2)
    assert [s.bots for s in first] == [s.bots for s in second]
    assert not {m.seed for s in first for m in s.matches} & {m.seed for s in second for m in s.matches}


def test_the_fingerprint_ignores_commands_and_concurrency_but_not_bots_or_options(tmp_path: Path) -> None:
    base = load(write(tmp_path, EXAMPLE)).fingerprint()
    assert load(write(tmp_path, EXAMPLE.replace("concurrency = 12", "concurrency = 6"))).fingerprint() == base
    assert load(write(tmp_path, EXAMPLE.replace("my_bot.py", "other.py"))).fingerprint() == base
    assert load(write(tmp_path, EXAMPLE.replace("target = 200", "target = 300"))).fingerprint() != base
    assert load(write(tmp_path, EXAMPLE.replace('"gamma"', '"delta"'))).fingerprint() != base


KNOWN_GAMES = "chinese_ten, pair_battle, platinum_fish, spoil_five"


@pytest.mark.parametrize(
    ("change", "line"),
    [
        (("seed = 7", 'seed = "x"'), "seed: a whole number of at least 0 is required, not 'x'"),
        (
            ("seed = 7", 'seed = "7"'),
            "seed: a whole number of at least 0 is required, not '7' (write seed = 7 without quotes)",
        ),
        (
            ('rotations = "all"', 'rotations = "some"'),
            "rotations: 'some': use 'williams' or 'cyclic' or 'all'",
        ),
        (('game = "spoil_five"', 'game = "poker"'), f"games[1].game: no game 'poker'; known: {KNOWN_GAMES}"),
        (
            ('game = "spoil_five"', 'game = "spoil_fve"'),
            f"games[1].game: no game 'spoil_fve' (did you mean spoil_five?); known: {KNOWN_GAMES}",
        ),
        (
            ("target = 200", "targt = 200"),
            "games[0].options.targt: chinese_ten has no option 'targt' (did you mean target?); "
            "its options: players, scoring, target",
        ),
        (
            ("target = 200", 'target = "300"'),
            "games[0].options.target: a whole number is required, not '300' "
            "(write target = 300 without quotes)",
        ),
        (('scoring = "red_frog"', "scoring = 1"), "games[0].options.scoring: a string is required, not 1"),
        (
            ("seats = 2", "seats = 11"),
            "games[1] (spoil_five): Spoil Five is played by 2 to 10 players, not 11",
        ),
        (
            ("decision_ms = 500", "decision_ms = -1"),
            "clock.decision_ms: a whole number of at least 0 is required, not -1",
        ),
        (
            ("decision_ms = 500", "decison_ms = 500"),
            "clock: unknown setting 'decison_ms' (did you mean decision_ms?)",
        ),
        (
            ("concurrency = 12", "concurency = 12"),
            "top level: unknown setting 'concurency' (did you mean concurrency?)",
        ),
        (
            ('deals = "fresh"  # gamma connects by itself: never dealt a duplicate set\n', ""),
            "gamma connect(s) by itself: the runner cannot keep one process from being dealt every rotation "
            'of a duplicate deal, and playing one hand knowing another: use deals = "fresh"',
        ),
        (('name = "beta"', 'name = "alpha"'), "two bots are named 'alpha'"),
        (
            ("--server {server}", "--server {server} --token {token}"),
            "bots[0].command: {token} would put the bot's token on its command line, which every user "
            "of the machine reads (ps): the bot is given it as $CROUPIER_TOKEN",
        ),
        (
            ("concurrency = 12", 'concurrency = 12\nisolation = "yes"'),
            "isolation: 'yes': use 'auto' or 'required' or 'off'",
        ),
        (
            ('name = "beta"', 'name = "be ta"'),
            "bots[1].name: bot name 'be ta': use letters, digits, '.', '_' or '-', "
            "starting with a letter or digit (up to 40)",
        ),
        (
            ("external = true", 'external = true\ncommand = "x"'),
            "bots[2].command: bot 'gamma': either a command (the runner launches it) "
            "or external = true, not both",
        ),
        (
            ("external = true", "external = false"),
            "bots[2].command: bot 'gamma': give a command to launch it, "
            "or external = true if it connects by itself",
        ),
        (
            ('games = ["chinese_ten"]', 'games = ["go"]'),
            "bots[1].games: bot 'beta' plays go, not in this tournament's [[games]]",
        ),
        (
            ('games = ["chinese_ten"]\n', 'games = ["chinese_ten"]\n[[games]]\ngame = "chinese_ten"\n'),
            "a game is listed twice in [[games]]; give it one entry",
        ),
    ],
)
def test_a_bad_setting_is_one_line_naming_it(tmp_path: Path, change: tuple[str, str], line: str) -> None:
    text = EXAMPLE.replace(*change)
    assert text != EXAMPLE
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as raised:
        load(path)
    assert str(raised.value).splitlines() == [f"{path}: {line}"]


def test_every_problem_of_a_file_is_told_at_once(tmp_path: Path) -> None:
    text = (
        EXAMPLE.replace("seed = 7", 'seed = "7"')
        .replace('game = "chinese_ten"', 'game = "chinese_tne"')
        .replace("decision_ms = 500", "decison_ms = 500")
        .replace("capacity = 8", "capacity = 0")
    )
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as raised:
        load(path)
    assert str(raised.value).splitlines() == [
        f"{path}: seed: a whole number of at least 0 is required, not '7' (write seed = 7 without quotes)",
        f"{path}: clock: unknown setting 'decison_ms' (did you mean decision_ms?)",
        f"{path}: games[0].game: no game 'chinese_tne' (did you mean chinese_ten?); known: {KNOWN_GAMES}",
        f"{path}: bots[0].capacity: a whole number of at least 1 is required, not 0",
    ]


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
