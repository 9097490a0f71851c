"""The luck correction (clients/results/luck.py): its mean is exactly zero where every outcome of
chance can be listed, it foresees every chance event of every game, and its evaluator's identity
changes with what it computes."""

from __future__ import annotations

import copy
import itertools
import random
from typing import Any

import pytest

from croupier.clients.author.inprocess import play
from croupier.clients.bots import RandomBot
from croupier.clients.results.luck import Evaluator, LuckMeter, _Picks, default_evaluator
from croupier.clients.results.luck_games import TWIN
from croupier.engine.games import GAMES, get_game
from croupier.engine.games.platinum_fish import Roll
from croupier.engine.rng import Rng


def _first_legal_to_end(followed: Any) -> None:
    """Play on with each seat's first legal action: a policy blind to the stock's order."""
    while not followed.is_over():
        (seat,) = followed.to_act()
        followed.apply(seat, followed.legal_actions(seat)[0])


def _chinese_ten_near_the_end(stock: int) -> tuple[Any, Any, Any]:
    """A two-seat Chinese Ten deal played with first legal actions until ``stock`` cards are left."""
    spec = get_game("chinese_ten")
    options = spec.options({"players": 2, "target": 1})
    for seed in range(100):
        state = spec.new_game(options, Rng(seed))
        while len(state.stock) > stock or state.turned is not None:
            (seat,) = state.to_act()
            state.apply(seat, state.legal_actions(seat)[0])
        copy = state.copy()
        _first_legal_to_end(copy)
        if copy.deal == 1:  # over at this deal's end: no shuffle of a next one
            return spec, options, state
    raise AssertionError("no deal ends the match")


@pytest.mark.parametrize("poor", [False, True])
def test_the_luck_of_every_order_of_the_last_stock_cards_sums_to_zero(poor: bool) -> None:
    """Every order of the last four stock cards is equally likely given what anyone has seen: the
    luck measured, averaged over all 24, is exactly zero (also with a V that reads scores backwards);
    it is not zero order by order."""
    spec, options, state = _chinese_ten_near_the_end(4)
    evaluator = default_evaluator("chinese_ten", poor=poor)
    lucks = []
    for order in itertools.permutations(state.stock):
        twin = state.copy()
        twin.stock = list(order)
        meter = LuckMeter(evaluator, [(0, 1)])
        _first_legal_to_end(meter.follow(twin, spec, options))
        assert meter.events == 4
        lucks.append(meter.luck[(0, 1)])
    assert abs(sum(lucks) / len(lucks)) < 1e-12
    assert max(abs(luck) for luck in lucks) > 1e-4


def test_the_luck_of_every_roll_of_the_dice_sums_to_zero() -> None:
    """A Platinum Fish roll, each of its 36 outcomes forced: the luck of the roll averages to zero."""
    spec = get_game("platinum_fish")
    options = spec.options({"players": 2})
    state = spec.new_game(options, Rng(3))
    while Roll() not in state.legal_actions(state.current):
        seat = state.current
        state.apply(seat, state.legal_actions(seat)[0])
    seat = state.current
    lucks = []
    for dice in itertools.product(range(6), repeat=2):
        twin = state.copy()
        twin.rng = _Picks(dice)
        meter = LuckMeter(default_evaluator("platinum_fish"), [(seat, 1 - seat)])
        meter.follow(twin, spec, options).apply(seat, Roll())
        lucks.append(meter.luck[(seat, 1 - seat)])
    assert abs(sum(lucks) / 36) < 1e-12
    assert max(abs(luck) for luck in lucks) > 0.001


@pytest.mark.parametrize(("name", "options"), [(n, o) for n, s in GAMES.items() for o in s.test_variants])
def test_every_chance_event_of_every_game_is_foreseen(name: str, options: Any) -> None:
    """Random playouts of every variant under the meter: a draw its per-game test did not foresee
    raises, so none goes uncorrected."""
    spec = get_game(name)
    for seed in range(3):
        meter = LuckMeter(default_evaluator(name, outcomes=4), [(0, 1)], fresh=seed == 0)
        played = play(
            spec,
            options,
            seed,
            [lambda m, s=seed: RandomBot(m, random.Random(s))] * options.players,
            luck=meter,
        )
        assert played.luck and played.luck[0][:2] == (0, 1)


def test_the_identity_changes_with_every_parameter() -> None:
    base = Evaluator("chinese_ten", scale=3.0)
    hashes = {
        e.identity()["hash"]
        for e in (
            base,
            Evaluator("chinese_ten", 2.0),
            Evaluator("chinese_ten", 3.0, 10),
            Evaluator("chinese_ten", 3.0, poor=True),
        )
    }
    assert len(hashes) == 4
    assert base.identity() == Evaluator("chinese_ten", scale=3.0).identity()


def test_a_game_without_an_evaluator_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match="no luck evaluator for chess"):
        default_evaluator("chess")


@pytest.mark.parametrize("name", sorted(TWIN))
def test_a_quick_twin_plays_on_as_a_deep_copy_and_leaves_the_original_alone(name: str) -> None:
    spec = get_game(name)
    for options in spec.test_variants:
        state = spec.new_game(options, Rng(5))
        choices = random.Random(5)
        while not state.is_over():
            before = state.full_view()
            twin, deep = TWIN[name](state), state.copy()
            twin.rng = copy.deepcopy(state.rng)  # shared by the twin: the meter gives it chance's own
            (seat,) = state.to_act()
            action = choices.choice(state.legal_actions(seat))
            twin.apply(seat, action)
            deep.apply(seat, action)
            assert twin.full_view() == deep.full_view()
            assert state.full_view() == before
            state.apply(seat, action)


@pytest.mark.parametrize("name", ["chinese_ten", "platinum_fish"])
def test_a_declared_policys_decision_terms_average_to_zero_under_that_policy(name: str) -> None:
    """A seat declares a policy (here a lopsided one): each legal action taken in turn, its term
    weighed by its probability, the decision terms sum to exactly zero; not action by action."""
    spec = get_game(name)
    options = spec.options({"players": 2})
    state = spec.new_game(options, Rng(4))
    choices = random.Random(4)
    for _ in range(5):  # a few moves in: a table to capture from
        (seat,) = state.to_act()
        state.apply(seat, choices.choice(state.legal_actions(seat)))
    (seat,) = state.to_act()
    legal = state.legal_actions(seat)
    assert len(legal) > 1
    policy = [2.0 * (i + 1) / (len(legal) * (len(legal) + 1)) for i in range(len(legal))]
    lucks = []
    for action in legal:
        meter = LuckMeter(default_evaluator(name), [(seat, 1 - seat)])
        followed = meter.follow(state.copy(), spec, options)
        chance_only = LuckMeter(default_evaluator(name), [(seat, 1 - seat)])
        chance_only._draws = random.Random(meter.evaluator.seed)
        twin = state.copy()
        twin.rng = copy.deepcopy(state.rng)
        chance_only.follow(twin, spec, options).apply(seat, action)
        meter.declared[seat] = policy
        followed.apply(seat, action)
        lucks.append(meter.luck[(seat, 1 - seat)] - chance_only.luck[(seat, 1 - seat)])
    assert abs(sum(p * luck for p, luck in zip(policy, lucks, strict=True))) < 1e-12
    assert max(abs(luck) for luck in lucks) > 1e-4
