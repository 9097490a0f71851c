"""The hand-off from a stream's reader to the match, and the stream options as the actor applies
them, on a manual clock with fake sessions (tests/server/fakes.py): no network, no waiting."""

from __future__ import annotations

from pathlib import Path

from croupier.server.journal import Act
from croupier.server.session import Options
from croupier.v1 import bots_pb2
from tests.server.fakes import Table, table


def asked(t: Table) -> tuple[int, bots_pb2.DecisionRequest]:
    """The seat asked to act, and its request."""
    for index, bot in enumerate(t.bots):
        decision = bot.open_decision()
        if decision is not None:
            return index, decision
    raise AssertionError("nobody is asked to act")


def test_a_move_from_a_reader_is_applied_and_answered_before_the_loop_turns(tmp_path: Path) -> None:
    t = table(tmp_path)
    mover, decision = asked(t)
    for bot in t.bots:
        bot.take()
    t.match.move(t.bots[mover], bots_pb2.Move(match_id=t.match.id, decision_id=decision.decision_id, index=0))
    # no clock.run(): the move ran in the reader's own call, its answers queued for the writers
    assert t.bots[mover].kinds() == ["action_result"]
    assert t.bots[1 - mover].kinds() == ["decision"]
    assert isinstance(t.journal()[-1], Act)


def test_quiet_acceptance_counts_the_move_in_the_seats_next_message(tmp_path: Path) -> None:
    t = table(tmp_path)
    for bot in t.bots:
        bot.options = Options(quiet_acceptance=True)
    mover, _ = asked(t)
    t.move(mover)
    assert "action_result" not in t.bots[mover].kinds()
    t.move(1 - mover)
    [after] = [m for m in t.bots[mover].take() if m.HasField("decision")][-1:]
    assert after.decision.accepted == 1
    assert len(after.decision.events) >= 2, "its own move's events first, then the other seat's"


def test_deferred_updates_hold_a_waiting_seats_events_for_its_next_request(tmp_path: Path) -> None:
    t = table(tmp_path, players=3, options={"target": 100})
    t.bots[2].options = Options(deferred_updates=True)
    t.bots[2].take()
    t.play_out(seats=[0, 1, 2])
    assert "view_update" not in t.bots[2].kinds()
    assert any(m.HasField("view_update") for m in t.bots[0].sent + t.bots[1].sent)
