"""Elo ratings fitted by maximum likelihood over pairwise results.

Every match ranking of N bots is N(N-1)/2 pairwise results (a shared place is
half a win each way). The model is Bradley-Terry on the Elo scale: bot i beats
bot j with probability 1 / (1 + 10^((R_j - R_i) / 400)). Ratings maximise the
likelihood of all results at once, like Ordo and BayesElo, so they do not
depend on the order the matches were played in; the mean of each connected
group of bots is anchored at 1500.

A bot that won (or lost) every pairwise result has no finite maximum. As in
BayesElo, a prior of virtual draws fixes that: every pair of bots that met
gets ``prior`` extra drawn results (default one), which pulls small samples
gently towards equality and vanishes against real data. The fit is then a
maximum a posteriori estimate, always finite and unique.

95% intervals come from a bootstrap over duplicate sets (all rotations of one
deal, the unit that carries the luck of the cards), and the likelihood of
superiority (LOS) of each bot over the next one down is the share of bootstrap
samples in which it stays ahead. ``RunningElo`` is the classic order-dependent
update, only for the live display.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

ANCHOR = 1500.0
SCALE = 400.0 / math.log(10.0)  # natural-log strengths -> Elo points
DEFAULT_PRIOR = 1.0
DEFAULT_SAMPLES = 1000

Places = Mapping[str, int]
"""One match: each bot's place, 1 best; equal places are a shared result."""


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


def fit_elo(tally: Tally, prior: float = DEFAULT_PRIOR) -> dict[str, float]:
    """The maximum-likelihood (with ``prior`` virtual draws per pair: MAP) Elo of every bot.

    Raises ValueError if ``prior`` is 0 and some bot's results have no finite
    maximum (it won or lost everything against the rest of its group).
    """
    if prior < 0:
        raise ValueError(f"the prior is a number of virtual draws, not {prior}")
    bots = tally.bots
    index = {bot: i for i, bot in enumerate(bots)}
    pairs = [(index[a], index[b], tally.points[a, b], float(n)) for (a, b), n in tally.games.items()]
    strengths = _fit(len(bots), pairs, prior)
    return {bot: ANCHOR + SCALE * strengths[i] for i, bot in enumerate(bots)}


@dataclass(frozen=True, slots=True)
class Rating:
    """One bot's line in a ratings table."""

    bot: str
    elo: float
    low: float | None
    """The 95% interval (bootstrap over duplicate sets); None with fewer than two sets."""
    high: float | None
    los_next: float | None
    """Likelihood of superiority over the next bot down the table (None for the last)."""
    points: float
    games: int
    """Pairwise results: a match of N bots counts N-1 for each of them."""

    @property
    def score(self) -> float:
        return self.points / self.games if self.games else 0.0


def rate(
    duplicate_sets: Sequence[Sequence[Places]],
    prior: float = DEFAULT_PRIOR,
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
) -> list[Rating]:
    """The ratings table of one game, best first, from its matches grouped by duplicate set."""
    tally = Tally(places for matches in duplicate_sets for places in matches)
    bots = tally.bots
    if not bots:
        return []
    elo = fit_elo(tally, prior)
    draws = _bootstrap(duplicate_sets, bots, prior, samples, seed)
    order = sorted(bots, key=lambda bot: (-elo[bot], bot))
    table = []
    for rank, bot in enumerate(order):
        own = sorted(draw[bot] for draw in draws if bot in draw)
        low, high = (_quantile(own, 0.025), _quantile(own, 0.975)) if own else (None, None)
        los = _los(draws, bot, order[rank + 1]) if rank + 1 < len(order) else None
        points, games = tally.score(bot)
        table.append(Rating(bot, elo[bot], low, high, los, points, games))
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

Pair = tuple[int, int, float, float]  # (i, j, points of i against j, results between them)


def _fit(players: int, pairs: Sequence[Pair], prior: float) -> list[float]:
    """Natural-log strengths, mean zero in each connected group of players."""
    pairs = [(i, j, w + prior / 2, n + prior) for i, j, w, n in pairs if n > 0]
    strengths = [0.0] * players
    for component in _components(players, pairs):
        local = {player: k for k, player in enumerate(component)}
        sub = [(local[i], local[j], w, n) for i, j, w, n in pairs if i in local]
        if prior == 0:
            _check_finite(len(component), sub)
        for player, value in zip(component, _newton(len(component), sub), strict=True):
            strengths[player] = value
    return strengths


def _newton(players: int, pairs: Sequence[Pair]) -> list[float]:
    """Maximise the log-likelihood by Newton's method with backtracking.

    The log-likelihood is concave; the last player is pinned at 0 to remove
    the free offset, then the result is centred.
    """
    r = [0.0] * players
    if players == 1:
        return r
    current = _log_likelihood(r, pairs)
    for _ in range(100):
        grad = [0.0] * players
        info = [[0.0] * players for _ in range(players)]
        for i, j, w, n in pairs:
            p = 1.0 / (1.0 + math.exp(r[j] - r[i]))
            g = w - n * p
            grad[i] += g
            grad[j] -= g
            h = n * p * (1.0 - p)
            info[i][i] += h
            info[j][j] += h
            info[i][j] -= h
            info[j][i] -= h
        if max(abs(g) for g in grad) < 1e-10:
            break
        step = [*_solve([row[:-1] for row in info[:-1]], grad[:-1]), 0.0]
        scale = 1.0
        while True:
            trial = [x + scale * s for x, s in zip(r, step, strict=True)]
            value = _log_likelihood(trial, pairs)
            if value >= current - 1e-12 or scale < 1e-6:
                break
            scale /= 2
        r, current = trial, value
    mean = sum(r) / players
    return [x - mean for x in r]


def _log_likelihood(r: Sequence[float], pairs: Sequence[Pair]) -> float:
    total = 0.0
    for i, j, w, n in pairs:
        d = r[i] - r[j]
        # log p = -log(1 + e^-d), log(1 - p) = -log(1 + e^d), computed without overflow
        total -= w * _softplus(-d) + (n - w) * _softplus(d)
    return total


def _softplus(x: float) -> float:
    return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))


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


def _components(players: int, pairs: Sequence[Pair]) -> list[list[int]]:
    """Groups of players linked by results; ratings are comparable only within one."""
    parent = list(range(players))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j, _, _ in pairs:
        parent[root(i)] = root(j)
    groups: dict[int, list[int]] = {}
    for player in range(players):
        groups.setdefault(root(player), []).append(player)
    return list(groups.values())


def _check_finite(players: int, pairs: Sequence[Pair]) -> None:
    """Without a prior the maximum is finite only if every player can reach every
    other through "scored a point against" links (no group won or lost everything)."""
    beats: list[set[int]] = [set() for _ in range(players)]
    for i, j, w, n in pairs:
        if w > 0:
            beats[i].add(j)
        if w < n:
            beats[j].add(i)
    for start in range(players):
        seen, todo = {start}, [start]
        while todo:
            for nxt in beats[todo.pop()] - seen:
                seen.add(nxt)
                todo.append(nxt)
        if len(seen) < players:
            raise ValueError("no finite maximum-likelihood ratings: some bots won or lost all their results")


def _bootstrap(
    duplicate_sets: Sequence[Sequence[Places]], bots: Sequence[str], prior: float, samples: int, seed: int
) -> list[dict[str, float]]:
    """Refit on ``samples`` resamples (with replacement) of the duplicate sets."""
    if samples <= 0 or len(duplicate_sets) < 2:  # one set resampled is itself: no spread to measure
        return []
    index = {bot: i for i, bot in enumerate(bots)}
    pair_index: dict[tuple[int, int], int] = {}
    per_set: list[list[tuple[int, float, int]]] = []  # (pair number, points of the lower index, results)
    for matches in duplicate_sets:
        summed: dict[int, tuple[float, int]] = {}  # a set's rotations repeat its pairs: add them up once
        for places in matches:
            for a, b, share in pairwise_results(places):
                pair = pair_index.setdefault((index[a], index[b]), len(pair_index))
                points_so_far, results = summed.get(pair, (0.0, 0))
                summed[pair] = (points_so_far + share, results + 1)
        per_set.append([(pair, w, n) for pair, (w, n) in summed.items()])
    pair_list = sorted(pair_index, key=pair_index.__getitem__)
    rng = random.Random(seed)
    draws: list[dict[str, float]] = []
    for _ in range(samples):
        points = [0.0] * len(pair_list)
        games = [0.0] * len(pair_list)
        for _ in range(len(per_set)):
            for pair, w, n in per_set[rng.randrange(len(per_set))]:
                points[pair] += w
                games[pair] += n
        present = sorted({p for k, (i, j) in enumerate(pair_list) if games[k] for p in (i, j)})
        local = {player: k for k, player in enumerate(present)}
        pairs = [(local[i], local[j], points[k], games[k]) for k, (i, j) in enumerate(pair_list) if games[k]]
        if not pairs:
            continue
        try:
            strengths = _fit(len(present), pairs, prior)
        except ValueError:  # prior 0 and a resample without a finite maximum: no evidence there
            continue
        draws.append({bots[p]: ANCHOR + SCALE * strengths[local[p]] for p in present})
    return draws


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
