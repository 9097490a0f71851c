"""Fixed-size numeric observations: a ``Layout`` of named features and the helpers that fill them.

Each feature names the view fields it reads, so a seat's next observation is its last one
with only the features whose fields changed rewritten (``Layout.update``): one action
changes a few fields, and rewriting a 52-card pile that did not move is most of the cost.
Every value is scaled into ``[0, 1]`` (``[-1, 1]`` for signed ones) by dividing it
by the feature's ``scale`` and clipping, so one Box bounds every observation.
Seats are relative to the viewer: slot 0 is the viewer, 1 the next seat
clockwise, and so on, padded with zeros up to the game's most players, so one
policy can play every table size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

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

Write = Callable[[Vector, "Feature", Any, int, int], None]
"""``write(out, feature, view, me, players)``: fill the feature's run of ``out`` (all zeros) from
``view``, the view of seat ``me`` at a table of ``players``; only the fields it ``reads``."""

Grow = Callable[[Vector, "Feature", Any, Any, int], bool]
"""``grow(out, feature, before, view, me)``: turn the feature's run of ``out`` from ``before``'s
into ``view``'s by the cards that changed; False (``out`` then half done) if it cannot."""


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: a set of them is built each step
class Feature:
    """A run of ``size`` numbers at ``start`` in the observation, written from the view fields
    it ``reads`` (none: written once, at an episode's first observation)."""

    name: str
    start: int
    size: int
    scale: float
    signed: bool
    doc: str
    reads: tuple[str, ...]
    write: Write
    grow: Grow | None = None

    @property
    def low(self) -> float:
        return -1.0 if self.signed else 0.0


class Layout:
    """The features of one game's observation, in order; ``space`` is their Box."""

    def __init__(self) -> None:
        self.features: list[Feature] = []
        self.size = 0
        self.readers: dict[str, list[Feature]] = {}
        """The features each view field is read by."""
        self._fields: Callable[[Any], tuple[Any, ...]] = lambda view: ()

    def add(
        self,
        name: str,
        size: int,
        doc: str,
        reads: tuple[str, ...],
        write: Write,
        *,
        scale: float = 1.0,
        signed: bool = False,
        grow: Grow | None = None,
    ) -> Feature:
        feature = Feature(name, self.size, size, scale, signed, doc, reads, write, grow)
        self.features.append(feature)
        self.size += size
        for field in reads:
            self.readers.setdefault(field, []).append(feature)
        if self.readers:
            get = attrgetter(*self.readers)
            self._fields = get if len(self.readers) > 1 else lambda view: (get(view),)
        return feature

    def encode(self, view: Any, me: int, players: int) -> Vector:
        """Every feature of ``view``, seat ``me``'s view at a table of ``players``."""
        out = self.zeros()
        for feature in self.features:
            feature.write(out, feature, view, me, players)
        return out

    def update(self, last: Vector, before: Any, view: Any, me: int, players: int) -> Vector:
        """``encode(view, ...)``, from ``last``, the encoding of the same seat's earlier view
        ``before``: a copy (an observation handed out never changes) with only the features
        whose fields differ rewritten; ``last`` itself when none does."""
        now, then = self._fields(view), self._fields(before)
        if now == then:
            return last
        out = last.copy()
        stale: set[Feature] = set()
        for field, a, b in zip(self.readers, now, then, strict=True):
            if a != b:
                stale.update(self.readers[field])
        for feature in stale:
            if feature.grow is None or not feature.grow(out, feature, before, view, me):
                out[feature.start : feature.start + feature.size] = 0.0
                feature.write(out, feature, view, me, players)
        return out

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


Piles = Callable[[Any, int], Sequence[Sequence[Any]]]
"""``piles(view, me)``: the card piles a feature counts (a pile's items are cards, or hold cards)."""


def pile_feature(piles: Piles, cards: Callable[[Any], Iterable[Card]] | None = None) -> tuple[Write, Grow]:
    """The writer of a feature counting the cards of ``piles`` (each item's ``cards``, if not a card
    itself), and its ``grow``: piles mostly gain or lose items at their end (a trick is won, a
    card discarded or taken back), so only those are counted, not the whole pile again."""

    def flat(items: Sequence[Any]) -> Iterable[Card]:
        return items if cards is None else [card for item in items for card in cards(item)]

    def write(out: Vector, feature: Feature, view: Any, me: int, players: int) -> None:
        for pile in piles(view, me):
            put_cards(out, feature, flat(pile))

    def grow(out: Vector, feature: Feature, before: Any, view: Any, me: int) -> bool:
        olds, news = piles(before, me), piles(view, me)
        if len(olds) != len(news):
            return False
        for old, new in zip(olds, news, strict=True):
            kept = min(len(old), len(new))
            if new[:kept] != old[:kept]:
                return False
            if len(new) > kept:
                put_cards(out, feature, flat(new[kept:]))
            elif len(old) > kept:
                take_cards(out, feature, flat(old[kept:]))
        return True

    return write, grow


def take_cards(out: Vector, feature: Feature, cards: Iterable[Card]) -> None:
    """Undo ``put_cards`` of ``cards`` (exactly: every count is a multiple of ``1 / scale``)."""
    step, start = 1.0 / feature.scale, feature.start
    for card in cards:
        out[start + _SUIT_BASE[card.suit._value_] + card.rank._value_] -= step


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
