"""Forks (SpectatorService.ForkMatch, server/forks.py): a new match plays on from a step of a
finished match's replay with the same deal and history, new players from there; it replays from
its own journal, resumes after a restart, and seals nothing. Only a match whose deal may be shown
can be forked: attacked here as an anonymous client would."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import grpc
import pytest

from croupier.server import forks
from croupier.server.app import Croupier, create_server
from croupier.server.clocks import Clocks
from croupier.server.journal import Act, Fork, Header, Resume, Timeout, read_records
from croupier.server.replay import replay_journal
from croupier.v1 import admin_pb2, bots_pb2, match_pb2, spectator_pb2, spectator_pb2_grpc
from tests.server.botclient import ADMIN, ADMIN_TOKEN, WAIT, Admin, Bot, first_legal, random_legal
from tests.server.test_damaged_files import referee_on

Kind = spectator_pb2.Step.Kind


async def finished(channel: grpc.aio.Channel, admin: Admin, game: str = "chinese_ten", **options: Any) -> str:
    """A finished match played by random bots: its id."""
    values = options or {"target": 100}
    created = await admin.create(game, 2, values, seed=13)
    bots = [Bot(channel, token) for token in created.seat_tokens]
    for bot in bots:
        await bot.hello()
    await asyncio.wait_for(asyncio.gather(*(b.play(random_legal(i)) for i, b in enumerate(bots))), WAIT)
    await admin.wait(created.match.match_id)
    return created.match.match_id


async def play(channel: grpc.aio.Channel, tokens: list[str]) -> None:
    bots = [Bot(channel, token) for token in tokens]
    for bot in bots:
        await bot.hello()
    await asyncio.wait_for(asyncio.gather(*(bot.play(first_legal) for bot in bots)), WAIT)


def anonymous(channel: grpc.aio.Channel) -> spectator_pb2_grpc.SpectatorServiceStub:
    return spectator_pb2_grpc.SpectatorServiceStub(channel)


async def refused(call: Any) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call
    return raised.value.code(), raised.value.details() or ""


@pytest.mark.parametrize("game", ["chinese_ten", "pair_battle"])
async def test_a_fork_plays_on_from_the_step_with_the_same_deal_and_history(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin, game: str
) -> None:
    options = {"target": 100} if game == "chinese_ten" else {"timing": "lockstep"}
    source = await finished(channel, admin, game, **options)
    stub = anonymous(channel)
    original = await stub.GetRecord(spectator_pb2.GetRecordRequest(match_id=source))
    step = 6
    fork = await stub.ForkMatch(
        spectator_pb2.ForkMatchRequest(match_id=source, step=step, names=["ann", "bo"])
    )
    info = fork.match
    assert info.forked_from == f"{source}@{step}" and info.status == match_pb2.MATCH_STATUS_RUNNING
    assert [p.name for p in info.players] == ["ann", "bo"] and info.seed_sha256 == original.info.seed_sha256
    assert len(fork.seat_tokens) == 2

    await play(channel, list(fork.seat_tokens))
    done = await admin.wait(info.match_id)
    assert done.status == match_pb2.MATCH_STATUS_FINISHED and done.forked_from == f"{source}@{step}"
    path = referee.referee.matches_dir / f"{info.match_id}.jsonl"
    records = read_records(path)
    header = records[0]
    assert isinstance(header, Header) and header.forked_from == f"{source}@{step}"
    ours = [
        r
        for r in read_records(referee.referee.matches_dir / f"{source}.jsonl")[1:]
        if not isinstance(r, Resume)
    ]
    kept = original.frames[step - 1].seq
    assert records[1 : kept + 1] == ours[:kept] and isinstance(records[kept + 1], Fork)
    replay_journal(path)  # it replays from its own journal like any match
    record = await stub.GetRecord(spectator_pb2.GetRecordRequest(match_id=info.match_id))
    assert [f.view for f in record.frames[:step]] == [f.view for f in original.frames[:step]]
    assert record.info.forked_from == f"{source}@{step}"
    listed = await stub.ListMatches(spectator_pb2.ListMatchesRequest())
    assert {m.match_id: m.forked_from for m in listed.matches} == {
        source: "",
        info.match_id: f"{source}@{step}",
    }


async def test_only_a_finished_unsealed_match_can_be_forked_by_anyone(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    stub = anonymous(channel)
    source = await finished(channel, admin)

    def fork(match_id: str, step: int = 2, metadata: Any = None) -> Any:
        return stub.ForkMatch(spectator_pb2.ForkMatchRequest(match_id=match_id, step=step), metadata=metadata)

    waiting = (await admin.create("chinese_ten", 2, {"target": 100}, seed=99)).match.match_id
    assert (await refused(fork(waiting)))[0] == grpc.StatusCode.FAILED_PRECONDITION
    live = await admin.create("chinese_ten", 2, {"target": 100}, seed=98)
    bots = [Bot(channel, token) for token in live.seat_tokens]
    for bot in bots:
        await bot.hello()
    await bots[0].expect("decision", "view_update")
    for metadata in (None, ADMIN):  # live: not even the admin (its deal is being played)
        code, why = await refused(fork(live.match.match_id, metadata=metadata))
        assert code == grpc.StatusCode.FAILED_PRECONDITION and "not over" in why

    twins = [await admin.create("chinese_ten", 2, {"target": 100}, seed=77) for _ in range(2)]
    await play(channel, list(twins[0].seat_tokens))
    await admin.wait(twins[0].match.match_id)
    code, why = await refused(fork(twins[0].match.match_id))  # its twin still waits: sealed
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "sealed" in why

    cancelled = (await admin.create("chinese_ten", 2, {"target": 100}, seed=55)).match.match_id
    await admin.stub.CancelMatch(
        admin_pb2.CancelMatchRequest(match_id=cancelled, reason="off"), metadata=ADMIN
    )
    code, why = await refused(fork(cancelled))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "not finished" in why

    assert (await refused(fork("20260101-000000-abcdef")))[0] == grpc.StatusCode.NOT_FOUND
    steps = len((await stub.GetRecord(spectator_pb2.GetRecordRequest(match_id=source))).frames)
    for step in (0, steps + 1):
        assert (await refused(fork(source, step)))[0] == grpc.StatusCode.INVALID_ARGUMENT
    code, why = await refused(fork(source, steps))  # the end: nothing is left to play
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "game is over" in why
    with pytest.raises(grpc.aio.AioRpcError) as names:
        await stub.ForkMatch(spectator_pb2.ForkMatchRequest(match_id=source, step=2, names=["one"]))
    assert names.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    # nothing was made by any of these
    assert [m for m in referee.referee.matches.values() if m.forked_from] == []
    assert len(list(referee.referee.matches_dir.glob("*.jsonl"))) == 6


async def test_a_referee_that_shows_matches_to_the_admin_only_lets_nobody_else_fork(tmp_path: Path) -> None:
    from croupier.server.audience import Access, Limits

    croupier = await create_server(
        "127.0.0.1:0",
        tmp_path / "data",
        admin_token=ADMIN_TOKEN,
        clocks=Clocks(),
        spectators=Limits(Access.OFF),
    )
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{croupier.port}") as channel:
            source = await finished(channel, Admin(channel))
            code, _ = await refused(
                anonymous(channel).ForkMatch(spectator_pb2.ForkMatchRequest(match_id=source, step=2))
            )
            assert code == grpc.StatusCode.PERMISSION_DENIED
    finally:
        await croupier.stop(grace=None)


async def test_a_live_fork_seals_not_its_original(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    stub = anonymous(channel)
    source = await finished(channel, admin)
    forked = [await stub.ForkMatch(spectator_pb2.ForkMatchRequest(match_id=source, step=3)) for _ in range(2)]
    record = await stub.GetRecord(spectator_pb2.GetRecordRequest(match_id=source))  # not sealed by them
    assert record.info.HasField("seed") and record.frames
    for fork in forked:
        await play(channel, list(fork.seat_tokens))


async def test_anonymous_callers_share_a_few_live_forks(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(forks, "MAX_FORKS", 2)
    stub = anonymous(channel)
    source = await finished(channel, admin)
    request = spectator_pb2.ForkMatchRequest(match_id=source, step=3)
    for _ in range(2):
        await stub.ForkMatch(request)
    assert (await refused(stub.ForkMatch(request)))[0] == grpc.StatusCode.RESOURCE_EXHAUSTED
    await stub.ForkMatch(request, metadata=ADMIN)  # the admin is not counted


async def test_a_fork_s_seats_start_afresh_and_it_resumes_after_a_restart(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with referee_on(data) as (_, admin, channel):
        created = await admin.create("chinese_ten", 2, {"target": 100}, seed=3, decision_ms=50, bank_ms=0)
        bots = [Bot(channel, token) for token in created.seat_tokens]
        for bot in bots:
            await bot.hello()
        silent = {"left": 2}

        def late_first(decision: bots_pb2.DecisionRequest) -> bots_pb2.Move | None:
            if decision.seat == 0 and silent["left"]:  # two timeouts, then it plays
                silent["left"] -= 1
                return None
            return first_legal(decision)

        await asyncio.wait_for(asyncio.gather(*(bot.play(late_first) for bot in bots)), WAIT)
        source = created.match.match_id
        records = read_records(data / "matches" / f"{source}.jsonl")
        timeouts = [i for i, r in enumerate(records) if isinstance(r, Timeout)]
        assert len(timeouts) == 2
        step = sum(1 for r in records[1 : timeouts[-1] + 2] if not isinstance(r, Resume))  # just after
        fork = await anonymous(channel).ForkMatch(spectator_pb2.ForkMatchRequest(match_id=source, step=step))
        fork_id = fork.match.match_id
    async with referee_on(data) as (croupier, admin, channel):
        match = croupier.referee.matches[fork_id]  # resumed from its own journal
        assert match.forked_from == f"{source}@{step}"
        assert [(s.timeouts, s.refusals, s.bank) for s in match.seats] == [(0, 0, match.clocks.bank)] * 2
        await play(channel, list(fork.seat_tokens))
        info = await admin.wait(fork_id)
        assert info.status == match_pb2.MATCH_STATUS_FINISHED
        assert [s.timeouts for s in info.result.seats] == [0, 0]
        acts = [r for r in read_records(data / "matches" / f"{fork_id}.jsonl") if isinstance(r, Act)]
        assert acts


DAY_MS = 86_400_000
DAY_LONG = {"decision_ms": DAY_MS, "bank_ms": DAY_MS, "grace_ms": DAY_MS, "max_timeouts": 1000}


async def finished_with_day_long_clocks(channel: grpc.aio.Channel, admin: Admin) -> str:
    created = await admin.create("chinese_ten", 2, {"target": 100}, seed=13, **DAY_LONG)
    bots = [Bot(channel, token) for token in created.seat_tokens]
    for bot in bots:
        await bot.hello()
    await asyncio.wait_for(asyncio.gather(*(b.play(random_legal(i)) for i, b in enumerate(bots))), WAIT)
    await admin.wait(created.match.match_id)
    return created.match.match_id


async def test_one_address_holds_only_its_share_of_the_live_forks(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(forks, "MAX_FORKS_PER_CLIENT", 2)
    stub = anonymous(channel)
    source = await finished(channel, admin)
    request = spectator_pb2.ForkMatchRequest(match_id=source, step=3)
    for _ in range(2):
        await stub.ForkMatch(request)
    code, details = await refused(stub.ForkMatch(request))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "your address has 2 forks" in details
    # another address still gets its own (as the spectator service passes the caller's address)
    await forks.fork_match(referee.referee, source, 3, [], admin=False, client="ipv4:192.0.2.7")
    await stub.ForkMatch(request, metadata=ADMIN)  # the admin is not counted


async def test_an_anonymous_fork_s_clocks_are_capped_whatever_it_or_its_original_asks(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin
) -> None:
    source = await finished_with_day_long_clocks(channel, admin)
    day_long = match_pb2.Clocks(decision_ms=DAY_MS, bank_ms=DAY_MS)
    request = spectator_pb2.ForkMatchRequest(match_id=source, step=3, clocks=day_long)
    fork = await anonymous(channel).ForkMatch(request)
    clocks = referee.referee.matches[fork.match.match_id].clocks
    assert (clocks.decision, clocks.bank, clocks.grace, clocks.max_timeouts) == (60.0, 300.0, 60.0, 3)
    admins = await anonymous(channel).ForkMatch(request, metadata=ADMIN)  # the admin's: as asked
    clocks = referee.referee.matches[admins.match.match_id].clocks
    assert (clocks.decision, clocks.bank, clocks.grace, clocks.max_timeouts) == (
        86_400.0,
        86_400.0,
        86_400.0,
        1000,
    )


async def test_an_idle_fork_ends_and_frees_its_slot(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fork of a match with day-long clocks, one seat's stream joined and silent, the other
    never taken: by the capped clocks both are forfeited and the referee plays it to its end."""
    monkeypatch.setattr(forks, "FORK_CLOCKS", Clocks(decision=0.05, bank=0.0, max_timeouts=1, grace=0.1))
    source = await finished_with_day_long_clocks(channel, admin)
    request = spectator_pb2.ForkMatchRequest(
        match_id=source, step=3, clocks=match_pb2.Clocks(decision_ms=DAY_MS)
    )
    fork = await anonymous(channel).ForkMatch(request)
    silent = Bot(channel, fork.seat_tokens[0])
    await silent.hello()
    info = await admin.wait(fork.match.match_id)
    assert info.status == match_pb2.MATCH_STATUS_FINISHED
    assert fork.match.match_id not in referee.referee.matches


async def test_finished_forks_journals_expire(
    referee: Croupier, channel: grpc.aio.Channel, admin: Admin, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = await finished(channel, admin)
    request = spectator_pb2.ForkMatchRequest(match_id=source, step=3)
    made = []
    for _ in range(3):
        fork = await anonymous(channel).ForkMatch(request)
        await play(channel, list(fork.seat_tokens))
        await admin.wait(fork.match.match_id)
        made.append(fork.match.match_id)
    matches_dir = referee.referee.matches_dir
    assert all((matches_dir / f"{m}.jsonl").exists() for m in made)
    monkeypatch.setattr(forks, "FORK_JOURNALS_KEPT", 2)  # beyond so many, the oldest goes
    oldest = min(made, key=lambda m: (referee.referee.past[m].created_unix_ms, m))
    assert forks.expire_journals(referee.referee) == [oldest]
    later = time.time() + forks.FORK_JOURNAL_SECONDS + 1  # and after so long, every one
    assert sorted(forks.expire_journals(referee.referee, now=later)) == sorted(set(made) - {oldest})
    for match_id in made:
        assert not (matches_dir / f"{match_id}.jsonl").exists()
        assert not (matches_dir / f"{match_id}.secret").exists()
        assert (
            await refused(anonymous(channel).GetRecord(spectator_pb2.GetRecordRequest(match_id=match_id)))
        )[0] == grpc.StatusCode.NOT_FOUND
    assert (matches_dir / f"{source}.jsonl").exists(), "only forks expire"
