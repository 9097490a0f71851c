"""Scenes: a match as a spectator may see it, change by change, and where they come from (a
referee's frames, live or a finished match's record, or a journal file). The terminal spectator
(``clients/terminal``) and the web viewer (``clients/web``) both draw them; neither imports the other
for them.

Frames are decoded into engine views by ``croupier.wire.convert``, the one conversion module, so
the drawing code sees the same objects as a bot does.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from croupier.engine.games import get_game
from croupier.v1 import match_pb2, spectator_pb2
from croupier.wire import convert

EVENT_LINES = 8
"""Events shown at once, newest last."""


@dataclass(frozen=True)
class Header:
    """What is known of a match as a whole."""

    match_id: str
    game: str
    title: str
    players: tuple[str, ...]
    status: str = "running"
    """waiting, running or finished."""
    result: tuple[tuple[int, int], ...] | None = None
    """(place, score) per seat, once finished."""
    note: str = ""
    """A line for the header: the replay check's verdict, the source, ..."""
    forfeited: tuple[str, ...] = ()
    """Per seat, why it forfeited ("timeouts", "disconnected", "refusals"), or "" (or no seats: not known)."""
    forked_from: str = ""
    """A fork's source, ``MATCH_ID@STEP``; "" for a match dealt as itself."""
    luck: tuple[float | None, ...] = ()
    """Per seat, what chance gave it after the deal (a finished journal's re-run measured by this
    croupier's value function: clients/results/luck_journal.py), in the games luck is measured in;
    () elsewhere."""


@dataclass(frozen=True)
class Scene:
    """A match after one change, as a spectator may see it."""

    seq: int
    time_ms: int
    step: str
    """What caused it, in words ("seat 1 acted: 7h", "the clock moved on")."""
    events: tuple[str, ...]
    view: Any
    """The game's engine view: public (hands hidden) or full."""
    events_before: tuple[str, ...] = field(default=(), compare=False)
    """Earlier events, for the event log (the latest EVENT_LINES)."""
    comment: str = ""
    """What the acting seat's bot said of its move, for its author: only in a finished match's
    record (the referee never sends one live)."""


FORKS_FOLDER = "web-forks"
"""The data of the referee a web viewer embeds for forks of journals on disk (clients/web/fork_play.py)."""
JOURNAL_FOLDERS = ("matches", "referee/matches", f"{FORKS_FOLDER}/matches")
"""Where journals are under a data directory: ``croupier serve``'s, then those of the referee that
``croupier tournament``, ``croupier match`` and ``make run`` embed, then the web viewer's forks'."""
RECORD_BYTES = 256 * 1024 * 1024
"""The largest match record accepted from a referee (gRPC's default is 4 MB)."""


STATUS = {
    match_pb2.MATCH_STATUS_WAITING: "waiting",
    match_pb2.MATCH_STATUS_RUNNING: "running",
    match_pb2.MATCH_STATUS_FINISHED: "finished",
    match_pb2.MATCH_STATUS_CANCELLED: "cancelled",
    match_pb2.MATCH_STATUS_DAMAGED: "damaged",
}

Kind = spectator_pb2.Step.Kind


def header_of(info: match_pb2.MatchInfo, note: str = "") -> Header:
    result = None
    if info.status == match_pb2.MATCH_STATUS_FINISHED and info.result.seats:
        result = tuple((s.place, s.score) for s in sorted(info.result.seats, key=lambda s: s.seat))
    return Header(
        match_id=info.match_id,
        game=info.game,
        title=get_game(info.game).title,
        players=tuple(p.name for p in sorted(info.players, key=lambda p: p.seat)),
        status=STATUS.get(info.status, "unknown"),
        result=result,
        note=note,
        forfeited=tuple(p.forfeited for p in sorted(info.players, key=lambda p: p.seat)),
        forked_from=info.forked_from,
    )


def step_text(step: spectator_pb2.Step, codec: convert.GameCodec) -> str:
    """What caused a frame, in words (the action only where the frame carries it)."""
    seat = f"seat {step.seat}" if step.HasField("seat") else "a seat"
    action = str(codec.action_from_proto(step.action)) if step.HasField("action") else ""
    kind = step.kind
    if kind == Kind.START:
        return "the match starts"
    if kind == Kind.ACTION:
        return f"{seat} plays {action}" if action else f"{seat} acts"
    if kind == Kind.TIMEOUT:
        return f"{seat}'s clock ran out" + (f": the referee played {action}" if action else "")
    if kind == Kind.FALLBACK:
        return f"the referee plays for {seat}" + (f": {action}" if action else "")
    if kind == Kind.REFUSAL:
        return f"{seat} was refused" + (f": {step.reason}" if step.reason else "")
    if kind == Kind.CLOCK:
        return "time moves on"
    if kind == Kind.FORFEIT:
        return f"{seat} is forfeited ({step.reason})"
    if kind == Kind.END:
        return "the match ends"
    if kind == Kind.SNAPSHOT:
        return "joined here"
    if kind == Kind.CANCEL:
        return f"the match is cancelled: {step.reason}"
    return "a change"


class Scenes:
    """Turns one match's frames into scenes, keeping the event log between them."""

    def __init__(self, game: str) -> None:
        self.codec = convert.codec(game)
        self.log: list[str] = []

    def scene(self, frame: spectator_pb2.MatchFrame) -> Scene:
        events = tuple(e.text for e in frame.events)
        scene = Scene(
            seq=frame.seq,
            time_ms=frame.time_ms,
            step=step_text(frame.step, self.codec),
            events=events,
            view=self.codec.view_from_proto(frame.view),
            events_before=tuple(self.log[-EVENT_LINES:]),
            comment=frame.step.comment,
        )
        self.log.extend(events)
        return scene

    def all(self, frames: Iterable[spectator_pb2.MatchFrame]) -> list[Scene]:
        return [self.scene(frame) for frame in frames]


@dataclass
class Replay:
    """A finished (or stopped) match, every hand shown, ready to step through."""

    header: Header
    scenes: list[Scene]


def from_record(record: spectator_pb2.MatchRecord) -> Replay:
    """A referee's record of a match (GetRecord): re-run there from its journal."""
    scenes = Scenes(record.info.game).all(record.frames)
    return Replay(header_of(record.info, note="re-run by the referee from its journal"), scenes)


def from_journal(path: Path, seed: int | None = None) -> Replay:
    """Re-run a journal here with the engine (server/journal.py: the same re-run as ``--check``) and say
    whether it reproduces the recorded result."""
    from croupier.server import journal, replay
    from croupier.server.messages import replay_frames

    records = journal.read_records(path)
    if not records:
        raise ValueError(f"{path} is not a match journal (no header)")
    head, end = records[0], (records[-1] if isinstance(records[-1], journal.End) else None)
    assert isinstance(head, journal.Header)  # read_records' first record
    if end is not None:
        seed = end.seed
    elif seed is None:
        seed = journal.seed_beside(path)
    if seed is None:
        raise ValueError(f"{path}: the match has not ended, so its seed is not in the journal: give --seed")
    try:
        replay.replay_journal(path, seed)
        note = (
            "✓ the engine's re-run reproduces the recorded result"
            if end
            else "✓ re-run: the match has not ended"
        )
    except replay.ReplayMismatch as exc:
        note = f"✗ {exc}"
    spec = get_game(head.game)
    frames: Iterator[spectator_pb2.MatchFrame] = replay_frames(
        spec, spec.options(head.options), seed, records, reveal=True
    )
    scenes = Scenes(head.game)
    collected: list[Scene] = []
    try:
        for frame in frames:
            collected.append(scenes.scene(frame))
    except ValueError as exc:  # a record the engine refuses: show what did replay
        note = f"✗ stops at step {len(collected)}: {exc}"
    result = None
    if end is not None:
        result = tuple(zip(end.places, end.scores, strict=True))
    header = Header(
        match_id=head.match_id,
        game=head.game,
        title=spec.title,
        players=tuple(p.name for p in head.players),
        status="finished" if end else "unfinished",
        result=result,
        note=note,
        forfeited=tuple(end.forfeited) if end is not None else (),
        forked_from=head.forked_from,
        luck=_luck(records, seed) if end is not None and not note.startswith("✗") else (),
    )
    return Replay(header, collected)


def _luck(records: list[Any], seed: int) -> tuple[float | None, ...]:
    """Each seat's luck in a finished match that re-ran as recorded; () where it is not measured."""
    from croupier.clients.results.luck import default_evaluator
    from croupier.clients.results.luck_journal import MEASURED, records_luck

    game = records[0].game
    if game not in MEASURED:
        return ()
    return tuple(records_luck(records, seed, default_evaluator(game), fresh=False))


def describe(info: match_pb2.MatchInfo) -> dict[str, Any]:
    """One line of the match list, as plain values."""
    return {
        "id": info.match_id,
        "game": info.game,
        "players": ", ".join(p.name for p in sorted(info.players, key=lambda p: p.seat)),
        "status": STATUS.get(info.status, "unknown"),
    }
