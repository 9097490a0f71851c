"""A ladder file (TOML) read into checked settings; the format is in docs/tournaments.md.

    name = "open"
    epoch_sets = 200         # an epoch (one secret) ends after this many sets ...
    epoch_hours = 24         # ... or this long, whichever comes first
    concurrent_sets = 1      # sets a bot plays at once
    sets_per_hour = 60       # sets a bot starts in any hour (0: no limit)
    deals = "pool"           # or "fresh"; never "duplicate" (a bot would hold every seat of a deal)
    luck = true              # rate set points less each seat's luck (default; luck is measured anyway)
    [clock]
    decision_ms = 2000
    [[games]]
    game = "platinum_fish"
    seats = 2
    [registration]
    open = true              # anyone may register a bot, without the admin token ...
    per_address = 5          # ... so many an hour from one address
    per_hour = 100           # ... and so many an hour in all

Games, seats, options and clocks are read as a tournament file's are (config.py); there are no
bots: every bot registered on the referee (``croupier register NAME``) that connects is seated.
``[registration]`` is for the referee the ladder embeds (``croupier serve --open-registration``
opens one started apart).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from croupier.clients.ladder.matchmaking import DEFAULT_FLOOR, DEFAULT_PROVISIONAL_WIDTH
from croupier.clients.results.schedule import Deals, Rotations, rotation_count
from croupier.clients.tournament.config import (
    Clock,
    ConfigError,
    GameConfig,
    TournamentConfig,
    _checked,
    _clock,
    _game,
    _Table,
    from_file,
)
from croupier.server.registration import DEFAULT_PER_ADDRESS, DEFAULT_PER_HOUR, OpenRegistration
from croupier.wire.names import name_problem

DEFAULT_CONCURRENCY = 16
KIND = "ladder"
POOL, FRESH = "pool", "fresh"
POOL_TABLES = 2
"""Tables a deal pool deals its one deal to, each of different bots."""
DEFAULT_LUCK = True
"""Luck-corrected ratings by default: see docs/tournaments.md's ladder section (bench/ladder_luck.py)."""
"""What a ladder's runs carry in the store's settings, apart from a tournament's."""


@dataclass(frozen=True)
class LadderConfig:
    name: str
    games: tuple[GameConfig, ...]
    epoch_sets: int
    epoch_hours: float
    concurrent_sets: int
    """Sets one bot plays at once (each is all its rotations at once)."""
    sets_per_hour: int
    """Sets one bot may start in any hour; 0: no limit."""
    concurrency: int
    """Matches the ladder keeps going at once, over every bot."""
    floor: float = DEFAULT_FLOOR
    provisional_width: float = DEFAULT_PROVISIONAL_WIDTH
    rotations: Rotations = Rotations.WILLIAMS
    deals: str = POOL
    """POOL: a set is one deal at POOL_TABLES tables of different bots; FRESH: a set is one group
    in every rotation, each match on a deal of its own. Either way no bot meets a deal twice."""
    luck: bool = DEFAULT_LUCK
    """Rate each set's pairwise points less each seat's luck (measured in every epoch, where its game
    has a V: luck_journal.MEASURED). A reading, not a deal: not in ``settings``, so it may change."""

    @property
    def dealing(self) -> Deals:
        """How the sets' seeds derive from the secret: a pool's tables share theirs."""
        return Deals.FRESH if self.deals == FRESH else Deals.DUPLICATE

    registration: OpenRegistration | None = None
    """Open registration on the embedded referee, within these limits; None: admin only."""

    def game(self, name: str) -> GameConfig:
        return next(game for game in self.games if game.game == name)

    def rotation_count(self, game: str) -> int:
        return rotation_count(self.game(game).seats, self.rotations)

    def tables(self, game: str) -> int:
        """Matches a set of the game plays at once."""
        return POOL_TABLES if self.deals == POOL else self.rotation_count(game)

    def per_bot(self, game: str) -> int:
        """Matches a bot plays in each set of the game (all at once)."""
        return 1 if self.deals == POOL else self.rotation_count(game)

    def tournament(self) -> TournamentConfig:
        """The settings the tournament runner plays a set by (it knows no bots: they come and go)."""
        return TournamentConfig(
            self.name, 0, 1, self.rotations, self.concurrency, self.games, (), deals=self.dealing
        )

    def settings(self) -> dict[str, Any]:
        """What decides the deals and the results (stored with each epoch); limits may change."""
        return {
            "kind": KIND,
            "rotations": self.rotations.value,
            "deals": self.deals,
            "games": [
                {"game": g.game, "seats": g.seats, "options": dict(g.options), "clock": g.clock.as_dict()}
                for g in self.games
            ],
        }

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.settings(), sort_keys=True).encode()).hexdigest()[:16]


def load(path: str | Path) -> LadderConfig:
    return from_file(path, parse)


def parse(data: Mapping[str, Any]) -> LadderConfig:
    """Every setting checked; every problem of the file in the one ConfigError."""
    problems: list[str] = []
    top = _Table(data, "", problems)
    name = top.string("name")
    if name and (problem := name_problem(name)):
        top.problem("name", problem)
    epoch_sets = top.integer("epoch_sets", 1000, low=1)
    epoch_hours = top.integer("epoch_hours", 24, low=1)
    concurrent_sets = top.integer("concurrent_sets", 1, low=1)
    sets_per_hour = top.integer("sets_per_hour", 0, low=0)
    concurrency = top.integer("concurrency", DEFAULT_CONCURRENCY, low=1)
    floor = _fraction(top, "floor", DEFAULT_FLOOR)
    width = top.integer("provisional_width", int(DEFAULT_PROVISIONAL_WIDTH), low=1)
    deals = top.string("deals", POOL)
    if deals not in (POOL, FRESH):
        top.problem(
            "deals",
            f"{deals!r}: a ladder's bots connect by themselves, and one stream dealt a duplicate set holds "
            'every seat of its deal: use "pool" (one deal at several tables of different bots) or "fresh"',
        )
        deals = POOL
    luck = top.boolean("luck", DEFAULT_LUCK)
    registration = _registration(top.table("registration"))
    default_clock = _clock(top.table("clock"), Clock())
    tables = top.tables("games", required=True)
    games = tuple(game for table in tables if (game := _checked(problems, _game, table, default_clock)))
    names = [g.game for g in games]
    if len(set(names)) != len(names):
        problems.append("a game is listed twice in [[games]]; give it one entry")
    for game in games:
        together = POOL_TABLES if deals == POOL else rotation_count(game.seats, Rotations.WILLIAMS)
        if together > concurrency:
            problems.append(
                f"concurrency {concurrency} is below the {together} matches of each {game.game} set, "
                f"which start together; raise it to at least {together}"
            )
    top.check_unknown()
    if problems:
        raise ConfigError(*problems)
    return LadderConfig(
        name,
        games,
        epoch_sets,
        float(epoch_hours),
        concurrent_sets,
        sets_per_hour,
        concurrency,
        floor,
        width,
        deals=deals,
        luck=luck,
        registration=registration,
    )


def _registration(table: _Table) -> OpenRegistration | None:
    """``[registration]``: whether anyone may register a bot, and how many an hour."""
    opened = table.boolean("open", False)
    limits = OpenRegistration(
        table.integer("per_address", DEFAULT_PER_ADDRESS, low=1),
        table.integer("per_hour", DEFAULT_PER_HOUR, low=1),
    )
    table.check_unknown()
    return limits if opened else None


def _fraction(table: _Table, key: str, default: float) -> float:
    value = table.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        table.problem(key, f"a number from 0 to 1 is required, not {value!r}")
        return default
    return float(value)
