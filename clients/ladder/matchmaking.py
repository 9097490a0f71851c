"""Which group of bots a ladder seats next: the one whose set would most narrow the ratings where
the table compares them, with a floor so that no connected bot starves.

The criterion (argued in docs/tournaments.md). What a table claims is an order: each bot above
the next one down. How sure it is of each claim is the variance of that rating difference. A
result between two bots tells about 1/4 about their difference (p(1-p) at p = 1/2: the design's
information, read from the counts alone); a bot's information is the sum over its results, and
the variance of r_a - r_b is read as 1/I_a + 1/I_b (the diagonal of the information, not its
inverse: a pair's own meetings count only through each bot's total, which costs O(1) per bot
instead of a pseudo-inverse of the whole table, O(n³) per candidate, that took seconds at 100
bots). The uncertainty is the sum of those variances over neighbouring pairs, so each bot
carries a weight, the number of its (at most two) neighbour claims, and a set of group G,
adding ``rotations`` / 4 to every pair of G, lowers it by Σ weight × (1/I - 1/I') over G. The set
chosen lowers it most. It favours, without being told: a newcomer (its information is the
prior's alone), and neighbours in the order over pairs far apart.

What it reads from the results is the order (who neighbours whom) and the ties known, nothing
else: it once weighed each claim by 1/gap² and each result by p(1-p) at the fitted gap, and a
gap too wide by chance then looked both sure and not worth a set, so it stayed too wide while one
too narrow drew sets and was corrected (selection on the outcome: neighbour gaps +20 Elo, 95%
intervals covering 87-91%, bench/ladder_honesty.py). A pair *known tied* (``known_ties``: their
head-to-head set scores put them within results/sets.py's ``TIE_ELO``) carries no claim and is
not seated again.

Groups are grown from the few bots carrying the most uncertainty, each adding the partner that
lowers it most (vectorized over every free bot): a choice among 1,000 bots takes milliseconds
(bench/matchmaking_speed.py); bench/ladder_scheduling.py measures what the criterion saves.

Each bot's information starts at ``prior`` virtual draws (as the fit's prior), so a bot with no
results has a wide but finite interval. The order is the last finished fit's: a ladder fits in a
worker (``refit``) and hands the result over (``fitted``); sets over since count at once.

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

Pure: no I/O; the ladder (clients/ladder/arena.py) feeds it sets and asks it for groups.
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
    fit,
    merged,
    pairwise_results,
    set_choices,
)
from croupier.clients.results.sets import set_scores, tie_known

__all__ = ["Fit", "Matchmaker", "refit"]

Z_975 = 1.959964
SEEDS = 8
"""Groups are grown from this many starting bots (those carrying the most uncertainty)."""
PER_RESULT = 0.25
"""What one pairwise result tells about the difference of its bots: p(1-p) at p = 1/2, the design's
information, the same whatever the results (read at the fitted gap, it chased the noise)."""
DEFAULT_FLOOR = 0.5
DEFAULT_PROVISIONAL_WIDTH = 400.0
Vector = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Fit:
    """The ratings of a game's first ``sets`` sets, and each bot's information at those ratings."""

    elo: dict[str, float]
    information: dict[str, float]
    sets: int


def refit(sets: Sequence[RatedSet], prior: float = DEFAULT_PRIOR, model: Model = DEFAULT_MODEL) -> Fit:
    """The fit of ``sets`` (CPU-bound: a ladder runs it in a worker, never on its event loop)."""
    evidence = merged(set_choices(rated, model) for rated in sets)  # luck-corrected where it is measured
    elo = fit(evidence, prior) if evidence else {}
    information: dict[str, float] = {}
    for rated in sets:
        _absorb(information, rated)
    return Fit(elo, information, len(sets))


def _absorb(information: dict[str, float], rated: RatedSet) -> None:
    """Add what a set's results tell about each of its bots (the design's information)."""
    for places in rated.matches:
        for a, b, _ in pairwise_results(places):
            information[a] = information.get(a, 0.0) + PER_RESULT
            information[b] = information.get(b, 0.0) + PER_RESULT


@dataclass
class Matchmaker:
    """One game's scheduling on a ladder: its sets so far, and the floor's counts.

    With ``fits_itself`` (the default: a bench, a test) it fits its sets whenever asked after they
    changed; a ladder sets it False and hands it the fits its worker made (``fitted``)."""

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
    fits_itself: bool = True
    _fit: Fit = field(default_factory=lambda: Fit({}, {}, 0))
    _information: dict[str, float] = field(default_factory=dict)
    _counted: int = 0
    """Sets in ``_information`` (the fit's, then each added since)."""
    _scores: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    _scored: int = 0
    """Sets in ``_scores``: each pair's per-set scores, head to head."""

    def add(self, rated: RatedSet) -> None:
        """A set of this game is over: its result counts from now on."""
        self.sets.append(rated)

    def reset(self, sets: Iterable[RatedSet]) -> None:
        """Every set of this game, read back (a resumed ladder): the next fit takes them all."""
        self.sets = list(sets)
        self._fit, self._information, self._counted = Fit({}, {}, 0), {}, 0
        self._scores, self._scored = {}, 0

    def fitted(self, done: Fit) -> None:
        """A fit of the first ``done.sets`` sets is over (made in a worker): it is the one used."""
        self._fit, self._information, self._counted = done, dict(done.information), done.sets

    @property
    def fit_is_stale(self) -> bool:
        return self._fit.sets != len(self.sets)

    def elo(self) -> dict[str, float]:
        """The ratings of the last fit (bots without a result are not in it)."""
        if self.fits_itself and self.fit_is_stale:
            self.fitted(refit(self.sets, self.prior, self.model))
        return self._fit.elo

    def information(self) -> dict[str, float]:
        """Each bot's information: the last fit's, with the sets over since added."""
        if self._counted > len(self.sets):  # sets replaced by fewer: count them again
            self._information, self._counted = {}, 0
        for rated in self.sets[self._counted :]:
            _absorb(self._information, rated)
        self._counted = len(self.sets)
        return self._information

    def known_ties(self) -> set[tuple[str, str]]:
        """The pairs (a, b), a before b by name, known tied (results/sets.py's ``tie_known``)."""
        if self._scored > len(self.sets):
            self._scores, self._scored = {}, 0
        for rated in self.sets[self._scored :]:
            for pair, score in set_scores(rated).items():
                self._scores.setdefault(pair, []).append(score)
        self._scored = len(self.sets)
        return {pair for pair, scores in self._scores.items() if tie_known(scores)}

    def spread(self, bots: Sequence[str]) -> dict[str, float]:
        """Each bot's 95% interval width here, in Elo, against the bot it is best compared with
        (so that a newcomer's doubt does not widen everyone's, as it would against the mean)."""
        variance = 1.0 / self._informations(bots)
        if len(bots) < 2:
            return dict.fromkeys(bots, math.inf)
        lowest, second = np.partition(variance, 1)[:2]
        best_other = np.where(variance == lowest, second, lowest)
        return {
            bot: 2 * Z_975 * SCALE * math.sqrt(v + other)
            for bot, v, other in zip(bots, variance, best_other, strict=True)
        }

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
        table = _Table(self, sorted(set(here) | set(self.elo())))
        must = self._starving(free)
        if must is None:
            widths = self.spread(free)
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

    def _informations(self, bots: Sequence[str]) -> Vector:
        known = self.information()
        return self.prior + np.array([known.get(bot, 0.0) for bot in bots])

    def _track(self, present: Sequence[str]) -> None:
        """Start the counts of bots that came; forget those that left."""
        here = set(present)
        if here == self.credit.keys():
            return
        for bot in [bot for bot in self.credit if bot not in here]:
            del self.credit[bot]
            self.seated_sets.pop(bot, None)
        for bot in here:
            self.credit.setdefault(bot, 0.0)
            self.seated_sets.setdefault(bot, 0)

    def _starving(self, eligible: Sequence[str]) -> str | None:
        """The eligible bot furthest below the floor by more than one set, if any."""
        behind = {bot: self.floor * self.credit[bot] - self.seated_sets[bot] for bot in eligible}
        worst = max(sorted(behind), key=lambda bot: behind[bot])
        return worst if behind[worst] > 1.0 else None


class _Table:
    """The ratings' uncertainty over ``bots`` as each bot's share, and what a set would take off."""

    def __init__(self, maker: Matchmaker, bots: Sequence[str]) -> None:
        self.bots = list(bots)
        self.index = {bot: i for i, bot in enumerate(self.bots)}
        elo = maker.elo()
        strength = np.array([elo.get(bot, ANCHOR) for bot in self.bots])
        self.information = maker._informations(self.bots)
        order = np.lexsort((np.array(self.bots), -strength))
        self.tied: list[set[int]] = [set() for _ in self.bots]  # each bot's partners known tied with it
        for a, b in maker.known_ties():
            if a in self.index and b in self.index:
                self.tied[self.index[a]].add(self.index[b])
                self.tied[self.index[b]].add(self.index[a])
        open_claim = np.array([int(b) not in self.tied[a] for a, b in itertools.pairwise(order)], dtype=float)
        self.weight = np.zeros(len(self.bots))  # each bot's neighbour claims not known tied
        np.add.at(self.weight, order[:-1], open_claim)
        np.add.at(self.weight, order[1:], open_claim)

    def _gain(self, added: Vector, at: npt.NDArray[np.intp]) -> Vector:
        """How much the uncertainty falls when the bots ``at`` gain ``added`` information."""
        info = self.information[at]
        return self.weight[at] * (1.0 / info - 1.0 / (info + added))

    def best(
        self, eligible: Sequence[str], seats: int, rotations: int, must: str | None
    ) -> tuple[str, ...] | None:
        """The group of ``seats`` eligible bots (holding ``must``) leaving the least uncertainty,
        grown from the bots carrying the most of it."""
        free = np.array([self.index[bot] for bot in eligible], dtype=np.intp)
        if must is not None:
            starts = [self.index[must]]
        else:
            share = self.weight[free] / self.information[free]
            starts = [int(i) for i in free[np.argsort(-share, kind="stable")[:SEEDS]]]
        best: tuple[float, tuple[str, ...]] | None = None
        for start in starts:
            group, gain = self._grow(start, free, seats, rotations)
            if len(group) < seats:  # every partner left is known tied with it
                continue
            named = tuple(sorted(self.bots[i] for i in group))
            if best is None or (-gain, named) < (-best[0], best[1]):
                best = (gain, named)
        return None if best is None else best[1]

    def _grow(
        self, start: int, free: npt.NDArray[np.intp], seats: int, rotations: int
    ) -> tuple[list[int], float]:
        """From ``start``, add the free bot that lowers the uncertainty most, until seated (or
        until only bots known tied with a member are left)."""
        group = [start]
        added = np.zeros(1)  # each member's information from the pairs within the group so far
        gain = 0.0
        while len(group) < seats:
            tied = set().union(*(self.tied[member] for member in group))
            pool = free[~np.isin(free, group) & ~np.isin(free, list(tied))]
            if not pool.size:
                break
            pair = np.full((len(group), len(pool)), rotations * PER_RESULT)
            gains = self._gain(rotations * pair.sum(axis=0), pool)
            for row, member in enumerate(group):
                gains += self._gain(added[row] + pair[row], np.full(len(pool), member))
            pick = int(np.argmax(gains))  # the first of the best: pool is in name order
            added = np.append(added + pair[:, pick], pair[:, pick].sum())
            group.append(int(pool[pick]))
            gain = float(gains[pick])
        return group, gain


def fair_share(counts: Mapping[str, int]) -> float:
    """The least-played bot's sets over the mean (1: even; the bench's starvation figure)."""
    if not counts:
        return 1.0
    mean = sum(counts.values()) / len(counts)
    return min(counts.values()) / mean if mean else 1.0
