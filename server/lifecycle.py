"""A match's life, as explicit states with the moves allowed between them (a move not in a table
is a bug, raised with both states named): where its actor is in a job's cycle (``Phase``), what
the match is (``MatchStatus``), and how a seat's last decision was settled (``Settled``).

A job's cycle: the actor is IDLE until a job is posted (DUE: a drain is scheduled on the loop) or
run at once (a move, by the stream that read it: straight to JOB); the drain runs each JOB; a job
that told anything leaves the match CHANGED, so it is SETTLING before the next job (forfeited
seats played, decisions opened or closed, views pushed, the timer armed). A job or settling that
raises leaves the match FAILED: it is rebuilt from its journal and the job runs once more, or the
match ends. OVER (finished or cancelled) and STOPPED (the referee shuts down, the journal left
resumable) are final.
"""

from __future__ import annotations

import enum

from croupier.server.messages import Status


class Phase(enum.Enum):
    __hash__ = object.__hash__  # identity, in C (Enum's hashes its name in Python): 5 moves a decision

    NEW = "new"
    """Built (or rebuilt from its journal); its actor not started yet."""
    IDLE = "idle"
    DUE = "due"
    """Jobs are posted and a drain is scheduled on the loop."""
    JOB = "job"
    """A job runs (or has run and changed nothing)."""
    CHANGED = "changed"
    """A job told something (a journaled change, a seat coming or going): settle before the next."""
    SETTLING = "settling"
    FAILED = "failed"
    """A job or its settling raised: its effects are undone by rebuilding from the journal."""
    OVER = "over"
    STOPPED = "stopped"


PHASE_MOVES: dict[Phase, frozenset[Phase]] = {
    Phase.NEW: frozenset({Phase.DUE, Phase.STOPPED}),
    Phase.IDLE: frozenset({Phase.DUE, Phase.JOB, Phase.STOPPED}),
    Phase.DUE: frozenset({Phase.JOB, Phase.IDLE, Phase.STOPPED}),
    Phase.JOB: frozenset({Phase.JOB, Phase.CHANGED, Phase.IDLE, Phase.FAILED, Phase.OVER}),
    Phase.CHANGED: frozenset({Phase.SETTLING, Phase.FAILED, Phase.OVER}),
    Phase.SETTLING: frozenset({Phase.JOB, Phase.FAILED, Phase.OVER}),
    Phase.FAILED: frozenset({Phase.JOB, Phase.OVER}),
    Phase.OVER: frozenset(),
    Phase.STOPPED: frozenset(),
}
"""Where each phase may go. Posting while DUE, JOB or CHANGED, or telling while CHANGED, SETTLING
or FAILED, stays put (no move). The referee stops a match between jobs only (NEW, IDLE, DUE)."""


WAITING = Status.MATCH_STATUS_WAITING
RUNNING = Status.MATCH_STATUS_RUNNING
FINISHED = Status.MATCH_STATUS_FINISHED
CANCELLED = Status.MATCH_STATUS_CANCELLED
"""The statuses a match lives through, looked up once (a protobuf enum's attribute is a Python
lookup in its descriptor, about a microsecond: a match reads its status on every decision)."""

STATUS_MOVES: dict[Status.ValueType, frozenset[Status.ValueType]] = {
    WAITING: frozenset({RUNNING, CANCELLED}),
    RUNNING: frozenset({FINISHED, CANCELLED}),
    FINISHED: frozenset(),
    CANCELLED: frozenset(),
}
"""A match's status as the referee lives it (DAMAGED is only ever read from files)."""


class Settled(enum.Enum):
    """How a seat's last decision was settled (what a repeated answer to it is told)."""

    ACCEPTED = "accepted"
    TIMED_OUT = "timed out"


class BadTransition(AssertionError):
    """A move its table does not allow: a bug in the match, never a bot's doing."""


def check_phase(old: Phase, new: Phase) -> Phase:
    if new not in PHASE_MOVES[old]:
        raise BadTransition(f"a match's actor cannot go from {old.name} to {new.name}")
    return new


def check_status(old: Status.ValueType, new: Status.ValueType) -> Status.ValueType:
    if new not in STATUS_MOVES.get(old, frozenset()):
        raise BadTransition(f"a match cannot go from {Status.Name(old)} to {Status.Name(new)}")
    return new
