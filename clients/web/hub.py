"""The web viewer's one link to the referee: the match list, polled for the lobby, and one
``WatchMatch`` stream per live match that someone watches, its frames turned into JSON once and
shared by every browser watching it.

It holds no admin token: every call is a spectator's, so the referee's own rules decide what
it may see (public facts while a match runs, every hand once it is over). The viewer a tournament
runner starts holds the organiser's token, which also watches sealed matches as they run (their
public facts: docs/spectator.md); any other viewer lists a sealed match without a link to it.
While no referee answers, the lobby lists the finished journals of the data directory.

Browsers are shared out by address: one may keep at most ``LIVE_PER_CLIENT`` live matches open,
and a match nobody has open any more stops being followed. The referee grants this viewer ``feeds``
streams (its --feeds-per-client); when all are taken and a browser asks for another match, the
feed of a match watched only by browsers holding more matches than that one will is given up for
it (``Hub.watch``), so no number of watchers of other matches can lock a browser out while there
are fewer browsers than feeds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import sqlite3
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc

from croupier.clients.results.store import StoreError
from croupier.clients.scenes import FORKS_FOLDER, JOURNAL_FOLDERS, RECORD_BYTES, from_journal, from_record
from croupier.clients.web.disk import JournalList
from croupier.clients.web.frames import LiveFeed, dumps, lobby_entry, replay_json
from croupier.clients.web.tournaments import tournament_list
from croupier.v1 import match_pb2, spectator_pb2, spectator_pb2_grpc

if TYPE_CHECKING:
    from croupier.server.app import Croupier

TOKEN_METADATA = "croupier-token"

POLL_SECONDS = 1.0
"""How often the lobby asks the referee for its matches."""
FINISHED_SHOWN = 100
"""The lobby lists the newest finished matches only."""
MAX_LIVE = 200
"""Matches followed at once; beyond, a new one is refused (the server stays responsive)."""
KEPT_MESSAGES = 5000
"""Messages of a live match kept for browsers that reconnect (older: they get a snapshot)."""
MAX_BEHIND = 1000
"""Messages a browser may fall behind before it is dropped (its EventSource reconnects)."""
LINGER_SECONDS = 30.0
"""How long a finished match's live stream stays for late and reconnecting browsers."""
IDLE_SECONDS = 10.0
"""How long a live match nobody has open is still followed (a page reloading comes back)."""
LIVE_PER_CLIENT = 4
"""Live matches one browser address may have open at once: a quarter of the feeds a referee grants
one client by default (``croupier serve --feeds-per-client``, 16), so three others still get theirs."""
FEEDS = 16
"""WatchMatch streams the referee grants this viewer (``croupier serve --feeds-per-client``): one
per followed match, however many browsers watch it."""
RETRY_EXHAUSTED = (10, 0.2)
"""Tries and pause of a feed the referee refuses as too many: one given up for it (``Hub.watch``)
is let go by the referee a moment after this side ends it."""
RECORDS_CACHED = 32
HEAVY_AT_ONCE = 2
"""Listings and replays under way at once: no more than a referee lets one connection have
(``croupier serve``'s heavy reads per connection, 2 by default); more browsers wait their turn."""
PAGE = 1000
"""Matches per listing page (the referee's largest)."""
MATCH_ID = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")


class Unknown(LookupError):
    """No such match (on the referee, nor finished in the data directory)."""


class Busy(RuntimeError):
    """Too many live matches followed at once."""


class Sealed(LookupError):
    """A match this viewer may not show yet: another match dealt the same cards is not over."""

    def __init__(self, match_id: str) -> None:
        super().__init__(f"match {match_id} is sealed until its twin ends")


@dataclass(eq=False)
class Listener:
    """One browser's stream of a live match."""

    client: str = ""
    """The browser's address."""
    queue: asyncio.Queue[str | None] = field(default_factory=lambda: asyncio.Queue(MAX_BEHIND))
    dropped: bool = False


class LiveMatch:
    """A match followed from its start: its messages as server-sent events, numbered from 0."""

    def __init__(self, match_id: str) -> None:
        self.match_id = match_id
        self.feed = LiveFeed()
        self.first = 0
        """The number of ``messages[0]`` (older ones are let go)."""
        self.messages: list[str] = []
        self.latest: dict[str, Any] | None = None
        self.listeners: set[Listener] = set()
        self.done = asyncio.Event()
        self.error: str | None = None
        self.sealed = False
        """Ended because it became sealed to this viewer (a twin was dealt)."""
        self.given_up: str | None = None
        """Why its feed was given up for another browser's match (the end's error)."""
        self.task: asyncio.Task[None] | None = None

    @property
    def count(self) -> int:
        return self.first + len(self.messages)

    def add(self, frame: spectator_pb2.MatchFrame) -> None:
        message = self.feed.add(frame)
        if message is None:
            return
        self.latest = message["scene"]
        event = f"id: {self.count}\ndata: {dumps(message)}\n\n"
        self.messages.append(event)
        if len(self.messages) > KEPT_MESSAGES:
            drop = len(self.messages) - KEPT_MESSAGES
            del self.messages[:drop]
            self.first += drop
        for listener in self.listeners:
            self._send(listener, event)

    def _send(self, listener: Listener, event: str | None) -> None:
        if listener.dropped:
            return
        try:
            listener.queue.put_nowait(event)
        except asyncio.QueueFull:  # a browser not reading: let it go, it reconnects and catches up
            listener.dropped = True
            with contextlib.suppress(asyncio.QueueEmpty):
                listener.queue.get_nowait()
            listener.queue.put_nowait(None)

    def join(self, after: int | None, client: str = "") -> tuple[Listener, list[str | None]]:
        """A new listener (of the browser at ``client``) and what it is sent first: the messages
        after number ``after`` when it reconnects and they are still kept, else one snapshot (the
        match's header and its scene now); None last if the match is over."""
        listener = Listener(client)
        self.listeners.add(listener)
        backlog: list[str | None]
        if after is not None and self.first <= after + 1 <= self.count:
            backlog = list(self.messages[after + 1 - self.first :])
        elif self.latest is not None and self.feed.header is not None:
            snapshot = {"header": self.feed.header, "scene": self.latest}
            backlog = [f"id: {self.count - 1}\ndata: {dumps(snapshot)}\n\n"]
        else:
            backlog = []
        if self.done.is_set():
            backlog.append(None)
        return listener, backlog

    def leave(self, listener: Listener) -> None:
        self.listeners.discard(listener)

    def close(self, error: str | None = None, sealed: bool = False) -> None:
        self.error = error
        self.sealed = sealed
        self.done.set()
        for listener in self.listeners:
            self._send(listener, None)


class Hub:
    def __init__(
        self,
        server: str,
        data: Path | None = None,
        tls_ca: Path | None = None,
        token: str | None = None,
        feeds: int = FEEDS,
    ) -> None:
        self.server = server
        self.tls_ca = tls_ca
        self.data = data
        """The data directory: its results database (tournaments) and finished journals."""
        self.organiser = token is not None
        """It holds the organiser's token: sealed matches are watched live too."""
        self.metadata = None if token is None else ((TOKEN_METADATA, token),)
        self.feeds = MAX_LIVE if self.organiser else min(feeds, MAX_LIVE)
        """Matches followed at once (the organiser's feeds are not limited by the referee)."""
        self.journals = None if data is None else JournalList(data)
        options = [("grpc.max_receive_message_length", RECORD_BYTES)]
        self.channel = (
            grpc.aio.secure_channel(server, grpc.ssl_channel_credentials(tls_ca.read_bytes()), options)
            if tls_ca
            else grpc.aio.insecure_channel(server, options)
        )
        self.stub = spectator_pb2_grpc.SpectatorServiceStub(self.channel)
        self.live: dict[str, LiveMatch] = {}
        self.records: OrderedDict[str, str] = OrderedDict()
        self.lobby: dict[str, Any] = {"matches": [], "tournaments": [], "error": None}
        self.lobby_text = dumps(self.lobby)
        self.lobby_changed = asyncio.Condition()
        self.tasks: set[asyncio.Task[None]] = set()
        self.heavy = asyncio.Semaphore(HEAVY_AT_ONCE)
        self.fetching: dict[str, asyncio.Future[str | None]] = {}
        self.forks_referee: Croupier | None = None
        """Where forks of journals on disk are played, which the referee at ``server`` does not know
        (``croupier replay --fork``'s embedded referee, kept here): started at the first."""
        self.forks_stub: Any = None
        self.on_forks_referee: set[str] = set()
        """The matches (forks) played on ``forks_referee``."""
        self._forks_starting = asyncio.Lock()

    async def close(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        await self.channel.close(None)
        if self.forks_referee is not None:
            await self.forks_referee.stop(grace=1.0)

    def spectator(self, match_id: str) -> tuple[Any, Any]:
        """The stub that knows ``match_id``, and the metadata of calls to it."""
        if match_id in self.on_forks_referee and self.forks_stub is not None:
            return self.forks_stub, None
        return self.stub, self.metadata

    async def forks_address(self) -> str:
        """The address of the referee for forks of journals on disk, started at the first call in
        DATA/web-forks (its journals listed with the others')."""
        async with self._forks_starting:
            return await self._start_forks_referee()

    async def _start_forks_referee(self) -> str:
        if self.forks_referee is None:
            assert self.data is not None
            from croupier.server import logs
            from croupier.server.app import create_server

            logs.configure(level=logging.WARNING)  # the viewer's terminal: no line per match
            self.forks_referee = await create_server("127.0.0.1:0", self.data / FORKS_FOLDER)
            channel = grpc.aio.insecure_channel(f"127.0.0.1:{self.forks_referee.port}")
            self.forks_stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
        return f"127.0.0.1:{self.forks_referee.port}"

    def journal(self, match_id: str) -> Path | None:
        """The match's journal in the data directory, if there is one."""
        check_id(match_id)
        if self.data is None:
            return None
        return next(
            (
                path
                for folder in JOURNAL_FOLDERS
                if (path := self.data / folder / f"{match_id}.jsonl").is_file()
            ),
            None,
        )

    def start(self) -> None:
        self._spawn(self._poll_lobby())

    def _spawn(self, job: Any) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.ensure_future(job)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    # --- the lobby ------------------------------------------------------------------------------

    async def _poll_lobby(self) -> None:
        while True:
            await self.refresh_lobby()
            await asyncio.sleep(POLL_SECONDS)

    async def refresh_lobby(self) -> None:
        lobby = dict(self.lobby)
        try:
            lobby.update(matches=lobby_matches(await self._all_matches(), self.organiser), error=None)
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.UNAVAILABLE and self.journals is not None:
                finished = await asyncio.to_thread(self.journals.finished)
                lobby["matches"] = lobby_matches(finished, self.organiser)
                lobby["error"] = f"no referee answers at {self.server}: the finished matches of {self.data}"
            else:
                lobby["error"] = f"referee {self.server}: {exc.code().name}: {exc.details()}"
        if self.data is not None:
            try:
                lobby["tournaments"] = await asyncio.to_thread(tournament_list, self.data / "results.db")
            except (sqlite3.Error, StoreError) as exc:
                lobby["tournaments"], lobby["error"] = [], f"results database: {exc}"
        text = dumps(lobby)
        if text != self.lobby_text:
            self.lobby, self.lobby_text = lobby, text
            async with self.lobby_changed:
                self.lobby_changed.notify_all()

    async def _all_matches(self) -> list[match_pb2.MatchInfo]:
        """Every match the referee lists, page after page (oldest first)."""
        found: list[match_pb2.MatchInfo] = []
        token = ""
        while True:
            request = spectator_pb2.ListMatchesRequest(page_size=PAGE, page_token=token)
            async with self.heavy:
                response = await self.stub.ListMatches(request, timeout=10, metadata=self.metadata)
            found.extend(response.matches)
            token = response.next_page_token
            if not token:
                return found

    async def next_lobby(self, seen: str | None) -> str:
        """The lobby's JSON once it differs from ``seen``."""
        async with self.lobby_changed:
            await self.lobby_changed.wait_for(lambda: self.lobby_text != seen)
            return self.lobby_text

    # --- live matches ----------------------------------------------------------------------------

    def watch(self, match_id: str, client: str = "") -> LiveMatch:
        """The match's live stream, started if nobody follows it yet; Busy if the browser at
        ``client`` has its share of live matches open already, or this viewer all it may follow."""
        check_id(match_id)
        if self.sealed_here(match_id):
            raise Sealed(match_id)
        held = self._held()
        others = {m.match_id for m in self.live.values() for l in m.listeners if l.client == client}
        if len(others - {match_id}) >= LIVE_PER_CLIENT:
            raise Busy(f"you have {LIVE_PER_CLIENT} live matches open already: close one to open another")
        match = self.live.get(match_id)
        if match is not None:
            return match
        following = [m for m in self.live.values() if not m.done.is_set()]
        freed = None
        if len(following) >= self.feeds:
            freed = self._give_up_one(following, held, held[client] + 1)
        match = self.live[match_id] = LiveMatch(match_id)
        match.task = self._spawn(self._follow(match, freed))
        return match

    def _held(self) -> Counter[str]:
        """How many followed matches each browser address has open."""
        followed = (m for m in self.live.values() if not m.done.is_set())
        return Counter(client for m in followed for client in {l.client for l in m.listeners})

    def _give_up_one(self, following: list[LiveMatch], held: Counter[str], wanted: int) -> asyncio.Task[None]:
        """End the feed of a match nobody has open, else of one whose every browser holds more than
        ``wanted`` matches (the one of the browser holding most), for a browser that will hold
        ``wanted``: its task, ending. Busy if there is none: every feed is someone's fair share."""

        def richest(match: LiveMatch) -> int:
            return min((held[l.client] for l in match.listeners), default=LIVE_PER_CLIENT + 1)

        match = max(following, key=richest)
        if richest(match) <= wanted:
            raise Busy(
                f"all {self.feeds} live feeds of this viewer are watched by browsers holding no more "
                "matches than you: try again when one ends"
            )
        match.given_up = "given up for another browser's match: this viewer follows few matches at once"
        assert match.task is not None
        match.task.cancel()
        return match.task

    def leave(self, match: LiveMatch, listener: Listener) -> None:
        """A browser is done with the match; once nobody has it open, stop following it soon."""
        match.leave(listener)
        if not match.listeners and not match.done.is_set():
            self._spawn(self._drop_if_idle(match))

    async def _drop_if_idle(self, match: LiveMatch) -> None:
        await asyncio.sleep(IDLE_SECONDS)
        if not match.listeners and match.task is not None and not match.done.is_set():
            match.task.cancel()

    async def _follow(self, match: LiveMatch, freed: asyncio.Task[None] | None = None) -> None:
        """Follow ``match`` to its end, once the feed given up for it (``freed``) is let go."""
        error, sealed = None, False
        try:
            if freed is not None:
                await asyncio.gather(freed, return_exceptions=True)
            await self._stream(match)
        except grpc.aio.AioRpcError as exc:
            error = f"{exc.code().name}: {exc.details()}"
            if exc.code() == grpc.StatusCode.FAILED_PRECONDITION:  # a twin dealt since, or damaged
                await self.refresh_lobby()
                sealed = self.sealed_here(match.match_id)
        except asyncio.CancelledError:  # nobody has it open any more (or the viewer stops)
            self._forget(match)
            raise
        finally:
            match.close(error or match.given_up, sealed)
        await asyncio.sleep(LINGER_SECONDS if error is None else 0)
        self._forget(match)

    async def _stream(self, match: LiveMatch) -> None:
        """The match's frames into ``match``, from now (replaying its start is a heavy read the
        referee rations); refused as too many, tried again a few times (a feed given up for this
        one is let go by the referee a moment after this side ended it)."""
        tries, pause = RETRY_EXHAUSTED
        request = spectator_pb2.WatchMatchRequest(match_id=match.match_id)
        stub, metadata = self.spectator(match.match_id)
        for left in range(tries - 1, -1, -1):
            try:
                async for frame in stub.WatchMatch(request, metadata=metadata):
                    match.add(frame)
                return
            except grpc.aio.AioRpcError as exc:
                if exc.code() != grpc.StatusCode.RESOURCE_EXHAUSTED or match.count or not left:
                    raise
            await asyncio.sleep(pause)

    def _forget(self, match: LiveMatch) -> None:
        if self.live.get(match.match_id) is match:
            del self.live[match.match_id]

    def sealed_here(self, match_id: str) -> bool:
        """Whether the lobby lists the match as one this viewer may not show now (sealed)."""
        entry = next((m for m in self.lobby["matches"] if m["match_id"] == match_id), None)
        return entry is not None and not entry["watchable"]

    # --- finished matches ------------------------------------------------------------------------

    async def record(self, match_id: str) -> str | None:
        """A finished match's replay as JSON; None while it runs (watch it instead). Fetched from
        the referee once and kept (a finished match does not change)."""
        check_id(match_id)
        if match_id in self.records:
            self.records.move_to_end(match_id)
            return self.records[match_id]
        if match_id not in self.fetching:  # browsers opening one replay at once: one fetch
            future = self.fetching[match_id] = asyncio.ensure_future(self._fetch(match_id))
            future.add_done_callback(lambda _: self.fetching.pop(match_id, None))
        return await asyncio.shield(self.fetching[match_id])

    async def _fetch(self, match_id: str) -> str | None:
        try:
            stub, metadata = self.spectator(match_id)
            async with self.heavy:
                record = await stub.GetRecord(
                    spectator_pb2.GetRecordRequest(match_id=match_id), timeout=60, metadata=metadata
                )
            text = dumps(replay_json(from_record(record), record.info))
        except grpc.aio.AioRpcError as exc:
            if (
                exc.code() == grpc.StatusCode.FAILED_PRECONDITION
            ):  # running, sealed, or damaged: its feed says
                if self.sealed_here(match_id):
                    raise Sealed(match_id) from None
                return None
            if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                raise Busy(f"the referee is busy: {exc.details()}") from None
            # a match this referee does not know, or no referee: a finished journal in --data will do
            gone = exc.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.UNAVAILABLE)
            on_disk = await self._from_journal(match_id) if gone else None
            if on_disk is None and self.sealed_here(match_id):  # its twin's journal is not over
                raise Sealed(match_id) from None
            if on_disk is None:
                raise Unknown(f"no match {match_id} on {self.server}: {exc.details()}") from None
            text = on_disk
        self.records[match_id] = text
        while len(self.records) > RECORDS_CACHED:
            self.records.popitem(last=False)
        return text

    async def _from_journal(self, match_id: str) -> str | None:
        """A finished match's journal in the data directory, re-run here (only one with its end
        record, which publishes the seed: an unfinished or cancelled match's secret stays unread)."""
        path = self.journal(match_id)
        return None if path is None else await asyncio.to_thread(finished_journal_json, path)


def finished_journal_json(path: Path) -> str | None:
    """The replay of a finished journal; None for one unfinished, or sealed by a twin not over."""
    from croupier.server.journal import End, header_and_last, twin_unfinished

    try:
        ends = header_and_last(path)
        if ends is None or not isinstance(ends[1], End) or twin_unfinished(path):
            return None
        return dumps(replay_json(from_journal(path)))
    except (OSError, ValueError, KeyError):
        return None


def check_id(match_id: str) -> None:
    if not MATCH_ID.match(match_id):
        raise Unknown(f"not a match id: {match_id[:80]!r}")


LIVE = (match_pb2.MATCH_STATUS_RUNNING, match_pb2.MATCH_STATUS_WAITING)


def lobby_matches(infos: Any, organiser: bool = False) -> list[dict[str, Any]]:
    """Live matches (oldest first), then the newest finished and cancelled ones (newest first),
    each saying whether this viewer may show it: a sealed one live only with the organiser's token,
    finished not until its twin ends."""
    live = [info for info in infos if info.status in LIVE]
    past = [info for info in infos if info.status not in LIVE][::-1][:FINISHED_SHOWN]
    entries = []
    for info in live + past:
        entry = lobby_entry(info)
        entry["watchable"] = not info.sealed or (organiser and info.status in LIVE)
        entries.append(entry)
    return entries
