"""Spreading one tournament over several referee replicas: the target's replicas, one bot known to
all of them, matches created round robin and followed on the replica that holds each."""

from __future__ import annotations

import asyncio
import socket
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from croupier.clients.bots import RandomBot
from croupier.clients.results.store import Store
from croupier.clients.sdk import Client
from croupier.clients.tournament.referee_client import RefereeError, Replicas, TargetError, resolve
from croupier.clients.tournament.runner import ABANDONED, Entrant, Runner
from croupier.server.app import Croupier, create_server
from croupier.v1 import match_pb2
from tests.clients.tournament.test_runner import BOTS, Quiet, config

ADMIN_TOKEN = "admin-of-every-replica"


@pytest.mark.parametrize(
    ("target", "replicas"),
    [
        ("127.0.0.1:5001", ["127.0.0.1:5001"]),
        ("referee.example:50051", ["referee.example:50051"]),
        ("ipv4:127.0.0.1:5001,127.0.0.1:5002", ["127.0.0.1:5001", "127.0.0.1:5002"]),
        ("ipv4:10.0.0.1", ["10.0.0.1:443"]),
        ("ipv4:127.0.0.1:5001,127.0.0.1:5001", ["127.0.0.1:5001"]),
        ("ipv6:[::1]:5001,[fe80::1]:5002", ["[::1]:5001", "[fe80::1]:5002"]),
        ("ipv6:::1", ["[::1]:443"]),
        ("dns:127.0.0.1:5001", ["127.0.0.1:5001"]),
        ("dns:///127.0.0.1:5001", ["127.0.0.1:5001"]),
        ("dns://8.8.8.8/127.0.0.1:5001", ["127.0.0.1:5001"]),
        ("dns:///[::1]:5001", ["[::1]:5001"]),
    ],
)
async def test_a_target_names_its_replicas(target: str, replicas: list[str]) -> None:
    assert await resolve(target) == replicas


async def test_a_dns_name_resolves_to_each_of_its_addresses() -> None:
    found = await resolve("dns:///localhost:5001")
    assert found and set(found) <= {"127.0.0.1:5001", "[::1]:5001"}
    assert len(found) == len(set(found))


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("ipv4:127.0.0.1:5001,localhost:5002", "'localhost:5002' is not an ipv4 address"),
        ("ipv4:127.0.0.1:5001,", "no host in ''"),
        ("ipv4:127.0.0.1:", "'127.0.0.1:' has no port after its colon"),
        ("ipv4:127.0.0.1:99999", "'99999' is not a port"),
        ("ipv6:[::1", "'[::1' is not [IPV6]:PORT"),
        ("ipv6:[nope]:1", "'[nope]:1' is not an ipv6 address"),
        ("dns:///no-such-host.invalid:5001", "cannot resolve no-such-host.invalid"),
    ],
)
async def test_a_target_that_names_no_replica_says_why(target: str, message: str) -> None:
    with pytest.raises(TargetError) as error:
        await resolve(target)
    assert str(error.value).startswith(f"{target}: ")
    assert message in str(error.value)


@pytest.fixture
async def two_referees(tmp_path: Path) -> AsyncIterator[list[Croupier]]:
    croupiers = [
        await create_server("127.0.0.1:0", tmp_path / f"referee-{i}", admin_token=ADMIN_TOKEN)
        for i in range(2)
    ]
    yield croupiers
    for croupier in croupiers:
        await croupier.stop(grace=None)


def target_of(croupiers: list[Croupier]) -> str:
    return "ipv4:" + ",".join(f"127.0.0.1:{c.port}" for c in croupiers)


async def test_every_replica_is_known_by_the_name_it_advertises_and_every_one_knows_each_bot(
    two_referees: list[Croupier],
) -> None:
    replicas = await Replicas.connect(target_of(two_referees), ADMIN_TOKEN)
    try:
        assert replicas.names == [f"127.0.0.1:{c.port}" for c in two_referees]
        bot_id, _ = await replicas.register_bot("ann")
        for croupier in two_referees:
            bot = croupier.referee.bots[bot_id]
            assert bot.name == "ann" and croupier.referee.bot_tokens[bot.token_sha256] is bot
    finally:
        await replicas.close()


async def test_a_replica_advertising_another_ones_address_is_refused(tmp_path: Path) -> None:
    elsewhere = await create_server("127.0.0.1:0", tmp_path / "b", admin_token=ADMIN_TOKEN)
    liar = await create_server(
        "127.0.0.1:0", tmp_path / "a", admin_token=ADMIN_TOKEN, advertise=f"127.0.0.1:{elsewhere.port}"
    )
    try:
        with pytest.raises(RefereeError) as alone:
            await Replicas.connect(f"ipv4:127.0.0.1:{liar.port}", ADMIN_TOKEN)
        assert str(alone.value) == (
            f"the referee at 127.0.0.1:{liar.port} advertises itself as 127.0.0.1:{elsewhere.port}, "
            "but another referee answers there: give each replica an --advertise address of its own"
        )
        with pytest.raises(RefereeError) as both:
            await Replicas.connect(f"ipv4:127.0.0.1:{elsewhere.port},127.0.0.1:{liar.port}", ADMIN_TOKEN)
        assert str(both.value) == (
            f"the referees at 127.0.0.1:{elsewhere.port} and 127.0.0.1:{liar.port} both advertise "
            f"themselves as 127.0.0.1:{elsewhere.port}: give each replica its own --advertise"
        )
    finally:
        await liar.stop(grace=None)
        await elsewhere.stop(grace=None)


async def test_a_replica_advertising_an_address_nobody_answers_at_is_refused(tmp_path: Path) -> None:
    lost = await create_server(
        "127.0.0.1:0", tmp_path / "a", admin_token=ADMIN_TOKEN, advertise="127.0.0.1:1"
    )
    try:
        with pytest.raises(RefereeError) as error:
            await Replicas.connect(f"ipv4:127.0.0.1:{lost.port}", ADMIN_TOKEN)
        assert str(error.value).startswith(
            f"the referee at 127.0.0.1:{lost.port} advertises itself as 127.0.0.1:1, which does not answer"
        )
        assert str(error.value).endswith("start it with an --advertise address this runner can reach")
    finally:
        await lost.stop(grace=None)


async def test_one_replica_reached_at_two_addresses_is_one_replica(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    everywhere = await create_server(
        f"0.0.0.0:{port}", tmp_path / "a", admin_token=ADMIN_TOKEN, advertise=f"127.0.0.1:{port}"
    )
    try:
        replicas = await Replicas.connect(f"ipv4:127.0.0.1:{port},127.0.0.2:{port}", ADMIN_TOKEN)
        assert replicas.names == [f"127.0.0.1:{port}"]
        await replicas.close()
    finally:
        await everywhere.stop(grace=None)


@pytest.fixture
async def spread(two_referees: list[Croupier]) -> AsyncIterator[tuple[Replicas, dict[str, Entrant]]]:
    """Three random bots, each registered once for both replicas and connected to each, playing up
    to 2 matches at once on each."""
    replicas = await Replicas.connect(target_of(two_referees), ADMIN_TOKEN)
    entrants, clients = {}, []
    for name in BOTS:
        bot_id, token = await replicas.register_bot(name)
        entrants[name] = Entrant(name, bot_id, capacity=4)
        clients += [
            Client(RandomBot, replica, [token], name=name, max_matches=2) for replica in replicas.names
        ]
    tasks = [asyncio.create_task(client.run()) for client in clients]
    while any(s.streams == 0 for bots in (await replicas.bots()).values() for s in bots.values()):
        await asyncio.sleep(0.02)
    yield replicas, entrants
    for client in clients:
        client.stop()
    await asyncio.gather(*tasks)
    await replicas.close()


async def test_a_tournament_spread_over_two_replicas_plays_every_match_once_on_one_of_them(
    tmp_path: Path, spread: tuple[Replicas, dict[str, Entrant]], two_referees: list[Croupier]
) -> None:
    replicas, bots = spread
    with Store(tmp_path / "r.db") as store:
        tournament = store.open_tournament("t", "fp", {}, again=False)
        assert await Runner(config(), store, replicas, bots, Quiet()).run(tournament) is True
        records = list(store.matches(tournament.id).values())
        finished = {match.record.id: match for match in store.finished(tournament.id)}
    assert len(records) == len(finished) == 12
    assert {record.status for record in records} == {"done"}
    # each result is the one its replica holds, and the other replica never heard of the match
    by_name = dict(zip(replicas.names, two_referees, strict=True))
    for record in records:
        holder = by_name[record.replica]
        info = holder.referee.info(str(record.referee_match_id))
        assert info.status == match_pb2.MATCH_STATUS_FINISHED
        assert [seat.place for seat in info.result.seats] == [r.place for r in finished[record.id].results]
        (other,) = [c for c in two_referees if c is not holder]
        assert record.referee_match_id not in other.referee.past
    assert Counter(record.replica for record in records).keys() == set(replicas.names)
    # a duplicate set on one replica, which seals its rotations against each other
    assert all(len({r.replica for r in records if r.key.set_key == s.key.set_key}) == 1 for s in records)


async def test_a_resumed_run_cancels_an_abandoned_match_on_the_replica_holding_it(
    tmp_path: Path, spread: tuple[Replicas, dict[str, Entrant]], two_referees: list[Croupier]
) -> None:
    replicas, bots = spread
    with Store(tmp_path / "r.db") as store:
        tournament = store.open_tournament("t", "fp", {}, again=False)
        store.schedule(tournament.id, (m for d in config().schedule(tournament.secret) for m in d.matches))
        first, second = sorted(store.matches(tournament.id).values(), key=lambda record: record.id)[:2]
        # left waiting on the second replica: seats no connected bot is invited to
        holder = replicas.referees[replicas.names[1]]
        abandoned = (
            await holder.create_match(config().games[0], first.seed, [("gone", ""), ("too", "")])
        ).match
        store.mark_started(first.id, abandoned.match_id, None, replicas.names[1])
        # and one whose replica the store does not know (a database from before replicas): every one is asked
        unknown = (
            await holder.create_match(config().games[0], second.seed, [("gone", ""), ("too", "")])
        ).match
        store.mark_started(second.id, unknown.match_id, None, "")
        assert await Runner(config(), store, replicas, bots, Quiet()).run(tournament) is True
    for match_id in (abandoned.match_id, unknown.match_id):
        info = two_referees[1].referee.info(match_id)
        assert (info.status, info.cancel_reason) == (match_pb2.MATCH_STATUS_CANCELLED, ABANDONED)


async def test_a_match_created_by_a_replica_the_runner_did_not_start_with_stops_the_run_saying_so(
    tmp_path: Path, two_referees: list[Croupier]
) -> None:
    known = await Replicas.connect(f"ipv4:127.0.0.1:{two_referees[0].port}", ADMIN_TOKEN)
    newcomer = await Replicas.connect(target_of(two_referees), ADMIN_TOKEN)
    try:
        bot_id, _ = await known.register_bot("ann")
        seats = [("ann", bot_id), ("open seat", "")]
        refused: RefereeError | None = None
        for _ in range(4):  # round robin: one of these reaches the replica that never heard of ann
            try:
                await newcomer.create_match(config().games[0], 1, seats)
            except RefereeError as exc:
                refused = exc
                break
        assert refused is not None, "no CreateMatch reached the second replica"
        assert refused.code == grpc.StatusCode.NOT_FOUND
        assert f"no registered bot {bot_id!r}" in str(refused)
        assert "run the same command again to take it in" in str(refused)
    finally:
        await known.close()
        await newcomer.close()
