"""The results and frames a match sends, built from its fields or its journal's records (replays
build the same frames): MatchResult, MatchFrame. Its commonest messages to bots are written as
bytes: framing.py.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, assert_never

from croupier.engine.core import Event, GameSpec, GameState, MalformedInput
from croupier.engine.rng import Rng
from croupier.server.journal import (
    Act,
    Auto,
    Cancel,
    Clock,
    End,
    Forfeit,
    Fork,
    Header,
    Played,
    Record,
    Recount,
    Refuse,
    Resume,
    Start,
    Timeout,
    apply_record,
)
from croupier.v1 import bots_pb2, match_pb2, spectator_pb2
from croupier.wire import convert

Status = match_pb2.MatchStatus
Result = bots_pb2.ActionResult
Kind = spectator_pb2.Step.Kind

EDGES = (Start, End, Cancel)
"""Records whose frame carries the MatchInfo."""


def step_kind(record: Record) -> spectator_pb2.Step.Kind.ValueType:
    """What a record is to a spectator (the header and resumes are no step: ``shown``)."""
    match record:
        case Start():
            return Kind.START
        case Act():
            return Kind.ACTION
        case Timeout():
            return Kind.TIMEOUT
        case Auto():
            return Kind.FALLBACK
        case Refuse():
            return Kind.REFUSAL
        case Clock() | Recount():
            return Kind.CLOCK
        case Forfeit():
            return Kind.FORFEIT
        case End():
            return Kind.END
        case Cancel():
            return Kind.CANCEL
        case Header() | Resume() | Fork():
            raise ValueError(f"a {record.KIND} record is not shown as a step")
        case _:
            assert_never(record)


def shown(record: Record) -> bool:
    """Whether spectators see a record as a frame (not the header, nor a referee's resume, nor
    where a fork's own play begins: its next frame is new play)."""
    return not isinstance(record, Header | Resume | Fork)


@dataclass
class Subscription:
    """A spectator's live feed: frames, then None when the match is over."""

    admin: bool
    frames: asyncio.Queue[spectator_pb2.MatchFrame | None] = field(default_factory=asyncio.Queue)
    overrun: bool = False
    """Ended because it left MAX_QUEUED frames unread (the match does not wait for a spectator)."""


def match_result(header: Header, end: End) -> match_pb2.MatchResult:
    """A finished match's result, from its journal's header and ``end`` records."""
    places = end.places
    return match_pb2.MatchResult(
        seats=[
            match_pb2.SeatResult(
                seat=i,
                name=player.name,
                bot_id=player.bot_id,
                place=places[i],
                score=end.scores[i],
                timeouts=end.timeouts[i],
                refusals=end.refusals[i],
                forfeited=end.forfeited[i],
            )
            for i, player in enumerate(header.players)
        ],
        winners=[i for i, place in enumerate(places) if place == 1],
        duration_ms=ms(end.at),
    )


def withheld(info: match_pb2.MatchInfo) -> match_pb2.MatchInfo:
    """A sealed match's info as a spectator may see it: without its seed and result."""
    kept = match_pb2.MatchInfo()
    kept.CopyFrom(info)
    kept.ClearField("seed")
    kept.ClearField("result")
    return kept


def build_frame(
    codec: convert.GameCodec,
    match_id: str,
    seq: int,
    record: Record,
    events: list[Event],
    state: GameState[Any, Any],
    reveal: bool,
    info: Callable[[], match_pb2.MatchInfo] | None,
    sealed: bool = False,
) -> spectator_pb2.MatchFrame:
    """A frame of one journal record, after it was applied to ``state``.

    Hidden cards and actions (which may name them) only if ``reveal`` or once the game is over
    (unless ``sealed``: a twin still plays the deal, and the frame's info loses its seed and
    result); a bot's comment on its move only if ``reveal`` (the admin's, or the record of a
    match that is over: never a live frame, where another seat's bot may be the one watching);
    the match's ``info`` on the records that start and end it.
    """
    step = spectator_pb2.Step(
        kind=step_kind(record), seat=record.seat if isinstance(record, Played | Refuse | Forfeit) else None
    )
    if reveal and isinstance(record, Act) and record.comment:
        step.comment = record.comment
    reveal = reveal or (state.is_over() and not sealed)
    if isinstance(record, Forfeit | Cancel):
        step.reason = record.reason
    elif reveal:
        if isinstance(record, Played):
            step.action.MergeFromString(codec.action_bytes(codec.spec.parse_action(record.action)))
        elif isinstance(record, Refuse):
            step.reason = record.reason
            with contextlib.suppress(MalformedInput):  # an attempt that was no action: the reason says so
                step.action.MergeFromString(codec.action_bytes(codec.spec.parse_action(record.action)))
    view = state.full_view() if reveal else state.public_view()
    about = None
    if info is not None and isinstance(record, EDGES):
        about = withheld(info()) if sealed else info()
    return spectator_pb2.MatchFrame(
        match_id=match_id,
        seq=seq,
        time_ms=ms(record.at),
        step=step,
        events=[codec.event(e) for e in events],
        view=codec.view(view),
        info=about,
    )


def replay_frames(
    spec: GameSpec[Any],
    options: Any,
    seed: int,
    records: list[Record],
    reveal: bool,
    info: Callable[[], match_pb2.MatchInfo] | None = None,
    sealed: bool = False,
) -> Iterator[spectator_pb2.MatchFrame]:
    """The frames of a journal's records, re-run from the seed (the header is record 0); ``sealed``
    as ``build_frame`` takes it."""
    if not records:
        return
    codec = convert.codec(spec.name)
    state = spec.new_game(options, Rng(seed))
    header = records[0]
    assert isinstance(header, Header)
    for seq, record in enumerate(records):
        if not shown(record):
            continue
        events = apply_record(spec, state, record)
        yield build_frame(codec, header.match_id, seq, record, events, state, reveal, info, sealed)


def ms(seconds: float) -> int:
    """Whole milliseconds, rounded half up; never negative."""
    return int(seconds * 1000 + 0.5) if seconds > 0 else 0
