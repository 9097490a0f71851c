"""Chance decided outside the engine, one uniform pick at a time: how the engine's own draws
become OpenSpiel's explicit chance nodes, with no second copy of any rule.

A game draws from the ``Rng`` it holds (its shuffles, dice, cuts). ``ScriptedRng`` answers each
draw from a list of picks given before, and where the list runs out raises ``ChanceNeeded``
with the number of equally likely outcomes of the next pick: the bridge then shows a chance
node with that many outcomes, appends the one chance chose, and replays the step from its start
(on a copy: a step cut short by a draw is thrown away). Every draw is made of uniform picks: a
die of n sides is one pick among n, a shuffle of n items n - 1 picks (the item for the first
place among n, for the next among n - 1, ...: every order equally likely). A draw asks for all
its picks at once, so a step is replayed once per draw, not once per pick.
"""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence
from typing import TypeVar

from croupier.engine.rng import Rng

T = TypeVar("T")


class ChanceNeeded(Exception):
    """A draw the picks given do not cover: ``outcomes`` are the sizes of the picks still to be
    made for it, in order (each pick uniform among its size)."""

    def __init__(self, outcomes: list[int]) -> None:
        super().__init__(f"{len(outcomes)} chance picks")
        self.outcomes = outcomes


class ScriptedRng(Rng):
    """An ``Rng`` whose draws are the picks given, in order; ``ChanceNeeded`` past the last."""

    __slots__ = ("_picks", "_used")

    def __init__(self, picks: Sequence[int] = ()) -> None:
        super().__init__(0)
        self._picks = list(picks)
        self._used = 0

    def _draw(self, sizes: list[int]) -> list[int]:
        """One pick per size (a size of 1 is no chance: always 0, not a node)."""
        needed = [size for size in sizes if size > 1]
        available = len(self._picks) - self._used
        if available < len(needed):
            raise ChanceNeeded(needed[available:])
        picks = iter(self._picks[self._used : self._used + len(needed)])
        self._used += len(needed)
        drawn = [next(picks) if size > 1 else 0 for size in sizes]
        for pick, size in zip(drawn, sizes, strict=True):
            if not 0 <= pick < size:
                raise ValueError(f"chance outcome {pick} is not among the {size} of this draw")
        return drawn

    def shuffle(self, items: MutableSequence[T]) -> None:
        count = len(items)
        for place, pick in enumerate(self._draw([count - place for place in range(count - 1)])):
            chosen = place + pick
            items[place], items[chosen] = items[chosen], items[place]

    def die(self, sides: int = 6) -> int:
        return 1 + self._draw([sides])[0]

    def randint(self, low: int, high: int) -> int:
        return low + self._draw([high - low + 1])[0]

    def choice(self, items: Sequence[T]) -> T:
        return items[self._draw([len(items)])[0]]

    def random(self) -> float:
        raise NotImplementedError("a continuous draw has no finite chance node")

    def fork(self) -> Rng:
        return self  # later draws keep taking picks in order

    def __deepcopy__(self, memo: dict[int, object]) -> ScriptedRng:
        twin = ScriptedRng(self._picks)
        twin._used = self._used
        return twin

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ScriptedRng) and (self._picks, self._used) == (other._picks, other._used)

    def __hash__(self) -> int:
        return hash((tuple(self._picks), self._used))
