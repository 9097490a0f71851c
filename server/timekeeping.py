"""What a match does when time runs out: its one timer, the game's own clock (a countdown, a
window), a decision's deadline (a timeout), a disconnected seat's grace (a forfeit).

A seat's clock runs while it is to act (in a real-time game, while it
has a legal play). It has ``decision`` seconds, then draws on its bank; when
both are spent the referee plays the first legal action for it and records a
timeout. After ``max_timeouts`` timeouts, or ``grace`` seconds without a
connected bot, the seat is forfeited: the referee plays it on (at once when
the match waits on it alone, otherwise when its per-decision time runs out,
so it never races live bots) and ranks it last.
"""

from __future__ import annotations

from croupier.server.journal import Auto, Clock, Forfeit, Timeout
from croupier.server.lifecycle import RUNNING, Settled
from croupier.server.match_state import MatchState
from croupier.server.messages import Result

EARLY = 1e-3
"""Timers may fire this much early: a deadline this close counts as reached."""


class Timekeeping(MatchState):
    """The match's room for time: its timer, timeouts and forfeits."""

    def _post_tick(self) -> None:
        self._timer = None
        self._timer_at = None
        self.post(self._tick)

    def _tick(self) -> None:
        if self.status != RUNNING:
            return
        now = self.now()
        wake = None if self._regathering else self.state.wake_at()
        if wake is not None and now + EARLY >= wake:
            # Early by a hair (the timer, or float rounding of the loop's time): the game's clock is
            # moved to its own time, else it would not move and the timer would fire again at once.
            at = max(now, wake)
            clock = Clock(at)
            self._journal_first(clock)
            self._tell(clock, self.state.advance(at))
        for index, seat in enumerate(self.seats):
            if self.state.is_over():
                break
            if seat.decision is not None and now + EARLY >= seat.decision.deadline:
                self._clock_ran_out(index, now)
            if (
                seat.gone_since is not None
                and not seat.forfeited
                and now + EARLY >= seat.gone_since + self.clocks.grace
            ):
                self._forfeit(index, "disconnected", now)
        self._changed()

    def _clock_ran_out(self, index: int, now: float) -> None:
        seat = self.seats[index]
        assert seat.decision is not None
        decision_id = seat.decision.id
        legal = self.state.legal_actions(index)  # now, not the decision's list: others may have acted
        if not legal:
            seat.decision = None
            seat.acting_since = None
            return
        action = legal[0]
        events = self.state.apply(index, action, now)
        if seat.forfeited:
            auto = Auto(now, index, str(action))
            self._journal_applied(auto)
            seat.decision = None
            seat.acting_since = None
            self._tell(auto, events)
            return
        timeout = Timeout(now, index, str(action), decision_id)
        self._journal_applied(timeout)
        seat.decision = None
        seat.acting_since = None
        seat.timeouts += 1
        seat.bank = 0.0
        seat.resolved = (decision_id, Settled.TIMED_OUT, action)
        self._tell(timeout, events)
        if seat.holder is not None:
            seat.holder.send(self._result(index, decision_id, Result.TIMED_OUT, action))
            self._told.add(index)
        self.metrics.timeouts.inc()
        if seat.timeouts >= self.clocks.max_timeouts:
            self._forfeit(index, "timeouts", now)

    def _forfeit(self, index: int, reason: str, now: float) -> None:
        seat = self.seats[index]
        forfeit = Forfeit(now, index, reason)
        self._journal_first(forfeit)
        seat.forfeited = reason
        seat.bank = 0.0
        seat.decision = None
        seat.acting_since = None
        seat.gone_since = None
        self._tell(forfeit)
        self.log.info("seat forfeited", seat=index, reason=reason)
        self._release_forfeited(index)

    def _release_forfeited(self, index: int) -> None:
        """Tell a forfeited seat's bot, and free the seat (the referee plays it from now on)."""
        seat = self.seats[index]
        if seat.holder is not None:
            seat.holder.send(self._forfeited_message(index))
            seat.holder = None
        self.on_released(self, index)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        self._timer_at = None

    def _arm_timer(self) -> None:
        """One timer for the earliest of the game's own clock, the seats' deadlines and graces."""
        when = None if self._regathering else self.state.wake_at()
        for seat in self.seats:  # one pass, no lists: this runs after every decision
            if seat.decision is not None and (when is None or seat.decision.deadline < when):
                when = seat.decision.deadline
            if seat.gone_since is not None and (when is None or seat.gone_since + self.clocks.grace < when):
                when = seat.gone_since + self.clocks.grace
        if when is None or (self._timer_at is not None and self._timer_at <= when):
            # A timer already due no later stays: firing early costs one idle tick, which arms the
            # next; cancelling and re-arming on every decision (a deadline moves on each) costs more.
            return
        self._cancel_timer()
        self._timer_at = when
        self._timer = self.clock.call_at(self._origin + when, self._post_tick, self._context)
