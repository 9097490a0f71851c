"""The one source of chance: a seeded generator injected into every game.

A match is reproduced exactly from (game, options, seed, actions), so nothing
in engine/ may use the module-level ``random`` or read the clock.
"""

from __future__ import annotations

import random
from collections.abc import MutableSequence, Sequence
from typing import TypeVar

from croupier.engine import draws

__all__ = [
    "Rng",
]

T = TypeVar("T")


class Rng:
    """A small wrapper over ``random.Random`` with the draws games need.

    A copy shares its original's generator until either draws (copy on write): copying a
    generator's state costs more than copying a whole game state without it, and a search copies
    states by the thousand, most of which never draw again before they are dropped.
    """

    __slots__ = ("_random", "_shared")

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)
        self._shared = False

    def _own(self) -> random.Random:
        """The generator to draw from: a copy of its own first, if it was shared."""
        if self._shared:
            generator = random.Random.__new__(random.Random)
            generator.setstate(self._random.getstate())
            self._random, self._shared = generator, False
        return self._random

    def shuffle(self, items: MutableSequence[T]) -> None:
        if _FAST and isinstance(items, list):
            draws.shuffle(self._own().getrandbits, items)
        else:
            self._own().shuffle(items)

    def shuffled(self, items: Sequence[T]) -> list[T]:
        out = list(items)
        self.shuffle(out)
        return out

    def die(self, sides: int = 6) -> int:
        """One roll of a fair die: 1..sides."""
        if _FAST and sides > 0:
            return 1 + draws.below(self._own().getrandbits, sides)
        return self._own().randint(1, sides)

    def randint(self, low: int, high: int) -> int:
        """An integer in [low, high], both ends included."""
        return self._own().randint(low, high)

    def choice(self, items: Sequence[T]) -> T:
        return self._own().choice(items)

    def random(self) -> float:
        return self._own().random()

    def fork(self) -> Rng:
        """An independent generator seeded from this one (sub-streams stay reproducible)."""
        return Rng(self._own().getrandbits(64))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Rng) and self._random.getstate() == other._random.getstate()

    def __hash__(self) -> int:
        return hash(self._random.getstate())

    def __deepcopy__(self, memo: dict[int, object]) -> Rng:
        twin = Rng.__new__(Rng)
        twin._random, twin._shared = self._random, True
        self._shared = True  # whichever of the two draws first takes a copy of its own
        return twin


def _draws_match_random() -> bool:
    """Whether ``draws`` draws what this Python's ``random.Random`` draws from the same state:
    a match replays from its seed, so a game's sequence of cards and dice must never change."""
    ours, theirs = random.Random(21), random.Random(21)
    deck = list(range(60))
    mine = deck.copy()
    draws.shuffle(ours.getrandbits, mine)
    theirs.shuffle(deck)
    dice = [1 + draws.below(ours.getrandbits, sides) for sides in (6, 6, 1, 7, 12, 6, 100)]
    return mine == deck and dice == [theirs.randint(1, sides) for sides in (6, 6, 1, 7, 12, 6, 100)]


_FAST = _draws_match_random()
"""Else the slower draws of ``random.Random`` itself (a Python whose random.py draws otherwise)."""
