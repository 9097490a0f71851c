"""Fixed-size numeric observations: a ``Layout`` of named features and the helpers that fill them.

Every value is scaled into ``[0, 1]`` (``[-1, 1]`` for signed ones) by dividing it
by the feature's ``scale`` and clipping, so one Box bounds every observation.
Seats are relative to the viewer: slot 0 is the viewer, 1 the next seat
clockwise, and so on, padded with zeros up to the game's most players, so one
policy can play every table size.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from gymnasium import spaces

from croupier.engine.cards import Card, Suit

_SUIT_BASE = {suit._value_: 13 * i - 2 for i, suit in enumerate(Suit)}


def card_index(card: Card) -> int:
    """A card's place in every 52-wide feature, its place in ``STANDARD_DECK``: suits clubs,
    diamonds, hearts, spades, each 2 up to A. From the plain values: hashing a Card costs a
    Python call, and this is the hot path."""
    return _SUIT_BASE[card.suit._value_] + card.rank._value_


Vector = np.ndarray


@dataclass(frozen=True)
class Feature:
    """A run of ``size`` numbers at ``start`` in the observation."""

    name: str
    start: int
    size: int
    scale: float
    signed: bool
    doc: str

    @property
    def low(self) -> float:
        return -1.0 if self.signed else 0.0


class Layout:
    """The features of one game's observation, in order; ``space`` is their Box."""

    def __init__(self) -> None:
        self.features: list[Feature] = []
        self.size = 0

    def add(self, name: str, size: int, doc: str, *, scale: float = 1.0, signed: bool = False) -> Feature:
        feature = Feature(name, self.size, size, scale, signed, doc)
        self.features.append(feature)
        self.size += size
        return feature

    def space(self) -> spaces.Box:
        low = np.zeros(self.size, dtype=np.float32)
        for feature in self.features:
            low[feature.start : feature.start + feature.size] = feature.low
        return spaces.Box(low=low, high=np.ones(self.size, dtype=np.float32), dtype=np.float32)

    def zeros(self) -> Vector:
        return np.zeros(self.size, dtype=np.float32)

    def table(self) -> list[str]:
        """The layout as Markdown table rows (docs/training.md shows them)."""
        rows = ["| feature | positions | meaning |", "|---|---|---|"]
        for f in self.features:
            where = f"{f.start}" if f.size == 1 else f"{f.start}–{f.start + f.size - 1}"
            rows.append(f"| `{f.name}` | {where} | {f.doc} |")
        return rows


def _clip(value: float, signed: bool) -> float:
    return max(-1.0 if signed else 0.0, min(1.0, value))


def put_cards(out: Vector, feature: Feature, cards: Iterable[Card]) -> None:
    """Add ``1 / scale`` at each card's place (scale 1: a set; scale 2: counts from two decks)."""
    step = 1.0 / feature.scale
    start = feature.start
    places = [_SUIT_BASE[card.suit._value_] + card.rank._value_ for card in cards]  # card_index, inlined
    if len(places) < 8:  # one numpy call costs more than a few element writes
        for place in places:
            out[start + place] += step
    else:
        out[start : start + 52] += np.bincount(places, minlength=52) * step


def put_value(out: Vector, feature: Feature, value: float, offset: int = 0) -> None:
    out[feature.start + offset] = _clip(value / feature.scale, feature.signed)


def put_seats(out: Vector, feature: Feature, values: Sequence[float], me: int) -> None:
    """One value per seat, at the seat's place relative to the viewer ``me``."""
    players, start, scale = len(values), feature.start, feature.scale
    low = -1.0 if feature.signed else 0.0
    for seat, value in enumerate(values):
        scaled = value / scale
        out[start + (seat - me) % players] = low if scaled < low else 1.0 if scaled > 1.0 else scaled


def put_seat(out: Vector, feature: Feature, seat: int | None, me: int, players: int) -> None:
    """A one-hot of ``seat`` relative to ``me``; all zeros for None."""
    if seat is not None:
        out[feature.start + (seat - me) % players] = 1.0


def put_one_hot(out: Vector, feature: Feature, index: int | None) -> None:
    if index is not None:
        out[feature.start + index] = 1.0
