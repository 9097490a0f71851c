"""The schedule: a duplicate round robin, as a plain list of matches to play.

Every group of bots that fills a table plays the same deals; a deal is a seed,
and the same seed deals the same cards to the same seat index. Each deal is
played once per seat rotation of the group, so every bot holds every hand of
every deal: luck of the cards cancels out. The matches of one deal for one
group form a *duplicate set*, the unit the runner starts together (no bot
sees a deal before it plays it) and the unit the rating bootstrap resamples.

Rotations are cyclic by default: N matches for N seats put every bot in every
seat once. All N! permutations also balance who sits after whom (the order of
play around the table), at a cost of 6 matches instead of 3 for three seats
and 24 instead of 4 for four; choose ``rotations = "all"`` where neighbour
effects matter more than the time.
"""

from __future__ import annotations

import enum
import hashlib
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass


class Rotations(enum.Enum):
    CYCLIC = "cyclic"
    ALL = "all"


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


def seatings(group: Sequence[str], rotations: Rotations) -> list[tuple[str, ...]]:
    """The seat orders a group plays each deal in; every bot sits in every seat."""
    if rotations is Rotations.ALL:
        return list(itertools.permutations(group))
    size = len(group)
    return [tuple(group[(seat + shift) % size] for seat in range(size)) for shift in range(size)]


def rotation_count(seats: int, rotations: Rotations) -> int:
    """Matches in each duplicate set: N cyclic rotations, or all N! seatings."""
    return math.factorial(seats) if rotations is Rotations.ALL else seats


def deal_seed(tournament_seed: int, game: str, round_number: int, deal: int) -> int:
    """The seed of one deal: the same for every group, so all groups play the same cards.

    A hash rather than arithmetic so neighbouring deals share nothing; 63 bits
    fit every signed or unsigned 64-bit field.
    """
    digest = hashlib.sha256(f"{tournament_seed}:{game}:{round_number}:{deal}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def game_schedule(
    game: str,
    bots: Sequence[str],
    seats: int,
    rounds: int,
    deals: int,
    seed: int,
    rotations: Rotations = Rotations.CYCLIC,
) -> list[DuplicateSet]:
    """Every duplicate set of one game: per round, per deal, every group of ``seats`` bots."""
    if len(set(bots)) != len(bots):
        raise ValueError(f"{game}: a bot is listed twice in {list(bots)}")
    if len(bots) < seats:
        raise ValueError(f"{game} is played {seats} to a table but only {len(bots)} bot(s) play it")
    groups = list(itertools.combinations(bots, seats))
    schedule = []
    for round_number in range(rounds):
        for deal in range(deals):
            seed_of_deal = deal_seed(seed, game, round_number, deal)
            for group_number, group in enumerate(groups):
                schedule.append(
                    DuplicateSet(
                        tuple(
                            ScheduledMatch(
                                MatchKey(game, round_number, group_number, deal, rotation),
                                seed_of_deal,
                                order,
                            )
                            for rotation, order in enumerate(seatings(group, rotations))
                        )
                    )
                )
    return schedule


def interleave(per_game: Sequence[Sequence[DuplicateSet]]) -> list[DuplicateSet]:
    """Merge the games' schedules in turn, so every game's standings grow together."""
    merged: list[DuplicateSet] = []
    for batch in itertools.zip_longest(*per_game):
        merged.extend(item for item in batch if item is not None)
    return merged
