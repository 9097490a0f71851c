"""Who may watch, and how much one caller may ask of the referee.

Spectators are whoever calls SpectatorService. ``--spectators`` says who that
may be: anyone (``anonymous``, the default), callers with a token the referee
knows (``token``: a bot's, a live seat's, the admin's), or the admin alone
(``off``). Whoever they are, no caller but the admin may hold more than a few
live feeds per connection, anonymous callers share a bounded number of feeds,
and replays (a journal re-run from its start: GetRecord, a from-start or
finished WatchMatch) are bounded the same way and run in a few worker threads
of their own, so a spectator never takes the event loop from the matches.
"""

from __future__ import annotations

import contextlib
import enum
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from croupier.server.errors import Context, PermissionDenied, ResourceExhausted, Unauthenticated
from croupier.server.journal import token_sha256
from croupier.server.referee import Referee, tokens_of


class Access(enum.Enum):
    ANONYMOUS = "anonymous"
    TOKEN = "token"
    OFF = "off"


@dataclass(frozen=True)
class Limits:
    """What spectators may ask at once (the admin is never limited)."""

    access: Access = Access.ANONYMOUS
    feeds_per_connection: int = 8
    """Live WatchMatch streams one connection may hold."""
    anonymous_feeds: int = 256
    """Live WatchMatch streams all anonymous callers together may hold."""
    replays_per_connection: int = 2
    """Replays (GetRecord, a from-start or finished WatchMatch) one connection may have under way."""
    anonymous_replays: int = 32
    """Replays all anonymous callers together may have under way."""
    replay_threads: int = 2
    """Worker threads that re-run journals, for everyone: a replay waits for one."""


@dataclass(frozen=True)
class Caller:
    """A spectator call's caller, as the limits see it."""

    admin: bool
    anonymous: bool
    connection: str


class Audience:
    def __init__(self, referee: Referee, limits: Limits) -> None:
        self.referee = referee
        self.limits = limits
        self._feeds: Counter[str] = Counter()
        self._anonymous_feeds = 0
        self._replays: Counter[str] = Counter()
        self._anonymous_replays = 0
        self.replay_pool = ThreadPoolExecutor(limits.replay_threads, thread_name_prefix="replay")
        """Where journals are re-run (the admin's too): off the event loop every match shares."""

    def admit(self, context: Context) -> Caller:
        """The caller, if ``--spectators`` lets it in: UNAUTHENTICATED or PERMISSION_DENIED if not."""
        tokens = tokens_of(context)
        admin = self.referee.is_admin(tokens)
        known = admin or any(self._known(token) for token in tokens)
        access = self.limits.access
        if not admin and access is Access.OFF:
            raise PermissionDenied("this referee shows its matches to the admin only (--spectators off)")
        if not known and access is Access.TOKEN:
            raise Unauthenticated(
                "this referee shows its matches to callers with a token it knows (--spectators token): "
                "send a bot, seat or admin token as croupier-token metadata"
            )
        return Caller(admin=admin, anonymous=not known, connection=str(context.peer()))

    def _known(self, token: str) -> bool:
        digest = token_sha256(token)
        return digest in self.referee.bot_tokens or digest in self.referee.seat_tokens

    @contextlib.contextmanager
    def feed(self, caller: Caller) -> Iterator[None]:
        """Hold one live feed for the length of the block, or RESOURCE_EXHAUSTED."""
        if caller.admin:
            yield
            return
        if self._feeds[caller.connection] >= self.limits.feeds_per_connection:
            raise ResourceExhausted(
                f"{self.limits.feeds_per_connection} live matches are watched on this connection "
                "already: stop one first"
            )
        if caller.anonymous and self._anonymous_feeds >= self.limits.anonymous_feeds:
            raise ResourceExhausted(
                f"{self.limits.anonymous_feeds} anonymous spectators are watching already: try again "
                "later, or watch with a token"
            )
        self._feeds[caller.connection] += 1
        self._anonymous_feeds += caller.anonymous
        try:
            yield
        finally:
            self._anonymous_feeds -= caller.anonymous
            self._feeds[caller.connection] -= 1
            if not self._feeds[caller.connection]:
                del self._feeds[caller.connection]

    @contextlib.contextmanager
    def replay(self, caller: Caller) -> Iterator[None]:
        """Hold one replay under way for the length of the block, or RESOURCE_EXHAUSTED."""
        if caller.admin:
            yield
            return
        if self._replays[caller.connection] >= self.limits.replays_per_connection:
            raise ResourceExhausted(
                f"{self.limits.replays_per_connection} replays are under way on this connection: "
                "wait for one to finish"
            )
        if caller.anonymous and self._anonymous_replays >= self.limits.anonymous_replays:
            raise ResourceExhausted(
                f"{self.limits.anonymous_replays} replays are under way for anonymous spectators: try "
                "again shortly, or with a token"
            )
        self._replays[caller.connection] += 1
        self._anonymous_replays += caller.anonymous
        try:
            yield
        finally:
            self._anonymous_replays -= caller.anonymous
            self._replays[caller.connection] -= 1
            if not self._replays[caller.connection]:
                del self._replays[caller.connection]

    def close(self) -> None:
        self.replay_pool.shutdown(wait=False, cancel_futures=True)
