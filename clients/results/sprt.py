"""The sequential test of "is NEW better than OLD?", read on duplicate sets: a generalized
sequential probability ratio test (GSPRT) on the distribution of set scores, as fishtest and
fastchess read game pairs with their pentanomial model. Pure arithmetic: no I/O, no clock.

Each observation is one duplicate set's score of NEW against OLD (sets.py): one of the finitely
many values of ``sets.grid(rotations)``, so the sets are draws from an unknown distribution over
those values (a pentanomial for two seats: 0, ¼, ½, ¾, 1). The hypotheses are about its mean, in
logistic Elo: H0, the mean is ``score_of(elo0)``; H1, it is ``score_of(elo1)``. Each gets the
distribution that fits the sets seen best among those with its mean (the maximum likelihood
estimate under that constraint, Van den Bergh's "MLE with a fixed expectation": p_i =
p̂_i / (1 + θ(a_i − s)), θ the root of Σ p̂_i (a_i − s) / (1 + θ(a_i − s)) = 0), and the
log-likelihood ratio of the sets under the two is the LLR. The test goes on while
log(β/(1−α)) < LLR < log((1−β)/α), accepting H1 at the upper bound and H0 at the lower one
(Wald's bounds: false H1 at most α when the truth is elo0 or less, false H0 at most β when it is
elo1 or more). A value of the grid never seen counts 1e-3 times (as fishtest and fastchess
regularise), so both ends of the grid stay possible and both estimates exist.

Why logistic Elo: it is the scale a bot author reads strength in (pairwise results read as
1 / (1 + 10^(−Δ/400))). It is NEW's head-to-head Elo over OLD in these sets, which is not always
the gap of the two on a ratings table (ratings.py): with two seats the pairwise table of the
test's games alone is this scale, but in a game of more than two seats the default table
(Plackett-Luce over every place and every bot, the opponents too) reads the same games on another
scale (Spoil Five, five seats: +20.5 head-to-head, +16.4 on the default table; issue #46).
Normalized Elo (fishtest's default) would instead fix how much evidence the bounds stand for
whatever the game's luck, but then ten points would mean a different strength gap in each game,
and a bot author asks about strength.

>>> test = Sprt(elo0=0, elo1=10)
>>> round(test.upper, 3), round(test.lower, 3)
(2.944, -2.944)
>>> status = test.status([0.75, 0.5, 1.0, 0.5, 0.75], sets_grid=(0.0, 0.25, 0.5, 0.75, 1.0))
>>> status.verdict, round(status.llr, 3)
(<Verdict.CONTINUE: 'continue'>, 0.142)
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "MIN_SETS",
    "REGULARIZE",
    "NormalProgress",
    "Progress",
    "Sprt",
    "Status",
    "Stopped",
    "Verdict",
    "elo_of",
    "llr",
    "mle",
    "score_of",
]

REGULARIZE = 1e-3
"""The count given to a value of the grid that no set has had."""
Z_95 = 1.959963984540054
"""The normal quantile of a two-sided 95% interval."""


def score_of(elo: float) -> float:
    """The expected score of a bot ``elo`` points stronger (logistic Elo)."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def elo_of(score: float) -> float:
    """The logistic Elo difference of an expected score (±inf at 1 and 0)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def mle(values: Sequence[float], probabilities: Sequence[float], mean: float) -> list[float]:
    """The distribution over ``values`` with expectation ``mean`` that is likeliest to have given
    the observed ``probabilities`` (every one above 0; ``mean`` strictly between the least and the
    greatest value)."""
    offsets = [value - mean for value in values]
    low, high = -1.0 / max(offsets), -1.0 / min(offsets)  # where every 1 + θ·offset stays > 0
    if not low < 0.0 < high:
        raise ValueError(f"a mean of {mean} is not strictly inside the values {min(values)}..{max(values)}")
    theta = 0.0
    for _ in range(200):  # Newton's steps, kept inside the bracket by bisection
        f = slope = 0.0
        for p, d in zip(probabilities, offsets, strict=True):
            term = d / (1.0 + theta * d)
            f += p * term
            slope -= p * term * term
        if f > 0.0:  # f falls as θ rises: the root lies above
            low = theta
        else:
            high = theta
        if abs(f) < 1e-15 or high - low < 1e-15:
            break
        step = theta - f / slope
        theta = step if low < step < high else (low + high) / 2.0
    return [p / (1.0 + theta * d) for p, d in zip(probabilities, offsets, strict=True)]


def llr(counts: Sequence[tuple[float, float]], s0: float, s1: float) -> float:
    """The generalized log-likelihood ratio of mean ``s1`` against mean ``s0`` for observations
    given as (value, how often) pairs, every count above 0."""
    values = [value for value, _ in counts]
    total = sum(count for _, count in counts)
    observed = [count / total for _, count in counts]
    under_0, under_1 = mle(values, observed, s0), mle(values, observed, s1)
    return total * sum(
        p * (math.log(p1) - math.log(p0)) for p, p0, p1 in zip(observed, under_0, under_1, strict=True)
    )


class Verdict(enum.Enum):
    CONTINUE = "continue"
    H0 = "H0"
    """NEW is not elo1 better: the evidence says elo0 (or less)."""
    H1 = "H1"
    """NEW is better by elo1 (or more)."""


@dataclass(frozen=True, slots=True)
class Status:
    """Where a test stands after ``sets`` sets."""

    sets: int
    llr: float
    lower: float
    upper: float
    verdict: Verdict
    mean: float
    """NEW's mean set score (regularised: never exactly 0 or 1)."""
    spread: float
    """The standard deviation of the set scores."""
    elo: float
    low: float
    high: float
    """The Elo estimate and its 95% interval (normal approximation on the mean set score; not
    corrected for the bias of stopping when a bound is crossed: ``sprt_estimate.simulated`` is)."""


@dataclass(frozen=True, slots=True)
class Sprt:
    """A test of H0: NEW is ``elo0`` better than OLD, against H1: ``elo1`` better, with error
    rates ``alpha`` (accepting H1 under H0) and ``beta`` (accepting H0 under H1)."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not self.elo0 < self.elo1:
            raise ValueError(f"elo0 ({self.elo0:g}) must be below elo1 ({self.elo1:g})")
        for name, rate in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0.0 < rate < 0.5:
                raise ValueError(f"{name} is an error rate between 0 and 0.5, not {rate:g}")
        if not -1000 < self.elo0 < 1000 or not -1000 < self.elo1 < 1000:
            raise ValueError("elo0 and elo1 are differences of a few Elo, within ±1000")

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1.0 - self.beta) / self.alpha)

    def llr(self, counts: Sequence[float], sets_grid: Sequence[float]) -> float:
        """The LLR of sets counted by grid value (``counts[i]`` sets scored ``sets_grid[i]``)."""
        regularised = [(value, count or REGULARIZE) for value, count in zip(sets_grid, counts, strict=True)]
        return llr(regularised, score_of(self.elo0), score_of(self.elo1))

    def brownian(self, counts: Sequence[int], sets_grid: Sequence[float]) -> Stopped:
        """The same read as fishtest reads it, the LLR taken for a Brownian motion (``Stopped``):
        quick, but low where the sets are few and their spread small (issue #46)."""
        return Stopped.of(self, counts, sets_grid)

    def status(self, scores: Sequence[float], sets_grid: Sequence[float]) -> Status:
        """The test after these set scores (each a value of ``sets_grid``), in the order played."""
        return self._status(_counts(scores, sets_grid), sets_grid, len(scores))

    def decide(self, scores: Sequence[float], sets_grid: Sequence[float]) -> Status:
        """The status at the first set whose LLR crossed a bound, or after the last set: a
        sequential test reads the sets in their order and stops at the crossing."""
        progress = Progress(self, sets_grid)
        for score in scores:
            if progress.add(score).verdict is not Verdict.CONTINUE:
                break
        return progress.status

    def _status(
        self, counts: Sequence[int], sets_grid: Sequence[float], sets: int, value: float | None = None
    ) -> Status:
        if value is None:
            value = self.llr(counts, sets_grid) if sets else 0.0
        verdict = (
            Verdict.H1 if value >= self.upper else Verdict.H0 if value <= self.lower else Verdict.CONTINUE
        )
        mean, variance = _moments(counts, sets_grid)
        spread = math.sqrt(variance)
        margin = Z_95 * spread / math.sqrt(max(sets, 1))
        return Status(
            sets=sets,
            llr=value,
            lower=self.lower,
            upper=self.upper,
            verdict=verdict,
            mean=mean,
            spread=spread,
            elo=elo_of(mean),
            low=elo_of(mean - margin),
            high=elo_of(mean + margin),
        )


@dataclass(frozen=True, slots=True)
class Stopped:
    """The Elo estimate of a sequential test, read from where it stopped rather than from the mean
    alone (what ``sprt_estimate.simulated``, the verdict's, returns too). A test that stops when its
    LLR crosses a bound stops early on a lucky run, so the mean of an accepted H1 overstates the gap
    and that of an accepted H0 understates it. Here (``Sprt.brownian``), as fishtest does, the LLR
    is taken for a Brownian motion (drift and variance per set from the sets' mean and spread, Van
    den Bergh's GSPRT approximation) absorbed at the two bounds, and the estimate is the Elo under
    which half of all such tests end worse than this one (stopped later at H1, sooner at H0, or
    lower at the same count); the interval's ends are the same at 2.5% and 97.5%. A test still
    inside its bounds reads the same way, at its count. Median-unbiased only as far as the LLR is
    Brownian: in multi-seat games it ran low (issue #46; docs/testing-bots.md)."""

    elo: float
    low: float
    high: float
    los: float
    """The likelihood that NEW is better at all: the share of tests ending worse under 0 Elo."""

    @classmethod
    def of(cls, test: Sprt, counts: Sequence[int], sets_grid: Sequence[float]) -> Stopped:
        mean, variance = _moments(counts, sets_grid)
        return cls.of_moments(test, sum(counts), mean, variance)

    @classmethod
    def of_moments(cls, test: Sprt, sets: int, mean: float, variance: float) -> Stopped:
        """The same from the sets' count, mean and variance."""
        s0, s1 = score_of(test.elo0), score_of(test.elo1)
        a, b = test.lower, test.upper
        slope = (mean - (s0 + s1) / 2) * (s1 - s0) / variance  # the approximate LLR per set
        time, y = float(sets), sets * slope
        if y <= a or y >= b:  # crossed: the time it crossed at, on the bound
            y = a if y <= a else b
            time = y / slope

        def worse(elo: float) -> float:
            drift = (score_of(elo) - (s0 + s1) / 2) * (s1 - s0) / variance
            return _worse(a, b, drift, (s1 - s0) ** 2 / variance, time, y)

        def at(share: float) -> float:
            """The Elo under which ``share`` of the tests end worse (worse() falls as it rises)."""
            low, high = -1000.0, 1000.0
            if worse(low) <= share:
                return low
            if worse(high) >= share:
                return high
            for _ in range(64):
                middle = (low + high) / 2
                low, high = (middle, high) if worse(middle) > share else (low, middle)
            return (low + high) / 2

        return cls(elo=at(0.5), low=at(0.975), high=at(0.025), los=worse(0.0))


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _worse(a: float, b: float, mu: float, sigma2: float, time: float, y: float) -> float:
    """For a Brownian motion from 0 with drift ``mu`` and variance ``sigma2`` per unit of time,
    absorbed at a < 0 < b: the probability of an end worse than at (``time``, ``y``): absorbed at
    a, below ``y`` at ``time``, or absorbed at b later than ``time`` (the series of the strip's
    eigenfunctions; Siegmund's approximation where the series converges slowly)."""
    width = b - a
    gamma = mu / sigma2
    if sigma2 * time / width**2 < 1e-2 or abs(gamma * width) > 15:
        return _siegmund(a, b, mu, sigma2, time, y)
    x, y = -a, y - a  # measured from the lower bound
    first = (math.pi / width) ** 2 * sigma2 / 2 + mu**2 / sigma2 / 2
    scale = math.exp(-first * time - x * gamma + y * gamma)
    total, n = 0.0, 1
    while True:
        nth = (n * math.pi / width) ** 2 * sigma2 / 2 + mu**2 / sigma2 / 2
        decay = math.exp(-(nth - first) * time)
        k = math.pi * n / width
        # 2/width · e^(−γy) times a primitive of e^(γy)·sin(k·y), at y
        primitive = (2 * width * gamma * math.sin(k * y) - 2 * math.pi * n * math.cos(k * y)) / (
            width**2 * gamma**2 + (math.pi * n) ** 2
        )
        total += decay * primitive * math.sin(k * x)
        if abs(scale * decay * primitive) <= 1e-9:
            break
        n += 1
    if gamma * width > 30:
        ruin = math.exp(-2 * gamma * x)
    elif abs(gamma * width) < 1e-8:
        ruin = (width - x) / width
    else:
        ruin = (1 - math.exp(2 * gamma * (width - x))) / (1 - math.exp(2 * gamma * width))
    return ruin + scale * total


def _siegmund(a: float, b: float, mu: float, sigma2: float, time: float, y: float) -> float:
    root = math.sqrt(time * sigma2)
    offset = mu * time
    gamma = mu / sigma2
    z = (y - offset) / root

    def reflected(bound: float, zed: float) -> float:
        if gamma * bound >= 5:  # the normal tail's expansion: no overflow
            return (
                -math.exp(-(zed**2) / 2 + 2 * gamma * bound) / math.sqrt(2 * math.pi) * (1 / zed - 1 / zed**3)
            )
        return math.exp(2 * gamma * bound) * _phi(zed)

    return _phi(z) + reflected(a, (-y + offset + 2 * a) / root) - reflected(b, (y - offset - 2 * b) / root)


class Progress:
    """A test read set by set, in the order the sets were dealt: once a bound is crossed it has
    decided, and later sets change nothing."""

    def __init__(self, test: Sprt, sets_grid: Sequence[float]) -> None:
        self.test = test
        self.grid = tuple(sets_grid)
        self.counts = [0] * len(self.grid)
        self.status = test._status(self.counts, self.grid, 0)

    def add(self, score: float) -> Status:
        """One more set; the status after it (the decided one, once decided)."""
        if self.status.verdict is Verdict.CONTINUE:
            self.counts[_index(score, self.grid)] += 1
            self.status = self.test._status(self.counts, self.grid, self.status.sets + 1)
        return self.status


MIN_SETS = 30
"""Sets a test on scores off the grid reads before any verdict: its variance is estimated from them."""


class NormalProgress:
    """The test on set scores that are not on a grid (luck-corrected ones, results/luck.py), set by
    set: the GSPRT of a normal model with the sets' variance plugged in, fishtest's normalised form,
    LLR = n (s1 − s0) (2 x̄ − s0 − s1) / (2 σ²) with x̄ and σ² the sets' mean and variance; no
    verdict before ``minimum`` sets.

    >>> progress = NormalProgress(Sprt(elo0=0, elo1=10), minimum=2)
    >>> progress.add(0.75).verdict, round(progress.add(0.55).llr, 4)
    (<Verdict.CONTINUE: 'continue'>, 0.4109)
    """

    def __init__(self, test: Sprt, minimum: int = MIN_SETS) -> None:
        self.test, self.minimum = test, minimum
        self.sum = self.squares = 0.0
        self.status = self._status(0)

    def add(self, score: float) -> Status:
        """One more set; the status after it (the decided one, once decided)."""
        if self.status.verdict is Verdict.CONTINUE:
            self.sum += score
            self.squares += score * score
            self.status = self._status(self.status.sets + 1)
        return self.status

    def moments(self, sets: int) -> tuple[float, float]:
        if not sets:
            return 0.5, 0.25
        mean = self.sum / sets
        return mean, max(self.squares / sets - mean * mean, 1e-4)  # a floor: the first sets may agree exactly

    def stopped(self) -> Stopped:
        return Stopped.of_moments(self.test, self.status.sets, *self.moments(self.status.sets))

    def _status(self, sets: int) -> Status:
        test = self.test
        mean, variance = self.moments(sets)
        s0, s1 = score_of(test.elo0), score_of(test.elo1)
        value = sets * (s1 - s0) * (2 * mean - s0 - s1) / (2 * variance) if sets else 0.0
        verdict = Verdict.CONTINUE
        if sets >= self.minimum:
            verdict = Verdict.H1 if value >= test.upper else Verdict.H0 if value <= test.lower else verdict
        margin = Z_95 * math.sqrt(variance / max(sets, 1))
        return Status(
            sets=sets, llr=value, lower=test.lower, upper=test.upper, verdict=verdict, mean=mean,
            spread=math.sqrt(variance), elo=elo_of(mean),
            low=elo_of(mean - margin), high=elo_of(mean + margin),
        )  # fmt: skip


def _moments(counts: Sequence[int], sets_grid: Sequence[float]) -> tuple[float, float]:
    """The mean and variance of the set scores counted by grid value, regularised as the LLR is."""
    weights = [count or REGULARIZE for count in counts]
    total = sum(weights)
    mean = sum(w * v for w, v in zip(weights, sets_grid, strict=True)) / total
    return mean, sum(w * (v - mean) ** 2 for w, v in zip(weights, sets_grid, strict=True)) / total


def _index(score: float, sets_grid: Sequence[float]) -> int:
    index = min(range(len(sets_grid)), key=lambda i: abs(sets_grid[i] - score))
    if abs(sets_grid[index] - score) > 1e-9:
        raise ValueError(f"a set score of {score} is not one of {list(sets_grid)}")
    return index


def _counts(scores: Sequence[float], sets_grid: Sequence[float]) -> list[int]:
    counts = [0] * len(sets_grid)
    for score in scores:
        counts[_index(score, sets_grid)] += 1
    return counts
