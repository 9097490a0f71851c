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
extra drawn results (half of them a win each way), which pulls small samples
towards equality and vanishes against real data. The fit is then a maximum a
posteriori estimate, always finite and unique. The default is a tenth of a
draw: one whole draw per pair made heuristic-random gaps predict 2-5% less
of their head-to-head score than they made, on fresh sets too; a tenth
leaves the twins' intervals as honest as before (bench/rating_calibration.py,
docs/tournaments.md).

Bots that no chain of matches links are separate groups, each anchored on its
own (``Anchor``: its established bots average 1500): their ratings cannot be
compared, and no LOS is given between groups. 95% intervals come from a
bootstrap over duplicate sets (all rotations of one deal, the unit that
carries the luck of the cards), or over groups of bots and their sets in two
stages; the likelihood of superiority (LOS) of a bot over the next one down is
the share of bootstrap samples in which it stays ahead.

The fit is Newton's method on numpy arrays (luce.py, which says why not choix), every
bootstrap sample at once, in work proportional to the choices: a sample is a row of weights over
the duplicate sets, and the samples start from the full fit. The bootstrap is seeded from the
results (``results_seed``) unless a seed is given. numpy is a runtime dependency for it: the
runner and the web viewer rate on the runtime install.
"""

from __future__ import annotations

import enum
import hashlib
import math
import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from croupier.clients.results.luce import Choice, Counts, Evidence, Floats

ANCHOR = 1500.0
SCALE = 400.0 / math.log(10.0)  # natural-log strengths -> Elo points
DEFAULT_PRIOR = 0.1
"""Virtual draws per pair of bots that met (the calibration chose it: see the docstring)."""
DEFAULT_SAMPLES = 1000
TIE = 1e-6
"""Ratings closer than this (Elo) are equal: the solver's rounding is far below it."""

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


class Bootstrap(enum.Enum):
    REFIT = "refit"
    """Every sample fitted to its own maximum."""
    ONE_STEP = "one-step"
    """Every sample one Newton step from the full fit, with its information matrix (luce.OneStep):
    the refit to first order, at a fraction of its cost."""

    def __str__(self) -> str:
        return self.value

    @classmethod
    def for_pool(cls, bots: int) -> Bootstrap:
        """Refits up to ``REFIT_BOTS`` bots (a tournament's pool, where they are cheap and where a
        few sets a bot make the first order coarsest), one step beyond (a ladder's or a big pool's)."""
        return cls.REFIT if bots <= REFIT_BOTS else cls.ONE_STEP


REFIT_BOTS = 16
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
    luck: tuple[Mapping[str, float], ...] = ()
    """Per match, each bot's luck (results/luck.py, as stored with its result) where the set is read
    luck-corrected (``croupier ratings --luck-correction``); empty: read plain."""


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
        return self.scores().get(bot, (0.0, 0))

    def scores(self) -> dict[str, tuple[float, int]]:
        """Every bot's pairwise points and number of pairwise results, in one pass."""
        found: dict[str, tuple[float, int]] = {}
        for (a, b), n in self.games.items():
            points = self.points[a, b]
            for bot, won in ((a, points), (b, n - points)):
                before, games = found.get(bot, (0.0, 0))
                found[bot] = (before + won, games + n)
        return found


# --- choices: what both models are fitted on ----------------------------------------------

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


def set_choices(rated: RatedSet, model: Model) -> Choices:
    """A set as the choices the model reads in it: its matches' together, or with luck measured
    (``rated.luck``), each pair's points less half the difference of the two bots' luck (in a
    two-seat match, exactly the luck of one against the other; a mean-zero term in any case, so the
    expected points are the plain ones). Such points may fall outside 0 to 1, which the pairwise
    likelihood takes (each pair's log-likelihood stays concave: its total is the games played)."""
    if not rated.luck:
        return merged(choices(places, model) for places in rated.matches)
    if model is not Model.PAIRWISE:
        raise ValueError("luck-corrected sets are rated by their pairwise points: use the pairwise model")
    found: Choices = defaultdict(float)
    for places, luck in zip(rated.matches, rated.luck, strict=True):
        for a, b, points in pairwise_results(places):
            if a in luck and b in luck:
                points -= (luck[a] - luck[b]) / 2
            found[(a,), (a, b)] += points
            found[(b,), (a, b)] += 1 - points
    return found


def fit(evidence: Mapping[Choice, float], prior: float = DEFAULT_PRIOR) -> dict[str, float]:
    """The maximum-likelihood (with ``prior`` virtual draws per pair that met: MAP) rating of
    every bot on the Elo scale, each linked group's mean at 1500.

    Raises ValueError if ``prior`` is 0 and some bot's results have no finite
    maximum (it won or lost everything against the rest of its group).
    """
    positive = {choice: n for choice, n in evidence.items() if n > 0}
    arrays = Evidence(positive)
    strengths = _full_fit(arrays, arrays.counts([positive]), prior)
    return {bot: float(ANCHOR + SCALE * strengths[i]) for i, bot in enumerate(arrays.bots)}


def anchored_fit(
    sets: Sequence[RatedSet], prior: float = DEFAULT_PRIOR, model: Model = DEFAULT_MODEL
) -> dict[str, float]:
    """The ratings of ``rate``'s table without its intervals: the same fit on the same scale
    (``Anchor``: each group's established bots average 1500), where ``fit`` centres on every bot."""
    per_set = [set_choices(rated, model) for rated in sets]
    evidence = Evidence(choice for part in per_set for choice in part)
    if not evidence.bots:
        return {}
    strengths = Anchor(evidence.bots, sets)(_full_fit(evidence, evidence.counts(per_set), prior)[None, :])[0]
    return {bot: float(ANCHOR + SCALE * strengths[i]) for i, bot in enumerate(evidence.bots)}


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


Progress = Callable[[int, int], None]
"""Called as the bootstrap goes: (samples done, samples in all)."""


def rate(
    duplicate_sets: Sequence[RatedSet | Sequence[Places]],
    prior: float = DEFAULT_PRIOR,
    samples: int = DEFAULT_SAMPLES,
    seed: int | None = None,
    model: Model = DEFAULT_MODEL,
    resample: Resample = DEFAULT_RESAMPLE,
    progress: Progress | None = None,
    method: Bootstrap | None = None,
) -> list[Rating]:
    """The ratings table of one game, group by group, best first, from its duplicate sets.

    ``seed`` None (every caller's default): the bootstrap is seeded from the results themselves
    and draws from them in a canonical order, so that the same results give the same intervals
    wherever they are rated (terminal, web page, JSON, archive), in whatever order they were read.
    """
    sets = [_rated_set(item) for item in duplicate_sets]
    if seed is None:
        sets, seed = results_seed(sets)
    tally = Tally(places for rated in sets for places in rated.matches)
    if not tally.bots:
        return []
    per_set = [set_choices(rated, model) for rated in sets]
    evidence = Evidence(choice for part in per_set for choice in part)
    counts = evidence.counts(per_set)
    anchor = Anchor(evidence.bots, sets)
    strengths = anchor(_full_fit(evidence, counts, prior)[None, :])[0]
    method = method or Bootstrap.for_pool(len(evidence.bots))
    draws = _bootstrap(
        sets, evidence, counts, strengths, prior, samples, seed, resample, True, progress, anchor, method
    )
    column = {bot: i for i, bot in enumerate(evidence.bots)}
    elo = {bot: float(ANCHOR + SCALE * strengths[i]) for bot, i in column.items()}
    groups = sorted(_groups(sets), key=lambda group: (-len(group), min(group)))
    scores = tally.scores()
    table = []
    for number, group in enumerate(groups):
        order = sorted(group, key=lambda bot: (-round(elo[bot] / TIE), bot))
        for rank, bot in enumerate(order):
            own = draws[:, column[bot]]
            own = own[~np.isnan(own)]
            low, high = (float(q) for q in np.quantile(own, (0.025, 0.975))) if own.size else (None, None)
            below = column[order[rank + 1]] if rank + 1 < len(order) else None
            los = _los(draws[:, column[bot]], draws[:, below]) if below is not None else None
            points, games = scores[bot]
            table.append(Rating(bot, elo[bot], low, high, los, points, games, number))
    return table


def results_seed(sets: Sequence[RatedSet]) -> tuple[list[RatedSet], int]:
    """The sets in a canonical order and a seed drawn from their content (SHA-256)."""

    def key(rated: RatedSet) -> tuple[object, ...]:
        return rated.tournament, rated.group, tuple(tuple(sorted(places.items())) for places in rated.matches)

    ordered = sorted(sets, key=key)
    digest = hashlib.sha256(repr([key(rated) for rated in ordered]).encode()).digest()
    return ordered, int.from_bytes(digest[:8], "big")


def bootstrap(
    sets: Sequence[RatedSet],
    prior: float = DEFAULT_PRIOR,
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    model: Model = DEFAULT_MODEL,
    resample: Resample = DEFAULT_RESAMPLE,
    few: bool = True,
    method: Bootstrap | None = None,
) -> list[dict[str, float]]:
    """The ratings refitted on ``samples`` resamples (with replacement) of the duplicate sets,
    or of the groups and then of each drawn group's sets; widened for few of them (``widen``)
    unless ``few`` is false (the plain bootstrap, for comparison)."""
    per_set = [set_choices(rated, model) for rated in sets]
    evidence = Evidence(choice for part in per_set for choice in part)
    counts = evidence.counts(per_set)
    if samples <= 0 or len(sets) < 2:
        return []
    anchor = Anchor(evidence.bots, sets)
    strengths = anchor(_full_fit(evidence, counts, prior)[None, :])[0]
    method = method or Bootstrap.for_pool(len(evidence.bots))
    draws = _bootstrap(
        sets, evidence, counts, strengths, prior, samples, seed, resample, few, anchor=anchor, method=method
    )
    return [
        {bot: float(value) for bot, value in zip(evidence.bots, draw, strict=True) if not math.isnan(value)}
        for draw in draws
    ]


def _bootstrap(
    sets: Sequence[RatedSet],
    evidence: Evidence,
    counts: Counts,
    estimate: Floats,
    prior: float,
    samples: int,
    seed: int,
    resample: Resample,
    few: bool,
    progress: Progress | None = None,
    anchor: Anchor | None = None,
    method: Bootstrap = Bootstrap.REFIT,
) -> Floats:
    """The bootstrap's draws on the Elo scale, one row each (NaN for a bot absent from it);
    resamples drawn from ``random.Random(seed)`` exactly as one refit at a time drew them, so a
    seed gives the same intervals as it always did."""
    clusters: dict[tuple[str, tuple[str, ...]], list[int]] = {}
    for number, rated in enumerate(sets):
        clusters.setdefault((rated.tournament, rated.group), []).append(number)
    by_cluster = list(clusters.values())
    units = len(by_cluster) if resample is Resample.GROUPS else len(sets)
    if samples <= 0 or len(sets) < 2 or units < 2:  # one unit resampled is itself: no spread
        return np.empty((0, len(evidence.bots)))
    rng = random.Random(seed)
    if resample is Resample.SETS:
        weights = _counted(_randrange(rng, len(sets), samples * len(sets)).reshape(samples, -1), len(sets))
    else:
        picked = []
        for _ in range(samples):
            row: list[int] = []
            for _ in by_cluster:
                cluster = by_cluster[rng.randrange(len(by_cluster))]
                row.extend(cluster[rng.randrange(len(cluster))] for _ in cluster)
            picked.append(np.bincount(row, minlength=len(sets)))
        weights = np.array(picked, dtype=float)
    chunk = max(1, min(CHUNK, CELLS // evidence.members.size))  # bounded (samples x choices x seats)
    step = evidence.one_step(estimate, prior) if method is Bootstrap.ONE_STEP else None
    kept = []
    for done in range(0, samples, chunk):
        if step is not None:
            kept.append(step(counts.weighted(weights[done : done + chunk])))
        else:
            strengths, finite = evidence.fit(counts.weighted(weights[done : done + chunk]), prior, estimate)
            kept.append(strengths[finite])  # prior 0 and no finite maximum: no evidence in that one
        if progress:
            progress(min(done + chunk, samples), samples)
    fitted = np.concatenate(kept)
    draws = ANCHOR + SCALE * (anchor(fitted) if anchor else fitted)
    if not few:
        return draws
    centre = ANCHOR + SCALE * estimate
    return centre + _widening(units) * (draws - centre)


ESTABLISHED = 0.25
"""A bot with at least this share of the matches of its group's median bot is established."""


class Anchor:
    """Where 1500 is: each group's *established* bots average 1500 (those with at least a quarter
    of the matches of the group's median bot). A newcomer, until then, moves nobody: anchored on
    every bot, one weak newcomer's few sets moved two unchanged bots up by 450-550 Elo on a
    ladder. The same rule in tournaments (every bot there plays alike: all are established),
    ladders and ``croupier ratings``."""

    def __init__(self, bots: Sequence[str], sets: Sequence[RatedSet]) -> None:
        played: dict[str, int] = defaultdict(int)
        for rated in sets:
            for places in rated.matches:
                for bot in places:
                    played[bot] += 1
        column = {bot: i for i, bot in enumerate(bots)}
        self.groups: list[tuple[list[int], list[int]]] = []
        for group in _groups(sets):
            members = sorted(column[bot] for bot in group if bot in column)
            median = float(np.median([played[bot] for bot in group]))
            chosen = sorted(
                column[bot] for bot in group if bot in column and played[bot] >= ESTABLISHED * median
            )
            self.groups.append((members, chosen))

    def __call__(self, strengths: Floats) -> Floats:
        """Natural-log strengths (a row each) moved so that each group's established bots present
        in a row average 0 there."""
        out = strengths.copy()
        for members, chosen in self.groups:
            values = strengths[:, chosen]
            present = ~np.isnan(values)
            count = present.sum(axis=1)
            mean = np.where(
                count > 0, np.where(present, values, 0.0).sum(axis=1) / np.maximum(count, 1), np.nan
            )
            out[:, members] = strengths[:, members] - mean[:, None]
        return out


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
    factor = _widening(units)
    return [
        {bot: estimate[bot] + factor * (value - estimate[bot]) for bot, value in draw.items()}
        for draw in draws
    ]


def _widening(units: int) -> float:
    df = units - 1
    return math.sqrt(units / df) * t_975(df) / Z_975


def t_975(df: int) -> float:
    """Student's t 97.5% quantile: the table, then Cornish-Fisher (within 0.003)."""
    if df <= len(T_975):
        return T_975[df - 1]
    z = Z_975
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def _rated_set(item: RatedSet | Sequence[Places]) -> RatedSet:
    if isinstance(item, RatedSet):
        return item
    matches = tuple(item)
    return RatedSet("", tuple(sorted({bot for places in matches for bot in places})), matches)


def _groups(sets: Sequence[RatedSet]) -> list[set[str]]:
    """The bots each chain of matches links (union-find: one pass over the matches)."""
    parent: dict[str, str] = {}

    def root(bot: str) -> str:
        while parent[bot] != bot:
            parent[bot] = parent[parent[bot]]
            bot = parent[bot]
        return bot

    for rated in sets:
        for places in rated.matches:
            bots = sorted(places)
            for bot in bots:
                parent.setdefault(bot, bot)
            for bot in bots[1:]:
                parent[root(bot)] = root(bots[0])
    groups: dict[str, set[str]] = {}
    for bot in parent:
        groups.setdefault(root(bot), set()).add(bot)
    return list(groups.values())


def _randrange(rng: random.Random, n: int, count: int) -> npt.NDArray[np.intp]:
    """``count`` calls of ``rng.randrange(n)``, the very values, read in bulk from its Mersenne
    Twister: CPython draws ``getrandbits(n.bit_length())``, the top bits of one 32-bit output,
    until it is below n."""
    _, state, _ = rng.getstate()
    twister = np.random.MT19937()
    key = np.array(state[:-1], dtype=np.uint32)
    twister.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": state[-1]}}
    found: list[npt.NDArray[np.intp]] = []
    while (short := count - sum(len(part) for part in found)) > 0:
        words = twister.random_raw(2 * short + 64) >> np.uint64(32 - n.bit_length())
        found.append(words[words < n][:short].astype(np.intp))
    return np.concatenate(found) if found else np.empty(0, dtype=np.intp)


def _counted(picks: npt.NDArray[np.intp], units: int) -> Floats:
    """Per row of picks, how often each of ``units`` was picked."""
    rows = np.arange(len(picks))[:, None] * units
    return np.bincount((rows + picks).ravel(), minlength=len(picks) * units).reshape(-1, units).astype(float)


def _los(upper: Floats, lower: Floats) -> float | None:
    """The share of draws (holding both) in which ``upper`` is ahead, a tie counting half."""
    both = ~(np.isnan(upper) | np.isnan(lower))
    if not both.any():
        return None
    gap = upper[both] - lower[both]
    return float(np.mean(np.where(gap > TIE, 1.0, np.where(gap < -TIE, 0.0, 0.5))))


# --- the numerical fit: luce.py ---------------------------------------------------------

CHUNK = 100
"""Bootstrap samples fitted together: a progress report every 100."""
CELLS = 1 << 22
"""At most this many (samples x choices x seats) cells at a time."""


def _full_fit(evidence: Evidence, counts: Counts, prior: float) -> Floats:
    """The natural-log strengths of all the counts' parts together."""
    strengths, finite = evidence.fit(counts.total(), prior)
    if not finite[0]:
        raise ValueError(
            "no finite ratings without a prior: some bots won or lost every result against the rest of "
            "their group (a prior of virtual draws, the default, rates them)"
        )
    full: Floats = strengths[0]
    return full
