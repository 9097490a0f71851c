"""The match's life as tables (lifecycle.py): every move they allow is taken, every other one raises
naming both states; a job walks the phases it should. And a bug in a job: its effects undone by
rebuilding the match from its journal and the job run once more, or the match ended with a reason
its bots and spectators see; nobody is ever told what the journal does not hold."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

import croupier.server.match_journal
import croupier.server.match_state
from croupier.server.clocks import Clocks
from croupier.server.lifecycle import (
    PHASE_MOVES,
    STATUS_MOVES,
    BadTransition,
    Phase,
    check_phase,
    check_status,
)
from croupier.server.match import FAULT_REASON, Match
from croupier.server.messages import Status, Subscription
from croupier.v1 import bots_pb2, spectator_pb2
from croupier.wire.framing import Outgoing, parsed
from tests.server.fakes import Table, table
from tests.server.test_match_actor import frames

Result = bots_pb2.ActionResult
FINAL = {Phase.OVER, Phase.STOPPED}


@pytest.mark.parametrize(("old", "new"), list(itertools.product(Phase, Phase)), ids=lambda p: p.name)
def test_every_phase_move_is_allowed_by_the_table_or_raises_naming_both(old: Phase, new: Phase) -> None:
    if new in PHASE_MOVES[old]:
        assert check_phase(old, new) is new
    else:
        with pytest.raises(BadTransition, match=f"from {old.name} to {new.name}"):
            check_phase(old, new)


def reachable(moves: dict[Any, frozenset[Any]], start: Any) -> set[Any]:
    seen, todo = {start}, [start]
    while todo:
        for after in moves[todo.pop()] - seen:
            seen.add(after)
            todo.append(after)
    return seen


def test_every_phase_is_reached_from_new_and_every_one_can_end() -> None:
    assert reachable(PHASE_MOVES, Phase.NEW) == set(Phase)
    for phase in Phase:
        assert phase in FINAL or reachable(PHASE_MOVES, phase) & FINAL, phase
    assert all(not PHASE_MOVES[phase] for phase in FINAL)


def test_every_status_move_is_allowed_by_the_table_or_raises_naming_both() -> None:
    statuses = list(STATUS_MOVES)
    for old, new in itertools.product(statuses, statuses):
        if new in STATUS_MOVES[old]:
            assert check_status(old, new) == new
        else:
            with pytest.raises(BadTransition, match=f"from {Status.Name(old)} to {Status.Name(new)}"):
                check_status(old, new)
    assert reachable(STATUS_MOVES, Status.MATCH_STATUS_WAITING) == set(statuses)


@pytest.fixture
def phases(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Phase]]:
    """Every phase the actor moves to, in order."""
    moved: list[Phase] = []

    def recording(old: Phase, new: Phase) -> Phase:
        moved.append(new)
        return check_phase(old, new)

    monkeypatch.setattr(croupier.server.match_state, "check_phase", recording)
    yield moved


def test_a_move_walks_job_changed_settling_and_back_to_idle(tmp_path: Path, phases: list[Phase]) -> None:
    t = table(tmp_path)
    decision = t.bots[1].open_decision()
    assert decision is not None
    phases.clear()
    t.move(1)  # run at once by the stream that read it: never DUE
    assert phases == [Phase.JOB, Phase.CHANGED, Phase.SETTLING, Phase.JOB, Phase.IDLE]
    phases.clear()
    t.move(1, decision_id=decision.decision_id - 1, index=0)  # not open: an error, nothing to settle
    assert phases == [Phase.JOB, Phase.IDLE]
    phases.clear()
    t.match.post(lambda: None)  # a posted job waits for its drain on the loop
    assert phases == [Phase.DUE]
    t.clock.run()
    assert phases == [Phase.DUE, Phase.JOB, Phase.IDLE]
    assert t.bots[1].of("error")[-1].message.startswith(f"decision {decision.decision_id - 1} is not open")


async def test_a_match_over_refuses_any_further_phase(tmp_path: Path) -> None:
    t = table(tmp_path, "platinum_fish")
    t.play_out()
    assert t.match.phase is Phase.OVER
    with pytest.raises(BadTransition, match="from OVER to JOB"):
        t.match._to(Phase.JOB)
    await t.match.stop_actor()  # the referee shutting down later: a no-op
    assert t.match.phase is Phase.OVER


# --- a bug in a job ---------------------------------------------------------------------------


def half_applied(fails: list[int]) -> Any:
    """An engine ``apply`` that changes the state and then raises, ``fails[0]`` times."""

    def apply(self: Any, *args: Any, real: Any) -> Any:
        events = real(self, *args)
        if fails[0]:
            fails[0] -= 1
            raise RuntimeError("a bug after the state changed")
        return events

    return apply


def break_apply(monkeypatch: pytest.MonkeyPatch, t: Table, times: int) -> None:
    cls = type(t.match.state)
    real = cls.apply
    fails = [times]
    monkeypatch.setattr(cls, "apply", lambda self, *a: half_applied(fails)(self, *a, real=real))


def hand(t: Table, seat: int) -> list[Any]:
    return list(t.match.state.view(seat).hands[seat])


def watched(tmp_path: Path, admin: bool) -> tuple[Table, Subscription]:
    """A started match and a spectator's feed of it, its snapshot read."""
    t = table(tmp_path)
    subscription, _ = t.match.subscribe(admin=admin, from_start=False)
    frames(subscription)
    return t, subscription


def test_a_job_that_fails_once_is_undone_from_the_journal_and_runs_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t, subscription = watched(tmp_path, admin=True)
    before = hand(t, 1)
    break_apply(monkeypatch, t, times=1)
    with capture_logs() as logs:
        t.move(1)
    assert [e["event"] for e in logs if e["log_level"] == "error"] == ["match job failed"]
    assert [r.status for r in t.bots[1].of("action_result")] == [Result.ACCEPTED]
    assert len(hand(t, 1)) == len(before) - 1  # played once, not twice
    assert [r.KIND for r in t.journal()].count("act") == 1
    steps = [f.step.kind for f in frames(subscription)]
    assert steps.count(spectator_pb2.Step.ACTION) == 1
    assert t.bots[0].open_decision() is not None  # the match goes on
    t.play_out()
    assert t.match.status == Status.MATCH_STATUS_FINISHED


def test_a_job_that_fails_again_ends_the_match_with_a_reason_bots_and_spectators_see(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t, subscription = watched(tmp_path, admin=False)
    before = [hand(t, seat) for seat in (0, 1)]
    views = [t.match.codec.view(t.match.state.view(seat)) for seat in (0, 1)]
    break_apply(monkeypatch, t, times=2)
    t.move(1)
    assert (t.match.phase, t.match.status, t.match.cancel_reason) == (
        Phase.OVER,
        Status.MATCH_STATUS_CANCELLED,
        FAULT_REASON,
    )
    for seat, bot in enumerate(t.bots):
        [ended] = bot.of("match_ended")
        assert (ended.status, ended.reason) == (Status.MATCH_STATUS_CANCELLED, FAULT_REASON)
        assert ended.view == views[seat]  # as the journal has it: the half-played card is still in hand
        assert not bot.of("action_result")
    assert [hand(t, seat) for seat in (0, 1)] == before
    last = frames(subscription)[-1]
    assert (last.step.kind, last.step.reason) == (spectator_pb2.Step.CANCEL, FAULT_REASON)
    assert last.info.status == Status.MATCH_STATUS_CANCELLED
    assert [(r.KIND, getattr(r, "reason", None)) for r in t.journal()[1:]] == [
        ("start", None),
        ("cancel", FAULT_REASON),
    ]
    assert t.finished == [t.match]
    assert t.match.done.is_set()


def test_a_journal_that_does_not_rebuild_ends_the_match_showing_nothing_of_its_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t, subscription = watched(tmp_path, admin=False)
    break_apply(monkeypatch, t, times=1)

    def unreadable(*_: Any) -> Any:
        raise RuntimeError("the rebuild fails too")

    monkeypatch.setattr(croupier.server.match_journal, "replayed", unreadable)
    t.move(1)
    for bot in t.bots:
        [ended] = bot.of("match_ended")
        assert (ended.status, ended.reason) == (Status.MATCH_STATUS_CANCELLED, FAULT_REASON)
        assert not ended.HasField("view") and not ended.events  # the state may be half changed
    assert subscription.frames.get_nowait() is None  # the feed ends, with no frame of that state
    assert t.journal()[-1].KIND == "cancel"
    assert t.match.info().cancel_reason == FAULT_REASON


def test_a_change_journaled_but_not_told_when_the_job_failed_is_told_once_by_the_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t, subscription = watched(tmp_path, admin=True)
    tell = Match._tell
    fails = [1]

    def failing_tell(self: Match, record: Any, events: Any = None) -> None:
        if record.KIND == "act" and fails[0]:
            fails[0] -= 1
            raise RuntimeError("a bug between the journal and the telling")
        tell(self, record, events)

    monkeypatch.setattr(Match, "_tell", failing_tell)
    t.move(1)
    [act] = [r for r in t.journal() if r.KIND == "act"]
    shown = frames(subscription)
    assert [f.step.kind for f in shown] == [spectator_pb2.Step.ACTION]  # once
    [told] = t.bots[1].of("action_result")  # its move was played: a repeat of it is a duplicate
    assert (told.status, told.decision_id) == (Result.DUPLICATE, act.decision_id)
    decision = t.bots[0].open_decision()
    assert decision is not None and list(decision.events) == list(shown[0].events)


def test_a_bot_stream_that_fails_on_a_send_loses_only_that_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = table(tmp_path, clocks=Clocks(decision=5, bank=0))
    send = t.bots[1].send
    fails = [1]

    def flaky(message: Outgoing) -> None:
        if parsed(message).WhichOneof("message") == "action_result" and fails[0]:
            fails[0] -= 1
            raise RuntimeError("a bug in sending")
        send(message)

    monkeypatch.setattr(t.bots[1], "send", flaky)
    t.move(1)
    assert [r.status for r in t.bots[1].of("action_result")] == [Result.DUPLICATE]
    assert [r.KIND for r in t.journal()].count("act") == 1
    assert t.bots[0].open_decision() is not None
    t.play_out()
    assert t.match.status == Status.MATCH_STATUS_FINISHED


def test_a_bug_in_telling_the_end_still_ends_the_match_as_its_journal_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = table(tmp_path, "platinum_fish")

    def broken(*_: Any, **__: Any) -> None:
        raise RuntimeError("a bug in the ending")

    monkeypatch.setattr(Match, "_send_ended", broken)
    t.play_out()
    end = t.journal()[-1]
    assert end.KIND == "end"
    assert t.match.status == Status.MATCH_STATUS_FINISHED
    assert t.match.result is not None and list(t.match.result.winners)
    for bot in t.bots:
        [ended] = bot.of("match_ended")
        assert (ended.status, ended.result) == (Status.MATCH_STATUS_FINISHED, t.match.result)
    assert t.finished == [t.match]
    assert not t.match.secret_path.exists()  # finished for good: the seed file goes, as after any end


def test_a_bug_while_building_the_next_decision_tells_nobody_half_and_the_rebuild_asks_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = table(tmp_path, "spoil_five", 3)
    mover = next(i for i, bot in enumerate(t.bots) if bot.open_decision() is not None)
    build = Match._decision_message
    fails = [1]

    def failing(self: Match, *args: Any) -> Any:
        if fails[0]:
            fails[0] -= 1
            raise RuntimeError("a bug in building a request")
        return build(self, *args)

    monkeypatch.setattr(Match, "_decision_message", failing)
    sent = [len(bot.sent) for bot in t.bots]
    t.move(mover)
    new = [bot.sent[count:] for bot, count in zip(t.bots, sent, strict=True)]
    asked = [
        i for i, messages in enumerate(new) if any(m.WhichOneof("message") == "decision" for m in messages)
    ]
    assert len(asked) == 1 and asked[0] != mover
    [request] = [m for m in new[asked[0]] if m.WhichOneof("message") == "decision"]  # once, not twice
    [record] = [r for r in t.journal() if r.KIND == "act"]
    assert [r.status for r in t.bots[mover].of("action_result")] == [Result.ACCEPTED, Result.DUPLICATE]
    assert t.bots[mover].of("action_result")[0].decision_id == record.decision_id
    watcher = next(i for i in range(3) if i not in (mover, asked[0]))
    assert [m.WhichOneof("message") for m in new[watcher]] == ["view_update"]  # the move's events, once
    assert list(new[watcher][0].view_update.events) == list(request.decision.events)
