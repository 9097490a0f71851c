"""The match actor: one match owns its engine state, changed only by its jobs.

Bot streams, timers and the referee post jobs into the match's inbox; the
actor runs them one at a time, each to its end (no job awaits), from an event
loop callback, so nothing else ever touches the state. Each
job that changes the match writes a journal record first, then tells the
bots and spectators. A record the journal cannot take (a full disk) is not
played: a change made to the engine to learn its events is undone (the
engine rebuilt from the journal), so memory never runs ahead of the journal;
the mover is answered RESOURCE_EXHAUSTED and the match tries again every
``RETRY_SECONDS`` until there is room. After every job the actor settles the match: plays
forfeited seats the match waits on, ends the match when the game is over,
opens and re-opens decisions, pushes views, and arms one timer for the
earliest thing time will do (a decision's deadline, a reconnect grace, the
game's own countdown or window).

Time is read and scheduled through ``self.clock`` (server/clock.py: the loop's, or a manual one
in tests), and where the actor is in a job's cycle is ``self.phase`` (server/lifecycle.py). A
job that raises (a bug) may have half changed the match: it is undone by rebuilding the match
from its journal, and run once more; if it fails again, or the journal does not rebuild, the
match is cancelled with ``FAULT_REASON``. Play never goes on over a half-changed state.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import croupier.server.session as sessions
from croupier.engine.core import Event
from croupier.server.journal import CLOSING, Auto, Cancel, End, Header, Record, Recount, Start
from croupier.server.lifecycle import CANCELLED, FINISHED, RUNNING, WAITING, Phase
from croupier.server.match_journal import JournalFull, Journaling
from croupier.server.match_state import MatchState
from croupier.server.messages import (
    EDGES,
    Kind,
    Status,
    Subscription,
    build_frame,
    match_result,
    ms,
    replay_frames,
    shown,
    withheld,
)
from croupier.server.moves import Moves
from croupier.server.seats import Decision, SeatState, decision_id, final_places
from croupier.server.session import Session
from croupier.server.timekeeping import Timekeeping
from croupier.v1 import bots_pb2, games_pb2, spectator_pb2
from croupier.wire import seat_view
from croupier.wire.errors import ServiceError
from croupier.wire.reasons import Reason

FAULT_REASON = "the referee hit an internal error it could not recover from (its log says which)"
"""Why a match a bug stopped was cancelled: what its bots and spectators are told."""


_BETWEEN_JOBS = (Phase.IDLE, Phase.DUE, Phase.JOB)
"""Where the actor may take the next job from its inbox (IDLE: run at once, by ``run_now``)."""


class Match(Moves, Timekeeping, Journaling, MatchState):
    """One match: its rooms together, run by its actor (this room: the jobs' loop, seats coming
    and going, settling after each job, publishing to bots and spectators, the end)."""

    # --- the actor's loop -------------------------------------------------------------------------

    def start_actor(self) -> None:
        self.post(self._changed)  # the first drain settles: a resumed match at once

    async def stop_actor(self) -> None:
        """Stop without finishing (the referee shuts down): the journal stays resumable."""
        if self.phase not in (Phase.OVER, Phase.STOPPED):
            self._to(Phase.STOPPED)
        self._cancel_timer()
        if self._retry is not None:
            self._retry.cancel()
        if self._journal is not None:
            self._journal.close()

    def post(self, job: Callable[[], None]) -> None:
        self.inbox.append(job)
        # A loop callback, not a task per match: a job costs no task switch, and posting from
        # inside a job never runs it nested (the drain under way takes it).
        if self.phase in (Phase.NEW, Phase.IDLE):
            self._to(Phase.DUE)
            self.clock.call_soon(self._drain, self._context)

    def run_now(self, job: Callable[[], None]) -> None:
        """Run ``job`` at once, jobs posted before it first, from a stream's reader: a move is
        applied, and its answers are queued for the writers, in the loop iteration that read it
        (a loop callback later, real-time plays reached the other seats about a fifth slower at
        the median: docs/benchmarks.md). From inside a job (never nested), or an actor not
        running, it is posted as usual."""
        if self.phase is not Phase.IDLE and self.phase is not Phase.DUE:
            self.post(job)
            return
        self.inbox.append(job)
        self._context.run(self._drain)  # a drain already due finds the inbox empty

    def _drain(self) -> None:
        inbox = self.inbox
        while inbox and self.phase in _BETWEEN_JOBS:
            self._run(inbox.popleft())
        if self.phase is Phase.DUE or self.phase is Phase.JOB:
            self._to(Phase.IDLE)

    def _run(self, job: Callable[[], None]) -> None:
        """One job, then the match settled. A bug in either is undone by rebuilding the match from
        its journal, and the job runs once more on what the journal holds; a second failure, or a
        journal that does not rebuild, ends the match (cancelled, with the reason)."""
        for attempt in (1, 2):
            self._to(Phase.JOB)
            try:
                self._job_then_settle(job, settle=attempt > 1)
                return
            except Exception:
                self._to(Phase.FAILED)
                again = attempt == 1
                self.log.exception("match job failed", rebuilding=True, running_again=again)
                if not self._undo():
                    return
                if not again:
                    self._abandon(FAULT_REASON)
                    return

    def _job_then_settle(self, job: Callable[[], None], settle: bool) -> None:
        try:  # noqa: SIM105 (contextlib.suppress costs three calls a job)
            job()
        except JournalFull:
            pass  # changed nothing, said so, and tries again later
        if settle and self.phase is Phase.JOB:
            self._to(Phase.CHANGED)  # a rebuilt match settles, whatever the job did
        if self.phase is Phase.CHANGED:
            self._settle_changes()

    def _settle_changes(self) -> None:
        self._to(Phase.SETTLING)
        try:  # noqa: SIM105 (as above)
            self._settle()
        except JournalFull:
            pass  # the match stays as it is, and tries again
        if self.phase is Phase.SETTLING:  # not over
            self._to(Phase.JOB)

    def _undo(self) -> bool:
        """Back to what the journal holds after a job failed: False (and the match ended) if the
        journal does not rebuild, or already closes the match (only the telling of it failed)."""
        try:
            caught_up = self._rebuild_in_place()
        except Exception:
            self.log.exception("match cannot be rebuilt from its journal")
            self._abandon(FAULT_REASON, rebuilt=False)
            return False
        if isinstance(self.records[-1], CLOSING):
            self._abandon(FAULT_REASON)
            return False
        started, forfeits = caught_up
        # What the journal holds that the failed job had not got to telling the seats.
        if started:
            self._send_started()
        for index in forfeits:
            self._release_forfeited(index)
        return True

    def now(self) -> float:
        """Referee time: seconds since the match started (monotonic)."""
        return self.clock.time() - self._origin

    # --- seats coming and going (posted by the referee) -------------------------------------------

    def attach(self, session: Session, seat: int) -> None:
        self.post(lambda: self._attach(session, seat))

    def detach(self, session: Session, seat: int) -> None:
        self.post(lambda: self._detach(session, seat))

    def _attach(self, session: Session, index: int) -> None:
        seat = self.seats[index]
        if seat.forfeited:
            session.send(self._forfeited_message(index))
            return
        old = seat.holder
        if old is not None and old is not session:
            old.send_error(
                Reason.REASON_SEAT_TAKEN_OVER,
                f"seat {index} of match {self.id} was taken over by another stream",
                self.id,
                seat=index,
            )
        seat.holder = session
        seat.gone_since = None
        seat.unsent = []  # a new stream starts afresh: events are not repeated after a reconnect
        seat.accepted = 0
        if self.status == WAITING:
            if all(s.holder is not None for s in self.seats):
                self._start()
        elif self.status == RUNNING:
            session.send(self._started_message(index, resumed=True))
            self._send_current(index)
            self._changed()  # re-arm the timer: this seat's grace no longer runs

    def _detach(self, session: Session, index: int) -> None:
        seat = self.seats[index]
        if seat.holder is not session:
            return
        seat.holder = None
        if self.status == RUNNING and not seat.forfeited:
            seat.gone_since = self.now()
            self._changed()

    def _start(self) -> None:
        start = Start(0.0)
        self._origin = self.clock.time()
        self._journal_first(start)
        self._become(RUNNING)
        # The opening events (cuts, antes, the first deal) reach spectators in the start frame and
        # the bots in their first ViewUpdate or DecisionRequest, once: a resume does not repeat them.
        self._tell(start, list(self.state.opening))
        self.log.info("match started", players=[p.name for p in self.players])
        self._send_started()

    def _send_started(self) -> None:
        """Tell each seated bot the match has started; each is owed its first view."""
        for index, seat in enumerate(self.seats):
            if seat.holder is not None:
                seat.holder.send(self._started_message(index, resumed=False))
        self._views_due = True

    # --- settling: after every job that changed the match -----------------------------------------

    def _settle(self) -> None:
        if self.status != RUNNING:
            return
        if self._regathering:
            if any(s.holder is None and not s.forfeited for s in self.seats):
                self._arm_timer()  # the graces of the seats still away
                return
            recount = Recount(self.now())
            self._journal_first(recount)  # a full disk: the match stays as it is, and tries again
            self._regathering = False
            self._tell(recount, self.state.recount(recount.at))
        while True:
            if self.state.is_over():
                self._finish()
                return
            to_act = self.state.to_act()
            if not to_act or not all(self.seats[s].forfeited for s in to_act):
                break
            index = min(to_act)
            legal = self.state.legal_actions(index)
            if not legal:
                break
            now = self.now()
            events = self.state.apply(index, legal[0], now)
            auto = Auto(now, index, str(legal[0]))
            self._journal_applied(auto)
            self._tell(auto, events)
        self._publish(to_act)
        self._arm_timer()

    def _publish(self, to_act: frozenset[int]) -> None:
        """Open, re-open or close each seat's decision (``to_act``: the seats the game waits on);
        send what changed to each connected bot.

        A seat just told of its own action by an ActionResult gets no ViewUpdate for it (it knows
        what it did): the events wait for its next message. In a two-player game that makes a
        decision three messages (the Move, its ActionResult, the next seat's DecisionRequest); two
        with quiet acceptance. A seat whose stream defers updates gets none while it is not asked
        to decide, except in a real-time game, where seats race on what they see.

        Every message is built before any is sent: a bug in building one tells nobody anything
        (and the match is rebuilt from its journal, its open decisions not asked yet kept)."""
        now = self.now()
        views_due = self._views_due or bool(self._events)
        events = self.codec.events_bytes(self._events)
        outgoing: list[tuple[SeatState, bytes | None]] = []
        """Each connected seat's message, or None: its events are held back."""
        streams = self.state.realtime
        for index, seat in enumerate(self.seats):
            legal = seat_view.asked(self.state, index, to_act)
            if not legal:
                seat.decision = None
                seat.acting_since = None
            elif seat.decision is None or seat.decision.legal != legal:
                if seat.acting_since is None:
                    seat.acting_since = now
                seat.decisions += 1
                deadline = seat.acting_since + self.clocks.decision + seat.bank
                seat.decision = Decision(decision_id(self._epoch, index, seat.decisions), legal, deadline)
            if seat.holder is None or seat.forfeited:
                continue
            carried = seat.unsent + events if seat.unsent else events
            if seat.decision is not None and seat.decision.id != seat.asked:
                outgoing.append((seat, self._decision_message(index, now, carried)))
            elif views_due and (
                index in self._told or (seat.holder.options.deferred_updates and not streams)
            ):
                outgoing.append((seat, None))
            elif views_due:
                outgoing.append((seat, self._view_message(index, carried)))
        self._events = []
        self._views_due = False
        self._told = set()
        for seat, message in outgoing:
            if message is None:
                seat.unsent.extend(events)
            elif seat.holder is not None:
                seat.unsent = []
                if seat.decision is not None:  # asked now, or already (a ViewUpdate)
                    seat.asked = seat.decision.id
                seat.holder.send(message)

    @staticmethod
    def _unsent(seat: SeatState, events: list[bytes]) -> list[bytes]:
        """The events a message to ``seat`` carries: those held back for it, then ``events``."""
        if not seat.unsent:
            return events
        held, seat.unsent = seat.unsent, []
        return held + events

    def _send_current(self, index: int) -> None:
        """A (re)connected bot's catch-up: its open decision, else its view."""
        seat = self.seats[index]
        assert seat.holder is not None
        if seat.decision is not None:
            seat.asked = seat.decision.id
            seat.holder.send(self._decision_message(index, self.now(), []))
        else:
            seat.holder.send(self._view_message(index, []))

    def _finish(self) -> None:
        now = self.now()
        outcome = self.state.outcome()
        end = End(
            at=now,
            seed=self._seed,
            scores=outcome.scores,
            engine_places=outcome.places,
            places=tuple(final_places(outcome.places, [bool(s.forfeited) for s in self.seats])),
            timeouts=tuple(s.timeouts for s in self.seats),
            refusals=tuple(s.refusals for s in self.seats),
            forfeited=tuple(s.forfeited for s in self.seats),
        )
        self._journal_first(end)
        self._become(FINISHED)
        self.result = match_result(self._header(), end)
        self._cancel_timer()
        self._tell(end)
        # The end record is in the OS's hands already; make it durable off the event loop, and only
        # then drop the seed file a resume would need.
        self._close(self.secret_path)
        if self.sealed():
            self._send_ended(
                lambda seat: self.codec.view(seat_view.shown(self.state, seat)), result=self.result
            )
        else:
            view = self.codec.view(self.state.full_view())
            self._send_ended(lambda _seat: view, result=self.result)
        self._end_feeds()
        self.metrics.finished.inc()
        self.log.info(
            "match finished",
            players=[p.name for p in self.players],
            places=end.places,
            scores=end.scores,
            timeouts=end.timeouts,
            refusals=end.refusals,
            forfeited=end.forfeited,
            seconds=round(now, 3),
            journal=str(self.journal_path),
        )
        self._over()

    async def cancel(self, reason: str) -> None:
        """Cancel the match, returning once it is over (cancelled, or finished first, or ended by a
        fault), or raising why it could not be cancelled (a full disk)."""
        outcome: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def job() -> None:
            if outcome.done():
                return
            try:
                self._cancel(reason)
            except ServiceError as exc:
                outcome.set_exception(exc)
                raise
            outcome.set_result(None)

        self.post(job)
        over = asyncio.ensure_future(self.done.wait())
        try:
            await asyncio.wait((outcome, over), return_when=asyncio.FIRST_COMPLETED)
        finally:
            over.cancel()
        if outcome.done():
            outcome.result()

    def _cancel(self, reason: str) -> None:
        """End the match without a result. Nothing hidden is revealed, not even the seed: a
        tournament may deal the same seed again (the seed file stays, for the admin)."""
        if self.done.is_set():
            return
        at = self.now() if self.status == RUNNING else 0.0
        cancel = Cancel(at, reason, tuple(s.forfeited for s in self.seats))
        self._journal_first(cancel)
        self._become(CANCELLED)
        self.cancel_reason = reason
        self._cancel_timer()
        self._tell(cancel)
        self._close(None)
        self._send_ended(lambda seat: self.codec.view(seat_view.shown(self.state, seat)), reason=reason)
        self._end_feeds()
        self.log.info("match cancelled", reason=reason, seconds=round(at, 3), journal=str(self.journal_path))
        self._over()

    def _header(self) -> Header:
        header = self.records[0]
        assert isinstance(header, Header)
        return header

    def _over(self) -> None:
        self._to(Phase.OVER)
        self.done.set()
        self.on_finished(self)

    def _abandon(self, reason: str, rebuilt: bool = True) -> None:
        """End a match a bug stopped: cancelled with ``reason``, or as its journal's last record
        already says (only the telling of the end failed). Unless ``rebuilt``, the engine may be
        half changed: nobody is shown anything of it, each bot hears only that the match ended."""
        last = self.records[-1]
        closing = last if isinstance(last, CLOSING) else None
        if closing is None and rebuilt:
            try:
                self._cancel(reason)
                return
            except Exception:
                self.log.exception("match cannot be cancelled after a fault: ending it as it stands")
        if closing is None:
            at = self.now() if self.status == RUNNING else 0.0
            closing = Cancel(at, reason, tuple(s.forfeited for s in self.seats))
            try:
                self._journal_first(closing)
            except Exception:  # the next run of the referee will find the match unfinished, and resume it
                self.log.exception("the journal cannot take the end of a match stopped by a fault")
        try:
            self._cancel_timer()
            if isinstance(closing, End):
                status = FINISHED
                self.result = match_result(self._header(), closing)
                ending: dict[str, Any] = {"result": self.result}
            else:
                status = CANCELLED
                self.cancel_reason = closing.reason
                ending = {"reason": self.cancel_reason}
            if self.status != status:
                self._become(status)
            for index, seat in enumerate(self.seats):
                if seat.holder is not None:
                    ended = bots_pb2.MatchEnded(match_id=self.id, seat=index, status=self.status, **ending)
                    seat.holder.send(bots_pb2.ServerMessage(match_ended=ended))
            self._close(self.secret_path if isinstance(closing, End) else None)
        finally:
            self._end_feeds()
            self.log.error("match ended by a fault", status=Status.Name(self.status), reason=reason)
            self._over()

    def _send_ended(self, view_of: Callable[[int], games_pb2.View], **ending: Any) -> None:
        """Tell every seated bot the match is over, with the events since its last message."""
        events = self.codec.events_bytes(self._events)
        self._events = []
        for index, seat in enumerate(self.seats):
            if seat.holder is not None:
                ended = bots_pb2.MatchEnded(
                    match_id=self.id,
                    seat=index,
                    view=view_of(index),
                    events=[games_pb2.Event.FromString(e) for e in self._unsent(seat, events)],
                    status=self.status,
                    **ending,
                )
                seat.holder.send(bots_pb2.ServerMessage(match_ended=ended))

    def _end_feeds(self) -> None:
        for subscription in self.subscribers:
            subscription.frames.put_nowait(None)
        self.subscribers = []
        self.metrics.active_matches.dec()

    # --- the spectators ---------------------------------------------------------------------------

    def _tell(self, record: Record, events: list[Event] | None = None) -> None:
        """Show a journaled change to the spectators; its events go to the bots when the match settles."""
        self._shown = len(self.records)
        if not shown(record):
            return
        self._changed()
        if events:
            self._events.extend(events)
        if self.subscribers:
            seq = len(self.records) - 1
            # a twin still plays this deal: the end reveals nothing but to the admin (nor its seed)
            sealed = (isinstance(record, EDGES) or self.state.is_over()) and self.sealed()
            built: dict[bool, spectator_pb2.MatchFrame] = {}
            for subscription in list(self.subscribers):
                if subscription.frames.qsize() >= sessions.MAX_QUEUED:
                    subscription.overrun = True
                    subscription.frames.put_nowait(None)
                    self.subscribers.remove(subscription)
                    continue
                frame = built.get(subscription.admin)
                if frame is None:
                    frame = built[subscription.admin] = build_frame(
                        self.codec,
                        self.id,
                        seq,
                        record,
                        events or [],
                        self.state,
                        subscription.admin,
                        self.info,
                        sealed and not subscription.admin,
                    )
                subscription.frames.put_nowait(frame)

    def subscribe(self, admin: bool, from_start: bool) -> tuple[Subscription, list[Record]]:
        """A live feed starting now, and the records before it (all of them if ``from_start``).

        Without ``from_start`` the feed begins with a snapshot of the match as it is.
        Both are taken at once, so the replayed records and the live frames meet exactly.
        """
        subscription = Subscription(admin)
        backlog = list(self.records) if from_start else []
        if not from_start:
            sealed = not admin and self.sealed()
            reveal = admin or (self.status == FINISHED and not sealed)
            view = self.state.full_view() if reveal else self.state.public_view()
            subscription.frames.put_nowait(
                spectator_pb2.MatchFrame(
                    match_id=self.id,
                    seq=len(self.records) - 1,
                    time_ms=ms(self.records[-1].at),
                    step=spectator_pb2.Step(kind=Kind.SNAPSHOT),
                    view=self.codec.view(view),
                    info=withheld(self.info()) if sealed else self.info(),
                )
            )
        if self.done.is_set():
            subscription.frames.put_nowait(None)
        else:
            self.subscribers.append(subscription)
        return subscription, backlog

    def unsubscribe(self, subscription: Subscription) -> None:
        if subscription in self.subscribers:
            self.subscribers.remove(subscription)

    def replay_frames(self, records: list[Record], admin: bool) -> Iterator[spectator_pb2.MatchFrame]:
        """Frames of past records, re-run from the seed (in the spectator's coroutine, not the actor)."""
        sealed = not admin and self.sealed()
        reveal = admin or (self.status == FINISHED and not sealed)
        return replay_frames(self.spec, self.options, self._seed, records, reveal, self.info, sealed)
