"""Spectators as an attacker would be one: listing a page at a time, the --spectators setting, and
limits per client (its address, over any number of connections) and for anonymous callers on live
feeds and replays; a replay runs in a
worker thread, so the matches play on while it is re-run."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

import croupier.server.spectator
from croupier.server.app import Croupier, create_server
from croupier.server.audience import Access, Limits
from croupier.server.clocks import Clocks
from croupier.v1 import admin_pb2, spectator_pb2, spectator_pb2_grpc
from tests.server.botclient import ADMIN, ADMIN_TOKEN, Admin, token
from tests.server.test_spectators import play_match

Code = grpc.StatusCode


ELSEWHERE = "[::1]"
"""A second client's address on this machine: the referee listens on IPv4 and IPv6 at once, and a
caller over IPv6's loopback has another address than one over IPv4's."""


async def referee_with(tmp_path: Path, limits: Limits) -> Croupier:
    return await create_server(
        "[::]:0", tmp_path / "data", admin_token=ADMIN_TOKEN, clocks=Clocks(), spectators=limits
    )


@pytest.fixture
async def limited(tmp_path: Path) -> AsyncIterator[Croupier]:
    limits = Limits(feeds_per_client=2, anonymous_feeds=3, heavy_reads_per_client=1)
    croupier = await referee_with(tmp_path, limits)
    yield croupier
    await croupier.stop(grace=None)


def dial(croupier: Croupier, host: str = "127.0.0.1") -> grpc.aio.Channel:
    """A channel on a connection of its own (channels in one process share one by default)."""
    return grpc.aio.insecure_channel(
        f"{host}:{croupier.port}", options=[("grpc.use_local_subchannel_pool", 1)]
    )


async def feed(
    channel: grpc.aio.Channel, match_id: str, metadata: Any = None
) -> tuple[Any, tuple[Code, str]]:
    """A live feed of the match, and how its first read went (OK: it holds a feed now)."""
    request = spectator_pb2.WatchMatchRequest(match_id=match_id)
    call = spectator_pb2_grpc.SpectatorServiceStub(channel).WatchMatch(request, metadata=metadata)
    return call, await status_of(call.read())


async def status_of(call: Any) -> tuple[Code, str]:
    try:
        await call
    except grpc.aio.AioRpcError as exc:
        return exc.code(), exc.details()
    return Code.OK, ""


async def test_list_matches_pages_oldest_first_and_says_when_there_are_no_more(
    channel: grpc.aio.Channel, admin: Admin
) -> None:
    created = [(await admin.create("chinese_ten", 2)).match.match_id for _ in range(7)]
    pages, page_token = [], ""
    while True:
        request = spectator_pb2.ListMatchesRequest(game="chinese_ten", page_size=3, page_token=page_token)
        reply = await admin.spectator.ListMatches(request)
        pages.append([m.match_id for m in reply.matches])
        if not (page_token := reply.next_page_token):
            break
    assert pages == [created[0:3], created[3:6], created[6:7]]
    everything = await admin.spectator.ListMatches(spectator_pb2.ListMatchesRequest())
    assert [m.match_id for m in everything.matches] == created and not everything.next_page_token
    bad_token = admin.spectator.ListMatches(spectator_pb2.ListMatchesRequest(page_token="not mine"))
    assert await status_of(bad_token) == (
        Code.INVALID_ARGUMENT,
        "page_token is not one this referee gave: pass next_page_token as it came",
    )
    negative = admin.spectator.ListMatches(spectator_pb2.ListMatchesRequest(page_size=-1))
    assert await status_of(negative) == (
        Code.INVALID_ARGUMENT,
        "page_size must be 0 (the default, 100) or more",
    )


async def test_a_page_holds_100_matches_unless_asked_for_more_up_to_1000(
    referee: Croupier, admin: Admin
) -> None:
    for _ in range(120):
        await admin.create("chinese_ten", 2)
    first = await admin.spectator.ListMatches(spectator_pb2.ListMatchesRequest())
    assert len(first.matches) == 100 and first.next_page_token
    rest = await admin.spectator.ListMatches(
        spectator_pb2.ListMatchesRequest(page_token=first.next_page_token)
    )
    assert len(rest.matches) == 20 and not rest.next_page_token
    huge = await admin.spectator.ListMatches(spectator_pb2.ListMatchesRequest(page_size=10**9))
    assert len(huge.matches) == 120


@pytest.mark.parametrize("access", [Access.TOKEN, Access.OFF])
async def test_spectator_access_token_or_off_turns_callers_away(tmp_path: Path, access: Access) -> None:
    croupier = await referee_with(tmp_path, Limits(access=access))
    try:
        async with dial(croupier) as channel:
            admin = Admin(channel)
            created = await admin.create("chinese_ten", 2)
            bot = await admin.stub.RegisterBot(admin_pb2.RegisterBotRequest(name="b"), metadata=ADMIN)
            stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
            listing = spectator_pb2.ListMatchesRequest()
            record = spectator_pb2.GetRecordRequest(match_id=created.match.match_id)
            anonymous = await status_of(stub.ListMatches(listing))
            with_tokens = [
                await status_of(stub.ListMatches(listing, metadata=token(bot.token))),
                await status_of(stub.ListMatches(listing, metadata=token(created.seat_tokens[0]))),
            ]
            watched = stub.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=created.match.match_id))
            watch_anonymous = await status_of(watched.read())
            assert await status_of(stub.ListMatches(listing, metadata=ADMIN)) == (Code.OK, "")
            assert await status_of(stub.GetRecord(record, metadata=ADMIN)) == (Code.OK, "")
    finally:
        await croupier.stop(grace=None)
    if access is Access.TOKEN:
        refused = (
            Code.UNAUTHENTICATED,
            "this referee shows its matches to callers with a token it knows (--spectators token): "
            "send a bot, seat or admin token as croupier-token metadata",
        )
        assert anonymous == watch_anonymous == refused
        assert with_tokens == [(Code.OK, "")] * 2
    else:
        refused = (
            Code.PERMISSION_DENIED,
            "this referee shows its matches to the admin only (--spectators off)",
        )
        assert anonymous == watch_anonymous == refused
        assert with_tokens == [refused] * 2


async def test_live_feeds_are_limited_per_client_and_for_anonymous_callers(limited: Croupier) -> None:
    async with dial(limited) as one, dial(limited) as again, dial(limited, ELSEWHERE) as two:
        admin = Admin(one)
        match_id = (await admin.create("chinese_ten", 2)).match.match_id
        held = [await feed(one, match_id), await feed(one, match_id)]
        assert [answer for _, answer in held] == [(Code.OK, "")] * 2
        busy = (
            Code.RESOURCE_EXHAUSTED,
            "your address has 2 live feeds under way already: wait for one to end",
        )
        assert (await feed(one, match_id))[1] == busy
        assert (await feed(again, match_id))[1] == busy, (
            "a new connection from the same address is no way round"
        )
        held.append(await feed(two, match_id))
        assert held[-1][1] == (Code.OK, "")
        assert (await feed(two, match_id))[1] == (
            Code.RESOURCE_EXHAUSTED,
            "anonymous spectators have 3 live feeds under way already: try again shortly, or with a token",
        )
        admin_feeds = [(await feed(one, match_id, ADMIN))[1] for _ in range(3)]
        assert admin_feeds == [(Code.OK, "")] * 3  # the admin: no limit
        held[0][0].cancel()
        await asyncio.sleep(0.1)  # the referee notices the cancel (not a timing check: retried below)
        for _ in range(100):
            retried = await feed(two, match_id)
            if retried[1][0] == Code.OK:
                break
            await asyncio.sleep(0.1)
        assert retried[1] == (Code.OK, "")


async def test_one_client_with_every_page_open_leaves_another_client_its_share(tmp_path: Path) -> None:
    """The default limits: one visitor opening live feeds over two connections until refused
    (before, 16 per connection: it took all 32 anonymous feeds, and nobody else got one)."""
    croupier = await referee_with(tmp_path, Limits())
    try:
        async with dial(croupier) as one, dial(croupier) as more, dial(croupier, ELSEWHERE) as other:
            match_id = (await Admin(one).create("chinese_ten", 2)).match.match_id
            greedy = [await feed(channel, match_id) for channel in (one, more) for _ in range(16)]
            assert (await feed(other, match_id))[1] == (Code.OK, ""), "another client still gets in"
            taken = [answer for _, answer in greedy if answer[0] == Code.OK]
            assert len(taken) == 16, "one address holds its 16 feeds, whatever connections it opens"
    finally:
        await croupier.stop(grace=None)


async def test_a_replay_takes_turns_with_the_matches_and_one_runs_per_connection(
    limited: Croupier, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replay whose every frame costs 5 ms of CPU (3 s in all): another match, started after it,
    is played to its end first; before, a replay held the loop every match shares until it was done."""
    replay = croupier.server.spectator.replay_frames

    def slow(*args: Any, **kwargs: Any) -> Iterator[Any]:
        frames = list(replay(*args, **kwargs))
        for k in range(600):
            busy_until = time.perf_counter() + 0.005
            while time.perf_counter() < busy_until:
                pass
            yield frames[k % len(frames)]

    finished_first: list[str] = []
    async with dial(limited) as channel, dial(limited) as other:
        admin = Admin(channel)
        done = await admin.create("chinese_ten", 2, {"target": 100})
        await play_match(channel, list(done.seat_tokens))
        await admin.wait(done.match.match_id)
        monkeypatch.setattr(croupier.server.spectator, "replay_frames", slow)
        request = spectator_pb2.GetRecordRequest(match_id=done.match.match_id)

        async def get_record() -> spectator_pb2.MatchRecord:
            record: spectator_pb2.MatchRecord = await admin.spectator.GetRecord(request)
            finished_first.append("replay")
            return record

        record = asyncio.ensure_future(get_record())
        await asyncio.sleep(0.2)  # the replay is under way (if not, the limit below is not reached)
        second = await status_of(admin.spectator.GetRecord(request))
        assert second == (
            Code.RESOURCE_EXHAUSTED,
            "your address has 1 listings or replays under way already: wait for one to end",
        )
        playing = await Admin(other).create("chinese_ten", 2, {"target": 100})
        await play_match(other, list(playing.seat_tokens))
        ended = await Admin(other).wait(playing.match.match_id)
        finished_first.append("match")
        assert [s.timeouts for s in ended.result.seats] == [0, 0]
        assert len((await record).frames) == 600
    assert finished_first == ["match", "replay"]
