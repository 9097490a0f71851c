"""The engine's cheap paths draw, compare and share exactly what the plain ones would: a match
replays from its seed, so a shuffle or a die roll must never differ from random.Random's, and a
card or a shared event must behave as the value it stands for."""

from __future__ import annotations

import random
from collections import deque

import pytest

from croupier.engine import rng as rng_module
from croupier.engine.cards import STANDARD_DECK, Card, Rank, Suit
from croupier.engine.core import shared
from croupier.engine.games.platinum_fish import Drew
from croupier.engine.rng import Rng


def test_the_compiled_draws_are_the_ones_this_python_uses() -> None:
    assert rng_module._FAST, "engine/draws.py no longer draws what random.Random draws: the slow path runs"


@pytest.mark.parametrize("seed", range(40))
def test_shuffles_and_dice_draw_what_random_random_draws(seed: int) -> None:
    ours, theirs = Rng(seed), random.Random(seed)
    for size in (0, 1, 2, 3, 52, 104, 7):
        deck = list(range(size))
        assert ours.shuffled(deck) == _shuffled(theirs, deck)
        assert [ours.die() for _ in range(9)] == [theirs.randint(1, 6) for _ in range(9)]
        assert [ours.die(sides) for sides in (1, 2, 12, 100)] == [
            theirs.randint(1, s) for s in (1, 2, 12, 100)
        ]
    assert ours.random() == theirs.random()  # both at the same point of the stream


def _shuffled(source: random.Random, items: list[int]) -> list[int]:
    out = list(items)
    source.shuffle(out)
    return out


def test_a_shuffle_of_another_sequence_still_shuffles_it_as_random_does() -> None:
    ours, theirs = deque(range(30)), list(range(30))
    Rng(5).shuffle(ours)
    random.Random(5).shuffle(theirs)
    assert list(ours) == theirs


def test_cards_compare_order_and_hash_as_their_rank_and_suit() -> None:
    ten_of_hearts = Card(Rank.TEN, Suit.HEARTS)
    assert ten_of_hearts == Card.parse("10h") and hash(ten_of_hearts) == hash(Card.parse("10h"))
    assert ten_of_hearts != Card.parse("10s") and ten_of_hearts != "10h"
    assert len(set(STANDARD_DECK + STANDARD_DECK)) == 52
    ordered = sorted(STANDARD_DECK, key=lambda c: (c.rank, "cdhs".index(c.suit.value)))
    assert sorted(reversed(STANDARD_DECK)) == ordered
    assert Card.parse("9s") < Card.parse("10c") <= Card.parse("10c") < Card.parse("10d")
    assert Card.parse("Ac") > Card.parse("Ks") >= Card.parse("Kd")
    with pytest.raises(TypeError):
        _ = ten_of_hearts < 10  # type: ignore[operator]


def test_a_shared_value_is_built_once_and_equals_a_new_one() -> None:
    cache: dict[tuple[object, ...], Drew] = {}
    card = Card.parse("Qd")
    first = shared(cache, Drew, 1, card)
    assert shared(cache, Drew, 1, Card.parse("Qd")) is first == Drew(1, card)
    assert shared(cache, Drew, 2, card) == Drew(2, card) != first
