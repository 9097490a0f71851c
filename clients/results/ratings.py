"""Ratings fitted by maximum likelihood: pairwise Elo (Bradley-Terry) or Plackett-Luce.

Every match ranking of N bots is N(N-1)/2 pairwise results (a shared place is
half a win each way). The pairwise model is Bradley-Terry on the Elo scale: bot
i beats bot j with probability 1 / (1 + 10^((R_j - R_i) / 400)). Ratings
maximise the likelihood of all results at once, like Ordo and BayesElo, so they
do not depend on the order the matches were played in.

The Plackett-Luce model reads a ranking as it is: the winner is chosen among
all players with probability proportional to 10^(R/400), the second among those
left, and so on (a shared place: every bot of it chosen from the same field,
Breslow's approximation). With two players it is the pairwise model. Both are
one fit here: a list of *choices* (who was picked, among whom, how often),
which the pairwise model makes of every pair and Plackett-Luce of every place.

A bot that won (or lost) every result has no finite maximum. As in BayesElo, a
prior of virtual draws fixes that: every pair of bots that met gets ``prior``
extra drawn results (default one: half a win each way), which pulls small
samples gently towards equality and vanishes against real data. The fit is
then a maximum a posteriori estimate, always finite and unique.

Bots that no chain of matches links are separate groups, each anchored at a
mean of 1500: their ratings cannot be compared, and no LOS is given between
groups. 95% intervals come from a bootstrap over duplicate sets (all rotations
of one deal, the unit that carries the luck of the cards), or over groups of
bots and their sets in two stages; the likelihood of superiority (LOS) of a bot
over the next one down is the share of bootstrap samples in which it stays
ahead. ``RunningElo`` is the classic order-dependent update, only for the live
display.
"""

from __future__ import annotations

import enum
import math
import random
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

ANCHOR = 1500.0
SCALE = 400.0 / math.log(10.0)  # natural-log strengths -> Elo points
DEFAULT_PRIOR = 1.0
DEFAULT_SAMPLES = 1000

Places = Mapping[str, int]
"""One match: each bot's place, 1 best; equal places are a shared result."""


class Model(enum.Enum):
    PLACKETT_LUCE = "plackett-luce"
    PAIRWISE = "pairwise"

    def __str__(self) -> str:
        return self.value


class Resample(enum.Enum):
    SETS = "sets"
    """Duplicate sets, with replacement."""
    GROUPS = "groups"
    """Groups of bots (each table's line-up), then each drawn group's sets: both stages of luck."""

    def __str__(self) -> str:
        return self.value


DEFAULT_MODEL = Model.PLACKETT_LUCE
"""The model that predicted held-out rankings better (bench/rating_calibration.py)."""
DEFAULT_RESAMPLE = Resample.SETS


@dataclass(frozen=True, slots=True)
class RatedSet:
    """A finished duplicate set, as the ratings read it."""

    tournament: str
    group: tuple[str, ...]
    """The bots at its table, sorted: a bootstrap over groups resamples these whole."""
    matches: tuple[Places, ...]


def pairwise_results(places: Places) -> list[tuple[str, str, float]]:
    """The match as pairwise results ``(a, b, points of a against b)``, a before b by name."""
    bots = sorted(places)
    return [
        (a, b, 1.0 if places[a] < places[b] else 0.5 if places[a] == places[b] else 0.0)
        for index, a in enumerate(bots)
        for b in bots[index + 1 :]
    ]


class Tally:
    """Pairwise points and result counts, per unordered pair of bots."""

    def __init__(self, matches: Iterable[Places] = ()) -> None:
        self.points: dict[tuple[str, str], float] = {}  # (a, b), a < b: a's points against b
        self.games: dict[tuple[str, str], int] = {}
        for places in matches:
            self.add(places)

    def add(self, places: Places) -> None:
        for a, b, points in pairwise_results(places):
            self.points[a, b] = self.points.get((a, b), 0.0) + points
            self.games[a, b] = self.games.get((a, b), 0) + 1

    @property
    def bots(self) -> list[str]:
        return sorted({bot for pair in self.games for bot in pair})

    def score(self, bot: str) -> tuple[float, int]:
        """The bot's pairwise points and number of pairwise results."""
        points, games = 0.0, 0
        for (a, b), n in self.games.items():
            if bot == a:
                points, games = points + self.points[a, b], games + n
            elif bot == b:
                points, games = points + n - self.points[a, b], games + n
        return points, games


# --- choices: what both models are fitted on ----------------------------------------------

Choice = tuple[tuple[str, ...], tuple[str, ...]]
"""(the bots chosen, the field they were chosen from), both sorted."""
Choices = defaultdict[Choice, float]
"""How often each choice was made (fractions: a shared pairwise result is half a choice)."""


def merged(parts: Iterable[Mapping[Choice, float]]) -> Choices:
    """The choices of several matches (or sets) together."""
    total: Choices = defaultdict(float)
    for part in parts:
        for choice, times in part.items():
            total[choice] += times
    return total


def choices(places: Places, model: Model) -> Choices:
    """A match as the choices the model reads in it."""
    found: Choices = defaultdict(float)
    if model is Model.PAIRWISE:
        for a, b, points in pairwise_results(places):
            if points:
                found[(a,), (a, b)] += points
            if points < 1:
                found[(b,), (a, b)] += 1 - points
        return found
    field = sorted(places, key=lambda bot: (places[bot], bot))
    while len(field) > 1:
        best = places[field[0]]
        chosen = tuple(bot for bot in field if places[bot] == best)
        found[chosen, tuple(sorted(field))] += 1
        field = field[len(chosen) :]
    return found


def fit(evidence: Mapping[Choice, float], prior: float = DEFAULT_PRIOR) -> dict[str, float]:
    """The maximum-likelihood (with ``prior`` virtual draws per pair that met: MAP) rating of
    every bot on the Elo scale, each linked group's mean at 1500.

    Raises ValueError if ``prior`` is 0 and some bot's results have no finite
    maximum (it won or lost everything against the rest of its group).
    """
    if prior < 0:
        raise ValueError(f"the prior is a number of virtual draws, not {prior}")
    evidence = merged([{choice: n for choice, n in evidence.items() if n > 0}])
    if prior:
        pairs = {(a, b) for _, among in evidence for i, a in enumerate(among) for b in among[i + 1 :]}
        for a, b in pairs:
            evidence[(a,), (a, b)] += prior / 2
            evidence[(b,), (a, b)] += prior / 2
    bots = sorted({bot for _, among in evidence for bot in among})
    index = {bot: i for i, bot in enumerate(bots)}
    coded = [
        (tuple(index[b] for b in chosen), tuple(index[b] for b in among), n)
        for (chosen, among), n in evidence.items()
    ]
    strengths = _fit(len(bots), coded, check_finite=not prior)
    return {bot: ANCHOR + SCALE * strengths[i] for i, bot in enumerate(bots)}


def fit_elo(tally: Tally, prior: float = DEFAULT_PRIOR) -> dict[str, float]:
    """The pairwise (Bradley-Terry) ratings of a tally's results."""
    evidence: Choices = defaultdict(float)
    for (a, b), n in tally.games.items():
        evidence[(a,), (a, b)] += tally.points[a, b]
        evidence[(b,), (a, b)] += n - tally.points[a, b]
    return fit(evidence, prior)


def log_likelihood(elo: Mapping[str, float], places: Places) -> float:
    """The log-probability of a match's ranking under Plackett-Luce with these ratings (the
    measure of how well ratings predict rankings they were not fitted on)."""
    total = 0.0
    for (chosen, among), n in choices(places, Model.PLACKETT_LUCE).items():
        strengths = [(elo[bot] - ANCHOR) / SCALE for bot in among]
        top = max(strengths)
        log_field = top + math.log(sum(math.exp(s - top) for s in strengths))
        total += n * sum((elo[bot] - ANCHOR) / SCALE - log_field for bot in chosen)
    return total


@dataclass(frozen=True, slots=True)
class Rating:
    """One bot's line in a ratings table."""

    bot: str
    elo: float
    low: float | None
    """The 95% interval (bootstrap); None with fewer than two sets."""
    high: float | None
    los_next: float | None
    """Likelihood of superiority over the next bot down the table (None for the last of a group)."""
    points: float
    games: int
    """Pairwise results: a match of N bots counts N-1 for each of them."""
    group: int = 0
    """Bots are comparable only within a group (linked by matches); the largest group is 0."""

    @property
    def score(self) -> float:
        return self.points / self.games if self.games else 0.0


def rate(
    duplicate_sets: Sequence[RatedSet | Sequence[Places]],
    prior: float = DEFAULT_PRIOR,
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    model: Model = DEFAULT_MODEL,
    resample: Resample = DEFAULT_RESAMPLE,
) -> list[Rating]:
    """The ratings table of one game, group by group, best first, from its duplicate sets."""
    sets = [_rated_set(item) for item in duplicate_sets]
    tally = Tally(places for rated in sets for places in rated.matches)
    if not tally.bots:
        return []
    elo = fit(merged(choices(places, model) for rated in sets for places in rated.matches), prior)
    draws = bootstrap(sets, prior, samples, seed, model, resample)
    groups = sorted(_groups(sets), key=lambda group: (-len(group), min(group)))
    table = []
    for number, group in enumerate(groups):
        order = sorted(group, key=lambda bot: (-elo[bot], bot))
        for rank, bot in enumerate(order):
            own = sorted(draw[bot] for draw in draws if bot in draw)
            low, high = (_quantile(own, 0.025), _quantile(own, 0.975)) if own else (None, None)
            los = _los(draws, bot, order[rank + 1]) if rank + 1 < len(order) else None
            points, games = tally.score(bot)
            table.append(Rating(bot, elo[bot], low, high, los, points, games, number))
    return table


class RunningElo:
    """The classic incremental Elo, for the live display only: it depends on match order."""

    def __init__(self, k: float = 16.0) -> None:
        self.k = k
        self.elo: dict[str, float] = {}

    def add(self, places: Places) -> None:
        """Update from one match; each bot's K is shared over its N-1 pairwise results."""
        step = self.k / max(1, len(places) - 1)
        delta = dict.fromkeys(places, 0.0)
        for a, b, points in pairwise_results(places):
            ra, rb = self.elo.get(a, ANCHOR), self.elo.get(b, ANCHOR)
            expected = 1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0))
            delta[a] += step * (points - expected)
            delta[b] -= step * (points - expected)
        for bot, change in delta.items():
            self.elo[bot] = self.elo.get(bot, ANCHOR) + change


# --- the numerical fit -------------------------------------------------------------

Coded = tuple[tuple[int, ...], tuple[int, ...], float]  # (chosen, field, times) by player number


def _fit(players: int, coded: Sequence[Coded], check_finite: bool) -> list[float]:
    """Natural-log strengths, mean zero in each group of players linked by choices."""
    strengths = [0.0] * players
    for component in _components(players, coded):
        local = {player: k for k, player in enumerate(component)}
        sub = [
            (tuple(local[i] for i in chosen), tuple(local[i] for i in among), n)
            for chosen, among, n in coded
            if among[0] in local
        ]
        if check_finite:
            _check_finite(len(component), sub)
        for player, value in zip(component, _newton(len(component), sub), strict=True):
            strengths[player] = value
    return strengths


def _newton(players: int, coded: Sequence[Coded]) -> list[float]:
    """Maximise the log-likelihood by Newton's method with backtracking.

    The log-likelihood is concave; the last player is pinned at 0 to remove
    the free offset, then the result is centred.
    """
    r = [0.0] * players
    if players == 1:
        return r
    current = _log_likelihood(r, coded)
    for _ in range(100):
        grad = [0.0] * players
        info = [[0.0] * players for _ in range(players)]
        for chosen, among, n in coded:
            top = max(r[i] for i in among)
            weights = [math.exp(r[i] - top) for i in among]
            total = sum(weights)
            shares = [w / total for w in weights]
            picks = n * len(chosen)
            for i in chosen:
                grad[i] += n
            for i, share in zip(among, shares, strict=True):
                grad[i] -= picks * share
                info[i][i] += picks * share
            for i, share_i in zip(among, shares, strict=True):
                for j, share_j in zip(among, shares, strict=True):
                    info[i][j] -= picks * share_i * share_j
        if max(abs(g) for g in grad) < 1e-10:
            break
        step = [*_solve([row[:-1] for row in info[:-1]], grad[:-1]), 0.0]
        scale = 1.0
        while True:
            trial = [x + scale * s for x, s in zip(r, step, strict=True)]
            value = _log_likelihood(trial, coded)
            if value >= current - 1e-12 or scale < 1e-6:
                break
            scale /= 2
        r, current = trial, value
    mean = sum(r) / players
    return [x - mean for x in r]


def _log_likelihood(r: Sequence[float], coded: Sequence[Coded]) -> float:
    total = 0.0
    for chosen, among, n in coded:
        top = max(r[i] for i in among)  # log-sum-exp without overflow
        log_field = top + math.log(sum(math.exp(r[i] - top) for i in among))
        total += n * sum(r[i] - log_field for i in chosen)
    return total


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (the systems are a few bots wide)."""
    size = len(vector)
    rows = [[*row, vector[k]] for k, row in enumerate(matrix)]
    for col in range(size):
        pivot = max(range(col, size), key=lambda k: abs(rows[k][col]))
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for k in range(col + 1, size):
            factor = rows[k][col] / rows[col][col]
            if factor:
                for c in range(col, size + 1):
                    rows[k][c] -= factor * rows[col][c]
    out = [0.0] * size
    for k in reversed(range(size)):
        out[k] = (rows[k][size] - sum(rows[k][c] * out[c] for c in range(k + 1, size))) / rows[k][k]
    return out


def _components(players: int, coded: Sequence[Coded]) -> list[list[int]]:
    """Groups of players linked by choices; ratings are comparable only within one."""
    parent = list(range(players))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for _, among, _ in coded:
        for other in among[1:]:
            parent[root(other)] = root(among[0])
    groups: dict[int, list[int]] = {}
    for player in range(players):
        groups.setdefault(root(player), []).append(player)
    return list(groups.values())


def _check_finite(players: int, coded: Sequence[Coded]) -> None:
    """Without a prior the maximum is finite only if every player can reach every other through
    "was chosen over" links (no group won or lost everything)."""
    beats: list[set[int]] = [set() for _ in range(players)]
    for chosen, among, n in coded:
        if n > 0:
            for i in chosen:
                beats[i].update(j for j in among if j != i)
    for start in range(players):
        seen, todo = {start}, [start]
        while todo:
            for nxt in beats[todo.pop()] - seen:
                seen.add(nxt)
                todo.append(nxt)
        if len(seen) < players:
            raise ValueError("no finite maximum-likelihood ratings: some bots won or lost all their results")


def bootstrap(
    sets: Sequence[RatedSet],
    prior: float = DEFAULT_PRIOR,
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    model: Model = DEFAULT_MODEL,
    resample: Resample = DEFAULT_RESAMPLE,
    few: bool = True,
) -> list[dict[str, float]]:
    """The ratings refitted on ``samples`` resamples (with replacement) of the duplicate sets,
    or of the groups and then of each drawn group's sets; widened for few of them (``widen``)
    unless ``few`` is false (the plain bootstrap, for comparison)."""
    if samples <= 0 or len(sets) < 2:  # one set resampled is itself: no spread to measure
        return []
    per_set = [merged(choices(places, model) for places in rated.matches) for rated in sets]
    clusters: dict[tuple[str, tuple[str, ...]], list[int]] = {}
    for number, rated in enumerate(sets):
        clusters.setdefault((rated.tournament, rated.group), []).append(number)
    by_cluster = list(clusters.values())
    rng = random.Random(seed)
    draws: list[dict[str, float]] = []
    for _ in range(samples):
        if resample is Resample.GROUPS:
            picked: list[int] = []
            for _ in by_cluster:
                cluster = by_cluster[rng.randrange(len(by_cluster))]
                picked.extend(cluster[rng.randrange(len(cluster))] for _ in cluster)
        else:
            picked = [rng.randrange(len(per_set)) for _ in per_set]
        try:
            draws.append(fit(merged(per_set[number] for number in picked), prior))
        except ValueError:  # prior 0 and a resample without a finite maximum: no evidence there
            continue
    units = len(by_cluster) if resample is Resample.GROUPS else len(per_set)
    if units < 2:
        return []
    if not few:
        return draws
    return widen(draws, fit(merged(per_set), prior), units)


T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228)
"""Student's t, 97.5% quantile, for 1 to 10 degrees of freedom."""
Z_975 = 1.959964


def widen(
    draws: Sequence[Mapping[str, float]], estimate: Mapping[str, float], units: int
) -> list[dict[str, float]]:
    """Bootstrap draws spread further from the estimate for few resampled units: a resample of n
    units varies (n-1)/n as much as the units do, and a spread measured on n of them is itself
    uncertain; so, as Student's t does, each draw's distance from the estimate is scaled by
    sqrt(n/(n-1)) * t(n-1) / z (1.08 for 24 sets, 1.17 for 12, 2.7 for 3). Twins' intervals missed
    0 a quarter of the time with three sets a tournament without it (bench/rating_calibration.py)."""
    df = units - 1
    t = T_975[df - 1] if df <= len(T_975) else _t_975(df)
    factor = math.sqrt(units / df) * t / Z_975
    return [
        {bot: estimate[bot] + factor * (value - estimate[bot]) for bot, value in draw.items()}
        for draw in draws
    ]


def _t_975(df: int) -> float:
    """Student's t 97.5% quantile for larger degrees of freedom (Cornish-Fisher, within 0.003)."""
    z = Z_975
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def _rated_set(item: RatedSet | Sequence[Places]) -> RatedSet:
    if isinstance(item, RatedSet):
        return item
    matches = tuple(item)
    return RatedSet("", tuple(sorted({bot for places in matches for bot in places})), matches)


def _groups(sets: Sequence[RatedSet]) -> list[set[str]]:
    """The bots each chain of matches links."""
    groups: list[set[str]] = []
    for rated in sets:
        for places in rated.matches:
            linked = [group for group in groups if group & places.keys()]
            merged = set(places).union(*linked)
            groups = [group for group in groups if group not in linked] + [merged]
    return groups


def _quantile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _los(draws: Sequence[Mapping[str, float]], upper: str, lower: str) -> float | None:
    both = [(d[upper], d[lower]) for d in draws if upper in d and lower in d]
    if not both:
        return None
    return sum(1.0 if a > b else 0.5 if a == b else 0.0 for a, b in both) / len(both)
