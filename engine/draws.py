"""The draws games make most of ``random.Random``, compiled (mypyc): a shuffle and a die roll
drawn bit for bit as random.py draws them (``_randbelow`` on ``getrandbits``), without its Python
frame per card. ``engine/rng.py`` checks at import that they still match this Python's own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["below", "shuffle"]

Bits = Callable[[int], int]
"""A ``random.Random``'s ``getrandbits``."""


def below(getrandbits: Bits, n: int) -> int:
    """A uniform integer in [0, n), n >= 1: ``Random._randbelow_with_getrandbits``."""
    k = n.bit_length()
    r: int = getrandbits(k)
    while r >= n:
        r = getrandbits(k)
    return r


def shuffle(getrandbits: Bits, items: list[Any]) -> None:
    """``Random.shuffle``: from the last item down, swap each with one at or before it."""
    for i in range(len(items) - 1, 0, -1):
        n = i + 1
        k = n.bit_length()
        j: int = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        items[i], items[j] = items[j], items[i]
