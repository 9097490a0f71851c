"""A person's seat at the table: a bot stream to the referee, held by the web viewer, whose moves
are the clicks of the one browser that claimed the seat.

The seat plays as any bot does (``BotService.Play`` with its bot token, or a fork's seat token),
so what the person is shown is what the referee sends that seat, decoded by the one codec
(``croupier.wire.convert``): the referee's seat stream is the only place that decides what a seat
sees (wire/seat_view.py), and nothing here adds to it. The page gets that view as JSON and sends
back a choice; the referee judges it, as any bot's.

Who may act: the seat's link (printed by ``croupier match --human``) holds a one-time key; the
first browser to open it gets an HttpOnly, SameSite=Strict cookie with a fresh secret, and the
link is spent. The seat's feed and its moves need that cookie, and a move also a header of ours
(``X-Croupier-Seat``) that another site's page cannot send without a CORS preflight, which this
server never allows. Everyone else sees the match as any spectator (hands face down).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import hmac
import logging
import secrets
import time
from collections.abc import Sequence
from typing import Any, TypeGuard

import grpc

from croupier.clients.scenes import Scene
from croupier.clients.web.frames import dumps, scene_json
from croupier.engine.cards import Card
from croupier.engine.games import get_game
from croupier.v1 import bots_pb2, bots_pb2_grpc
from croupier.wire import convert

COOKIE = "croupier-seat"
HEADER = "X-Croupier-Seat"
"""The header a move must carry (any value): only the seat page's script sends it."""
DECISION_MS, BANK_MS = 60_000, 300_000
"""A human seat's clocks (``croupier match --human``): a minute a move and five in the bank, where
bots get the referee's 5 s and 30 s."""
LOG_LINES = 8
LEAVE_SECONDS = 30.0
"""After the run, how often the seat looks for a page still holding its feed: with none, the
person has gone, and the run ends as if they had left."""
RETRY_SECONDS = (0.5, 5.0)
FATAL = frozenset(
    {grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.INVALID_ARGUMENT}
)
log = logging.getLogger("croupier.seat")


class Refused(ValueError):
    """A move the page sent that is not one: a clear line back, nothing sent to the referee."""


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


class HumanSeat:
    """The seat's stream, what the page is shown, and who holds the seat."""

    def __init__(
        self,
        server: str,
        name: str = "you",
        credentials: grpc.ChannelCredentials | None = None,
        *,
        hints: bool = False,
    ) -> None:
        self.server = server
        self.name = name
        self.credentials = credentials
        self.hints = hints
        """Whether the person may ask what boss-1 would play: only where nothing is rated (a fork)."""
        self._link: bytes | None = None
        """The digest of the one-time key of the seat's link; None once it was used."""
        self._session: bytes | None = None
        """The digest of the cookie's secret of the browser that holds the seat."""
        self.state: dict[str, Any] = {"note": "waiting for a match to start", "you": name, "hints": hints}
        self.version = 0
        self.changed = asyncio.Condition()
        self.finished = 0
        self._outbox: asyncio.Queue[bots_pb2.BotMessage] | None = None
        self._task: asyncio.Task[None] | None = None
        self._match: dict[str, Any] | None = None
        self._read = asyncio.Event()
        """The person has read the last match's result and asked for the next (set until a match ends)."""
        self._read.set()
        self._between = asyncio.Event()
        """No match of the seat's in progress as its stream has seen it (the runner may learn that a
        match ended before the seat's stream delivers its end)."""
        self._between.set()
        self._after: asyncio.Future[bool] | None = None
        """Once the run is over: whether the person asks for a rematch (True) or leaves (False)."""
        self.feeds = 0
        """Pages holding the seat's feed now."""

    # --- who holds it ------------------------------------------------------------------------

    def new_link(self) -> str:
        """A fresh one-time key for the seat's link (``/seat/KEY``); any earlier one is void."""
        key = secrets.token_urlsafe(24)
        self._link = _digest(key)
        return key

    def claim(self, key: str) -> str | None:
        """The cookie's secret for the browser opening the link with ``key``; None if the key is
        not the link's, or the link was used already."""
        if self._link is None or not hmac.compare_digest(self._link, _digest(key)):
            return None
        self._link = None
        secret = secrets.token_urlsafe(32)
        self._session = _digest(secret)
        return secret

    def holds(self, cookie: str | None) -> bool:
        return (
            cookie is not None
            and self._session is not None
            and hmac.compare_digest(self._session, _digest(cookie))
        )

    # --- the stream ----------------------------------------------------------------------------

    def take(self, tokens: Sequence[str], matches: int | None = None) -> None:
        """Play the seat(s) of ``tokens`` from now (a bot token, or a fork's seat token), until
        ``matches`` matches ended (None: until stopped)."""
        self._task = asyncio.ensure_future(self._play(list(tokens), matches))

    @property
    def done(self) -> bool:
        """Its matches are over, or it was stopped (or never began)."""
        return self._task is None or self._task.done()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def wait(self) -> None:
        """Until the seat's matches are over (``take``'s ``matches``)."""
        if self._task is not None:
            await self._task

    async def _play(self, tokens: list[str], matches: int | None) -> None:
        delay = RETRY_SECONDS[0]
        while matches is None or self.finished < matches:
            try:
                await self._stream(tokens, matches)
                delay = RETRY_SECONDS[0]
            except grpc.aio.AioRpcError as exc:
                if exc.code() in FATAL:
                    await self._show(note=f"the referee refused this seat: {exc.details()}")
                    return
                log.info("seat stream to %s lost (%s); reconnecting", self.server, exc.code().name)
            if matches is not None and self.finished >= matches:
                return
            await asyncio.sleep(delay)
            delay = min(RETRY_SECONDS[1], delay * 2)

    async def _stream(self, tokens: list[str], matches: int | None) -> None:
        options = [("grpc.keepalive_time_ms", 20_000)]
        channel = (
            grpc.aio.secure_channel(self.server, self.credentials, options)
            if self.credentials
            else grpc.aio.insecure_channel(self.server, options)
        )
        async with channel:
            metadata = tuple(("croupier-token", token) for token in tokens)
            call = bots_pb2_grpc.BotServiceStub(channel).Play(metadata=metadata)  # type: ignore[call-arg]
            hello = bots_pb2.Hello(protocol_version=1, name=self.name, max_matches=1)
            await call.write(bots_pb2.BotMessage(hello=hello))
            outbox = self._outbox = asyncio.Queue()
            writer = asyncio.ensure_future(self._write(call, outbox))
            try:
                async for message in call:
                    for each in message.batch.messages if message.HasField("batch") else [message]:
                        await self._receive(each)
                    if matches is not None and self.finished >= matches:
                        return
            finally:
                self._outbox = None
                writer.cancel()
                call.cancel()

    @staticmethod
    async def _write(call: Any, outbox: asyncio.Queue[bots_pb2.BotMessage]) -> None:
        while True:
            message = await outbox.get()
            try:
                await call.write(message)
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                return

    # --- what the referee says -----------------------------------------------------------------

    async def _receive(self, message: bots_pb2.ServerMessage) -> None:
        kind = message.WhichOneof("message")
        match = self._match
        if kind == "match_started":
            started = message.match_started
            if match is None or match["id"] != started.match_id:
                self._match = match = {
                    "id": started.match_id,
                    "codec": convert.codec(started.game),
                    "game": started.game,
                    "started": time.monotonic(),
                    "log": [],
                    "seq": 0,
                }
                self._between.clear()
            header: dict[str, Any] = {
                "match_id": started.match_id,
                "game": started.game,
                "title": get_game(started.game).title,
                "players": [p.name for p in sorted(started.players, key=lambda p: p.seat)],
                "status": "running",
                "clocks": {"decision_ms": started.clocks.decision_ms, "bank_ms": started.clocks.bank_ms},
            }
            match["options"] = match["codec"].options_from_proto(started.options)
            await self._show(header=header, seat=started.seat, asked=None, refused=None, note="")
        elif match is None or kind is None or getattr(message, kind).match_id != match["id"]:
            return  # nothing of a match this seat plays now
        elif kind == "decision":
            decision = message.decision
            codec = match["codec"]
            legal = [codec.action_from_proto(a) for a in decision.legal_actions]
            asked = {
                "decision_id": decision.decision_id,
                "legal": [{"text": str(a), "cards": _cards(a)} for a in legal],
                "deadline_ms": decision.deadline_ms,
                "bank_ms": decision.time_bank_ms,
            }
            view = codec.view_from_proto(decision.view)
            match["decision"] = (decision.decision_id, view, legal)  # what a hint searches
            await self._show(scene=self._scene(decision.view, decision.events), asked=asked)
        elif kind == "view_update":
            update = message.view_update
            await self._show(scene=self._scene(update.view, update.events))
        elif kind == "action_result":
            result = message.action_result
            if result.status == bots_pb2.ActionResult.REFUSED:
                reason = bots_pb2.ActionResult.RefusalReason.Name(result.refusal_reason)
                await self._show(refused={"reason": result.reason, "kind": reason})
            elif result.status == bots_pb2.ActionResult.TIMED_OUT:
                played = str(match["codec"].action_from_proto(result.action))
                await self._show(refused={"reason": f"your clock ran out: the referee played {played}"})
            elif result.status == bots_pb2.ActionResult.ACCEPTED:
                await self._show(refused=None)
        elif kind == "match_ended":
            ended = message.match_ended
            scene = self._scene(ended.view, ended.events)
            header = {**self.state["header"], "status": "finished"}
            results = self.state.get("results", [])
            if ended.result.seats:
                seats = sorted(ended.result.seats, key=lambda s: s.seat)
                header["result"] = [[s.place, s.score] for s in seats]
                seat = self.state["seat"]
                # each seating's, kept for the next: the page adds them up
                results = [*results, {"players": header["players"], "seat": seat, "result": header["result"]}]
            self.finished += 1
            self._match = None
            self._read.clear()  # the next match waits until its person has read this one's result
            self._between.set()
            note = "the match is over"
            await self._show(header=header, scene=scene, asked=None, note=note, results=results)
        elif kind == "seat_forfeited" and message.seat_forfeited.seat == self.state.get("seat"):
            self.finished += 1
            self._match = None
            self._between.set()
            reason = message.seat_forfeited.reason
            await self._show(asked=None, note=f"your seat was forfeited ({reason}): the referee plays it on")
        elif kind == "error":
            await self._show(refused={"reason": message.error.message, "kind": "error"})

    def _scene(self, view: Any, events: Sequence[Any]) -> dict[str, Any]:
        """The seat's view as a scene of the spectator's shape, so the table is drawn by the
        same code (clients/web/static/table.js)."""
        match = self._match
        assert match is not None
        lines = tuple(e.text for e in events)
        match["seq"] += 1
        scene = Scene(
            seq=match["seq"],
            time_ms=round((time.monotonic() - match["started"]) * 1000),
            step=lines[-1] if lines else "",
            events=lines,
            view=match["codec"].view_from_proto(view),
            events_before=tuple(match["log"][-LOG_LINES:]),
        )
        match["log"].extend(lines)
        return scene_json(scene)

    async def _show(self, **changes: Any) -> None:
        self.state = {**self.state, **changes}
        async with self.changed:
            self.version += 1
            self.changed.notify_all()

    async def next_state(self, seen: int) -> tuple[int, str]:
        """The page's JSON once its version is past ``seen``."""
        async with self.changed:
            await self.changed.wait_for(lambda: self.version > seen)
            return self.version, dumps(self.state)

    # --- between matches, and after the run ----------------------------------------------------

    async def ready(self) -> None:
        """Until the person has read the last match's result and asked for the next: the runner
        waits for it before it creates a match of theirs (the next seating would take the page
        away from the result)."""
        await self._between.wait()  # the last match's end seen, so its result is on the page
        if not self._read.is_set():
            await self._show(next=True)
            await self._read.wait()
            await self._show(next=False)

    def go_on(self) -> None:
        """The person asks for the next match."""
        if self._read.is_set():
            raise Refused("no match of yours is over and waiting for you to go on")
        self._read.set()

    async def run_over(self, rematch: bool) -> bool:
        """The run's last match is over: the page shows the final results and offers a rematch
        (where ``rematch``) and a way out. True once the person asks for a rematch (the same
        opponents, new deals); False when they leave, or no page has held the seat's feed at one
        of the checks every ``LEAVE_SECONDS``."""
        after: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._after = after
        await self._show(run={"over": True, "rematch": rematch}, next=False)
        try:
            while True:
                with contextlib.suppress(TimeoutError):
                    again = await asyncio.wait_for(asyncio.shield(after), LEAVE_SECONDS)
                    break
                if not self.feeds:
                    again = False
                    break
        finally:
            self._after = None
        if again:  # a new pair: its results on their own, its first match not held back
            self._read.set()
            note = "a rematch: the same opponents, new deals"
            await self._show(run=None, results=[], note=note)
        else:
            await self._show(run={"over": True, "rematch": False, "left": True})
        return again

    def after_run(self, rematch: bool) -> None:
        """The person's answer at the end of the run: a rematch, or leave."""
        if self._after is None or self._after.done():
            raise Refused("the run is not over: there is nothing to rematch or leave yet")
        self._after.set_result(rematch)

    # --- what the person does ------------------------------------------------------------------

    async def hint(self) -> dict[str, Any]:
        """What boss-1 would play at the decision waiting now, searched from the seat's view alone
        (on a thread: the page's feed goes on meanwhile). Only where ``hints`` allows it."""
        if not self.hints:
            raise Refused("no hints here: a hint is for a fork, never rated, not for a match that counts")
        match = self._match
        if match is None or "decision" not in match:
            raise Refused("no decision of yours is waiting")
        from croupier.clients.bots.boss import LEVELS, decide  # the search's imports only when asked

        decision_id, view, legal = match["decision"]
        index = await asyncio.to_thread(
            decide, match["game"], view, legal, match["options"], LEVELS["boss-1"]
        )
        return {"decision_id": decision_id, "index": index, "text": str(legal[index])}

    def move(self, asked: Any) -> None:
        """Send the page's choice: ``{"decision_id": N, "index": I}`` for a listed action, or
        ``{"text": "7h"}`` for an action in its text form, judged when it reaches the referee (Pair
        Battle's real-time plays; anything else the person tries: the referee says why not)."""
        match, outbox = self._match, self._outbox
        if match is None or outbox is None or self.state.get("header", {}).get("status") != "running":
            raise Refused("no match is being played in this seat now")
        if not isinstance(asked, dict):
            raise Refused('send {"decision_id": N, "index": I} or {"text": "an action"}')
        move = bots_pb2.Move(match_id=match["id"], seat=int(self.state["seat"]))
        text, index, decision = asked.get("text"), asked.get("index"), asked.get("decision_id")
        if decision is not None and not _number(decision, 2**64):
            raise Refused("decision_id is a whole number, from the seat's request")
        if isinstance(text, str) and 0 < len(text) <= 80 and index is None:
            move.text = text
            move.decision_id = decision or 0
        elif text is None and decision and _number(index, 2**32):
            move.decision_id, move.index = decision, index
        else:
            raise Refused('send {"decision_id": N, "index": I} or {"text": "an action"} (80 characters)')
        outbox.put_nowait(bots_pb2.BotMessage(move=move))


def _number(value: Any, below: int) -> TypeGuard[int]:
    """Whether ``value`` is a whole number from 0 to ``below`` - 1 (JSON's true is no number)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < below


def _cards(action: Any) -> list[str]:
    """The cards an action names, in its fields' order (the played card first)."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, Card):
            found.append(str(value))
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            for f in dataclasses.fields(value):
                walk(getattr(value, f.name))
        elif isinstance(value, tuple | list):
            for item in value:
                walk(item)

    walk(action)
    return found


__all__ = ["BANK_MS", "COOKIE", "DECISION_MS", "HEADER", "HumanSeat", "Refused"]
