"""The sequential test's statistic on constructed set-score sequences: LLR values published by
fastchess (its tests of fishtest's model), LLR values found here by a plain numerical
maximisation of the likelihood, and where a sequence crosses a bound."""

from __future__ import annotations

import math
import random

import pytest

from croupier.clients.results.sets import grid, set_score
from croupier.clients.results.sprt import MIN_SETS, NormalProgress, Sprt, Verdict, score_of

PENTANOMIAL = grid(2)  # two seats, two rotations: 0, ¼, ½, ¾, 1
TRINOMIAL = grid(1)  # one match per "set": 0, ½, 1


@pytest.mark.parametrize(
    ("elo0", "elo1", "counts", "published"),
    [
        # fastchess app/tests/sprt_test.cpp, "logistic pentanomial 1" and "2": LL, LD, WL+DD, WD, WW
        (0.5, 2.5, [223, 9863, 20279 + 1000, 10037, 246], -3.07),
        (0.0, 2.0, [871, 26175, 55003 + 980, 26678, 821], -4.98),
    ],
)
def test_the_llr_of_game_pairs_is_the_one_fishtest_s_model_gives(
    elo0: float, elo1: float, counts: list[int], published: float
) -> None:
    assert Sprt(elo0, elo1).llr(counts, PENTANOMIAL) == pytest.approx(published, abs=0.01)


@pytest.mark.parametrize(
    ("elo0", "elo1", "counts", "published"),
    [
        # "logistic trinomial 1" and "2": losses, draws, wins
        (0.5, 2.5, [21184, 40708, 21404], -1.57),
        (0.0, 2.0, [57030, 106593, 57433], -2.59),
    ],
)
def test_the_llr_of_single_games_is_the_one_fishtest_s_model_gives(
    elo0: float, elo1: float, counts: list[int], published: float
) -> None:
    assert Sprt(elo0, elo1).llr(counts, TRINOMIAL) == pytest.approx(published, abs=0.01)


def best_log_likelihood(counts: list[float], mean: float) -> float:
    """The greatest log-likelihood of counts of 0, ½ and 1 among the distributions with this
    mean, by golden-section search along the one free parameter (the share of 1s, t: then ½ has
    2(mean - t) and 0 has 1 - 2·mean + t), not by the secular equation the module solves."""
    low, high = max(0.0, 2 * mean - 1), mean  # every share at least 0

    def log_likelihood(t: float) -> float:
        shares = (1 - 2 * mean + t, 2 * (mean - t), t)
        return sum(n * math.log(p) for n, p in zip(counts, shares, strict=True) if n)

    golden = (math.sqrt(5) - 1) / 2
    a, b = low + 1e-15, high - 1e-15
    for _ in range(200):
        c, d = b - golden * (b - a), a + golden * (b - a)
        if log_likelihood(c) > log_likelihood(d):
            b = d
        else:
            a = c
    return log_likelihood((a + b) / 2)


@pytest.mark.parametrize("seed", range(8))
def test_the_llr_is_the_difference_of_the_two_constrained_maxima_of_the_likelihood(seed: int) -> None:
    rng = random.Random(seed)
    counts = [rng.randint(1, 400) for _ in range(3)]
    elo0 = rng.uniform(-20, 10)
    elo1 = elo0 + rng.uniform(1, 30)
    expected = best_log_likelihood(counts, score_of(elo1)) - best_log_likelihood(counts, score_of(elo0))
    assert Sprt(elo0, elo1).llr(counts, TRINOMIAL) == pytest.approx(expected, abs=1e-6)


def first_crossing(scores: list[float], test: Sprt) -> tuple[int, Verdict]:
    """Where the independently maximised LLR first leaves the bounds (scores of 0, ½ and 1)."""
    counts = [0.0, 0.0, 0.0]
    for played, score in enumerate(scores, start=1):
        counts[int(score * 2)] += 1
        regularised = [n or 1e-3 for n in counts]
        value = best_log_likelihood(regularised, score_of(test.elo1)) - best_log_likelihood(
            regularised, score_of(test.elo0)
        )
        if value >= test.upper:
            return played, Verdict.H1
        if value <= test.lower:
            return played, Verdict.H0
    return len(scores), Verdict.CONTINUE


@pytest.mark.parametrize(("share", "verdict"), [(0.62, Verdict.H1), (0.40, Verdict.H0)])
def test_the_test_stops_at_the_first_set_whose_llr_crosses_a_bound(share: float, verdict: Verdict) -> None:
    rng = random.Random(11)
    scores = [1.0 if rng.random() < share else 0.5 if rng.random() < 0.2 else 0.0 for _ in range(3000)]
    test = Sprt(0, 30)
    played, expected = first_crossing(scores, test)
    assert expected is verdict
    status = test.decide(scores, TRINOMIAL)
    assert (status.sets, status.verdict) == (played, verdict)
    assert test.decide(scores[:played], TRINOMIAL) == status  # what came after it changes nothing
    assert test.decide(scores[: played - 1], TRINOMIAL).verdict is Verdict.CONTINUE


def test_twins_that_always_split_a_deal_evenly_accept_h0() -> None:
    status = Sprt(0, 10).decide([0.5] * 5000, PENTANOMIAL)
    assert status.verdict is Verdict.H0
    assert status.elo == pytest.approx(0, abs=0.01)
    assert status.spread == pytest.approx(0, abs=0.01)


def test_the_elo_estimate_and_its_interval_come_from_the_mean_set_score() -> None:
    scores = [0.75] * 60 + [0.25] * 40  # mean 0.55, spread 0.245
    status = Sprt(0, 10).status(scores, PENTANOMIAL)
    assert status.mean == pytest.approx(0.55, abs=1e-4)
    assert status.elo == pytest.approx(-400 * math.log10(1 / 0.55 - 1), abs=0.05)
    margin = 1.96 * status.spread / 10
    assert status.low == pytest.approx(-400 * math.log10(1 / (0.55 - margin) - 1), abs=0.05)
    assert status.high == pytest.approx(-400 * math.log10(1 / (0.55 + margin) - 1), abs=0.05)


# fishtest's sprt(0.05, 0.05, 0, 10).analytics(0.05) on the same game-pair counts (LL, LD+DL, ...,
# WW; official-stockfish/fishtest server/fishtest/stats/sprt.py at master, run with scipy): the
# estimate, the interval's ends, the LOS
FISHTEST_STOPPED = {
    (10, 200, 1500, 300, 20): (8.644238, -0.574279, 17.351430, 0.967455),  # crossed the upper bound
    (20, 300, 1200, 250, 10): (-5.168777, -17.916649, 7.835093, 0.215803),  # crossed the lower one
    (1, 10, 60, 20, 3): (25.920847, 1.869606, 50.223050, 0.982683),  # still between them
    (2, 10, 400, 30, 0): (5.583656, -1.213048, 11.835812, 0.950931),  # a count of 0: regularised
    (0, 0, 3, 5, 2): (168.297603, 82.323586, 279.740683, 0.999975),  # ten pairs: Siegmund's branch
}


@pytest.mark.parametrize("counts", list(FISHTEST_STOPPED))
def test_the_brownian_reading_of_the_stop_is_fishtest_s(counts: tuple[int, ...]) -> None:
    stopped = Sprt(0, 10).brownian(counts, PENTANOMIAL)
    elo, low, high, los = FISHTEST_STOPPED[counts]
    # to the tenth printed: the two root finders stop at different points of the same function
    assert (stopped.elo, stopped.low, stopped.high) == pytest.approx((elo, low, high), abs=0.02)
    assert stopped.los == pytest.approx(los, abs=1e-5)


@pytest.mark.parametrize(
    ("counts", "verdict"), [((10, 200, 1500, 300, 20), Verdict.H1), ((20, 300, 1200, 250, 10), Verdict.H0)]
)
def test_the_brownian_reading_pulls_the_estimate_back_from_the_bound_it_crossed_and_widens_it(
    counts: tuple[int, ...], verdict: Verdict
) -> None:
    test = Sprt(0, 10)
    scores = [value for value, n in zip(PENTANOMIAL, counts, strict=True) for _ in range(n)]
    raw, stopped = test.status(scores, PENTANOMIAL), test.brownian(counts, PENTANOMIAL)
    assert raw.verdict is verdict
    assert (stopped.elo < raw.elo) if verdict is Verdict.H1 else (stopped.elo > raw.elo)
    assert stopped.high - stopped.low > raw.high - raw.low


def test_a_score_off_the_grid_and_bad_bounds_are_refused() -> None:
    with pytest.raises(ValueError, match="not one of"):
        Sprt(0, 10).status([0.3], PENTANOMIAL)
    with pytest.raises(ValueError, match=r"elo0 .* must be below elo1"):
        Sprt(10, 0)
    with pytest.raises(ValueError, match="alpha is an error rate"):
        Sprt(0, 10, alpha=0.7)


def test_a_set_s_score_is_the_pairwise_points_of_its_rotations_normalised() -> None:
    four_seats = [  # NEW and OLD among two others, in four rotations
        {"new": 1, "old": 3, "a": 2, "b": 4},
        {"new": 2, "old": 2, "a": 1, "b": 4},  # a shared place: half a point
        {"new": 4, "old": 1, "a": 2, "b": 3},
        {"new": 3, "old": 4, "a": 1, "b": 2},  # neither won: NEW still beat OLD
    ]
    assert set_score(four_seats, "new", "old") == (1 + 0.5 + 0 + 1) / 4
    assert set_score(four_seats, "old", "new") == 1 - set_score(four_seats, "new", "old")
    assert set_score(four_seats, "new", "old") in grid(4)


def test_corrected_scores_read_by_the_normal_gsprt_give_fishtest_s_normalised_llr() -> None:
    """Scores off the grid (luck-corrected): LLR = n (s1 − s0)(2x̄ − s0 − s1) / (2σ²), with the
    sets' mean and (population) variance, and its verdict where it crosses a bound."""
    rng = random.Random(4)
    scores = [rng.gauss(0.56, 0.2) for _ in range(300)]
    progress = NormalProgress(Sprt(0, 10))
    for n, score in enumerate(scores, 1):
        status = progress.add(score)
        seen = scores[:n]
        mean = sum(seen) / n
        variance = max(sum((x - mean) ** 2 for x in seen) / n, 1e-4)
        s0, s1 = 0.5, score_of(10)
        assert status.llr == pytest.approx(n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * variance), rel=1e-9)
        if status.verdict is not Verdict.CONTINUE:
            break
    assert status.verdict is Verdict.H1 and status.sets >= MIN_SETS


def test_no_verdict_before_the_normal_test_has_its_minimum_of_sets() -> None:
    """The first sets may agree closely: their variance is no estimate yet, whatever the LLR says."""
    progress = NormalProgress(Sprt(0, 10))
    for _ in range(MIN_SETS - 1):
        assert progress.add(1.0).verdict is Verdict.CONTINUE
    assert progress.add(0.9).verdict is Verdict.H1
