"""Every registered game, in every test variant, passes the conformance harness."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from croupier.engine.core import Action, GameSpec
from croupier.engine.games import GAMES
from croupier.engine.games.chinese_ten import ChineseTenState, ChineseTenView
from croupier.engine.rng import Rng
from tests.engine import conformance

CASES = [
    pytest.param(spec, options, id=f"{name}-{i}-{options}")
    for name, spec in GAMES.items()
    for i, options in enumerate(spec.test_variants)
]


def test_every_game_names_its_scoring_invariant() -> None:
    assert set(GAMES) <= set(conformance.INVARIANTS)


@pytest.mark.parametrize(("spec", "options"), CASES)
def test_same_seed_and_actions_give_same_events_and_views(spec: GameSpec[Any], options: Any) -> None:
    for seed in range(5):
        conformance.check_determinism(spec, options, seed)


@pytest.mark.parametrize(("spec", "options"), CASES)
def test_random_playouts_end_and_refuse_only_unlisted_actions(spec: GameSpec[Any], options: Any) -> None:
    pool: dict[str, Action] = {}
    for seed in range(conformance.PLAYOUTS):
        conformance.check_closure(spec, options, seed, pool)


@pytest.mark.parametrize(("spec", "options"), CASES)
def test_views_do_not_change_when_unseen_cards_are_redealt(spec: GameSpec[Any], options: Any) -> None:
    changed = sum(conformance.check_non_interference_playout(spec, options, seed) for seed in range(3))
    assert changed > 0, "re-dealing hidden cards never changed anything: the check would prove nothing"


@pytest.mark.parametrize(("spec", "options"), CASES)
def test_options_survive_the_trip_through_plain_values(spec: GameSpec[Any], options: Any) -> None:
    from croupier.engine.core import options_to_dict

    assert spec.options(options_to_dict(options)) == options


# --- the harness catches leaks: a deliberately leaky game must fail it -----------------


class Leaky:
    """A Chinese Ten state whose views show what ``leak`` picks from it; the rest is the state's.

    A wrapper, not a subclass: an interpreted class cannot inherit a state compiled by mypyc."""

    def __init__(self, state: ChineseTenState, leak: Callable[[ChineseTenState], dict[str, Any]]) -> None:
        self.state = state
        self.leak = leak

    def __getattr__(self, name: str) -> Any:
        return getattr(self.state, name)

    def view(self, seat: int) -> ChineseTenView:
        return dataclasses.replace(self.state.view(seat), **self.leak(self.state))

    def resample_hidden(self, seat: int, rng: Rng) -> Leaky:
        return Leaky(self.state.resample_hidden(seat, rng), self.leak)


LEAKS: dict[str, Callable[[ChineseTenState], dict[str, Any]]] = {
    "opponents' hands": lambda state: {"hands": tuple(tuple(hand) for hand in state.hands)},
    "top of the stock": lambda state: {"stock": tuple(state.stock[:1])},
}


@pytest.mark.parametrize("leak", LEAKS.values(), ids=LEAKS.keys())
def test_harness_fails_loudly_on_a_leaky_view(leak: Callable[[ChineseTenState], dict[str, Any]]) -> None:
    spec = GAMES["chinese_ten"]
    state = Leaky(spec.new_game(spec.options(), Rng(7)), leak)
    with pytest.raises(AssertionError, match="hidden card leaks"):
        conformance.check_non_interference(state, seat=0, rng=Rng(1))  # type: ignore[arg-type]


def test_harness_passes_the_honest_view_of_the_same_deal() -> None:
    spec = GAMES["chinese_ten"]
    state = spec.new_game(spec.options(), Rng(7))
    assert conformance.check_non_interference(state, seat=0, rng=Rng(1))
