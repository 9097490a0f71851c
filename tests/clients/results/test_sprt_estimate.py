"""The verdict's Elo estimate (clients/results/sprt_estimate.py) on tests drawn from
a known distribution of five-seat set scores: median-unbiased and its 95% interval right, where the
Brownian reading ran low and over-covered (issue #46); and the line ``croupier match --sprt`` ends
with prints it."""

from __future__ import annotations

import random
import statistics

import pytest

from bench import sprt_resampled
from croupier.clients.author.sprt_plan import SprtPlan, estimate
from croupier.clients.author.sprt_run import _settings
from croupier.clients.results.sets import grid
from croupier.clients.results.sprt import Sprt, Stopped, Verdict
from croupier.clients.results.sprt_estimate import simulated
from croupier.clients.tournament.config import parse

TEST = Sprt(elo0=0, elo1=10)
FIVE_SEATS = grid(10)  # ten rotations: 0, 1/20 ... 1
NARROW = [0] * 8 + [1, 4, 160, 6, 20, 6, 2, 1] + [0] * 5
"""A five-seat pool's shape (Spoil Five's: most sets even, a few a little either way), narrower."""
TRUTH = 20.5
"""Twice elo1: the tests stop at the GSPRT's floor, where the Brownian reading runs low."""


@pytest.fixture(scope="module")
def read() -> list[Stopped]:
    """The estimates of 200 tests drawn under TRUTH (the same draws every run), each read from
    the sets it stopped at."""
    q = sprt_resampled.at_elo(FIVE_SEATS, NARROW, TRUTH)
    runs = sprt_resampled.run("gsprt", TEST, FIVE_SEATS, q, 200, 2000, seed=11)
    assert (runs.verdicts == 1).all()
    return [simulated(TEST, [int(c) for c in row], FIVE_SEATS) for row in runs.counts]


def test_the_estimate_read_from_the_stop_is_median_unbiased(read: list[Stopped]) -> None:
    below = sum(s.elo < TRUTH for s in read) / len(read)
    assert 0.42 <= below <= 0.58, f"below the truth in {below:.0%} of the tests"  # the Brownian: 63%
    assert statistics.median(s.elo for s in read) == pytest.approx(TRUTH, abs=1.0)  # the Brownian: 19.1


def test_its_95_percent_interval_holds_the_truth_95_times_in_100(read: list[Stopped]) -> None:
    held = sum(s.low <= TRUTH <= s.high for s in read) / len(read)
    assert 0.91 <= held <= 0.97, f"held it in {held:.1%}"  # the Brownian: 97.5%


def test_the_same_sets_give_the_same_estimate() -> None:
    counts = [0] * 8 + [1, 3, 70, 5, 18, 4, 2, 1] + [0] * 5
    assert simulated(TEST, counts, FIVE_SEATS) == simulated(TEST, counts, FIVE_SEATS)


def test_the_verdict_s_line_prints_the_estimate_read_from_the_stop() -> None:
    names = ["new", "old", "a", "b", "c"]
    specs = ["heuristic", "random", "heuristic", "heuristic", "heuristic"]
    config = parse(_settings("spoil_five", names, specs, {"players": 5}, 1, 20_000, True))
    plan = SprtPlan(TEST, config, "new", "old", 2000, bytes(32))
    rng = random.Random(5)
    weights = [c + 0.01 for c in NARROW]
    while plan.progress.add(rng.choices(FIVE_SEATS, weights)[0]).verdict is Verdict.CONTINUE:
        pass
    counts = list(plan.progress.counts)
    new, old = simulated(TEST, counts, FIVE_SEATS), TEST.brownian(counts, FIVE_SEATS)
    assert abs(new.elo - old.elo) > 0.5  # the two readings differ here: the line says which
    assert estimate(plan) == (
        f"Elo of new over old: {new.elo:+.1f} (95% interval {new.low:+.1f} to "
        f"{new.high:+.1f}, read from where the test stopped), LOS {new.los:.1%}"
    )
