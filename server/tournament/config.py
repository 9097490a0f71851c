"""A tournament file (TOML) read into checked settings; the format is in docs/tournaments.md."""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from croupier.engine.core import CroupierError, options_to_dict
from croupier.engine.games import get_game
from croupier.server.tournament.schedule import (
    DuplicateSet,
    Rotations,
    game_schedule,
    interleave,
    rotation_count,
)

BOT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
CLOCK_FIELDS = ("decision_ms", "bank_ms", "max_timeouts", "grace_ms", "max_refusals")


class ConfigError(ValueError):
    """A tournament file that cannot be run; the message says where and why."""


@dataclass(frozen=True)
class Clock:
    """The referee's clocks for a game's matches (its Clocks message); None keeps its default."""

    decision_ms: int | None = None
    """Time for one decision before the bank is drawn on."""
    bank_ms: int | None = None
    """Each seat's extra time for the whole match."""
    max_timeouts: int | None = None
    """Timeouts after which a seat is forfeited."""
    grace_ms: int | None = None
    """How long a seat may stay without a connected bot before it is forfeited."""
    max_refusals: int | None = None
    """Refused moves after which a seat is forfeited (0: never)."""

    def as_dict(self) -> dict[str, int]:
        return {name: value for name in CLOCK_FIELDS if (value := getattr(self, name)) is not None}


@dataclass(frozen=True)
class GameConfig:
    game: str
    seats: int
    options: Mapping[str, Any]
    """Every option with its value (defaults filled in, ``players`` = seats), as plain values."""
    deals: int
    """Deals each group plays per round."""
    clock: Clock


@dataclass(frozen=True)
class BotConfig:
    name: str
    command: tuple[str, ...] | None
    """The program the runner launches; None for a bot that connects by itself."""
    games: tuple[str, ...]
    capacity: int | None
    """Matches it plays at once; None: what it declares when it connects."""


@dataclass(frozen=True)
class TournamentConfig:
    name: str
    seed: int
    rounds: int
    rotations: Rotations
    concurrency: int
    games: tuple[GameConfig, ...]
    bots: tuple[BotConfig, ...]
    source: Path | None = None

    def game(self, name: str) -> GameConfig:
        return next(game for game in self.games if game.game == name)

    def bots_of(self, game: str) -> list[str]:
        return [bot.name for bot in self.bots if game in bot.games]

    def settings(self) -> dict[str, Any]:
        """What decides the schedule and the results, as plain values (stored with the tournament)."""
        return {
            "seed": self.seed,
            "rounds": self.rounds,
            "rotations": self.rotations.value,
            "games": [
                {
                    "game": g.game,
                    "seats": g.seats,
                    "deals": g.deals,
                    "options": dict(g.options),
                    "clock": g.clock.as_dict(),
                    "bots": self.bots_of(g.game),
                }
                for g in self.games
            ],
        }

    def fingerprint(self) -> str:
        """Changes when the schedule or the conditions change, not with commands or concurrency."""
        return hashlib.sha256(json.dumps(self.settings(), sort_keys=True).encode()).hexdigest()[:16]

    def schedule(self, run: int = 1) -> list[DuplicateSet]:
        """Every duplicate set of every game, the games taken in turn. A run after the
        first (the tournament played again) gets new deals."""
        seed = (
            self.seed
            if run == 1
            else int.from_bytes(hashlib.sha256(f"{self.seed}/{run}".encode()).digest()[:8])
        )
        return interleave(
            [
                game_schedule(
                    g.game, self.bots_of(g.game), g.seats, self.rounds, g.deals, seed, self.rotations
                )
                for g in self.games
            ]
        )


def load(path: str | Path) -> TournamentConfig:
    path = Path(path)
    try:
        with path.open("rb") as file:
            data = tomllib.load(file)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    try:
        return parse(data, source=path)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def parse(data: Mapping[str, Any], source: Path | None = None) -> TournamentConfig:
    """Check every setting, with an error that names it."""
    top = _Table(data, "")
    name = top.string("name")
    if not BOT_NAME.fullmatch(name):
        raise ConfigError(f"name {name!r}: use letters, digits, '.', '_' or '-' (up to 40)")
    seed = top.integer("seed", 0, low=0)
    rounds = top.integer("rounds", 1, low=1)
    rotations_text = top.string("rotations", "cyclic")
    try:
        rotations = Rotations(rotations_text)
    except ValueError:
        raise ConfigError(f"rotations {rotations_text!r}: use 'cyclic' or 'all'") from None
    concurrency = top.integer("concurrency", 4, low=1)
    default_clock = _clock(top.table("clock"), Clock())
    games = tuple(_game(table, default_clock) for table in top.tables("games", required=True))
    names = [g.game for g in games]
    if len(set(names)) != len(names):
        raise ConfigError("a game is listed twice in [[games]]; give it one entry")
    bots = tuple(_bot(table, names) for table in top.tables("bots", required=True))
    seen: set[str] = set()
    for bot in bots:
        if bot.name in seen:
            raise ConfigError(f"two bots are named {bot.name!r}")
        seen.add(bot.name)
    top.check_unknown()
    config = TournamentConfig(name, seed, rounds, rotations, concurrency, games, bots, source)
    for game in games:
        players = config.bots_of(game.game)
        if len(players) < game.seats:
            raise ConfigError(
                f"{game.game} is played {game.seats} to a table but only {len(players)} bot(s) play it"
                + (f" ({', '.join(players)})" if players else "")
            )
        together = rotation_count(game.seats, rotations)
        if together > concurrency:
            raise ConfigError(
                f"concurrency {concurrency} is below the {together} rotations of each {game.game} deal, "
                f"which start together; raise it to at least {together}"
            )
    return config


def _game(table: _Table, default_clock: Clock) -> GameConfig:
    name = table.string("game")
    try:
        spec = get_game(name)
    except CroupierError as exc:
        raise ConfigError(f"{table.where}: {exc}") from None
    options = dict(table.table("options").data)
    seats = table.integer("seats", options.get("players"), low=1)
    if "players" in options and options["players"] != seats:
        raise ConfigError(
            f"{table.where}: options.players ({options['players']}) differs from seats ({seats})"
        )
    if seats is not None:
        options["players"] = seats
    try:
        checked = options_to_dict(spec.options(options))
    except CroupierError as exc:
        raise ConfigError(f"{table.where} ({name}): {exc}") from None
    game = GameConfig(
        game=name,
        seats=checked["players"],
        options=checked,
        deals=table.integer("deals", 1, low=1),
        clock=_clock(table.table("clock"), default_clock),
    )
    table.check_unknown()
    return game


def _bot(table: _Table, games: Sequence[str]) -> BotConfig:
    name = table.string("name")
    if not BOT_NAME.fullmatch(name):
        raise ConfigError(
            f"{table.where}: bot name {name!r}: use letters, digits, '.', '_' or '-' (up to 40)"
        )
    external = table.boolean("external", False)
    raw_command = table.get("command")
    command: tuple[str, ...] | None
    if raw_command is None:
        command = None
    elif isinstance(raw_command, str):
        command = tuple(shlex.split(raw_command))
    elif isinstance(raw_command, list) and all(isinstance(part, str) for part in raw_command):
        command = tuple(raw_command)
    else:
        raise ConfigError(f"{table.where}.command: a string or a list of strings")
    if external and command is not None:
        raise ConfigError(
            f"bot {name!r}: either a command (the runner launches it) or external = true, not both"
        )
    if not external and not command:
        raise ConfigError(
            f"bot {name!r}: give a command to launch it, or external = true if it connects by itself"
        )
    bot_games = table.strings("games", list(games))
    unknown = [g for g in bot_games if g not in games]
    if unknown:
        raise ConfigError(f"bot {name!r} plays {', '.join(unknown)}, not in this tournament's [[games]]")
    capacity = table.integer("capacity", None, low=1)
    table.check_unknown()
    return BotConfig(name, command, tuple(g for g in games if g in bot_games), capacity)


def _clock(table: _Table, default: Clock) -> Clock:
    values = {name: table.integer(name, getattr(default, name), low=0) for name in CLOCK_FIELDS}
    table.check_unknown()
    return Clock(**values)


class _Table:
    """One TOML table, read field by field; check_unknown() catches typos."""

    def __init__(self, data: Mapping[str, Any], where: str) -> None:
        self.data = data
        self.where = where
        self._read: set[str] = set()

    def _field(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def get(self, key: str) -> Any:
        self._read.add(key)
        return self.data.get(key)

    def string(self, key: str, default: str | None = None) -> str:
        value = self.get(key)
        if value is None and default is not None:
            return default
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{self._field(key)}: a non-empty string is required")
        return value

    def strings(self, key: str, default: list[str]) -> list[str]:
        value = self.get(key)
        if value is None:
            return default
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ConfigError(f"{self._field(key)}: a list of strings is required")
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ConfigError(f"{self._field(key)}: true or false")
        return value

    def integer(self, key: str, default: Any, low: int) -> Any:
        value = self.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ConfigError(
                f"{self._field(key)}: a whole number of at least {low} is required, not {value!r}"
            )
        return value

    def table(self, key: str) -> _Table:
        value = self.get(key)
        if value is None:
            value = {}
        if not isinstance(value, dict):
            raise ConfigError(f"{self._field(key)}: a table is required")
        return _Table(value, self._field(key))

    def tables(self, key: str, required: bool) -> list[_Table]:
        value = self.get(key)
        if value is None and not required:
            return []
        if not isinstance(value, list) or not value or not all(isinstance(item, dict) for item in value):
            raise ConfigError(f"at least one [[{self._field(key)}]] table is required")
        return [_Table(item, f"{self._field(key)}[{index}]") for index, item in enumerate(value)]

    def check_unknown(self) -> None:
        unknown = sorted(set(self.data) - self._read)
        if unknown:
            raise ConfigError(f"{self.where or 'top level'}: unknown setting(s) {', '.join(unknown)}")
