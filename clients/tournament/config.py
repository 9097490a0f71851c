"""A tournament file (TOML) read into checked settings; the format is in docs/tournaments.md."""

from __future__ import annotations

import enum
import hashlib
import json
import re
import shlex
import tomllib
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from croupier.clients.isolation.limits import MIN_MEMORY, Sandbox, size_bytes
from croupier.clients.isolation.policy import MODES as ISOLATION
from croupier.clients.results.schedule import (
    Deals,
    DuplicateSet,
    Rotations,
    game_schedule,
    interleave,
    rotation_count,
)
from croupier.clients.tournament.identity import command_digest
from croupier.clients.tournament.launch import TOKEN_IN_ARGV
from croupier.engine.core import CroupierError, GameSpec, options_to_dict
from croupier.engine.games import GAMES, get_game
from croupier.wire.names import did_you_mean, name_problem

T = TypeVar("T")
Parsed = TypeVar("Parsed")
VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}")
PROCESSES = ("shared", "per_rotation")
DEFAULT_CONCURRENCY = 4
CLOCK_FIELDS = ("decision_ms", "bank_ms", "max_timeouts", "grace_ms", "max_refusals")


class ConfigError(ValueError):
    """A tournament file that cannot be run: one line per problem, each saying where and why."""

    def __init__(self, *problems: str) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)


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
    image: str | None = None
    """The Docker image it runs in, sandboxed (isolation/containers.py); ``command`` is then the image's
    command (its CMD by default)."""
    sandbox: Sandbox | None = None
    """The container's limits, for a bot given as an image."""
    version: str = ""
    """Which version of the bot plays: ratings keep versions apart. The file's ``version``, else a
    digest of the command (an external bot without one: '')."""
    registered: bool = False
    """Registered on the referee already (``croupier register NAME``) under its name: the runner
    seats that bot, which connects by itself with its own token; nothing is registered or launched."""
    human: bool = False
    """A person plays it, in the web viewer the runner starts (tournament/viewer.py): one match at a
    time, on fresh deals (a person would remember a duplicate set's hands)."""

    @property
    def identity(self) -> str:
        """The name results and ratings are kept under: NAME@VERSION (NAME without a version)."""
        return f"{self.name}@{self.version}" if self.version else self.name


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
    deals: Deals = Deals.DUPLICATE
    processes: str = "shared"
    """"shared": one process of each bot plays all its matches; "per_rotation": rotation r of
    every set is played by the bot's own process number r (PROCESSES)."""
    isolation: str = "auto"
    """Whether command bots run isolated (isolation.MODES): not part of the schedule."""

    @property
    def per_rotation(self) -> bool:
        return self.processes == "per_rotation"

    def bot(self, name: str) -> BotConfig:
        return next(bot for bot in self.bots if bot.name == name)

    def instances(self, bot: str) -> int:
        """How many processes of the bot play: one, or one per rotation of its largest set."""
        if not self.per_rotation:
            return 1
        return max(rotation_count(g.seats, self.rotations) for g in self.games if bot in self.bots_of(g.game))

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
            "deals": self.deals.value,
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

    def schedule(self, secret: bytes, run: int = 1) -> list[DuplicateSet]:
        """Every duplicate set of every game, the games taken in turn, dealt from the run's
        ``secret``. A run after the first (the tournament played again) seats differently too."""
        seed = (
            self.seed
            if run == 1
            else int.from_bytes(hashlib.sha256(f"{self.seed}/{run}".encode()).digest()[:8])
        )
        return interleave(
            [
                game_schedule(
                    g.game,
                    self.bots_of(g.game),
                    g.seats,
                    self.rounds,
                    g.deals,
                    seed=seed,
                    secret=secret,
                    rotations=self.rotations,
                    dealing=self.deals,
                )
                for g in self.games
            ]
        )


def load(path: str | Path) -> TournamentConfig:
    return from_file(Path(path), lambda data: parse(data, source=Path(path)))


def from_file(path: str | Path, parse: Callable[[dict[str, Any]], Parsed]) -> Parsed:
    """What ``parse`` makes of a TOML file (a tournament's, a ladder's); every problem, a missing
    file or bad TOML among them, a ConfigError naming the file."""
    path = Path(path)
    try:
        with path.open("rb") as file:
            data = tomllib.load(file)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    try:
        return parse(data)
    except ConfigError as exc:
        raise ConfigError(*(f"{path}: {problem}" for problem in exc.problems)) from None


def parse(data: Mapping[str, Any], source: Path | None = None) -> TournamentConfig:
    """Check every setting; every problem of the file is in the one ConfigError, each naming its
    setting."""
    problems: list[str] = []
    top = _Table(data, "", problems)
    name = top.string("name")
    if name and (problem := name_problem(name)):
        top.problem("name", problem)
    seed = top.integer("seed", 0, low=0)
    rounds = top.integer("rounds", 1, low=1)
    rotations = Rotations(top.choice("rotations", "williams", [r.value for r in Rotations]))
    deals = Deals(top.choice("deals", "duplicate", [d.value for d in Deals]))
    processes = top.choice("processes", "shared", PROCESSES)
    isolation = top.choice("isolation", "auto", ISOLATION)
    concurrency = top.integer("concurrency", None, low=1)
    default_clock = _clock(top.table("clock"), Clock())
    game_tables = top.tables("games", required=True)
    games = tuple(game for table in game_tables if (game := _checked(problems, _game, table, default_clock)))
    names = [g.game for g in games]
    if len(set(names)) != len(names):
        problems.append("a game is listed twice in [[games]]; give it one entry")
    # which games a bot plays is checked only once every game is: a misspelt game is told once
    every_game = len(games) == len(game_tables)
    default_sandbox = _sandbox(top.table("sandbox"), Sandbox())
    bots = tuple(
        bot
        for table in top.tables("bots", required=True)
        if (bot := _checked(problems, _bot, table, names, default_sandbox, every_game))
    )
    seen: set[str] = set()
    for bot in bots:
        if bot.name in seen:
            problems.append(f"two bots are named {bot.name!r}")
        seen.add(bot.name)
    top.check_unknown()
    if problems:  # the checks below would only repeat them in other words
        raise ConfigError(*problems)
    if concurrency is None:  # every set must fit: 4, or the largest set's rotations
        concurrency = max([DEFAULT_CONCURRENCY] + [rotation_count(g.seats, rotations) for g in games])
    config = TournamentConfig(
        name, seed, rounds, rotations, concurrency, games, bots, source, deals, processes, isolation
    )
    registered = [bot.name for bot in bots if bot.registered]
    if registered and config.per_rotation:
        problems.append(
            f'processes = "per_rotation" gives each rotation a bot of its own, which the runner registers; '
            f'{", ".join(registered)} registered = true play as one bot: use processes = "shared"'
        )
    humans = [bot.name for bot in bots if bot.human]
    if len(humans) > 1:
        problems.append(
            f"{', '.join(humans)}: one person plays a tournament (human = true), in its web viewer"
        )
    if humans and (deals == Deals.DUPLICATE or config.per_rotation):
        problems.append(
            f"{humans[0]} (human = true) would be dealt each hand again in another seat and remember it: "
            'use deals = "fresh" and processes = "shared"'
        )
    connecting = [bot.name for bot in bots if bot.command is None and bot.image is None and not bot.human]
    if connecting and deals == Deals.DUPLICATE:
        problems.append(
            f"{', '.join(connecting)} connect(s) by itself: the runner cannot keep one process from being "
            "dealt every rotation of a duplicate deal, and playing one hand knowing another: "
            'use deals = "fresh"'
        )
    for game in games:
        players = config.bots_of(game.game)
        if len(players) < game.seats:
            problems.append(
                f"{game.game} is played {game.seats} to a table but only {len(players)} bot(s) play it"
                + (f" ({', '.join(players)})" if players else "")
            )
        together = rotation_count(game.seats, rotations)
        if together > concurrency and deals == Deals.DUPLICATE:
            problems.append(
                f"concurrency {concurrency} is below the {together} rotations of each {game.game} deal, "
                f"which start together; raise it to at least {together}"
            )
    if problems:
        raise ConfigError(*problems)
    return config


def _checked(problems: list[str], read: Callable[..., T], *args: Any) -> T | None:
    """``read(*args)``, or None with its ConfigError's problems noted: the rest of the file is
    still checked."""
    before = len(problems)
    try:
        value = read(*args)
    except ConfigError as exc:
        problems.extend(exc.problems)
        return None
    return value if len(problems) == before else None


def _game(table: _Table, default_clock: Clock) -> GameConfig:
    noted = table.count()
    name = table.string("game")
    try:
        spec = get_game(name)
    except CroupierError:
        raise ConfigError(
            f"{table.field('game')}: no game {name!r}{did_you_mean(name, GAMES)}; known: {', '.join(GAMES)}"
        ) from None
    options_table = table.table("options")
    options = dict(options_table.data)
    _check_option_types(options_table, spec)
    seats = table.integer("seats", options.get("players"), low=1)
    if "players" in options and options["players"] != seats:
        table.problem("options.players", f"{options['players']} differs from seats ({seats})")
    if seats is not None:
        options["players"] = seats
    deals = table.integer("deals", 1, low=1)
    clock = _clock(table.table("clock"), default_clock)
    table.check_unknown()
    if table.count() > noted:
        raise ConfigError()  # noted already; the options' own check would only repeat them
    try:
        checked = options_to_dict(spec.options(options))
    except CroupierError as exc:
        raise ConfigError(f"{table.where} ({name}): {exc}") from None
    return GameConfig(game=name, seats=checked["players"], options=checked, deals=deals, clock=clock)


def _check_option_types(table: _Table, spec: GameSpec[Any]) -> None:
    """A misspelt option or a value of the wrong kind (``target = "300"``), named; the engine,
    which also takes options from text, would quietly turn "300" into 300."""
    hints = typing.get_type_hints(spec.options_type)
    for key, value in table.data.items():
        if key not in hints:
            table.problem(
                key,
                f"{spec.name} has no option {key!r}{did_you_mean(key, hints)}; "
                f"its options: {', '.join(hints)}",
            )
            continue
        wanted = {t for t in typing.get_args(hints[key]) or (hints[key],) if t is not type(None)}
        number = wanted & {int, float}
        if number and (isinstance(value, bool) or not isinstance(value, (int, float))):
            kind = "a whole number" if int in number else "a number"
            unquoted = f" (write {key} = {value} without quotes)" if _numeric(value) else ""
            table.problem(key, f"{kind} is required, not {value!r}{unquoted}")
        elif bool in wanted and not isinstance(value, bool):
            table.problem(key, f"true or false is required, not {value!r}")
        elif any(isinstance(t, type) and issubclass(t, enum.Enum) for t in wanted) and not isinstance(
            value, str
        ):
            table.problem(key, f"a string is required, not {value!r}")


def _numeric(value: object) -> bool:
    try:
        float(str(value))
    except ValueError:
        return False
    return isinstance(value, str)


def _bot(
    table: _Table, games: Sequence[str], default_sandbox: Sandbox, check_games: bool = True
) -> BotConfig:
    name = table.string("name")
    if name and (problem := name_problem(name)):
        table.problem("name", f"bot name {problem}")
    registered = table.boolean("registered", False)
    human = table.boolean("human", False)
    external = table.boolean("external", False) or registered or human  # none is launched
    raw_command = table.get("command")
    command: tuple[str, ...] | None = None
    if isinstance(raw_command, str):
        command = tuple(shlex.split(raw_command))
    elif isinstance(raw_command, list) and all(isinstance(part, str) for part in raw_command):
        command = tuple(raw_command)
    elif raw_command is not None:
        table.problem("command", "a string or a list of strings")
    if command is not None and any("{token}" in part for part in command):
        table.problem("command", TOKEN_IN_ARGV)
    image = table.get("image")
    if image is not None and (not isinstance(image, str) or not image):
        table.problem("image", f'a Docker image such as "mybot:1" is required, not {image!r}')
    own_limits = table.table("sandbox")
    # a container's limits, or a jailed command's (isolation.py)
    limits = _sandbox(own_limits, default_sandbox) if image is not None or command else None
    if limits is None and own_limits.data:
        table.problem("sandbox", "limits are for a bot the runner launches (an image or a command)")
    kind = "registered = true" if registered else "human = true" if human else "external = true"
    if registered and table.get("external") is not None:
        table.problem("external", f"bot {name!r}: registered = true already says it connects by itself")
    if external and command is not None:
        table.problem(
            "command", f"bot {name!r}: either a command (the runner launches it) or {kind}, not both"
        )
    elif external and image is not None:
        table.problem("image", f"bot {name!r}: either an image (the runner runs it) or {kind}, not both")
    if not external and not command and raw_command is None and image is None:
        table.problem(
            "command",
            f"bot {name!r}: give a command to launch it, or external = true if it connects by itself",
        )
    bot_games = table.strings("games", list(games))
    unknown = [g for g in bot_games if g not in games]
    if unknown and check_games:
        mean = did_you_mean(unknown[0], games)
        table.problem(
            "games", f"bot {name!r} plays {', '.join(unknown)}, not in this tournament's [[games]]{mean}"
        )
    capacity = table.integer("capacity", None, low=1)
    if human and capacity not in (None, 1):
        table.problem("capacity", f"bot {name!r}: a person plays one match at a time")
    version = table.get("version")
    if version is None:
        source = [image] if isinstance(image, str) else []
        version = command_digest([*source, *(command or ())]) if source or command else ""
    elif not isinstance(version, str) or not VERSION.fullmatch(version):
        table.problem("version", "up to 40 letters, digits, '.', '_', '+' or '-'")
        version = ""
    table.check_unknown()
    playing = tuple(g for g in games if g in bot_games)
    return BotConfig(
        name,
        command,
        playing,
        capacity,
        image if isinstance(image, str) else None,
        limits,
        version,
        registered,
        human,
    )


def _sandbox(table: _Table, default: Sandbox) -> Sandbox:
    """The container limits of a [sandbox] table (every image bot's) or a bot's own, over
    ``default``."""
    memory = _size(table, "memory", default.memory, MIN_MEMORY)
    tmp = _size(table, "tmp", default.tmp, 1)
    cpus = table.get("cpus")
    if cpus is None:
        cpus = default.cpus
    elif isinstance(cpus, bool) or not isinstance(cpus, int | float) or not 0 < cpus <= 1024:
        table.problem("cpus", f"a number of cores above 0 (0.5, 2) is required, not {cpus!r}")
        cpus = default.cpus
    pids = table.integer("pids", default.pids, low=8)
    table.check_unknown()
    return Sandbox(memory=memory, cpus=float(cpus), pids=pids, tmp=tmp)


def _size(table: _Table, key: str, default: str, least: int) -> str:
    value = table.get(key)
    if value is None:
        return default
    size = size_bytes(value) if isinstance(value, str) else None
    if not isinstance(value, str) or size is None or size < least:
        floor = f" of at least {least >> 20}m" if least >= 1 << 20 else ""
        table.problem(key, f'a size such as "512m" or "1g"{floor} is required, not {value!r}')
        return default
    return value


def _clock(table: _Table, default: Clock) -> Clock:
    values = {name: table.integer(name, getattr(default, name), low=0) for name in CLOCK_FIELDS}
    table.check_unknown()
    return Clock(**values)


class _Table:
    """One TOML table, read field by field. A bad value is noted in ``problems`` (the file's
    list) and read as its default, so the whole file is checked in one go; check_unknown()
    catches typos."""

    def __init__(self, data: Mapping[str, Any], where: str, problems: list[str]) -> None:
        self.data = data
        self.where = where
        self._problems = problems
        self._read: set[str] = set()

    def count(self) -> int:
        """Problems noted in the whole file so far."""
        return len(self._problems)

    def field(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def problem(self, key: str, text: str) -> None:
        self._problems.append(f"{self.field(key)}: {text}")

    def get(self, key: str) -> Any:
        self._read.add(key)
        return self.data.get(key)

    def string(self, key: str, default: str | None = None) -> str:
        value = self.get(key)
        if value is None and default is not None:
            return default
        if not isinstance(value, str) or not value:
            self.problem(key, "a non-empty string is required" + (f", not {value!r}" if value else ""))
            return default or ""
        return value

    def choice(self, key: str, default: str, choices: Sequence[str]) -> str:
        value = self.string(key, default)
        if value not in choices:
            self.problem(
                key, f"{value!r}{did_you_mean(value, choices)}: use {' or '.join(map(repr, choices))}"
            )
            return default
        return value

    def strings(self, key: str, default: list[str]) -> list[str]:
        value = self.get(key)
        if value is None:
            return default
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            self.problem(key, "a list of strings is required")
            return default
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.problem(key, f"true or false is required, not {value!r}")
            return default
        return value

    def integer(self, key: str, default: Any, low: int) -> Any:
        value = self.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            unquoted = f" (write {key} = {value} without quotes)" if _numeric(value) else ""
            self.problem(key, f"a whole number of at least {low} is required, not {value!r}{unquoted}")
            return default
        return value

    def table(self, key: str) -> _Table:
        value = self.get(key)
        if value is None:
            value = {}
        if not isinstance(value, dict):
            self.problem(key, "a table is required")
            value = {}
        return _Table(value, self.field(key), self._problems)

    def tables(self, key: str, required: bool) -> list[_Table]:
        value = self.get(key)
        if value is None and not required:
            return []
        if not isinstance(value, list) or not value or not all(isinstance(item, dict) for item in value):
            self._problems.append(f"at least one [[{self.field(key)}]] table is required")
            return []
        return [
            _Table(item, f"{self.field(key)}[{index}]", self._problems) for index, item in enumerate(value)
        ]

    def check_unknown(self) -> None:
        for key in sorted(set(self.data) - self._read):
            self._problems.append(
                f"{self.where or 'top level'}: unknown setting {key!r}{did_you_mean(key, self._read)}"
            )
