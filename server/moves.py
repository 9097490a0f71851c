"""A match's moves, posted by the bot streams: whose seat, which decision, read and applied or
refused (and journaled either way), answered with an ActionResult.
"""

from __future__ import annotations

import unicodedata

from croupier.engine.core import Action, IllegalAction, MalformedInput
from croupier.server.journal import Act, Refuse
from croupier.server.lifecycle import WAITING, Settled
from croupier.server.match_state import MatchState
from croupier.server.messages import Result
from croupier.server.seats import Decision
from croupier.server.session import Session
from croupier.v1 import bots_pb2
from croupier.wire.errors import clip
from croupier.wire.reasons import BotError, Reason, refusal_reason

MAX_MOVE_TEXT = 200
"""Characters of a Move's text: every action's text form is a few words."""
MAX_COMMENT = 200
"""Characters of a Move's comment kept in the journal: the rest is cut off (the move stands; a
note for the author is not worth a refusal, which would count against the bot)."""
_CONTROLS = dict.fromkeys([*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029], " ")
"""Characters a comment may not hold (they would move a terminal's cursor or break its lines)."""


class Moves(MatchState):
    """The match's room for bots' moves."""

    def move(self, session: Session, move: bots_pb2.Move) -> None:
        self.run_now(lambda: self._move(session, move))

    def _move(self, session: Session, move: bots_pb2.Move) -> None:
        try:
            index = self._seat_of(session, move)
            if self.status == WAITING:
                raise BotError(
                    Reason.REASON_MATCH_NOT_STARTED,
                    f"match {self.id} has not started: it waits for every seat to be held",
                )
            if self.done.is_set():
                raise BotError(Reason.REASON_MATCH_OVER, f"match {self.id} is over")
            if self._regathering:
                raise BotError(
                    Reason.REASON_MATCH_REGATHERING,
                    f"match {self.id} resumed after a referee restart: it waits for every seat to be "
                    "back, then counts down again",
                )
            seat = self.seats[index]  # never a forfeited one: it has no holder
            if move.decision_id and (seat.decision is None or seat.decision.id != move.decision_id):
                self._answer_closed(session, index, move)
                return
            self._play(session, index, move)
        except BotError as exc:
            session.send_error(exc.reason, str(exc), move.match_id, move.decision_id)

    def _seat_of(self, session: Session, move: bots_pb2.Move) -> int:
        held = [i for i, s in enumerate(self.seats) if s.holder is session]
        if move.HasField("seat"):
            if not 0 <= move.seat < len(self.seats):
                raise BotError(Reason.REASON_NO_SUCH_SEAT, f"match {self.id} has no seat {move.seat}")
            if move.seat not in held:
                raise BotError(
                    Reason.REASON_SEAT_NOT_HELD, f"you do not hold seat {move.seat} of match {self.id}"
                )
            return move.seat
        if len(held) == 1:
            return held[0]
        if not held:
            raise BotError(Reason.REASON_SEAT_NOT_HELD, f"you hold no seat of match {self.id}")
        for i in held:
            seat = self.seats[i]
            if (seat.decision and seat.decision.id == move.decision_id) or (
                seat.resolved and seat.resolved[0] == move.decision_id and move.decision_id
            ):
                return i
        raise BotError(
            Reason.REASON_SEAT_AMBIGUOUS,
            f"you hold seats {held} of match {self.id}: say which one acts (Move.seat)",
        )

    def _answer_closed(self, session: Session, index: int, move: bots_pb2.Move) -> None:
        """An answer to a decision that is not open: a repeat of an applied one, or a stale one."""
        seat = self.seats[index]
        if seat.resolved is not None and seat.resolved[0] == move.decision_id:
            decision_id, how, action = seat.resolved
            if how is Settled.ACCEPTED:
                session.send(self._result(index, decision_id, Result.DUPLICATE, action))
                return
            raise BotError(
                Reason.REASON_DECISION_TIMED_OUT,
                f"decision {decision_id} timed out: the referee played {action} for you",
            )
        open_now = (
            f"your open decision is {seat.decision.id}" if seat.decision else "you have no open decision"
        )
        raise BotError(
            Reason.REASON_DECISION_NOT_OPEN, f"decision {move.decision_id} is not open ({open_now})"
        )

    def _play(self, session: Session, index: int, move: bots_pb2.Move) -> None:
        seat = self.seats[index]
        now = self.now()
        action: Action | None = None
        try:
            action = self._read_action(move, seat.decision)
            events = self.state.apply(index, action, now)
        except (MalformedInput, IllegalAction) as exc:
            self._refuse(session, index, move, action, exc, now)
            return
        decision_id = seat.decision.id if seat.decision else 0
        think = now - seat.acting_since if seat.acting_since is not None else 0.0
        bank = max(0.0, seat.bank - max(0.0, think - self.clocks.decision))
        comment = move.comment
        if comment:
            comment = cleaned(comment)
        act = Act(now, index, str(action), decision_id, think, bank, comment)
        self._journal_applied(act)
        seat.bank = bank
        seat.last_think = think
        seat.resolved = (decision_id, Settled.ACCEPTED, action)
        seat.decision = None
        seat.acting_since = None
        self._tell(act, events)
        if session.options.quiet_acceptance:
            seat.accepted += 1  # the seat's next message says so, its events first
        else:
            session.send(self._result(index, move.decision_id, Result.ACCEPTED, action, think=think))
        self._told.add(index)
        self.metrics.decisions.add(think)

    def _read_action(self, move: bots_pb2.Move, decision: Decision | None) -> Action:
        choice = move.WhichOneof("choice")
        if choice == "index":
            if not move.decision_id:
                raise MalformedInput("an index answers a decision request: set decision_id")
            assert decision is not None  # an open decision matched decision_id
            if move.index >= len(decision.legal):
                raise MalformedInput(
                    f"index {move.index} is out of range: decision {decision.id} lists "
                    f"{len(decision.legal)} actions (0 to {len(decision.legal) - 1})"
                )
            return decision.legal[move.index]
        if choice == "action":
            return self.codec.action_from_proto(move.action)
        if choice == "text":
            if len(move.text) > MAX_MOVE_TEXT:
                raise MalformedInput(
                    f"a move's text is at most {MAX_MOVE_TEXT} characters, not {len(move.text)}"
                )
            return self.spec.parse_action(move.text)
        raise MalformedInput("a move needs a choice: set index, action or text")

    def _refuse(
        self,
        session: Session,
        index: int,
        move: bots_pb2.Move,
        action: Action | None,
        why: MalformedInput | IllegalAction,
        now: float,
    ) -> None:
        seat = self.seats[index]
        reason = clip(str(why))  # it may quote the move: the bot's own input, at any size
        attempt = clip(str(action) if action is not None else _describe(move))
        refusal = Refuse(now, index, reason, attempt)
        self._journal_first(refusal)
        seat.refusals += 1
        self._tell(refusal, self.state.penalize(index, reason, now))
        code = refusal_reason(why)
        refused = self._result(index, move.decision_id, Result.REFUSED, action, reason, refusal_reason=code)
        session.send(refused)
        self._told.add(index)
        self.metrics.refused.inc()
        if seat.refusals == self.clocks.max_refusals:
            self._forfeit(index, "refusals", now)


def cleaned(comment: str) -> str:
    """A Move's comment as the journal keeps it: its first ``MAX_COMMENT`` characters, each
    control character a space, and without the invisible format characters (category Cf: the
    bidi controls such as U+202E and U+2066 reorder how a replay reads, others hide text)."""
    kept = comment[:MAX_COMMENT].translate(_CONTROLS)
    return "".join(c for c in kept if unicodedata.category(c) != "Cf")


def _describe(move: bots_pb2.Move) -> str:
    """A refused move that could not be read, for the journal."""
    choice = move.WhichOneof("choice")
    if choice == "index":
        return f"index {move.index}"
    if choice == "text":
        return move.text
    return str(choice or "nothing")
