"""The schedule: a duplicate round robin, as a plain list of matches to play.

Every group of bots that fills a table plays its own secret deals; a deal is a
seed, and the same seed deals the same cards to the same seat index. Each deal
is played once per seat rotation of the group, so every bot holds every hand
of every deal: luck of the cards cancels out. The matches of one deal for one
group form a *duplicate set*, the unit the runner starts together (no bot sees
a deal before it plays it) and the unit the rating bootstrap resamples.

Deal seeds are HMAC-SHA256 of the tournament's secret (random, kept in its
results database, published when it is over) and the set's key, so nobody
can compute a deal before the reveal and everybody can check every deal after
it against the ``seed_sha256`` its match published at the start. The file's
``seed`` only decides which bot takes which row of the seating design.

Rotations follow a Williams design by default: a row-complete Latin square,
N seatings for N even and 2N for N odd, in which every bot sits in every seat
equally often and right after every other bot equally often. ``cyclic`` (N
seatings, the order round the table fixed) and ``all`` (N! seatings) remain.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import itertools
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass

SECRET_BYTES = 32
"""A tournament's secret: 256 bits from the OS (secrets.token_bytes)."""


class Rotations(enum.Enum):
    WILLIAMS = "williams"
    CYCLIC = "cyclic"
    ALL = "all"


class Deals(enum.Enum):
    DUPLICATE = "duplicate"
    """Every rotation of a set plays the set's one deal."""
    FRESH = "fresh"
    """Every match has its own deal: nothing to learn from a twin (open competitions)."""


@dataclass(frozen=True, slots=True, order=True)
class MatchKey:
    """What identifies a match in a tournament, stable across runs (resume relies on it)."""

    game: str
    round: int
    group: int
    deal: int
    rotation: int

    @property
    def set_key(self) -> tuple[str, int, int, int]:
        """The duplicate set the match belongs to."""
        return self.game, self.round, self.group, self.deal

    def __str__(self) -> str:
        return f"{self.game} r{self.round} g{self.group} d{self.deal} s{self.rotation}"


@dataclass(frozen=True, slots=True)
class ScheduledMatch:
    key: MatchKey
    seed: int
    seats: tuple[str, ...]
    """The bot in each seat, seat 0 first."""


@dataclass(frozen=True, slots=True)
class DuplicateSet:
    """Every rotation of one deal for one group of bots."""

    matches: tuple[ScheduledMatch, ...]

    @property
    def key(self) -> tuple[str, int, int, int]:
        return self.matches[0].key.set_key

    @property
    def bots(self) -> frozenset[str]:
        return frozenset(self.matches[0].seats)


def design(seats: int, rotations: Rotations) -> list[tuple[int, ...]]:
    """The seat orders of one set as rows of positions: row r, seat s holds the group's bot
    ``row[s]``. Every design puts every bot in every seat equally often."""
    if rotations is Rotations.ALL:
        return list(itertools.permutations(range(seats)))
    if rotations is Rotations.CYCLIC or seats < 3:
        return [tuple((seat + shift) % seats for seat in range(seats)) for shift in range(seats)]
    return williams(seats)


def williams(size: int) -> list[tuple[int, ...]]:
    """A Williams design: a row-complete Latin square (each ordered pair of symbols side by side
    once), from the first row 0, 1, n-1, 2, n-2 ... shifted; for odd n its mirror rows as well,
    since no row-complete square of odd order n > 1 is built this way alone."""
    first, low, high = [0], 1, size - 1
    while len(first) < size:
        first.append(low)
        low += 1
        if len(first) < size:
            first.append(high)
            high -= 1
    rows = [tuple((symbol + shift) % size for symbol in first) for shift in range(size)]
    if size % 2:
        rows += [tuple(reversed(row)) for row in rows]
    return rows


def seatings(group: Sequence[str], rotations: Rotations) -> list[tuple[str, ...]]:
    """The seat orders a group plays each deal in."""
    return [tuple(group[position] for position in row) for row in design(len(group), rotations)]


def rotation_count(seats: int, rotations: Rotations) -> int:
    """Matches in each duplicate set."""
    return len(design(seats, rotations))


def deal_seed(
    secret: bytes, game: str, round_number: int, group: int, deal: int, rotation: int | None, redeal: int = 0
) -> int:
    """The seed of one deal: HMAC-SHA256 of the tournament's secret and the deal's key
    (``rotation`` is None for the one deal a duplicate set shares; ``redeal`` counts the times
    the set was dealt again after an abandoned match). 63 bits fit every 64-bit field."""
    message = json.dumps([game, round_number, group, deal, rotation, redeal]).encode()
    digest = hmac.new(secret, message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def game_schedule(
    game: str,
    bots: Sequence[str],
    seats: int,
    rounds: int,
    deals: int,
    *,
    seed: int,
    secret: bytes,
    rotations: Rotations = Rotations.WILLIAMS,
    dealing: Deals = Deals.DUPLICATE,
) -> list[DuplicateSet]:
    """Every duplicate set of one game: per round, per deal, every group of ``seats`` bots,
    each set dealt its own cards. ``seed`` decides which bot of a group takes which row of
    the design (reproducibly); the cards come from ``secret`` alone."""
    if len(set(bots)) != len(bots):
        raise ValueError(f"{game}: a bot is listed twice in {list(bots)}")
    if len(bots) < seats:
        raise ValueError(f"{game} is played {seats} to a table but only {len(bots)} bot(s) play it")
    if len(secret) < 16:
        raise ValueError("a tournament secret has at least 128 bits")
    groups = list(itertools.combinations(bots, seats))
    return [
        duplicate_set(
            game,
            group,
            round_number,
            group_number,
            deal,
            seed=seed,
            secret=secret,
            rotations=rotations,
            dealing=dealing,
        )
        for round_number in range(rounds)
        for deal in range(deals)
        for group_number, group in enumerate(groups)
    ]


def duplicate_set(
    game: str,
    group: Sequence[str],
    round_number: int,
    group_number: int,
    deal: int,
    *,
    seed: int,
    secret: bytes,
    rotations: Rotations = Rotations.WILLIAMS,
    dealing: Deals = Deals.DUPLICATE,
) -> DuplicateSet:
    """One deal of one group of bots, in every rotation: ``seed`` decides which bot takes which
    row of the design, ``secret`` the cards. A schedule that grows as it is played (croupier match
    --sprt) builds its sets one by one with this, as ``game_schedule`` builds them all."""
    members = list(group)
    random.Random(f"{seed}:{game}:{round_number}:{group_number}:{deal}").shuffle(members)
    return DuplicateSet(
        tuple(
            ScheduledMatch(
                key := MatchKey(game, round_number, group_number, deal, rotation),
                set_seed(secret, key, dealing),
                order,
            )
            for rotation, order in enumerate(seatings(members, rotations))
        )
    )


def set_seed(secret: bytes, key: MatchKey, dealing: Deals, redeal: int = 0) -> int:
    """The seed a match of the schedule is dealt from."""
    rotation = key.rotation if dealing is Deals.FRESH else None
    return deal_seed(secret, key.game, key.round, key.group, key.deal, rotation, redeal)


def interleave(per_game: Sequence[Sequence[DuplicateSet]]) -> list[DuplicateSet]:
    """Merge the games' schedules in turn, so every game's standings grow together."""
    merged: list[DuplicateSet] = []
    for batch in itertools.zip_longest(*per_game):
        merged.extend(item for item in batch if item is not None)
    return merged
