"""A match's journal: the header and seed file that create it, the rebuild and reopening of an
unfinished one after a restart, and every record written before (or, undone, after) it is played.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Self, assert_never

from croupier.engine.core import options_to_dict
from croupier.server.clock import ActorClock
from croupier.server.journal import (
    CLOSING,
    Act,
    Auto,
    Cancel,
    Clock,
    End,
    Forfeit,
    Fork,
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
from croupier.server.lifecycle import RUNNING, WAITING, Settled
from croupier.server.match_state import MatchState
from croupier.server.metrics import Metrics
from croupier.server.seats import Player, SeatState
from croupier.wire.reasons import BotError, Reason

RETRY_SECONDS = 1.0
"""How long a match whose journal could not be written (a full disk) waits before trying again."""


class JournalFull(BotError):
    """The journal could not take a record: nothing was changed (RESOURCE_EXHAUSTED)."""

    def __init__(self, message: str) -> None:
        super().__init__(Reason.REASON_JOURNAL_FULL, message)


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
        clock: ActorClock | None = None,
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
            forked_from=header.forked_from,
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
            clock=clock,
        )
        for taken, record in enumerate(records[1:], 1):
            try:
                apply_record(spec, match.state, record)
                match._account(record)
            except Exception as exc:  # any damage: what was half applied is rebuilt without it
                kept = records[:taken]
                match, _ = cls.rebuild(journal_path, kept, secret, metrics, on_released, on_finished, clock)
                return match, f"line {taken + 1} does not apply ({exc!r})"
            match._last_at = record.at
        match.records = list(records)
        match._shown = len(records)
        return match, ""

    def reopen(self, resumed: bool = True) -> None:
        """Go on writing the journal of a rebuilt match (whose file holds exactly its records),
        after a resume record; a new fork (not ``resumed``) plays on from its fork record."""
        # This resume record is not written yet, so it counts as one more run.
        self._epoch = (2 if resumed else 1) + sum(1 for r in self.records if isinstance(r, Resume))
        self._journal = JournalWriter(self.journal_path)
        if resumed:
            self._write_now(Resume(self._last_at))
        if self.status == RUNNING:
            self._origin = self.clock.time() - self._last_at
            for seat in self.seats:
                if not seat.forfeited:
                    seat.gone_since = self._last_at  # nobody is connected yet: the grace starts now
            self._regathering = self.state.realtime
        self.metrics.active_matches.inc()

    def _account(self, record: Record) -> None:
        """Seat bookkeeping of one replayed record (the engine's part is ``apply_record``)."""
        match record:
            case Start():
                if self.status == WAITING:  # not yet, in a rebuild in place
                    self._become(RUNNING)
            case Act():
                seat = self.seats[record.seat]
                seat.bank = record.bank
                seat.last_think = record.think
                seat.resolved = (record.decision_id, Settled.ACCEPTED, self.spec.parse_action(record.action))
            case Timeout():
                seat = self.seats[record.seat]
                seat.timeouts += 1
                seat.bank = 0.0
                seat.resolved = (record.decision_id, Settled.TIMED_OUT, self.spec.parse_action(record.action))
            case Refuse():
                self.seats[record.seat].refusals += 1
            case Forfeit():
                seat = self.seats[record.seat]
                seat.forfeited = record.reason
                seat.bank = 0.0
            case Fork():  # the original's bots' clocks and strikes are not the new players'
                self.seats = [SeatState(bank=self.clocks.bank) for _ in self.seats]
            case Auto() | Clock() | Recount() | Resume():
                pass  # no seat's bookkeeping
            case Header() | End() | Cancel():
                raise ValueError(f"a {record.KIND} record cannot be part of an unfinished match")
            case _:
                assert_never(record)

    def _rebuild_in_place(self) -> tuple[bool, list[int]]:
        """Undo what a failed job did to memory: the engine and each seat's record as the journal
        leaves them, what is not journaled kept (who holds a seat, its open decision, its clock and
        whether its bot was sent it, the decisions counted). Records journaled but not told yet
        are told now, as the job would have. Returns whether the journal started the match memory
        had waiting, and the seats it forfeited that are still held."""
        was_waiting = self.status == WAITING
        live, self.seats = self.seats, [SeatState(bank=self.clocks.bank) for _ in self.seats]
        for record in self.records[1:]:
            if not isinstance(record, CLOSING):  # the job failed in telling the end: _undo ends it
                self._account(record)
        for old, seat in zip(live, self.seats, strict=True):
            seat.holder, seat.decisions, seat.unsent = old.holder, old.decisions, old.unsent
            if seat.forfeited:
                continue
            seat.gone_since = old.gone_since
            decision = old.decision
            if decision is not None and not (seat.resolved and seat.resolved[0] == decision.id):
                seat.decision, seat.acting_since, seat.asked = decision, old.acting_since, old.asked
        if self._regathering:
            resumed = max(i for i, r in enumerate(self.records) if isinstance(r, Resume | Fork))
            self._regathering = not any(isinstance(r, Recount) for r in self.records[resumed:])
        told = self._shown
        self.state = replayed(self.spec, self.options, self._seed, self.records[:told])
        for record in self.records[told:]:
            self._tell(record, apply_record(self.spec, self.state, record))
        started = was_waiting and self.status == RUNNING
        return started, [i for i, s in enumerate(self.seats) if s.forfeited and s.holder is not None]

    def _journal_first(self, record: Record) -> None:
        """Journal a change about to be made: if the journal cannot take it (a full disk), nothing
        is changed, the match tries again in ``RETRY_SECONDS``, and JournalFull is raised (a bot's
        move is answered RESOURCE_EXHAUSTED)."""
        assert self._journal is not None
        try:
            self._journal.write(record)
        except OSError as exc:
            if self._retry is None and self.acting:  # said once per second at most
                self.log.warning("journal full: the match waits", error=exc.strerror, kind=record.KIND)
                self._retry = self.clock.call_at(
                    self.clock.time() + RETRY_SECONDS, self._post_retry, self._context
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
        self._shown = len(self.records)  # nothing to tell: the header, or a resume

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
        if self.status == WAITING and all(s.holder is not None for s in self.seats):
            self._start()
        self._tick()

    def _close(self, secret: Path | None) -> None:
        """Make the journal durable and close it off the event loop, then delete ``secret`` if given."""
        journal, self._journal = self._journal, None
        if journal is not None:  # not closed already (by an ending a fault interrupted)
            self.clock.off_loop(lambda: _close_for_good(journal, secret))


def _close_for_good(journal: JournalWriter, secret: Path | None) -> None:
    journal.sync()
    journal.close()
    if secret is not None:
        secret.unlink(missing_ok=True)
