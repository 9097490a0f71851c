"""The match actor's invariants, on a manual clock with bots that only collect what they are sent
(no network, no sleeping): the journal is written before anyone is told; a seat's own events wait
after its ActionResult; a timer already due no later is left alone; the clock-bank arithmetic;
decision ids across resumes; a refusal changes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from croupier.server.clocks import Clocks
from croupier.server.journal import JournalWriter, Record
from croupier.server.seats import decision_id
from croupier.v1 import bots_pb2, games_pb2, spectator_pb2
from croupier.wire.framing import parsed
from tests.server.fakes import FakeSession, Table, resumed, table

Result = bots_pb2.ActionResult
CLOCKS = Clocks(decision=5.0, bank=30.0, max_timeouts=3, grace=10.0)


def frames(subscription: Any) -> list[spectator_pb2.MatchFrame]:
    got = []
    while not subscription.frames.empty():
        frame = subscription.frames.get_nowait()
        if frame is not None:
            got.append(frame)
    return got


def events_of(message: bots_pb2.ServerMessage) -> list[games_pb2.Event]:
    kind = message.WhichOneof("message")
    return list(getattr(message, kind).events) if kind in ("decision", "view_update", "match_ended") else []


def test_the_journal_is_written_before_anyone_is_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = table(tmp_path, clocks=CLOCKS, seated=False)
    timeline: list[tuple[str, Any]] = []
    write = JournalWriter.write

    def journaled(writer: JournalWriter, record: Record) -> None:
        write(writer, record)
        timeline.append(("journal", (record.KIND, getattr(record, "seat", None))))

    monkeypatch.setattr(JournalWriter, "write", journaled)
    subscription, _ = t.match.subscribe(admin=True, from_start=False)
    subscription.frames.get_nowait()  # the snapshot of the match as it is
    put = subscription.frames.put_nowait
    monkeypatch.setattr(
        subscription.frames, "put_nowait", lambda f: (timeline.append(("frame", f and f.seq)), put(f))
    )
    for index, bot in enumerate(t.bots):
        monkeypatch.setattr(
            bot, "send", lambda m, s=bot.send, i=index: (timeline.append((f"seat {i}", parsed(m))), s(m))
        )
    for index, bot in enumerate(t.bots):
        t.match.attach(bot, index)
    t.clock.run()
    t.move(0, text="banana")  # refused
    t.clock.advance(CLOCKS.decision + CLOCKS.bank)  # seat 1 times out
    t.play_out()

    results = {Result.ACCEPTED: "act", Result.REFUSED: "refuse", Result.TIMED_OUT: "timeout"}
    written: dict[tuple[str, int | None], int] = {}
    told: dict[tuple[str, tuple[str, int | None]], int] = {}
    for who, item in timeline:
        if who == "journal":
            written[item] = written.get(item, 0) + 1
        elif who == "frame":
            assert item is None or item < 1 + sum(written.values()), f"frame {item} shown before its record"
        else:
            kind = item.WhichOneof("message")
            seat = int(who.split()[1])
            if kind == "action_result":
                needed: tuple[str, int | None] = (results[item.action_result.status], seat)
            elif kind in ("match_started", "match_ended"):
                needed = ("start" if kind == "match_started" else "end", None)
            else:
                continue
            told[(who, needed)] = told.get((who, needed), 0) + 1
            assert written.get(needed, 0) >= told[(who, needed)], f"{kind} told to {who} before its record"
    assert {needed for _who, needed in told} == {
        ("start", None),
        ("end", None),
        ("refuse", 0),
        ("timeout", 1),
        ("act", 0),
        ("act", 1),
    }


def test_every_bot_gets_every_event_once_in_order_its_own_held_back_after_its_action_result(
    tmp_path: Path,
) -> None:
    t = table(tmp_path, clocks=CLOCKS, seated=False)
    subscription, _ = t.match.subscribe(admin=False, from_start=False)
    for index, bot in enumerate(t.bots):
        t.match.attach(bot, index)
    t.clock.run()
    act = {1: len(t.bots[1].sent)}
    t.move(1)
    assert t.bots[1].kinds()[act[1] :] == ["action_result"]  # no ViewUpdate of its own move
    shown = frames(subscription)
    own = [f for f in shown if f.step.kind == spectator_pb2.Step.ACTION][-1].events
    assert own, "a play has events"
    assert events_of(t.bots[0].sent[-1]) == list(own)  # the other seat hears of it at once
    t.move(0)
    following = t.bots[1].sent[act[1] + 1]
    assert events_of(following)[: len(own)] == list(own)  # with its next message, first
    t.play_out()
    public = [e for f in shown + frames(subscription) for e in f.events]
    for bot in t.bots:
        assert [e for m in bot.sent for e in events_of(m)] == public


def test_a_timer_already_due_no_later_is_left_alone_then_rearmed_by_its_idle_tick(tmp_path: Path) -> None:
    t = table(tmp_path, clocks=CLOCKS)
    start = t.clock.now
    assert t.clock.pending() == [start + 35.0]  # seat 1: 5 s for the decision and its 30 s bank
    timer = t.match._timer
    t.clock.advance(10.0)
    t.move(1)
    assert t.match.seats[0].decision is not None
    assert t.match.seats[0].decision.deadline == 45.0
    assert t.match._timer is timer  # due earlier than seat 0's deadline: not cancelled and re-armed
    assert t.clock.pending() == [start + 35.0]
    t.clock.advance(25.0)  # it fires: nothing is due yet, and the next deadline is armed
    assert [r.KIND for r in t.journal()[1:]] == ["start", "act"]
    assert t.clock.pending() == [start + 45.0]


def test_the_clock_bank_drains_past_the_decision_time_and_a_timeout_comes_at_exactly_zero(
    tmp_path: Path,
) -> None:
    t = table(tmp_path, clocks=CLOCKS)
    first = t.bots[1].open_decision()
    assert first is not None
    assert (first.deadline_ms, first.time_bank_ms, first.last_think_ms) == (35_000, 30_000, 0)
    t.clock.advance(7.0)  # 2 s over the decision time: drawn from the bank
    t.move(1)
    assert t.bots[1].of("action_result")[-1].think_ms == 7_000
    assert t.journal()[-1].bank == 28.0
    t.move(0)
    second = t.bots[1].open_decision()
    assert second is not None
    assert (second.deadline_ms, second.time_bank_ms, second.last_think_ms) == (33_000, 28_000, 7_000)
    t.clock.advance(3.0)  # inside the decision time: the bank neither drains nor grows
    t.move(1)
    assert t.journal()[-1].bank == 28.0
    t.move(0)
    third = t.bots[1].open_decision()
    assert third is not None and third.time_bank_ms == 28_000
    t.clock.advance(33.0 - 0.002)
    assert t.bots[1].open_decision() == third  # 2 ms left: still open
    t.clock.advance(0.0015)  # a tick this close to the deadline counts it as reached (timers fire early)
    t.match.post(t.match._tick)
    t.clock.run()
    timed_out = t.bots[1].of("action_result")[-1]
    assert (timed_out.status, timed_out.decision_id, timed_out.timeouts) == (
        Result.TIMED_OUT,
        third.decision_id,
        1,
    )
    assert timed_out.action == third.legal_actions[0]
    t.move(0)
    fourth = t.bots[1].open_decision()
    assert fourth is not None
    assert (fourth.deadline_ms, fourth.time_bank_ms) == (5_000, 0)  # the bank is spent
    t.clock.advance(5.0)  # exactly the decision time, with nothing in the bank
    assert t.bots[1].of("action_result")[-1].status == Result.TIMED_OUT


async def test_decision_ids_carry_the_run_of_the_referee_and_a_resume_answers_old_ones(
    tmp_path: Path,
) -> None:
    t = table(tmp_path, clocks=CLOCKS)
    first = t.bots[1].open_decision()
    assert first is not None and first.decision_id == decision_id(1, 1, 1) == (1 << 32) | (1 << 24) | 1
    t.move(1)
    asked = t.bots[0].open_decision()
    assert asked is not None and asked.decision_id == (1 << 32) | (0 << 24) | 1
    await t.match.stop_actor()

    again = resumed(t, tmp_path)
    for index, bot in enumerate(again.bots):
        again.match.attach(bot, index)
    again.clock.run()
    reasked = again.bots[0].open_decision()
    assert reasked is not None and reasked.decision_id == (2 << 32) | (0 << 24) | 1
    assert reasked.decision_id > asked.decision_id  # ids grow for a seat across runs
    again.match.move(
        again.bots[0], bots_pb2.Move(match_id=t.match.id, decision_id=asked.decision_id, index=0)
    )
    repeat = bots_pb2.Move(match_id=t.match.id, decision_id=first.decision_id, index=0)
    again.match.move(again.bots[1], repeat)
    again.clock.run()
    stale = again.bots[0].of("error")[-1]
    assert (
        stale.message
        == f"decision {asked.decision_id} is not open (your open decision is {reasked.decision_id})"
    )
    assert again.bots[1].of("action_result")[-1].status == Result.DUPLICATE  # known from the journal
    await again.match.stop_actor()

    third = resumed(again, tmp_path)
    third.match.attach(third.bots[0], 0)
    third.clock.run()
    latest = third.bots[0].open_decision()
    assert latest is not None and latest.decision_id == (3 << 32) | (0 << 24) | 1
    await third.match.stop_actor()


def snapshot(t: Table) -> tuple[Any, ...]:
    match = t.match
    views = [match.codec.view_bytes(match.state.view(i)) for i in range(len(match.seats))]
    seats = [(s.decision, s.acting_since, s.bank, s.timeouts) for s in match.seats]
    return views, seats, t.clock.pending(), match.status


def test_a_refused_move_changes_nothing_but_its_refusal_count(tmp_path: Path) -> None:
    t = table(tmp_path, clocks=CLOCKS)
    before = snapshot(t)
    records = len(t.journal())
    hand = t.match.state.view(0).hands[0]
    t.move(0, text=str(hand[0]))  # out of turn
    t.move(1, text="banana")  # garbage
    t.move(1, index=999)  # out of range
    assert [r.status for r in t.bots[0].of("action_result") + t.bots[1].of("action_result")] == [
        Result.REFUSED
    ] * 3
    assert snapshot(t) == before
    assert [r.KIND for r in t.journal()[records:]] == ["refuse"] * 3
    assert [s.refusals for s in t.match.seats] == [1, 2]
    assert t.bots[0].kinds()[-1] == "action_result" and t.bots[1].kinds()[-1] == "action_result"
    t.move(1)
    assert t.bots[1].of("action_result")[-1].status == Result.ACCEPTED


def test_a_fake_session_sees_only_what_it_is_sent(tmp_path: Path) -> None:
    """The fakes themselves: a closed session keeps nothing more; the clock never runs early."""
    t = table(tmp_path, clocks=CLOCKS)
    bot = FakeSession()
    bot.close()
    t.match.attach(bot, 0)  # takes the seat over from p0, who is told so
    t.clock.run()
    assert not bot.sent
    assert t.bots[0].of("error")[-1].message.endswith("was taken over by another stream")
    t.clock.advance(35.0 - 0.01)
    assert not t.bots[1].of("action_result")
    t.clock.advance(0.01)
    assert t.bots[1].of("action_result")[-1].status == Result.TIMED_OUT
