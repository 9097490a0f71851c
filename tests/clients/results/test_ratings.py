"""The rating fit against cases computed by hand, and its bootstrap intervals."""

from __future__ import annotations

import io
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from croupier.clients.results.ratings import (
    DEFAULT_PRIOR,
    REFIT_BOTS,
    Bootstrap,
    Model,
    RatedSet,
    Resample,
    Tally,
    anchored_fit,
    bootstrap,
    choices,
    fit,
    fit_elo,
    log_likelihood,
    merged,
    pairwise_results,
    rate,
    set_choices,
    widen,
)
from croupier.clients.results.ratings_cli import RatingProgress
from croupier.clients.results.report import ratings_table


def elo_gap(share: float) -> float:
    """The Elo difference at which the stronger side's expected share is ``share``."""
    return 400 * math.log10(share / (1 - share))


def test_a_ranking_of_three_is_three_pairwise_results() -> None:
    assert pairwise_results({"c": 3, "a": 1, "b": 2}) == [("a", "b", 1.0), ("a", "c", 1.0), ("b", "c", 1.0)]


def test_a_shared_place_is_half_a_win_each_way() -> None:
    assert pairwise_results({"a": 2, "b": 1, "c": 1}) == [("a", "b", 0.0), ("a", "c", 0.0), ("b", "c", 0.5)]


def test_two_players_three_wins_in_four_are_log10_3_times_400_apart_around_1500() -> None:
    tally = Tally([{"a": 1, "b": 2}] * 3 + [{"a": 2, "b": 1}])
    elo = fit_elo(tally, prior=0)
    # P(a beats b) = 3/4 at the maximum: a gap of 400 log10(3) = 190.85, split around the 1500 anchor
    assert elo["a"] == pytest.approx(1500 + 200 * math.log10(3), abs=1e-6)
    assert elo["b"] == pytest.approx(1500 - 200 * math.log10(3), abs=1e-6)


def test_the_prior_adds_virtual_draws_per_pair() -> None:
    tally = Tally([{"a": 1, "b": 2}] * 3 + [{"a": 2, "b": 1}])
    elo = fit_elo(tally, prior=1.0)  # 3.5 of 5: the odds are 3.5 / 1.5
    assert elo["a"] - elo["b"] == pytest.approx(400 * math.log10(3.5 / 1.5), abs=1e-6)


def test_three_player_rankings_fit_strengths_4_2_1() -> None:
    # 15 three-player matches whose pairwise tallies are exactly what strengths 4:2:1 predict:
    # a beats b 10 of 15 (4/6), b beats c 10 of 15 (2/3), a beats c 12 of 15 (4/5).
    matches = (
        [{"a": 1, "b": 2, "c": 3}] * 8
        + [{"a": 1, "c": 2, "b": 3}] * 2
        + [{"b": 1, "a": 2, "c": 3}] * 2
        + [{"c": 1, "b": 2, "a": 3}] * 3
    )
    elo = fit_elo(Tally(matches), prior=0)
    step = 400 * math.log10(2)  # 120.41 Elo per doubling of strength
    assert elo["a"] == pytest.approx(1500 + step, abs=1e-6)
    assert elo["b"] == pytest.approx(1500, abs=1e-6)
    assert elo["c"] == pytest.approx(1500 - step, abs=1e-6)


def test_one_clean_ranking_of_three_with_the_prior() -> None:
    # a > b > c once; with one virtual draw per pair every pair stands 1.5 to 0.5. By symmetry the
    # gaps are equal (d); a's likelihood equation p(d) + p(2d) = 1.5 with q = 10^(d/400) gives
    # q^3 - q^2 - q - 3 = 0.
    elo = fit_elo(Tally([{"a": 1, "b": 2, "c": 3}]), prior=1.0)
    d = elo["a"] - elo["b"]
    assert elo["b"] - elo["c"] == pytest.approx(d, abs=1e-6)
    assert elo["b"] == pytest.approx(1500, abs=1e-6)
    q = 10 ** (d / 400)
    assert q**3 - q**2 - q - 3 == pytest.approx(0, abs=1e-9)


def test_the_mean_is_anchored_at_1500() -> None:
    elo = fit_elo(Tally([{"a": 1, "b": 2, "c": 3, "d": 3}, {"d": 1, "c": 2, "a": 3, "b": 4}] * 2))
    assert sum(elo.values()) / len(elo) == pytest.approx(1500)


def test_without_a_prior_a_perfect_record_has_no_finite_rating() -> None:
    with pytest.raises(ValueError, match="won or lost every result"):
        fit_elo(Tally([{"a": 1, "b": 2}] * 3), prior=0)


def test_with_the_prior_a_perfect_record_is_finite_and_ahead() -> None:
    elo = fit_elo(Tally([{"a": 1, "b": 2}] * 3), prior=1.0)
    assert elo["a"] - elo["b"] == pytest.approx(elo_gap(3.5 / 4))
    elo = fit_elo(Tally([{"a": 1, "b": 2}] * 3))  # the default: a tenth of a draw, 3.05 of 3.1
    assert elo["a"] - elo["b"] == pytest.approx(elo_gap(3.05 / 3.1))


def test_the_default_prior_keeps_the_gap_the_head_to_head_score_implies() -> None:
    tally = Tally([{"a": 1, "b": 2}] * 9 + [{"a": 2, "b": 1}])  # 9 of 10: 382 Elo
    assert DEFAULT_PRIOR == 0.1
    assert fit_elo(tally)["a"] - fit_elo(tally)["b"] == pytest.approx(elo_gap(9.05 / 10.1))  # 374
    assert elo_gap(0.9) - (fit_elo(tally)["a"] - fit_elo(tally)["b"]) < 10
    one_draw = fit_elo(tally, prior=1.0)
    assert elo_gap(0.9) - (one_draw["a"] - one_draw["b"]) > 60  # 9.5 of 11: 321


def test_groups_that_never_met_are_each_anchored_at_1500() -> None:
    elo = fit_elo(Tally([{"a": 1, "b": 2}, {"c": 1, "d": 2}, {"c": 1, "d": 2}]))
    assert elo["a"] + elo["b"] == pytest.approx(3000)
    assert elo["c"] + elo["d"] == pytest.approx(3000)
    assert elo["c"] > elo["a"]


def test_the_table_is_sorted_best_first_with_intervals_around_the_estimate() -> None:
    sets = [[{"a": 1, "b": 2, "c": 3}, {"b": 1, "a": 2, "c": 3}, {"a": 1, "c": 2, "b": 3}]] * 3 + [
        [{"c": 1, "a": 2, "b": 3}, {"b": 1, "c": 2, "a": 3}, {"a": 1, "b": 2, "c": 3}]
    ] * 2
    table = rate(sets, samples=300, seed=7)
    assert [row.bot for row in table] == ["a", "b", "c"]
    for row in table:
        assert row.low is not None and row.high is not None
        assert row.low <= row.elo <= row.high
    assert table[0].games == 15 * 2  # 15 matches, two opponents each
    assert table[0].points == 3 * (2 + 1 + 2) + 2 * (1 + 0 + 2)  # pairwise points of a, set by set
    assert table[-1].los_next is None
    assert all(0.5 <= row.los_next <= 1 for row in table[:-1] if row.los_next is not None)


def test_the_bootstrap_is_reproducible_from_its_seed() -> None:
    sets = [[{"a": 1, "b": 2}, {"b": 1, "a": 2}], [{"a": 1, "b": 2}, {"a": 1, "b": 2}]] * 3
    assert rate(sets, samples=100, seed=3) == rate(sets, samples=100, seed=3)


def test_one_duplicate_set_gives_no_interval() -> None:
    (a, b) = rate([[{"a": 1, "b": 2}, {"a": 1, "b": 2}]])
    assert (a.low, a.high, a.los_next) == (None, None, None)
    assert a.elo > b.elo


def test_likelihood_of_superiority_is_high_for_a_clear_lead() -> None:
    sets = [[{"a": 1, "b": 2}, {"a": 1, "b": 2}]] * 9 + [[{"a": 2, "b": 1}, {"a": 1, "b": 2}]]
    (a, _) = rate(sets, samples=200)
    assert a.los_next == 1.0


rankings = st.lists(
    st.permutations(["a", "b", "c", "d"]).flatmap(
        lambda order: st.integers(2, 4).map(
            lambda n: {bot: place for place, bot in enumerate(order[:n], start=1)}
        )
    ),
    min_size=1,
    max_size=30,
)


@settings(deadline=None)  # a loaded machine is no failure
@given(rankings, st.randoms(use_true_random=False))
def test_ratings_do_not_depend_on_the_order_of_the_matches(
    matches: list[dict[str, int]], rng: random.Random
) -> None:
    shuffled = list(matches)
    rng.shuffle(shuffled)
    first, second = fit_elo(Tally(matches)), fit_elo(Tally(shuffled))
    assert first.keys() == second.keys()
    assert all(first[bot] == pytest.approx(second[bot], abs=1e-6) for bot in first)


@settings(deadline=None)  # a loaded machine is no failure
@given(rankings)
def test_the_fit_meets_every_bots_likelihood_equation(matches: list[dict[str, int]]) -> None:
    # at the maximum, each bot's points (virtual draws included) equal the points the ratings expect
    tally = Tally(matches)
    elo = fit_elo(tally, prior=1.0)  # one virtual draw per pair: half a point of it to each side
    for bot in elo:
        observed = expected = 0.0
        for (a, b), n in tally.games.items():
            if bot not in (a, b):
                continue
            other = b if bot == a else a
            points = tally.points[a, b] if bot == a else n - tally.points[a, b]
            observed += points + 0.5
            expected += (n + 1) / (1 + 10 ** ((elo[other] - elo[bot]) / 400))
        assert observed == pytest.approx(expected, abs=1e-6)


def test_plackett_luce_recovers_strengths_4_2_1_from_the_rankings_they_predict() -> None:
    # P(a > b > c) = 4/7 * 2/3 and so on: the six orders in 105 matches exactly as often as predicted
    counts = {"abc": 40, "acb": 20, "bac": 24, "bca": 6, "cab": 10, "cba": 5}
    matches = [
        {bot: place for place, bot in enumerate(order, 1)} for order, n in counts.items() for _ in range(n)
    ]
    elo = fit(merged(choices(places, Model.PLACKETT_LUCE) for places in matches), prior=0)
    step = 400 * math.log10(2)
    assert (elo["a"], elo["b"], elo["c"]) == pytest.approx((1500 + step, 1500, 1500 - step), abs=1e-6)


def test_with_two_players_and_no_shared_place_plackett_luce_is_the_pairwise_fit() -> None:
    matches = [{"a": 1, "b": 2}] * 5 + [{"b": 1, "a": 2}] * 2 + [{"b": 1, "c": 2}] * 3 + [{"c": 1, "a": 2}]
    pairwise = fit_elo(Tally(matches))
    luce = fit(merged(choices(places, Model.PLACKETT_LUCE) for places in matches))
    assert luce == pytest.approx(pairwise)


def test_a_shared_place_is_chosen_together_from_the_same_field() -> None:
    found = choices({"a": 1, "b": 1, "c": 3, "d": 4}, Model.PLACKETT_LUCE)
    assert found == {(("a", "b"), ("a", "b", "c", "d")): 1, (("c",), ("c", "d")): 1}
    assert choices({"a": 2, "b": 1}, Model.PAIRWISE) == {(("b",), ("a", "b")): 1.0}


def test_a_ranking_is_as_likely_as_plackett_luce_says() -> None:
    equal = {"a": 1500.0, "b": 1500.0, "c": 1500.0}
    assert log_likelihood(equal, {"a": 1, "b": 2, "c": 3}) == pytest.approx(math.log(1 / 6))
    twice = {"a": 1500 + 400 * math.log10(2), "b": 1500.0}
    assert log_likelihood(twice, {"b": 1, "a": 2}) == pytest.approx(math.log(1 / 3))


@pytest.mark.parametrize("model", list(Model))
def test_groups_that_never_met_are_listed_apart_with_no_los_between_them(model: Model) -> None:
    sets = [[{"a": 1, "b": 2}, {"b": 2, "a": 1}]] * 3 + [
        [{"c": 1, "d": 2, "e": 3}, {"d": 1, "c": 2, "e": 3}, {"c": 1, "e": 2, "d": 3}]
    ] * 3
    table = rate(sets, samples=50, model=model)
    assert [(row.group, row.bot) for row in table] == [(0, "c"), (0, "d"), (0, "e"), (1, "a"), (1, "b")]
    assert [row.los_next is None for row in table] == [False, False, True, False, True]
    assert sum(row.elo for row in table if row.group == 1) == pytest.approx(3000)


def test_the_bootstrap_over_groups_resamples_whole_groups_and_is_reproducible() -> None:
    ab = RatedSet("t", ("a", "b"), ({"a": 1, "b": 2}, {"b": 1, "a": 2}))
    bc = RatedSet("t", ("b", "c"), ({"b": 1, "c": 2}, {"b": 1, "c": 2}))
    draws = bootstrap([ab] * 3 + [bc] * 3, samples=200, resample=Resample.GROUPS, seed=1)
    # a draw holds one group only about half the time: then the other group's bots are absent
    assert 0 < sum("a" not in draw for draw in draws) < len(draws)
    assert draws == bootstrap([ab] * 3 + [bc] * 3, samples=200, resample=Resample.GROUPS, seed=1)
    by_sets = bootstrap([ab] * 3 + [bc] * 3, samples=200, resample=Resample.SETS, seed=1)
    assert sum("a" not in draw for draw in by_sets) < sum("a" not in draw for draw in draws) / 4


def test_few_sets_widen_the_bootstrap_as_students_t_does() -> None:
    draws = [{"a": 1510.0, "b": 1490.0}]
    estimate = {"a": 1500.0, "b": 1500.0}
    (three,) = widen(draws, estimate, 3)  # sqrt(3/2) * t(2) / z
    assert three["a"] - 1500 == pytest.approx(10 * math.sqrt(1.5) * 4.303 / 1.959964)
    assert three["b"] - 1500 == pytest.approx(-(three["a"] - 1500))
    (many,) = widen(draws, estimate, 31)
    assert many["a"] - 1500 == pytest.approx(10 * math.sqrt(31 / 30) * 2.042 / 1.959964, abs=0.01)
    sets = [[{"a": 1, "b": 2}, {"b": 1, "a": 2}], [{"a": 1, "b": 2}, {"a": 1, "b": 2}]] * 2
    plain = rate(sets, samples=200, seed=1)[0]
    raw = bootstrap([RatedSet("", ("a", "b"), tuple(s)) for s in sets], samples=200, seed=1, few=False)
    wide = bootstrap([RatedSet("", ("a", "b"), tuple(s)) for s in sets], samples=200, seed=1)
    spread = max(d["a"] for d in wide) - min(d["a"] for d in wide)
    factor = math.sqrt(4 / 3) * 3.182 / 1.959964  # four sets
    assert spread == pytest.approx(factor * (max(d["a"] for d in raw) - min(d["a"] for d in raw)))
    assert plain.low is not None and plain.high is not None


def test_the_bootstrap_reports_its_progress_in_samples_up_to_all_of_them() -> None:
    sets = [[{"a": 1, "b": 2, "c": 3}, {"b": 1, "c": 2, "a": 3}], [{"c": 1, "a": 2, "b": 3}]] * 3
    calls: list[tuple[int, int]] = []
    rate(sets, samples=250, seed=1, progress=lambda done, total: calls.append((done, total)))
    assert len(calls) > 1
    assert {total for _, total in calls} == {250}
    done = [done for done, _ in calls]
    assert done == sorted(set(done)) and done[0] > 0 and done[-1] == 250


def test_the_ratings_progress_line_waits_a_second_then_shows_one_line_a_second() -> None:
    now = [0.0]
    out = io.StringIO()
    progress = RatingProgress("chinese_ten: ratings", Console(file=out, width=200), clock=lambda: now[0])
    for clock, done in ((0.0, 100), (0.9, 200), (1.2, 300), (1.6, 400), (2.3, 500)):
        now[0] = clock
        progress(done, 1000)
    assert out.getvalue().splitlines() == [
        "chinese_ten: ratings: bootstrap 300/1000 samples, 1s so far",
        "chinese_ten: ratings: bootstrap 500/1000 samples, 2s so far",
    ]


def test_bots_whose_results_mirror_each_other_tie_listed_by_name_at_even_odds() -> None:
    # each set holds every match and its mirror (b and c swapped): b and c are equal in the fit and
    # in every resample, however the arithmetic rounds (here c came out 2e-13 ahead)
    sets = [
        [{"c": 1, "a": 2, "b": 3}, {"b": 1, "a": 2, "c": 3}],
        [{"a": 1, "c": 2, "b": 3}, {"a": 1, "b": 2, "c": 3}] * 2,
        [{"b": 1, "a": 2, "c": 3}, {"c": 1, "a": 2, "b": 3}],
    ]
    table = rate(sets, prior=1.0, samples=200, seed=1)
    assert [row.bot for row in table] == ["a", "b", "c"]
    assert table[1].elo == pytest.approx(table[2].elo, abs=1e-9)
    assert table[1].los_next == 0.5


def test_the_ratings_table_names_its_prior_in_the_caption() -> None:
    out = io.StringIO()
    sets = [[{"a": 1, "b": 2}, {"b": 1, "a": 2}], [{"a": 1, "b": 2}, {"a": 1, "b": 2}]]
    Console(file=out, width=200).print(ratings_table("g", rate(sets, prior=0.25, samples=20), prior=0.25))
    assert "prior 0.25 virtual draws per pair of bots that met" in out.getvalue()


def test_the_same_results_read_in_another_order_give_the_same_intervals() -> None:
    """The terminal, the web page and --format json read the sets in different orders."""
    sets = [
        RatedSet("t", ("a", "b", "c"), ({"a": 1, "b": 2, "c": 3}, {"b": 1, "a": 2, "c": 3})),
        RatedSet("t", ("a", "b", "c"), ({"c": 1, "a": 2, "b": 3}, {"a": 1, "c": 2, "b": 3})),
        RatedSet("t", ("a", "b", "d"), ({"a": 1, "d": 2, "b": 3}, {"d": 1, "b": 2, "a": 3})),
        RatedSet("t", ("b", "c", "d"), ({"b": 1, "c": 2, "d": 3}, {"c": 1, "d": 2, "b": 2})),
        RatedSet("t", ("a", "c", "d"), ({"a": 1, "c": 2, "d": 3}, {"d": 1, "a": 2, "c": 3})),
    ]
    assert rate(sets, samples=200) == rate(sets[::-1], samples=200) == rate(sets[2:] + sets[:2], samples=200)


def test_a_weak_newcomer_moves_established_bots_by_less_than_their_interval() -> None:
    """Anchored on every bot's mean, a newcomer who loses every match drags the mean down and lifts
    every established bot by about its gap over the pool's size."""
    rng = random.Random(4)
    strength = {"a": 1.0, "b": 0.5, "c": 0.0, "d": -0.5}
    pool = []
    for _ in range(60):
        x, y = sorted(rng.sample(sorted(strength), 2))
        matches = []
        for _ in range(2):
            p = 1 / (1 + math.exp(strength[y] - strength[x]))
            matches.append({x: 1, y: 2} if rng.random() < p else {x: 2, y: 1})
        pool.append(RatedSet("ladder", (x, y), tuple(matches)))
    newcomer = [
        RatedSet("ladder", tuple(sorted((bot, "new"))), ({bot: 1, "new": 2}, {bot: 1, "new": 2}))
        for bot in ("a", "b", "c", "d", "c")
    ]
    before = {r.bot: r for r in rate(pool, samples=300)}
    after = {r.bot: r for r in rate(pool + newcomer, samples=300)}
    assert after["new"].elo < min(r.elo for r in before.values()) - 200
    for bot, rating in before.items():
        assert rating.low is not None and rating.high is not None
        assert abs(after[bot].elo - rating.elo) < (rating.high - rating.low) / 2


def _pool(bots: int, sets: int, seed: int) -> list[RatedSet]:
    """Three-seat sets of a pool whose strengths rise 60 Elo a bot, drawn from Plackett-Luce."""
    rng = random.Random(seed)
    names = [f"b{number:02d}" for number in range(bots)]
    pool = []
    for _ in range(sets):
        group = tuple(sorted(rng.sample(names, 3)))
        matches = []
        for _ in range(6):
            left, places = list(group), {}
            while left:
                weights = [10 ** (60 * names.index(bot) / 400) for bot in left]
                places[left.pop(rng.choices(range(len(left)), weights)[0])] = len(places) + 1
            matches.append(places)
        pool.append(RatedSet("pool", group, tuple(matches)))
    return pool


def test_one_newton_step_a_sample_gives_the_refits_intervals_to_a_tenth_of_their_width() -> None:
    sets = _pool(12, 60, 3)
    refit = rate(sets, samples=300, method=Bootstrap.REFIT)
    stepped = {row.bot: row for row in rate(sets, samples=300, method=Bootstrap.ONE_STEP)}
    for row in refit:
        assert row.low is not None and row.high is not None
        width = row.high - row.low
        assert stepped[row.bot].elo == row.elo
        assert stepped[row.bot].low == pytest.approx(row.low, abs=0.1 * width)
        assert stepped[row.bot].high == pytest.approx(row.high, abs=0.1 * width)


def test_a_pool_past_the_refits_size_takes_one_step_a_sample() -> None:
    assert Bootstrap.for_pool(REFIT_BOTS) is Bootstrap.REFIT
    assert Bootstrap.for_pool(REFIT_BOTS + 1) is Bootstrap.ONE_STEP
    sets = _pool(REFIT_BOTS + 4, 60, 4)
    assert rate(sets, samples=50) == rate(sets, samples=50, method=Bootstrap.ONE_STEP)
    assert rate(sets, samples=50) != rate(sets, samples=50, method=Bootstrap.REFIT)


def _two_seat(a: str, b: str, a_wins: int, rounds: int = 6) -> RatedSet:
    return RatedSet(
        "ladder", (a, b), tuple({a: 1, b: 2} if n < a_wins else {b: 1, a: 2} for n in range(rounds))
    )


LOPSIDED = [  # two clusters linked by one set that a won 6-0, and a pair apart that x swept
    *(_two_seat(p, q, 3 + (i + j) % 3) for i, p in enumerate("abcd") for j, q in enumerate("abcd") if p < q),
    *(_two_seat(p, q, 2 + (i * j) % 3) for i, p in enumerate("efgh") for j, q in enumerate("efgh") if p < q),
    _two_seat("a", "e", 6),
    _two_seat("x", "y", 6),
    _two_seat("x", "y", 6),
]


@pytest.mark.parametrize("method", list(Bootstrap))
def test_disconnected_and_lopsided_results_rate_every_bot(method: Bootstrap) -> None:
    table = rate(LOPSIDED, samples=200, method=method)
    assert sorted(row.bot for row in table) == sorted("abcdefghxy")
    assert {row.bot: row.group for row in table}["x"] == 1
    for row in table:
        assert row.low is not None and row.high is not None
        assert math.isfinite(row.elo) and row.low <= row.elo <= row.high
    assert max(row.elo for row in table if row.bot in "abcd") > max(
        row.elo for row in table if row.bot in "efgh"
    )


def test_without_a_prior_the_same_results_say_what_cannot_be_rated() -> None:
    with pytest.raises(ValueError, match="no finite ratings without a prior"):
        rate(LOPSIDED, prior=0.0, samples=200)
    # finite as a whole, but many a resample is swept: those samples are left out, never a singular step
    table = rate(LOPSIDED[:12], prior=0.0, samples=200, method=Bootstrap.REFIT)
    assert all(row.low is not None and math.isfinite(row.low) for row in table)


def test_the_web_ladders_trend_is_the_tables_fit_on_its_anchored_scale() -> None:
    sets = [*_pool(6, 30, 5), _two_seat("b00", "newcomer", 6)]  # a weak newcomer's one set
    table = {row.bot: row.elo for row in rate(sets, samples=0)}
    assert anchored_fit(sets) == pytest.approx(table, abs=1e-9)
    evidence = merged(choices(places, Model.PLACKETT_LUCE) for rated in sets for places in rated.matches)
    assert fit(evidence)["b05"] != pytest.approx(table["b05"], abs=1.0)  # the mean of every bot moved


def test_a_luck_corrected_set_reads_each_pair_less_half_its_luck_difference() -> None:
    rated = RatedSet("t", ("a", "b", "c"), ({"a": 1, "b": 2, "c": 3},), ({"a": 0.6, "b": -0.2},))
    found = set_choices(rated, Model.PAIRWISE)
    assert found[("a",), ("a", "b")] == pytest.approx(1 - 0.4)  # (0.6 - -0.2) / 2
    assert found[("b",), ("a", "b")] == pytest.approx(0.4)
    assert found[("a",), ("a", "c")] == 1.0  # c's luck not measured: plain
    with pytest.raises(ValueError, match="pairwise model"):
        set_choices(rated, Model.PLACKETT_LUCE)
