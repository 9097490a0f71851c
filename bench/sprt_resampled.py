"""Sequential tests drawn from a distribution of set scores, many at once (numpy): the candidate
tests side by side on the same draws, for bench/sprt_calibration.py.

Each candidate reads the sets in order and stops at its first crossing of Wald's bounds:

- ``gsprt``: today's test (results/sprt.py), the GSPRT of the sets' distribution over the grid,
  H0 and H1 each the fitted distribution with its mean (unseen grid values count 1e-3);
- ``normal``: fishtest's normalised GSPRT, n (s1 − s0)(2x̄ − s0 − s1) / (2σ²) with the sets'
  mean and variance, no verdict before 30 sets (``sprt.NormalProgress``'s test);
- ``one-sided``: the GSPRT of H1 "the mean is s1 or more" against H0 "s0 or less": today's LLR
  while the mean lies between s0 and s1, the fit at the mean itself on the side it passed.

A distribution at a given Elo is the one nearest a pool of sets with that mean (sprt.mle, the
fit the GSPRT itself makes), so the tests run at elo0 and elo1 on the pool's own shape.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from croupier.clients.results.sprt import MIN_SETS, REGULARIZE, Sprt, mle, score_of

Floats = npt.NDArray[np.float64]
TESTS = ("gsprt", "normal", "one-sided")


def at_elo(values: Sequence[float], counts: Sequence[float], elo: float) -> Floats:
    """The distribution over ``values`` nearest the counted sets with the mean of ``elo``."""
    weights = [count or REGULARIZE for count in counts]
    return np.array(mle(list(values), [w / sum(weights) for w in weights], score_of(elo)))


def _log_ratio(p: Floats, values: Floats, mean: Floats) -> Floats:
    """Σ p̂ log(p̂ / p_mean) per row: how far each row's sets are from the fit with that mean
    (sprt.mle's Newton steps, every row at once)."""
    d = values[None, :] - mean[:, None]
    low, high = -1.0 / d.max(axis=1), -1.0 / d.min(axis=1)
    theta = np.zeros(len(mean))
    for _ in range(80):
        term = d / (1.0 + theta[:, None] * d)
        f = (p * term).sum(axis=1)
        slope = -(p * term * term).sum(axis=1)
        low, high = np.where(f > 0, theta, low), np.where(f > 0, high, theta)
        if np.all((np.abs(f) < 1e-12) | (high - low < 1e-12)):  # every row at its root (to the LLR's 1e-9)
            break
        step = theta - f / slope
        theta = np.where((step > low) & (step < high), step, (low + high) / 2)
    return np.asarray((p * np.log1p(theta[:, None] * d)).sum(axis=1))


def llr(test: str, counts: Floats, values: Floats, s0: float, s1: float) -> Floats:
    """Each row's statistic for ``test`` after the sets counted in it."""
    n = counts.sum(axis=1)
    if test == "normal":  # NormalProgress's: the plain mean and variance, the variance floored
        mean = (counts * values).sum(axis=1) / n
        variance = np.maximum((counts * values * values).sum(axis=1) / n - mean * mean, 1e-4)
        return np.asarray(n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * variance))
    weights = np.where(counts > 0, counts, REGULARIZE)
    n = weights.sum(axis=1)  # as Sprt.llr counts them: the regularised counts too
    p = weights / n[:, None]
    mean = (p * values).sum(axis=1)
    low, high = np.full(len(n), s0), np.full(len(n), s1)
    if test == "one-sided":
        low, high = np.minimum(mean, s0), np.maximum(mean, s1)
    return np.asarray(n * (_log_ratio(p, values, low) - _log_ratio(p, values, high)))


@dataclass(frozen=True)
class Runs:
    """Tests of one candidate on the same draws: per test, +1 (H1), −1 (H0) or 0 (undecided at
    the cap), the sets read, the sets counted by grid value where it stopped."""

    verdicts: npt.NDArray[np.int64]
    sets: npt.NDArray[np.int64]
    counts: Floats
    last: Floats
    """The statistic where each stopped."""


def run(test: str, sprt: Sprt, values: Sequence[float], q: Floats, tests: int, cap: int, seed: int) -> Runs:
    """``tests`` tests of ``test`` on sets drawn from ``q`` over ``values`` (the same draws for the
    same seed), each to its verdict or ``cap`` sets."""
    grid = np.asarray(values, dtype=float)
    draws = np.random.default_rng(seed).choice(len(grid), size=(tests, cap), p=q / q.sum())
    s0, s1 = score_of(sprt.elo0), score_of(sprt.elo1)
    minimum = MIN_SETS if test == "normal" else 1
    counts = np.zeros((tests, len(grid)))
    verdicts = np.zeros(tests, dtype=np.int64)
    sets = np.full(tests, cap, dtype=np.int64)
    last = np.zeros(tests)
    active = np.arange(tests)
    for i in range(cap):
        if not len(active):
            break
        counts[active, draws[active, i]] += 1
        value = llr(test, counts[active], grid, s0, s1)
        last[active] = value
        if i + 1 < minimum:
            continue
        up, down = value >= sprt.upper, value <= sprt.lower
        verdicts[active[up]], verdicts[active[down]] = 1, -1
        sets[active[up | down]] = i + 1
        active = active[~(up | down)]
    return Runs(verdicts, sets, counts, last)


def fixed_sets(sprt: Sprt, values: Sequence[float], q: Floats) -> int:
    """The sets a fixed-size one-sided z-test of the mean set score needs for the same α, β and
    gap, at the spread of ``q``: ((z_α + z_β) σ / (s1 − s0))²."""
    from statistics import NormalDist

    grid = np.asarray(values)
    mean = float((q * grid).sum())
    sigma = math.sqrt(float((q * (grid - mean) ** 2).sum()))
    z = NormalDist().inv_cdf(1 - sprt.alpha) + NormalDist().inv_cdf(1 - sprt.beta)
    return math.ceil((z * sigma / (score_of(sprt.elo1) - score_of(sprt.elo0))) ** 2)
