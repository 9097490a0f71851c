"""Who may watch, and how much one caller may ask of the referee.

Spectators are whoever calls SpectatorService. ``--spectators`` says who that
may be: anyone (``anonymous``, the default), callers with a token the referee
knows (``token``: a bot's, a live seat's, the admin's), or the admin alone
(``off``). Whoever they are, no caller but the admin and the organiser may hold more
than a few live feeds per client (its address, whatever connections it opens: one
client cannot take every anonymous feed and lock the others out), anonymous callers
share a bounded number of feeds, and heavy reads (listings, and replays: a journal
re-run from its start for GetRecord or a from-start or finished WatchMatch) are
bounded the same way. Behind a proxy every caller has the proxy's address: give
the proxy a token (``--spectators token``) or the limits it needs.
Heavy reads take turns in one lane on the event loop, a slice of a few
milliseconds at a time, each followed by a rest as long: spectators get at most
half the loop, the matches the rest.
(Worker threads do not help: a replay is pure Python, and a thread holding the
GIL cut a live match from 770 decisions/s to 30 in bench/anonymous_load.py.)
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from croupier.server.journal import token_sha256
from croupier.server.referee import Referee, tokens_of
from croupier.wire.errors import Context, PermissionDenied, ResourceExhausted, Unauthenticated

T = TypeVar("T")


class Access(enum.Enum):
    ANONYMOUS = "anonymous"
    TOKEN = "token"
    OFF = "off"


@dataclass(frozen=True)
class Limits:
    """What spectators may ask at once (the admin and the organiser are never limited)."""

    access: Access = Access.ANONYMOUS
    feeds_per_client: int = 16
    """Live WatchMatch streams one client (one address, over any number of connections) may hold:
    half the anonymous ones, so one client leaves the others their share."""
    anonymous_feeds: int = 32
    """Live WatchMatch streams all anonymous callers together may hold: each frame costs the loop
    a stream write per watcher (64 watchers cut a live match from 865 decisions/s to 179)."""
    heavy_reads_per_client: int = 2
    """Listings and replays (GetRecord, a from-start or finished WatchMatch) one client may have
    under way."""
    anonymous_heavy_reads: int = 32
    """Listings and replays all anonymous callers together may have under way."""
    replay_slice: float = 0.002
    """Seconds a replay runs in the lane before it rests as long (and lets the matches run)."""


@dataclass(frozen=True)
class Caller:
    """A spectator call's caller, as the limits see it."""

    admin: bool
    anonymous: bool
    client: str
    """Its address without the port: the unit the limits share out."""
    organiser: bool = False
    """It holds the organiser's token (``referee.organiser_token``): it watches sealed matches
    live, and is not limited."""

    @property
    def unlimited(self) -> bool:
        return self.admin or self.organiser


class Quota:
    """Calls of one kind under way: at most so many per client, and for anonymous callers
    together (the admin's and the organiser's are not counted)."""

    def __init__(self, what: str, per_client: int, anonymous: int) -> None:
        self.what = what
        self.per_client = per_client
        self.anonymous = anonymous
        self._clients: Counter[str] = Counter()
        self._anonymous = 0

    @contextlib.contextmanager
    def held(self, caller: Caller) -> Iterator[None]:
        if caller.unlimited:
            yield
            return
        if self._clients[caller.client] >= self.per_client:
            raise ResourceExhausted(
                f"your address has {self.per_client} {self.what} under way already: wait for one to end"
            )
        if caller.anonymous and self._anonymous >= self.anonymous:
            raise ResourceExhausted(
                f"anonymous spectators have {self.anonymous} {self.what} under way already: try again "
                "shortly, or with a token"
            )
        self._clients[caller.client] += 1
        self._anonymous += caller.anonymous
        try:
            yield
        finally:
            self._anonymous -= caller.anonymous
            self._clients[caller.client] -= 1
            if not self._clients[caller.client]:
                del self._clients[caller.client]


class Audience:
    def __init__(self, referee: Referee, limits: Limits) -> None:
        self.referee = referee
        self.limits = limits
        self._feeds = Quota("live feeds", limits.feeds_per_client, limits.anonymous_feeds)
        self._heavy_reads = Quota(
            "listings or replays", limits.heavy_reads_per_client, limits.anonymous_heavy_reads
        )
        self._lane: asyncio.Lock | None = None
        """Held by the listing or replay slice that runs, and through the rest after it."""

    def admit(self, context: Context) -> Caller:
        """The caller, if ``--spectators`` lets it in: UNAUTHENTICATED or PERMISSION_DENIED if not."""
        tokens = tokens_of(context)
        admin = self.referee.is_admin(tokens)
        organiser = not admin and self.referee.is_organiser(tokens)
        known = admin or organiser or any(self._known(token) for token in tokens)
        access = self.limits.access
        if not admin and access is Access.OFF:
            raise PermissionDenied("this referee shows its matches to the admin only (--spectators off)")
        if not known and access is Access.TOKEN:
            raise Unauthenticated(
                "this referee shows its matches to callers with a token it knows (--spectators token): "
                "send a bot, seat or admin token as croupier-token metadata"
            )
        return Caller(admin=admin, anonymous=not known, client=client_of(context.peer()), organiser=organiser)

    def _known(self, token: str) -> bool:
        digest = token_sha256(token)
        return digest in self.referee.bot_tokens or digest in self.referee.seat_tokens

    def feed(self, caller: Caller) -> contextlib.AbstractContextManager[None]:
        """Hold one live feed for the length of the block, or RESOURCE_EXHAUSTED."""
        return self._feeds.held(caller)

    def heavy_read(self, caller: Caller) -> contextlib.AbstractContextManager[None]:
        """Hold one heavy read (a listing, a replay) for the block, or RESOURCE_EXHAUSTED."""
        return self._heavy_reads.held(caller)

    async def in_turn(self, work: Callable[[], T]) -> T:
        """``work`` done in the lane (a listing), and the rest after it."""
        async with self._lane_taken():
            return work()

    async def in_slices(self, items: Iterator[T]) -> AsyncIterator[T]:
        """``items`` made in the lane, a slice at a time (the admin's replays too), and yielded
        between slices, so a slow reader never holds the lane."""
        exhausted = False
        while not exhausted:
            async with self._lane_taken():
                started = time.perf_counter()
                batch = []
                for item in items:
                    batch.append(item)
                    if time.perf_counter() - started >= self.limits.replay_slice:
                        break
                else:
                    exhausted = True
            for item in batch:
                yield item

    @contextlib.asynccontextmanager
    async def _lane_taken(self) -> AsyncIterator[None]:
        """The lane for the block and a rest as long after it: the matches' turn."""
        if self._lane is None:
            self._lane = asyncio.Lock()
        async with self._lane:
            started = time.perf_counter()
            yield
            await asyncio.sleep(time.perf_counter() - started)


def client_of(peer: str) -> str:
    """A caller's address without its port, from grpc's peer text: "ipv4:10.0.0.7:51234" and
    "ipv6:[::1]:40000" give "ipv4:10.0.0.7" and "ipv6:[::1]"; a Unix socket's callers are one."""
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6"):
        return f"{kind}:{rest.rpartition(':')[0]}"
    return kind
