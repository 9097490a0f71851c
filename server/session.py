"""One connected bot stream: who it is, what it holds, and its queue of outgoing messages."""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from dataclasses import dataclass

from croupier.v1 import bots_pb2
from croupier.wire.errors import clip
from croupier.wire.framing import Outgoing
from croupier.wire.reasons import CODES, Reason

_ids = itertools.count(1)
MAX_QUEUED = 10_000
"""Messages a stream may leave unread before the referee closes it: a bot that stops reading (and
goes on sending) must not grow the referee's memory without end. A bot that reads has a few
messages waiting per match at most."""


@dataclass(frozen=True)
class Options:
    """What a stream's bot asked for in Hello and was granted (``bots_pb2.StreamOptions``)."""

    quiet_acceptance: bool = False
    """No ActionResult for an accepted move: the seat's next message counts it (``accepted``)."""
    deferred_updates: bool = False
    """No ViewUpdate for a seat not asked to decide: its events wait for its next message
    (real-time games stream regardless)."""
    batches: bool = False
    """Messages waiting together go out as one Batch."""

    @classmethod
    def asked(cls, hello: bots_pb2.Hello) -> Options:
        """What the referee grants of what a Hello asks (all it knows)."""
        asked = hello.options
        return cls(
            quiet_acceptance=asked.quiet_acceptance,
            deferred_updates=asked.updates == bots_pb2.StreamOptions.UPDATES_WITH_NEXT,
            batches=asked.batches,
        )

    def to_proto(self) -> bots_pb2.StreamOptions:
        return bots_pb2.StreamOptions(
            quiet_acceptance=self.quiet_acceptance,
            updates=bots_pb2.StreamOptions.UPDATES_WITH_NEXT
            if self.deferred_updates
            else bots_pb2.StreamOptions.UPDATES_EVERY,
            batches=self.batches,
        )


PLAIN = Options()
"""Protocol 1: every message on its own."""


class Session:
    """A bot's stream. Matches and the referee post messages; the stream's writer sends them in order.

    ``seats`` (match id, seat) is kept by the referee through ``hold`` and ``release`` (capacity,
    clean-up on disconnect); each match keeps its own record of which session holds which of its
    seats. Matches are known here by id only: the match module imports this one.
    """

    def __init__(self, name: str, bot_id: str | None, capacity: int, options: Options = PLAIN) -> None:
        self.id = next(_ids)
        self.name = name
        self.bot_id = bot_id
        self.capacity = capacity
        self.options = options
        self.seats: set[tuple[str, int]] = set()
        self._invited: Counter[str] = Counter()
        """Seats held per match the stream plays for its bot token (kept as seats come and go: the
        referee asks for the count on every seating, with thousands of matches)."""
        self.outbox: asyncio.Queue[Outgoing | None] = asyncio.Queue()
        """What the writer sends, in order (None: the end): messages, or their bytes (framing.py)."""
        self.closed = False
        self.overrun = False
        """Closed because MAX_QUEUED messages were waiting for the bot to read them."""
        self.revoked = False
        """Closed because its bot was revoked."""

    def send(self, message: Outgoing) -> None:
        if self.closed:
            return
        if self.outbox.qsize() >= MAX_QUEUED:
            self.overrun = True
            self.close()
            return
        self.outbox.put_nowait(message)

    def send_error(
        self,
        reason: Reason.ValueType,
        message: str,
        match_id: str = "",
        decision_id: int = 0,
        seat: int | None = None,
    ) -> None:
        """An Error about one message, of ``reason`` and the status that goes with it: the stream goes on."""
        error = bots_pb2.Error(
            code=bots_pb2.Error.Code.ValueType(CODES[reason].value[0]),
            reason=reason,
            message=clip(message),
            match_id=clip(match_id, 100),
            decision_id=decision_id,
            seat=seat,
        )
        self.send(bots_pb2.ServerMessage(error=error))

    def close(self) -> None:
        """End the stream's writer after what is queued."""
        if not self.closed:
            self.closed = True
            self.outbox.put_nowait(None)

    def hold(self, match_id: str, seat: int, invited: bool) -> None:
        """Hold a seat; ``invited`` when the match invited this stream's bot to it (not a seat token)."""
        if (match_id, seat) not in self.seats:
            self.seats.add((match_id, seat))
            if invited:
                self._invited[match_id] += 1

    def release(self, match_id: str, seat: int, invited: bool) -> None:
        if (match_id, seat) in self.seats:
            self.seats.discard((match_id, seat))
            if invited:
                self._invited[match_id] -= 1
                if not self._invited[match_id]:
                    del self._invited[match_id]

    def release_all(self) -> None:
        self.seats.clear()
        self._invited.clear()

    def invited_matches(self) -> int:
        """Matches this stream plays for its bot token: what ``capacity`` limits."""
        return len(self._invited)

    def __repr__(self) -> str:
        return f"Session({self.id}, {self.name!r}, bot={self.bot_id})"
