"""Which group of bots a ladder seats next: the one whose set would most narrow the ratings where
the table compares them, with a floor so that no connected bot starves.

The criterion (argued in docs/tournaments.md). What a table claims is an order: each bot above
the next one down. How sure it is of each claim is the variance of that rating difference
against the gap's size (1/z²).
Under the Bradley-Terry reading of the ratings, a result between i and j tells
p(1-p) (p = i's expected score against j) about r_i - r_j, so the information of every result so
far is a weighted graph Laplacian L (one edge per pair that met, weight the sum of p(1-p)), and
the variance of r_a - r_b is (e_a - e_b)ᵀ L⁺ (e_a - e_b): the effective resistance between a and
b. A set of group G adds, per rotation, p(1-p) on every pair of G. The set chosen is the one that
most reduces the sum over neighbouring pairs of variance / gap² (the gap at least ``CLOSE``). It
favours, without being told: a newcomer (its only edges are the prior's, so every neighbour
difference through it is wide), neighbours whose order is in doubt, and close pairs over
lopsided ones (p(1-p) is largest at ½); it loses interest in a pair once its order is known,
whatever else it could learn about it. bench/ladder_scheduling.py measures what this saves.

Every pair of bots in the table gets ``prior`` virtual draws (as the fit's prior), which keeps
the graph connected: a bot with no results has a wide but finite interval.

A new version (a bot's identity is NAME@VERSION) is *provisional* while its interval here,
±1.96 standard deviations of its difference from the bot it is best compared with, is wider
than ``provisional_width`` Elo in all; while an eligible bot is provisional, only groups holding
the widest one are considered.

The floor is a deficit count, as deficit round robin keeps one: every set seated credits each
eligible bot with its fair share (seats / eligible bots) and each seated bot with one set; a bot
whose sets fall below ``floor`` times its credit, by one whole set, is seated next, with the
partners the criterion likes best. A bot is owed nothing while it is busy (in as many sets as
it may play at once, or at its hourly limit); its counts start when it connects and are forgotten
when it leaves: the floor holds for the time a bot is there and free, which is all it can ask.

Pure: no I/O; the ladder (clients/tournament/ladder.py) feeds it sets and asks it for groups.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from croupier.clients.results.ratings import (
    ANCHOR,
    DEFAULT_MODEL,
    DEFAULT_PRIOR,
    SCALE,
    Model,
    RatedSet,
    choices,
    fit,
    merged,
    pairwise_results,
)

__all__ = ["Matchmaker"]

Z_975 = 1.959964
EXHAUSTIVE = 2000
"""Up to this many candidate groups every one is weighed; beyond, groups are grown bot by bot."""
CLOSE = 20.0 / SCALE
"""Neighbours closer than this (20 Elo) weigh as if this far apart: a tie is not worth every set."""
DEFAULT_FLOOR = 0.5
DEFAULT_PROVISIONAL_WIDTH = 400.0
Matrix = npt.NDArray[np.float64]


@dataclass
class Matchmaker:
    """One game's scheduling on a ladder: its sets so far, and the floor's counts."""

    seats: int
    rotations: int
    floor: float = DEFAULT_FLOOR
    provisional_width: float = DEFAULT_PROVISIONAL_WIDTH
    prior: float = DEFAULT_PRIOR
    model: Model = DEFAULT_MODEL
    sets: list[RatedSet] = field(default_factory=list)
    credit: dict[str, float] = field(default_factory=dict)
    """The floor's share owed to each eligible bot since it became eligible, in sets."""
    seated_sets: dict[str, int] = field(default_factory=dict)
    """Sets each eligible bot was seated in since then."""
    _elo: dict[str, float] | None = None

    def add(self, rated: RatedSet) -> None:
        """A set of this game is over: its result counts from now on."""
        self.sets.append(rated)
        self._elo = None

    def elo(self) -> dict[str, float]:
        """The current ratings (the fit of every set; bots without a result are not in it)."""
        if self._elo is None:
            evidence = merged(choices(places, self.model) for rated in self.sets for places in rated.matches)
            self._elo = fit(evidence, self.prior) if evidence else {}
        return self._elo

    def spread(self, bots: Sequence[str]) -> dict[str, float]:
        """Each bot's 95% interval width here, in Elo, against the bot it is best compared with
        (so that a newcomer's doubt does not widen everyone's, as it would against the mean)."""
        pseudo = np.linalg.pinv(_Table(self, bots).laplacian)
        diagonal = np.diag(pseudo)
        resistance = diagonal[:, None] + diagonal[None, :] - 2 * pseudo
        np.fill_diagonal(resistance, np.inf)
        closest = resistance.min(axis=1) if len(bots) > 1 else np.full(len(bots), np.inf)
        return {bot: 2 * Z_975 * SCALE * math.sqrt(max(0.0, closest[i])) for i, bot in enumerate(bots)}

    def provisional(self, bots: Sequence[str]) -> set[str]:
        """The bots of ``bots`` whose interval is still wider than ``provisional_width``."""
        return {bot for bot, width in self.spread(bots).items() if width > self.provisional_width}

    def choose(self, eligible: Iterable[str], present: Iterable[str] = ()) -> tuple[str, ...] | None:
        """The group to seat next among the ``eligible`` bots (free to play now), sorted; None
        with too few. ``present``: every bot connected, busy ones too, whose neighbours'
        differences count as well and whose floor counts are kept."""
        free = sorted(set(eligible))
        here = sorted(set(present) | set(free))
        if len(free) < self.seats:
            return None
        self._track(here)
        bots = sorted(set(here) | set(self.elo()))
        table = _Table(self, bots)
        must = self._starving(free)
        if must is None:
            widths = self.spread(bots)
            provisional = [bot for bot in free if widths[bot] > self.provisional_width]
            if provisional:
                must = max(provisional, key=lambda bot: widths[bot])
        return table.best(free, self.seats, self.rotations, must)

    def choose_tables(
        self,
        eligible: Iterable[str],
        tables: int,
        present: Iterable[str] = (),
        owner: Callable[[str], str] = str,
    ) -> tuple[tuple[str, ...], ...] | None:
        """A deal pool's groups, one per table, no bot (nor two of one ``owner``) at two: each the
        most informative group of the bots not at an earlier table; None without enough bots.
        Every group is seated (``seated``)."""
        free = sorted(set(eligible))
        left, groups = free, []
        for _ in range(tables):
            group = self.choose(left, present)
            if group is None:
                return None
            groups.append(group)
            taken = {owner(bot) for bot in group}
            left = [bot for bot in left if owner(bot) not in taken]
        for group in groups:
            self.seated(group, free, present)
        return tuple(groups)

    def seated(self, group: Sequence[str], eligible: Iterable[str], present: Iterable[str] = ()) -> None:
        """A set of ``group`` was started while the ``eligible`` bots were free: each is owed its
        share of it (seats over the free bots), and each seated bot has one more set."""
        free = set(eligible)
        self._track(sorted(set(present) | free))
        for bot in free:
            self.credit[bot] += self.seats / len(free)
        for bot in group:
            self.seated_sets[bot] += 1

    def _track(self, present: Sequence[str]) -> None:
        """Start the counts of bots that came; forget those that left."""
        for bot in list(self.credit):
            if bot not in present:
                del self.credit[bot]
                self.seated_sets.pop(bot, None)
        for bot in present:
            self.credit.setdefault(bot, 0.0)
            self.seated_sets.setdefault(bot, 0)

    def _starving(self, eligible: Sequence[str]) -> str | None:
        """The eligible bot furthest below the floor by more than one set, if any."""
        behind = {bot: self.floor * self.credit[bot] - self.seated_sets[bot] for bot in eligible}
        worst = max(sorted(behind), key=lambda bot: behind[bot])
        return worst if behind[worst] > 1.0 else None


class _Table:
    """The information of a game's results about the ratings of ``bots``, and what sets would add."""

    def __init__(self, maker: Matchmaker, bots: Sequence[str]) -> None:
        self.bots = list(bots)
        self.index = {bot: i for i, bot in enumerate(self.bots)}
        elo = maker.elo()
        self.strength = np.array([(elo.get(bot, ANCHOR) - ANCHOR) / SCALE for bot in self.bots])
        n = len(self.bots)
        self.laplacian = np.zeros((n, n))
        for i, j in itertools.combinations(range(n), 2):  # the prior's virtual draws
            self._edge(self.laplacian, i, j, maker.prior)
        for rated in maker.sets:
            for places in rated.matches:
                for a, b, _ in pairwise_results(places):
                    if a in self.index and b in self.index:
                        self._edge(self.laplacian, self.index[a], self.index[b], 1.0)
        order = sorted(range(n), key=lambda i: (-self.strength[i], self.bots[i]))
        self.gaps = {
            (a, b): max(CLOSE, float(self.strength[a] - self.strength[b])) ** 2
            for a, b in itertools.pairwise(order)
        }

    def _edge(self, laplacian: Matrix, a: int, b: int, times: float) -> None:
        p = 1.0 / (1.0 + math.exp(self.strength[b] - self.strength[a]))
        weight = times * p * (1.0 - p)
        laplacian[a, a] += weight
        laplacian[b, b] += weight
        laplacian[a, b] -= weight
        laplacian[b, a] -= weight

    def uncertainty(self, laplacian: Matrix) -> float:
        """The neighbours' rating-difference variances, each over its gap squared (at least
        ``CLOSE``): the sum of 1/z² of the claims "above the next one down"."""
        pseudo = np.linalg.pinv(laplacian)
        return float(
            sum((pseudo[a, a] + pseudo[b, b] - 2 * pseudo[a, b]) / gap for (a, b), gap in self.gaps.items())
        )

    def after(self, group: Sequence[str], rotations: int) -> float:
        """The uncertainty once a set of ``group`` is played."""
        laplacian = self.laplacian.copy()
        for a, b in itertools.combinations(group, 2):
            self._edge(laplacian, self.index[a], self.index[b], rotations)
        return self.uncertainty(laplacian)

    def best(
        self, eligible: Sequence[str], seats: int, rotations: int, must: str | None
    ) -> tuple[str, ...] | None:
        """The group of ``seats`` eligible bots (holding ``must``) leaving the least uncertainty."""
        others = [bot for bot in eligible if bot != must]
        fixed = (must,) if must is not None else ()
        room = seats - len(fixed)
        if math.comb(len(others), room) <= EXHAUSTIVE:
            candidates = [tuple(sorted(fixed + rest)) for rest in itertools.combinations(others, room)]
            return min(candidates, key=lambda group: (self.after(group, rotations), group))
        group = list(fixed)
        if not group:  # the most uncertain start: the widest eligible bot
            pseudo = np.diag(np.linalg.pinv(self.laplacian))
            group = [max(eligible, key=lambda bot: (pseudo[self.index[bot]], bot))]
        while len(group) < seats:
            pool = [bot for bot in eligible if bot not in group]
            group.append(min(pool, key=lambda bot: (self.after([*group, bot], rotations), bot)))
        return tuple(sorted(group))


def fair_share(counts: Mapping[str, int]) -> float:
    """The least-played bot's sets over the mean (1: even; the bench's starvation figure)."""
    if not counts:
        return 1.0
    mean = sum(counts.values()) / len(counts)
    return min(counts.values()) / mean if mean else 1.0
