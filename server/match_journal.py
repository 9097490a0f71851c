"""A match's journal: the header and seed file that create it, the rebuild and reopening of an
unfinished one after a restart, and every record written before (or, undone, after) it is played.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self, assert_never

from croupier.engine.core import options_to_dict
from croupier.server.errors import ResourceExhausted
from croupier.server.journal import (
    Act,
    Auto,
    Cancel,
    Clock,
    End,
    Forfeit,
    Header,
    JournalWriter,
    Record,
    Recount,
    Refuse,
    Resume,
    Seated,
    Start,
    Timeout,
    apply_record,
    replayed,
    write_private,
)
from croupier.server.match_state import MatchState
from croupier.server.messages import Status
from croupier.server.metrics import Metrics
from croupier.server.seats import Player

RETRY_SECONDS = 1.0
"""How long a match whose journal could not be written (a full disk) waits before trying again."""


class JournalFull(ResourceExhausted):
    """The journal could not take a record: nothing was changed."""


class Journaling(MatchState):
    """The match's room for its journal."""

    def create(self) -> None:
        """Write the private seed file and the journal's header: the match exists from now on."""
        write_private(
            self.secret_path, {"seed": self._seed, "seat_tokens": [p.token_sha256 for p in self.players]}
        )
        self._journal = JournalWriter(self.journal_path)
        self._write_now(
            Header(
                match_id=self.id,
                game=self.spec.name,
                options=options_to_dict(self.options),
                players=tuple(Seated(p.name, p.bot_id) for p in self.players),
                clocks=self.clocks,
                seed_sha256=self.seed_sha256,
                created_ms=self.created_ms,
            )
        )
        self._journal.sync()
        self.metrics.active_matches.inc()

    @classmethod
    def rebuild(
        cls,
        journal_path: Path,
        records: list[Record],
        secret: dict[str, Any],
        metrics: Metrics,
        on_released: Callable[[Any, int], None],
        on_finished: Callable[[Any], None],
    ) -> tuple[Self, str]:
        """An unfinished match as its journal's ``records`` and its seed file left it when the referee
        died, taken up to the first record that does not apply, and what is wrong with that one ("" if
        every record applied; ``len(match.records)`` did). Then ``reopen`` it."""
        from croupier.engine.games import get_game

        header = records[0]
        assert isinstance(header, Header)  # journal.scan's first record
        spec = get_game(header.game)
        players = [
            Player(p.name, p.bot_id, token)
            for p, token in zip(header.players, secret["seat_tokens"], strict=True)
        ]
        match = cls(
            match_id=header.match_id,
            spec=spec,
            options=spec.options(header.options),
            seed=secret["seed"],
            clocks=header.clocks,
            players=players,
            created_ms=header.created_ms,
            journal_path=journal_path,
            metrics=metrics,
            on_released=on_released,
            on_finished=on_finished,
        )
        for taken, record in enumerate(records[1:], 1):
            try:
                apply_record(spec, match.state, record)
                match._account(record)
            except Exception as exc:  # any damage: what was half applied is rebuilt without it
                kept = records[:taken]
                match, _ = cls.rebuild(journal_path, kept, secret, metrics, on_released, on_finished)
                return match, f"line {taken + 1} does not apply ({exc!r})"
            match._last_at = record.at
        match.records = list(records)
        return match, ""

    def reopen(self) -> None:
        """Go on writing the journal of a rebuilt match (whose file holds exactly its records)."""
        # This resume record is not written yet, so it counts as one more run.
        self._epoch = 2 + sum(1 for r in self.records if isinstance(r, Resume))
        self._journal = JournalWriter(self.journal_path)
        self._write_now(Resume(self._last_at))
        if self.status == Status.MATCH_STATUS_RUNNING:
            self._origin = asyncio.get_running_loop().time() - self._last_at
            for seat in self.seats:
                if not seat.forfeited:
                    seat.gone_since = self._last_at  # nobody is connected yet: the grace starts now
            self._regathering = self.state.realtime
            self._dirty = True
        self.metrics.active_matches.inc()

    def _account(self, record: Record) -> None:
        """Seat bookkeeping of one replayed record (the engine's part is ``apply_record``)."""
        match record:
            case Start():
                self.status = Status.MATCH_STATUS_RUNNING
            case Act():
                seat = self.seats[record.seat]
                seat.bank = record.bank
                seat.last_think = record.think
                seat.resolved = (record.decision_id, "accepted", self.spec.parse_action(record.action))
            case Timeout():
                seat = self.seats[record.seat]
                seat.timeouts += 1
                seat.bank = 0.0
                seat.resolved = (record.decision_id, "timeout", self.spec.parse_action(record.action))
            case Refuse():
                self.seats[record.seat].refusals += 1
            case Forfeit():
                seat = self.seats[record.seat]
                seat.forfeited = record.reason
                seat.bank = 0.0
            case Auto() | Clock() | Recount() | Resume():
                pass  # no seat's bookkeeping
            case Header() | End() | Cancel():
                raise ValueError(f"a {record.KIND} record cannot be part of an unfinished match")
            case _:
                assert_never(record)

    def _journal_first(self, record: Record) -> None:
        """Journal a change about to be made: if the journal cannot take it (a full disk), nothing
        is changed, the match tries again in ``RETRY_SECONDS``, and JournalFull is raised (a bot's
        move is answered RESOURCE_EXHAUSTED)."""
        assert self._journal is not None
        try:
            self._journal.write(record)
        except OSError as exc:
            if self._retry is None and self._acting:  # said once per second at most
                self.log.warning("journal full: the match waits", error=exc.strerror, kind=record.KIND)
                self._retry = asyncio.get_running_loop().call_later(
                    RETRY_SECONDS, self._post_retry, context=self._context
                )
            raise JournalFull(
                f"the referee cannot write match {self.id}'s journal ({exc.strerror}): nothing was "
                "played; send your move again (the match waits until its referee has room)"
            ) from None
        self.records.append(record)

    def _write_now(self, record: Record) -> None:
        """Journal a record before the actor runs (creating or reopening): ``OSError`` if it cannot."""
        assert self._journal is not None
        self._journal.write(record)
        self.records.append(record)

    def _journal_applied(self, record: Record) -> None:
        """Journal a change already made to the engine; if the journal cannot take it, undo it (the
        engine is rebuilt from the journal) before raising JournalFull."""
        try:
            self._journal_first(record)
        except JournalFull:
            self.state = replayed(self.spec, self.options, self._seed, self.records)
            raise

    def _post_retry(self) -> None:
        self._retry = None
        self.post(self._try_again)

    def _try_again(self) -> None:
        """After the journal could not be written: do what was due then."""
        if self.status == Status.MATCH_STATUS_WAITING and all(s.holder is not None for s in self.seats):
            self._start()
        self._tick()

    def _close(self, secret: Path | None) -> None:
        """Make the journal durable and close it off the event loop, then delete ``secret`` if given."""
        assert self._journal is not None
        asyncio.get_running_loop().run_in_executor(None, _close_for_good, self._journal, secret)


def _close_for_good(journal: JournalWriter, secret: Path | None) -> None:
    journal.sync()
    journal.close()
    if secret is not None:
        secret.unlink(missing_ok=True)
