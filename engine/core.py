"""The game protocol every game implements, its errors and its outcome.

Shape taken from OpenSpiel's Python games: a game module gives a frozen
options dataclass, ``new_game(options, rng)`` and a ``GameState``. Actions,
events and views are frozen dataclasses of each game; all events are public
(what a spectator may see); private information lives only in ``view(seat)``.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import types
import typing
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, Protocol, Self, TypeVar, Union

from croupier.engine.rng import Rng

__all__ = [
    "Action",
    "CroupierError",
    "Event",
    "GameSpec",
    "GameState",
    "IllegalAction",
    "Immutable",
    "InvalidOptions",
    "MalformedInput",
    "NotYourTurn",
    "Outcome",
    "Seat",
    "StateBase",
    "bounded",
    "check_bounds",
    "check_players",
    "clockwise_from",
    "deal_round",
    "options_from_dict",
    "options_to_dict",
    "redeal",
    "shared",
]

Seat = int


# --- errors -----------------------------------------------------------------


class CroupierError(ValueError):
    """Base of the engine's errors; the message is for a bot author to act on."""


class MalformedInput(CroupierError):
    """Input that is not a well-formed card, action or option at all."""


class IllegalAction(CroupierError):
    """A well-formed action the rules refuse now. The state is left unchanged."""


class NotYourTurn(IllegalAction):
    """An action from a seat that may not act now (another seat's turn, a tick already answered,
    play not begun): the seat is to wait, not to choose again."""


class InvalidOptions(CroupierError):
    """Options a game cannot be played with."""


# --- value objects ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Immutable:
    """Base of frozen values a state holds (actions, events, options): a copied state shares
    them. Compiled by mypyc, a frozen dataclass could not even be rebuilt by ``deepcopy``."""

    def __deepcopy__(self, memo: dict[int, object]) -> Any:
        return self


@dataclass(frozen=True, slots=True)
class Action(Immutable):
    """Base of every game's actions. ``str(action)`` is its one text form."""


@dataclass(frozen=True, slots=True)
class Event(Immutable):
    """Base of every game's events: public facts, in the order they happened."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of a finished match.

    ``places[seat]`` is the seat's place, 1 best; equal results share a place
    and the next place is skipped (1, 1, 3), as in a ranking table.
    """

    scores: tuple[int, ...]
    places: tuple[int, ...]
    winners: frozenset[Seat]

    @classmethod
    def ranked_by(cls, scores: Sequence[int], keys: Sequence[Hashable] | None = None) -> Outcome:
        """Rank seats by ``keys`` (higher is better; default: the scores)."""
        sort_keys: Sequence[Any] = scores if keys is None else keys
        places = tuple(1 + sum(1 for other in sort_keys if other > mine) for mine in sort_keys)
        winners = frozenset(seat for seat, place in enumerate(places) if place == 1)
        return cls(tuple(scores), places, winners)


T = TypeVar("T")


def shared(cache: dict[tuple[Any, ...], T], kind: Callable[..., T], *fields: Any) -> T:
    """``kind(*fields)``, built once per value and then shared through ``cache`` (one per kind):
    actions and events are frozen values, and a frozen dataclass runs its Python ``__init__``
    even compiled (mypyc compiles no dataclass's generated methods). For small domains only
    (seats, cards): ``cache`` keeps every value made."""
    value = cache.get(fields)
    if value is None:
        value = cache[fields] = kind(*fields)
    return value


# --- the protocol ---------------------------------------------------------------

O = TypeVar("O")
V = TypeVar("V")
A = TypeVar("A", bound=Action)


class GameState(Protocol[A, V]):
    """One match of one game, from the first deal to the final outcome: what the referee calls.

    Every game's state implements it on ``StateBase``, which gives the defaults of the last
    group below. A protocol rather than a generic base class: mypyc cannot compile a dataclass
    that inherits a Python class (``Generic``, ``ABC``), and the states are dataclasses.

    ``opening`` holds the public events ``new_game`` made (cuts, antes, the first
    deal): the referee sends them first, to bots and spectators alike.

    Time: turn-based games ignore ``now``. A game with a clock (Pair Battle)
    reads time only from the ``now`` it is given (seconds of referee time
    since the match started) and says with ``wake_at`` when it next needs
    ``advance`` to be called even if nobody acts.
    """

    opening: tuple[Event, ...]

    def to_act(self) -> frozenset[Seat]:
        """The seats that may act now (several at once in Pair Battle)."""

    def legal_actions(self, seat: Seat) -> list[A]:
        """Every action ``seat`` may take now, in a stable order (bots answer by index)."""

    def apply(self, seat: Seat, action: A, now: float = 0.0) -> list[Event]:
        """Apply one action; raise ``IllegalAction`` (changing nothing) if refused."""

    def view(self, seat: Seat) -> V:
        """Everything ``seat`` may know, and nothing more."""

    def public_view(self) -> V:
        """What a spectator may know during the match: no hidden card."""

    def full_view(self) -> V:
        """Everything, every hand included: for admins and finished-match replays."""

    def is_over(self) -> bool: ...

    def outcome(self) -> Outcome:
        """The result; only valid once ``is_over()``."""

    def resample_hidden(self, seat: Seat, rng: Rng) -> GameState[A, V]:
        """A copy with every card ``seat`` cannot see re-dealt at random among
        the places it cannot see (sizes kept). Used to prove views leak nothing."""

    @property
    def players(self) -> int: ...

    # The defaults of StateBase:

    def advance(self, now: float) -> list[Event]:
        """Let time-based rules act (countdowns, windows). No-op for turn-based games."""

    def wake_at(self) -> float | None:
        """When ``advance`` must next be called, or None if time alone changes nothing."""

    @property
    def realtime(self) -> bool:
        """Seats race each other on the clock (Pair Battle in real time): a referee restarting the
        match waits for every seat, then calls ``recount``. Turn-based games: False."""

    def recount(self, now: float) -> list[Event]:
        """Every seat is back after a restart: count down again from ``now`` before play goes on,
        so that no seat plays while another is away (real-time games; others change nothing)."""

    def wait_for_clock(self, now: float) -> tuple[float, list[Event]]:
        """Nobody may act: the game waits on its clock (a countdown, a window). Jump to the
        next wake-up and let time act; returns that time and the events it caused."""

    def penalize(self, seat: Seat, reason: str, now: float = 0.0) -> list[Event]:
        """The game's own consequence of a refused action (most games: none)."""

    def copy(self) -> GameState[A, V]: ...


class StateBase:
    """The defaults every game's state inherits (``GameState`` says what each means)."""

    def advance(self, now: float) -> list[Event]:
        return []

    def wake_at(self) -> float | None:
        return None

    @property
    def realtime(self) -> bool:
        return False

    def recount(self, now: float) -> list[Event]:
        return []

    def wait_for_clock(self, now: float) -> tuple[float, list[Event]]:
        wake = self.wake_at()
        if wake is None:
            raise RuntimeError("stuck: nobody may act, the match is not over and nothing is due")
        now = max(now, wake)
        return now, self.advance(now)

    def penalize(self, seat: Seat, reason: str, now: float = 0.0) -> list[Event]:
        return []

    def copy(self) -> Self:
        return copy.deepcopy(self)


def clockwise_from(first: Seat, players: int) -> list[Seat]:
    """Every seat once, clockwise from ``first`` (taken modulo ``players``)."""
    return [(first + k) % players for k in range(players)]


def deal_round(
    deck: Sequence[T], players: int, dealer: Seat, packets: Sequence[int]
) -> tuple[list[list[T]], list[T]]:
    """Deal from the front of ``deck`` clockwise from the dealer's left, one packet
    of each size per round (``(2, 3)``: two cards each, then three each).
    Returns the hands by seat and the undealt rest, in order."""
    hands: list[list[T]] = [[] for _ in range(players)]
    top = 0
    for size in packets:
        for seat in clockwise_from(dealer + 1, players):
            hands[seat].extend(deck[top : top + size])
            top += size
    return hands, list(deck[top:])


def redeal(zones: Sequence[list[Any]], rng: Rng) -> None:
    """Shuffle the cards of several hidden zones together and deal them back,
    each zone keeping its size. The helper behind every ``resample_hidden``."""
    pool = [card for zone in zones for card in zone]
    rng.shuffle(pool)
    start = 0
    for zone in zones:
        size = len(zone)
        zone[:] = pool[start : start + size]
        start += size


# --- options --------------------------------------------------------------------


def options_to_dict(options: object) -> dict[str, Any]:
    """Options as plain values (enums by value): for journals, files and proto."""
    assert dataclasses.is_dataclass(options) and not isinstance(options, type)
    return {
        f.name: (v.value if isinstance(v, enum.Enum) else v)
        for f in dataclasses.fields(options)
        for v in [getattr(options, f.name)]
    }


def options_from_dict(cls: type[O], values: Mapping[str, Any]) -> O:
    """Build an options dataclass from plain values, with clear errors.

    Unknown names, wrong types and bad enum values raise ``InvalidOptions``;
    missing names take the defaults. The options class validates itself in
    ``__post_init__``.
    """
    fields, hints = _fields_and_hints(cls)
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise InvalidOptions(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(fields)}")
    kwargs = {name: _coerce(name, hints[name], value) for name, value in values.items()}
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise InvalidOptions(str(exc)) from None


_FIELDS_AND_HINTS: dict[type, tuple[tuple[str, ...], dict[str, Any]]] = {}


def _fields_and_hints(cls: type) -> tuple[tuple[str, ...], dict[str, Any]]:
    """An options class's field names and type hints, read once per class: ``get_type_hints``
    evaluates every annotation's text at each call, which cost more than a Pair Battle deal."""
    known = _FIELDS_AND_HINTS.get(cls)
    if known is None:
        assert dataclasses.is_dataclass(cls)
        known = tuple(f.name for f in dataclasses.fields(cls)), typing.get_type_hints(cls)
        _FIELDS_AND_HINTS[cls] = known
    return known


def _coerce(name: str, hint: Any, value: Any) -> Any:
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        args = typing.get_args(hint)
        if value is None and type(None) in args:
            return None
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _coerce(name, arg, value)
            except InvalidOptions:
                pass
        raise InvalidOptions(f"option {name}: {value!r} is not a {hint}")
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return hint(value)
        except ValueError:
            allowed = ", ".join(str(m.value) for m in hint)
            raise InvalidOptions(f"option {name}: {value!r} is not one of {allowed}") from None
    if hint is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise InvalidOptions(f"option {name}: {value!r} is not true or false")
    if hint is int:
        if isinstance(value, bool):
            raise InvalidOptions(f"option {name}: {value!r} is not a whole number")
        try:
            if isinstance(value, float) and not value.is_integer():
                raise ValueError
            return int(value)
        except (TypeError, ValueError):
            raise InvalidOptions(f"option {name}: {value!r} is not a whole number") from None
    if hint is float:
        try:
            return float(value)
        except (TypeError, ValueError):
            raise InvalidOptions(f"option {name}: {value!r} is not a number") from None
    if hint is str:
        return str(value)
    return value


N = TypeVar("N", int, float)


def bounded(default: N | None, low: N, high: N, unit: str) -> Any:
    """A numeric option: its default and the range it must lie in, declared with the field
    (``check_bounds`` enforces it). The ranges keep a match finite and its numbers in proto's."""
    return dataclasses.field(default=default, metadata={"bounds": (low, high, unit)})


def check_bounds(options: object) -> None:
    """Every ``bounded`` field of an options dataclass within its range (None, where allowed, is
    the option's own "not set"), else ``InvalidOptions`` stating the range."""
    cls = type(options)
    bounded_fields = _BOUNDS.get(cls)
    if bounded_fields is None:  # read once per class: every options object checks itself
        assert dataclasses.is_dataclass(options)
        fields = dataclasses.fields(options)
        bounded_fields = [(f.name, f.metadata["bounds"]) for f in fields if "bounds" in f.metadata]
        _BOUNDS[cls] = bounded_fields
    for name, (low, high, unit) in bounded_fields:
        value = getattr(options, name)
        if value is not None and not low <= value <= high:  # NaN fails too
            raise InvalidOptions(f"{name} must be {low} to {high} {unit}, not {value}")


_BOUNDS: dict[type, list[tuple[str, tuple[Any, Any, str]]]] = {}


def check_players(players: int, low: int, high: int, game: str) -> None:
    """The shared player-count check of every options class."""
    if not low <= players <= high:
        raise InvalidOptions(f"{game} is played by {low} to {high} players, not {players}")


# --- the registry entry of a game ---------------------------------------------------


class GameSpec(NamedTuple, Generic[O]):
    """What the referee and tools need to know of one game, by name.

    A NamedTuple, not a frozen dataclass: mypyc cannot build a generic dataclass.
    """

    name: str
    title: str
    options_type: type[O]
    new_game: Callable[[O, Rng], GameState[Any, Any]]
    parse_action: Callable[[str], Action]
    min_players: int
    max_players: int
    test_variants: tuple[O, ...]
    """Option sets the conformance harness plays (every variant, every player count)."""

    def options(self, values: Mapping[str, Any] | None = None) -> O:
        return options_from_dict(self.options_type, values or {})
