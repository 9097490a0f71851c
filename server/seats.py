"""Seats and decisions: who plays each seat, the referee's record of it (holder, clocks,
timeouts, its open decision), decision ids, and the places forfeited seats end in.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from croupier.engine.core import Action
from croupier.server.lifecycle import Settled
from croupier.server.session import Session


@dataclass(frozen=True)
class Player:
    name: str
    bot_id: str
    """The invited bot; empty for a seat joined by its seat token."""
    token_sha256: str


@dataclass
class Decision:
    id: int
    legal: list[Action]
    deadline: float
    """Referee time when the seat's clock runs out."""


@dataclass
class SeatState:
    """The referee's side of one seat: who holds it and its clocks."""

    bank: float
    holder: Session | None = None
    gone_since: float | None = None
    """Referee time the seat lost its bot (running matches only; never for a forfeited seat)."""
    forfeited: str = ""
    timeouts: int = 0
    refusals: int = 0
    decision: Decision | None = None
    acting_since: float | None = None
    """Referee time the seat's clock started: it has been to act ever since."""
    asked: int = 0
    """The id of the decision its bot was last sent: an open one not sent yet goes with the next
    publish (a failed job may have opened it and not got to sending it)."""
    last_think: float = 0.0
    decisions: int = 0
    """Decisions opened for the seat in this run of the referee: its ids count them."""
    resolved: tuple[int, Settled, Action] | None = None
    """The last decision settled: (its id, how, the action applied)."""
    unsent: list[bytes] = field(default_factory=list)
    """Events its bot has not been sent yet (serialized): those of its own move (told by an
    ActionResult, or accepted quietly), and with deferred updates every event while it is not asked
    to decide, wait for its next message instead of a ViewUpdate of their own."""
    accepted: int = 0
    """Moves accepted without an ActionResult since its stream took it (quiet acceptance)."""


def decision_id(epoch: int, seat: int, count: int) -> int:
    """The id of a seat's ``count``-th decision in run ``epoch`` of its match: unique in the match,
    growing for each seat across restarts, and telling a seat nothing about the others (a count
    shared by every seat would show how often the others were asked)."""
    return (epoch << 32) | (seat << 24) | count


def final_places(engine_places: tuple[int, ...] | list[int], forfeited: list[bool]) -> list[int]:
    """The engine's ranking among the seats that played on, forfeited seats sharing the last place."""
    playing = [p for p, gone in zip(engine_places, forfeited, strict=True) if not gone]
    last = len(playing) + 1
    return [
        last if gone else 1 + sum(1 for other in playing if other < place)
        for place, gone in zip(engine_places, forfeited, strict=True)
    ]
