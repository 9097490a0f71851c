"""The ladder against a real referee on a free port, with in-process SDK bots that connect with
their own tokens, as registered bots do."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from croupier.clients.audit import reveal
from croupier.clients.bots import RandomBot
from croupier.clients.ladder.arena import Ladder, commitment_path
from croupier.clients.ladder.epoch import document_path as epoch_document_path
from croupier.clients.ladder.settings import LadderConfig, parse
from croupier.clients.results.store import Store
from croupier.clients.sdk import Bot, Client
from croupier.clients.tournament.referee_client import Replicas
from croupier.server.app import Croupier, create_server
from tests.clients.tournament.test_runner import Quiet


def ladder_config(**settings: Any) -> LadderConfig:
    """Fresh deals unless told: a pool needs twice a table's bots, and most tests seat fewer."""
    return parse(
        {
            "name": "open",
            "deals": "fresh",
            "clock": {"decision_ms": 2000, "grace_ms": 300},
            "games": [{"game": "chinese_ten", "seats": 2, "options": {"target": 100}}],
            **settings,
        }
    )


@dataclass
class Arena:
    """A referee, its admin channel, and the bots connected to it."""

    croupier: Croupier
    referees: Replicas
    address: str
    tokens: dict[str, str] = field(default_factory=dict)
    clients: dict[str, tuple[Client, asyncio.Task[None]]] = field(default_factory=dict)

    async def register(self, name: str) -> str:
        _, token = await self.referees.register_bot(name)
        self.tokens.setdefault(name, token)
        return token

    async def connect(self, name: str, token: str | None = None, bot: type[Bot] = RandomBot) -> None:
        client = Client(bot, self.address, [token or self.tokens[name]], name=name, max_matches=4)
        self.clients[name] = (client, asyncio.create_task(client.run()))
        await self.wait_for(lambda bots: any(b.name == name and b.streams for b in bots))

    async def disconnect(self, name: str) -> None:
        client, task = self.clients.pop(name)
        client.stop()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def wait_for(self, condition: Any) -> None:
        while not condition((await self.referees.bots())[self.address].values()):
            await asyncio.sleep(0.02)


@pytest.fixture
async def arena(tmp_path: Path) -> AsyncIterator[Arena]:
    croupier = await create_server("127.0.0.1:0", tmp_path / "referee")
    address = f"127.0.0.1:{croupier.port}"
    found = Arena(croupier, await Replicas.connect(address, croupier.admin_token), address)
    yield found
    for name in list(found.clients):
        await found.disconnect(name)
    await found.referees.close()
    await croupier.stop(grace=None)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "results.db") as opened:
        yield opened


class Revealing(Quiet):
    """Notes, how many matches had finished when an epoch was said to be over."""

    def __init__(self) -> None:
        super().__init__()
        self.over_after: list[int] = []

    def note(self, text: str) -> None:
        if " is over: its secret" in text:
            self.over_after.append(self.finished)


def ladder(arena: Arena, store: Store, tmp_path: Path, config: LadderConfig | None = None) -> Ladder:
    return Ladder(config or ladder_config(), store, arena.referees, Revealing(), tmp_path, poll=0.05)


async def play(ladder: Ladder, sets: int) -> int:
    """``sets`` sets over, or a failure (not a hang) if the ladder cannot get them played."""
    return await asyncio.wait_for(ladder.run_ladder(sets=sets), 120)


def set_groups(store: Store) -> list[frozenset[str]]:
    """The bots of every counted set, in the order they finished."""
    found = []
    for run in store.tournaments(["open"]):
        found += [frozenset(s.group) for s in store.duplicate_sets("chinese_ten", [run.id])]
    return found


async def test_connected_registered_bots_play_rated_sets_and_a_disconnected_one_is_not_seated(
    arena: Arena, store: Store, tmp_path: Path
) -> None:
    for name in ("ann", "bob", "cat", "dan"):
        await arena.register(name)
    for name in ("ann", "bob", "cat"):  # dan is registered, never connected
        await arena.connect(name)
    assert await play(ladder(arena, store, tmp_path), 6) == 6
    groups = set_groups(store)
    assert len(groups) == 6
    assert set().union(*groups) == {"ann@1", "bob@1", "cat@1"}
    (epoch,) = store.tournaments(["open"])
    finished = store.finished(epoch.id)
    assert len(finished) == 12 and all(m.record.status == "done" for m in finished)
    assert not store.voided(epoch.id)  # dan was never dealt a seat to forfeit
    assert all("dan" not in seat for record in store.matches(epoch.id).values() for seat in record.seats)
    seated = {(r.bot, r.version) for m in finished for r in m.results}
    assert seated <= {("ann", "1"), ("bob", "1"), ("cat", "1")}


class Leaver(RandomBot):
    """Says when it has made its first move: the test then drops its stream mid-match."""

    moved = asyncio.Event()

    def choose(self, view: Any, legal: Any) -> int:
        Leaver.moved.set()
        return super().choose(view, legal)


async def test_a_bot_that_leaves_a_set_loses_what_it_left_and_the_set_counts(
    arena: Arena, store: Store, tmp_path: Path
) -> None:
    await arena.register("ann")
    await arena.register("bob")
    await arena.connect("ann")
    await arena.connect("bob", bot=Leaver)
    ladder_task = asyncio.create_task(ladder(arena, store, tmp_path).run_ladder(sets=2))
    await Leaver.moved.wait()
    arena.clients.pop("bob")[1].cancel()  # gone, as a killed bot is: its stream drops
    await asyncio.sleep(1.0)  # past the grace: bob's seats are forfeited
    await arena.connect("bob")  # the same token: the same version, back
    assert await asyncio.wait_for(ladder_task, 60) == 2
    (epoch,) = store.tournaments(["open"])
    assert store.forfeits([epoch.id]).get("bob@1", 0) >= 1
    assert not store.voided(epoch.id)  # nothing a bot does voids a set
    first = min(store.finished(epoch.id), key=lambda m: m.record.key)
    places = {r.identity: (r.place, r.forfeited) for r in first.results}
    assert places["bob@1"] == (2, True) and places["ann@1"][0] == 1  # bob lost what it left
    assert len(set_groups(store)) == 2  # the set bob left counts


async def test_a_new_registration_is_a_new_version_seated_first_and_the_old_one_keeps_its_history(
    arena: Arena, store: Store, tmp_path: Path
) -> None:
    for name in ("ann", "bob", "cat"):
        await arena.register(name)
        await arena.connect(name)
    await play(ladder(arena, store, tmp_path), 4)
    await arena.disconnect("ann")
    new_token = await arena.register("ann")  # croupier register ann, again: ann@2
    await arena.connect("ann", new_token)
    await play(ladder(arena, store, tmp_path), 2)
    groups = set_groups(store)
    assert all("ann@2" in group for group in groups[4:]), groups  # provisional: seated at once
    assert any("ann@1" in group for group in groups[:4])  # the old version's sets stay, as ann@1
    assert sorted(store.versions("open").values()) == [("ann", "1"), ("ann", "2"), ("bob", "1"), ("cat", "1")]


async def test_an_epoch_reveals_its_committed_secret_once_its_sets_are_over_and_verify_checks_it(
    arena: Arena, store: Store, tmp_path: Path
) -> None:
    for name in ("ann", "bob"):
        await arena.register(name)
        await arena.connect(name)
    played = ladder(arena, store, tmp_path, ladder_config(epoch_sets=2))
    await play(played, 3)
    assert isinstance(played.display, Revealing)
    assert played.display.over_after == [4]  # revealed once both its sets (4 matches) were over
    first, second = store.tournaments(["open"])
    assert first.finished and first.revealed and not second.finished
    assert first.secret != second.secret
    committed = commitment_path(tmp_path, first).read_text().split()[0]
    document = json.loads(epoch_document_path(tmp_path, first).read_bytes())  # committed to at the start
    assert committed == hashlib.sha256(epoch_document_path(tmp_path, first).read_bytes()).hexdigest()
    assert document["secret_sha256"] == hashlib.sha256(first.secret or b"").hexdigest()
    assert not reveal.reveal_path(tmp_path, second).exists()  # its sets are not all over
    document = json.loads(reveal.reveal_path(tmp_path, first).read_text())
    assert len(document["matches"]) == 4 and all(entry["match_id"] for entry in document["matches"])
    published = await reveal.fetch_published(arena.address)
    assert reveal.verify(document, published) == []
    forged = dict(document, matches=[dict(document["matches"][0], seed=document["matches"][0]["seed"] + 1)])
    assert reveal.verify(forged) != []


async def test_croupier_verify_checks_an_epoch_against_the_secret_it_committed_to(
    arena: Arena, store: Store, tmp_path: Path
) -> None:
    import subprocess

    from tests.clients.terminal import croupier

    for name in ("ann", "bob"):
        await arena.register(name)
        await arena.connect(name)
    await play(ladder(arena, store, tmp_path, ladder_config(epoch_sets=1)), 1)
    first = store.tournaments(["open"])[0]
    path, committed = reveal.reveal_path(tmp_path, first), commitment_path(tmp_path, first)

    def verify(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(croupier("verify", *args), capture_output=True, text=True, timeout=60)

    given = (str(path), "--commitment", str(committed), "--server", arena.address)
    checked = await asyncio.to_thread(verify, *given)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "from the secret committed to" in checked.stdout
    other = hashlib.sha256(b"another secret").hexdigest()
    refused = await asyncio.to_thread(verify, str(path), "--commitment", other)
    assert refused.returncode == 1 and f"not {other}, the commitment published" in refused.stdout, (
        refused.stdout
    )


async def test_a_referee_restarted_under_the_ladder_resumes_its_matches_and_the_ladder_goes_on(
    tmp_path: Path, store: Store
) -> None:
    from tests.clients.tournament.test_referee_restart import ADMIN_TOKEN, free_port, start

    port = free_port()
    first = await start(port, tmp_path / "referee")
    address = f"127.0.0.1:{port}"
    arena = Arena(first, await Replicas.connect(address, ADMIN_TOKEN), address)
    for name in ("ann", "bob"):
        await arena.register(name)
        await arena.connect(name)
    config = ladder_config(clock={"decision_ms": 2000, "grace_ms": 10_000})  # bots back within it
    played = asyncio.create_task(play(ladder(arena, store, tmp_path, config), 4))
    while not any(r.status == "started" for t in store.tournaments() for r in store.matches(t.id).values()):
        await asyncio.sleep(0.02)
    await first.stop(grace=None)  # down in the middle of a set ...
    again = await start(port, tmp_path / "referee")  # ... and back, from its journals
    try:
        assert await played == 4
        (epoch,) = store.tournaments(["open"])
        finished = store.finished(epoch.id)
        assert len(set_groups(store)) == 4 and len(finished) == 8  # the set in progress too, once
        assert len({m.record.referee_match_id for m in finished}) == 8
        matches = {record.id: record for record in store.matches(epoch.id).values()}
        for record, _ in store.voided(epoch.id):  # a bot slower than the grace to come back: dealt again
            assert matches[record.id].status == "done" and matches[record.id].redeal >= 1
    finally:
        for name in list(arena.clients):
            await arena.disconnect(name)
        await arena.referees.close()
        await again.stop(grace=None)


async def test_the_ratings_are_fitted_in_a_worker_never_on_the_ladders_loop(
    arena: Arena, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fit is CPU-bound: on the loop that serves the embedded referee's moves it stalled them
    (3.9 s a choice with 100 bots). Here a fit in this process fails; the worker's is used."""
    from croupier.clients.ladder import matchmaking

    def on_the_loop(*_: object) -> dict[str, float]:
        raise AssertionError("a ratings fit ran in the ladder's process")

    monkeypatch.setattr(matchmaking, "fit", on_the_loop)
    for name in ("ann", "bob", "cat"):
        await arena.register(name)
        await arena.connect(name)
    arena_ladder = ladder(arena, store, tmp_path)
    assert await play(arena_ladder, 6) == 6
    maker = arena_ladder.makers["chinese_ten"]
    assert len(maker.sets) == 6 and maker._fit.sets > 0  # a fit from the worker was handed over
