"""bench/sprt_resampled.py draws thousands of sequential tests at once with its own numpy copy of
each candidate's statistic: its calibration rows are about the real tests only if the copies are
the tests' own."""

from __future__ import annotations

import random

import numpy as np
import pytest

from bench import sprt_resampled
from croupier.clients.results.sets import grid
from croupier.clients.results.sprt import MIN_SETS, NormalProgress, Sprt, Verdict, score_of

TEST = Sprt(0, 10)
S0, S1 = score_of(TEST.elo0), score_of(TEST.elo1)


def random_counts(values: tuple[float, ...], seed: int) -> list[int]:
    rng = random.Random(seed)
    counts = [rng.randrange(0, 40) for _ in values]
    counts[rng.randrange(len(values))] = 0  # an unseen value: regularised
    return counts


@pytest.mark.parametrize("rotations", [2, 6])
def test_the_bench_s_gsprt_is_sprt_s_llr(rotations: int) -> None:
    values = grid(rotations)
    rows = [random_counts(values, seed) for seed in range(8)]
    copied = sprt_resampled.llr("gsprt", np.array(rows, dtype=float), np.array(values), S0, S1)
    assert list(copied) == pytest.approx([TEST.llr(row, values) for row in rows], abs=1e-9)


def test_the_one_sided_gsprt_is_the_gsprt_between_the_hypotheses_and_larger_beyond() -> None:
    values = np.array(grid(2))
    between = np.array([[0, 10, 80, 11, 0]], dtype=float)  # mean 0.503, between s0 and s1
    beyond = np.array([[0, 5, 60, 30, 5]], dtype=float)  # mean 0.575, past s1
    for counts in (between, beyond):
        one_sided = sprt_resampled.llr("one-sided", counts, values, S0, S1)[0]
        gsprt = sprt_resampled.llr("gsprt", counts, values, S0, S1)[0]
        assert one_sided == pytest.approx(gsprt) if counts is between else one_sided > gsprt + 0.1


def test_the_bench_s_normal_test_is_normal_progress_and_waits_for_its_minimum() -> None:
    values = (0.0, 1.0)  # every set won: no verdict before the minimum, then H1 at once
    q = np.array([0.0, 1.0])
    runs = sprt_resampled.run("normal", TEST, values, q, tests=3, cap=MIN_SETS + 5, seed=1)
    assert list(runs.verdicts) == [1, 1, 1] and list(runs.sets) == [MIN_SETS] * 3
    progress = NormalProgress(TEST)
    scores = [0.5, 0.75, 0.5, 0.25, 1.0, 0.75, 0.5, 0.5]
    for score in scores:
        status = progress.add(score)
    counts = np.array([[scores.count(v) for v in grid(2)]], dtype=float)
    copied = sprt_resampled.llr("normal", counts, np.array(grid(2)), S0, S1)[0]
    assert status.verdict is Verdict.CONTINUE and copied == pytest.approx(status.llr, rel=1e-12)
