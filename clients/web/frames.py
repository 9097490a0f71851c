"""Spectator frames as JSON for the browser: the one place they become plain values.

Frames are decoded by the scenes of ``clients/scenes.py`` into headers
and scenes of engine views, exactly as ``croupier watch`` sees them; here those become JSON.
A hidden hand is ``None`` in a public view, so it is ``null`` here: the browser draws card
backs and a count, and never receives a card the referee did not show.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Iterable
from typing import Any

from croupier.clients.scenes import Header, Replay, Scene, Scenes, header_of
from croupier.engine.cards import Card
from croupier.v1 import match_pb2, spectator_pb2

Kind = spectator_pb2.Step.Kind


def plain(value: Any) -> Any:
    """An engine value as JSON-ready data: a card as its text ("10h"), an enum as its name in
    the rules ("play", "h", "J"), a record as a dict of its fields, tuples as lists."""
    if isinstance(value, enum.Enum):  # a rank (IntEnum) by its text form: "J", not 11
        return value.value if isinstance(value.value, str) else str(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Card):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list | frozenset | set):
        return [plain(v) for v in value]
    raise TypeError(f"no JSON form for {type(value).__name__}")


def header_json(header: Header, info: match_pb2.MatchInfo | None = None) -> dict[str, Any]:
    """A match as a whole; with its MatchInfo, also its clocks, creation time and each seat's
    timeouts, refusals and forfeit (the result's details)."""
    document: dict[str, Any] = plain(header)
    if info is not None:
        document["clocks"] = {"decision_ms": info.clocks.decision_ms, "bank_ms": info.clocks.bank_ms}
        document["created_unix_ms"] = info.created_unix_ms
        document["forfeited"] = [p.forfeited for p in sorted(info.players, key=lambda p: p.seat)]
        document["seed_sha256"] = info.seed_sha256
        document["sealed"] = info.sealed  # its twin still plays the deal (anyone can tell: seed_sha256)
        if info.HasField("seed"):
            document["seed"] = str(info.seed)
        if info.result.seats:
            document["details"] = [
                {"timeouts": s.timeouts, "refusals": s.refusals, "forfeited": s.forfeited}
                for s in sorted(info.result.seats, key=lambda s: s.seat)
            ]
        if info.cancel_reason:
            document["cancel_reason"] = info.cancel_reason
        if info.damage:
            document["damage"] = info.damage
    return document


def lobby_entry(info: match_pb2.MatchInfo) -> dict[str, Any]:
    """One match in the lobby's list."""
    return header_json(header_of(info), info)


def scene_json(scene: Scene) -> dict[str, Any]:
    document: dict[str, Any] = plain(scene)
    view = scene.view
    document["to_act"] = [] if getattr(view, "to_act", None) is None else [view.to_act]
    return document


def replay_json(replay: Replay, info: match_pb2.MatchInfo | None = None) -> dict[str, Any]:
    """A finished match, every step: what the replay page and the HTML export show."""
    return {"header": header_json(replay.header, info), "scenes": [scene_json(s) for s in replay.scenes]}


def dumps(document: Any) -> str:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


class Banks:
    """Each seat's time bank, spent as the referee spends it (``server/match.py``): a decision
    longer than ``decision_ms`` takes the excess from the bank; a timeout or a forfeit empties it.

    Worked out from the frames' referee times alone, which anyone watching sees: a turn starts
    with the frame that makes the seat the one to act and ends with its action's frame. Pair
    Battle has no turns, so it has no banks here."""

    def __init__(self, seats: int, clocks: match_pb2.Clocks) -> None:
        self.decision_ms = clocks.decision_ms
        self.left = [clocks.bank_ms] * seats
        self.acting_since: list[int | None] = [None] * seats

    def update(self, frame: spectator_pb2.MatchFrame, to_act: Iterable[int]) -> dict[str, Any]:
        now, kind = frame.time_ms, frame.step.kind
        if frame.step.HasField("seat") and 0 <= frame.step.seat < len(self.left):
            seat = frame.step.seat
            since = self.acting_since[seat]
            if kind == Kind.ACTION and since is not None:
                self.left[seat] = max(0, self.left[seat] - max(0, now - since - self.decision_ms))
            elif kind in (Kind.TIMEOUT, Kind.FORFEIT):
                self.left[seat] = 0
            if kind in (Kind.ACTION, Kind.TIMEOUT, Kind.FALLBACK):
                self.acting_since[seat] = None
        acting = set(to_act)
        for seat in range(len(self.left)):
            if seat not in acting:
                self.acting_since[seat] = None
            elif self.acting_since[seat] is None:
                self.acting_since[seat] = now
        return {
            "decision_ms": self.decision_ms,
            "banks_ms": list(self.left),
            "acting_since_ms": list(self.acting_since),
        }


class LiveFeed:
    """One match's frames, as they arrive, turned into the JSON messages the browser is sent:
    ``{"header": ...}`` whenever the frame carries the match's info (its first and last), and
    ``{"scene": ...}`` for every frame, with the seats' banks in turn-based games when the feed
    began with the match's start."""

    def __init__(self) -> None:
        self.scenes: Scenes | None = None
        self.banks: Banks | None = None
        self.header: dict[str, Any] | None = None

    def add(self, frame: spectator_pb2.MatchFrame) -> dict[str, Any] | None:
        """The message for ``frame``; None for frames before the first that names the match."""
        message: dict[str, Any] = {}
        if frame.HasField("info"):
            self.header = header_json(header_of(frame.info), frame.info)
            message["header"] = self.header
            if self.scenes is None:
                self.scenes = Scenes(frame.info.game)
                # banks are known only to a feed that saw every turn: one that began before the
                # match did (a snapshot of record 0, the header); Pair Battle has no turns
                if frame.info.game != "pair_battle" and (frame.step.kind == Kind.START or frame.seq == 0):
                    self.banks = Banks(len(frame.info.players), frame.info.clocks)
        if self.scenes is None:
            return None
        scene = scene_json(self.scenes.scene(frame))
        if self.banks is not None:
            scene["clocks"] = self.banks.update(frame, scene["to_act"])
        message["scene"] = scene
        return message
