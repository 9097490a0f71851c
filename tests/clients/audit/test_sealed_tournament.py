"""A tournament attacked from outside, as anyone reaching the referee without a token would, with
raw stubs: its deals cannot be computed, a twin's seed and record stay sealed while any rotation
of its set can still be played, an abandoned match's deal is never dealt again; and once the
secret is revealed, every deal checks out against the commitment its match published."""

from __future__ import annotations

import asyncio
import errno
import hashlib
import itertools
import json
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from croupier.clients.audit import reveal
from croupier.clients.cli import main
from croupier.clients.results.schedule import Deals, deal_seed
from croupier.clients.results.store import Store
from croupier.clients.tournament.referee_client import Replicas
from croupier.clients.tournament.runner import Entrant, Runner
from croupier.v1 import match_pb2, spectator_pb2, spectator_pb2_grpc
from tests.clients.tournament.test_runner import Quiet, config, entrants, first_set

__all__ = ["entrants"]  # the fixture: a referee with three bots connected

Entrants = tuple[Replicas, dict[str, Entrant]]
FINISHED = match_pb2.MATCH_STATUS_FINISHED


@pytest.fixture
async def anonymous(entrants: Entrants) -> AsyncIterator[spectator_pb2_grpc.SpectatorServiceStub]:
    (address,) = entrants[0].names
    async with grpc.aio.insecure_channel(address) as channel:
        yield spectator_pb2_grpc.SpectatorServiceStub(channel)


async def listing(stub: spectator_pb2_grpc.SpectatorServiceStub) -> list[match_pb2.MatchInfo]:
    return list((await stub.ListMatches(spectator_pb2.ListMatchesRequest())).matches)


async def test_nobody_computes_a_deal_or_reads_a_twin_while_the_tournament_is_played(
    tmp_path: Path, entrants: Entrants, anonymous: spectator_pb2_grpc.SpectatorServiceStub
) -> None:
    referee, bots = entrants
    sealed_seen: list[str] = []
    leaks: list[str] = []

    async def spy() -> None:
        """Poll the listing as the tournament runs: a finished match whose deal a live match
        shares must show no seed and no result, and give no record."""
        while True:
            matches = await listing(anonymous)
            live = {info.seed_sha256 for info in matches if info.status != FINISHED}
            for info in matches:
                if info.status == FINISHED and info.seed_sha256 in live:
                    sealed_seen.append(info.match_id)
                    if info.HasField("seed") or info.HasField("result"):
                        leaks.append(f"{info.match_id} listed with its seed or result")
                    try:
                        await anonymous.GetRecord(spectator_pb2.GetRecordRequest(match_id=info.match_id))
                    except grpc.aio.AioRpcError as exc:
                        assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION
                    else:  # allowed only if its twins finished meanwhile
                        now = await listing(anonymous)
                        if any(i.seed_sha256 == info.seed_sha256 and i.status != FINISHED for i in now):
                            leaks.append(f"{info.match_id}: record read while a twin was live")
            await asyncio.sleep(0.005)

    with Store(tmp_path / "r.db") as store:
        tournament = store.open_tournament("t", "fp", {}, again=False)
        spying = asyncio.create_task(spy())
        try:
            assert await Runner(config(), store, referee, bots, Quiet()).run(tournament) is True
        finally:
            spying.cancel()
    assert not leaks
    assert sealed_seen  # the spy did meet finished matches with live twins: the test could fail

    # brute force: the file's seed (0 here, as by default) with every way a deal could come from it
    commitments = {info.seed_sha256 for info in await listing(anonymous)}
    assert len(commitments) == 6  # 3 groups x 2 deals, each its own
    for guess in range(20_000):
        for round_number, group, deal in itertools.product(range(1), range(3), range(2)):
            text = f"{guess}:chinese_ten:{round_number}:{deal}".encode()
            for seed in (
                int.from_bytes(hashlib.sha256(text).digest()[:8], "big") >> 1,  # before secret deals
                deal_seed(str(guess).encode(), "chinese_ten", round_number, group, deal, None),
                guess,
            ):
                assert hashlib.sha256(str(seed).encode()).hexdigest() not in commitments


async def test_an_abandoned_match_is_sealed_while_its_set_waits_and_its_deal_is_never_dealt_again(
    tmp_path: Path, entrants: Entrants, anonymous: spectator_pb2_grpc.SpectatorServiceStub
) -> None:
    referee, bots = entrants
    with Store(tmp_path / "r.db") as store:
        tournament, abandoned = first_set(store)
        first = abandoned[0]
        # a run that stopped with the set's two rotations on the referee, waiting for bots long gone
        for record in abandoned:
            replica, info = await referee.create_match(
                config().games[0], record.seed, [("gone", ""), ("gone too", "")]
            )
            store.mark_started(record.id, info.match.match_id, None, replica)
        ids = [store.matches(tournament.id)[r.key].referee_match_id or "" for r in abandoned]
        for match_id in ids:  # before the replay: nothing to read
            request = spectator_pb2.GetRecordRequest(match_id=match_id)
            with pytest.raises(grpc.aio.AioRpcError) as error:
                await anonymous.GetRecord(request)
            assert error.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            watch = anonymous.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id, from_start=True))
            with pytest.raises(grpc.aio.AioRpcError) as error:
                await watch.read()
            assert error.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert await Runner(config(), store, referee, bots, Quiet()).run(tournament) is True
        replayed = [store.matches(tournament.id)[r.key] for r in abandoned]
    # the set was played again on a deal its bots never saw; the abandoned deal, on no other match
    old = {hashlib.sha256(str(first.seed).encode()).hexdigest()}
    matches = await listing(anonymous)
    assert {info.match_id for info in matches if info.seed_sha256 in old} == set(ids)
    assert all(record.status == "done" and record.seed != first.seed for record in replayed)
    for match_id in ids:  # the abandoned record, readable now, keeps its hands and seed to the admin
        record = await anonymous.GetRecord(spectator_pb2.GetRecordRequest(match_id=match_id))
        assert record.info.status == match_pb2.MATCH_STATUS_CANCELLED and not record.info.HasField("seed")


async def test_a_revealed_tournament_verifies_against_what_the_referee_published(
    tmp_path: Path, entrants: Entrants, capsys: pytest.CaptureFixture[str]
) -> None:
    referee, bots = entrants
    with Store(tmp_path / "r.db") as store:
        tournament = store.open_tournament("t", "fp", {}, again=False)
        assert await Runner(config(), store, referee, bots, Quiet()).run(tournament) is True
        (finished,) = store.tournaments()
        document = reveal.document(store, finished, Deals.DUPLICATE)
    (address,) = referee.names
    published = await reveal.fetch_published(address)
    assert len(document["matches"]) == 12 and reveal.verify(document, published) == []
    path = tmp_path / "reveal.json"
    reveal.write(path, document)
    assert await asyncio.to_thread(main, ["verify", str(path), "--server", address]) == 0
    assert (
        "all 12 deals of t run 1 are the secret's, as the referee published them" in capsys.readouterr().out
    )

    # a runner that lied about its secret, or a deal that is not the one it committed to
    lied = {**document, "secret": bytes(32).hex()}
    assert len(reveal.verify(lied, published)) == 3 * 12  # seed, its hash, and what the referee showed
    swapped = json.loads(json.dumps(document))
    swapped["matches"][0]["seed"], swapped["matches"][2]["seed"] = (
        swapped["matches"][2]["seed"],
        swapped["matches"][0]["seed"],
    )
    problems = reveal.verify(swapped, published)
    assert len(problems) == 2 and all("is not the secret's" in problem for problem in problems)
    reveal.write(path, lied)
    assert await asyncio.to_thread(main, ["verify", str(path)]) == 1
    assert "24 problem(s) in 12 deals" in capsys.readouterr().out


def test_a_reveal_file_is_written_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk half-way through leaves the file a reader had, not half of the new one."""
    path = tmp_path / "reveals" / "t-1.json"
    reveal.write(path, {"format": 1, "matches": []})
    before = path.read_text()
    real = Path.write_text

    def full_disk(self: Path, text: str, *args: object, **kwargs: object) -> int:
        real(self, text[: len(text) // 2], encoding="utf-8")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full_disk)
    with pytest.raises(OSError, match="No space left"):
        reveal.write(path, {"format": 1, "matches": [{"seed": n} for n in range(100)]})
    assert path.read_text() == before and json.loads(before)["matches"] == []
    assert sorted(p.name for p in path.parent.iterdir()) == ["t-1.json"]
