"""A ladder measures luck as a tournament does: each epoch commits to its value function V before its
first deal, each seat's luck is stored with its result, the ratings read set points less it, and
``croupier verify`` recomputes every stored luck from the journals and the committed V."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from croupier.clients.audit import commitment, reveal
from croupier.clients.ladder import epoch as epochs
from croupier.clients.ladder.matchmaking import refit
from croupier.clients.results.luck import default_evaluator
from croupier.clients.results.luck_journal import identities
from croupier.clients.results.ratings import Model, RatedSet
from croupier.clients.results.store import Store
from tests.clients.ladder import test_ladder
from tests.clients.ladder.test_ladder import Arena, ladder, ladder_config, play
from tests.clients.terminal import croupier

arena = test_ladder.arena
store = test_ladder.store


async def one_epoch(arena: Arena, store: Store, tmp_path: Path, deals: str) -> tuple[Path, Path]:
    """One set played in an epoch of one set, revealed: its reveal and its commitment's file."""
    for name in ("ann", "bob", "cat", "dan") if deals == "pool" else ("ann", "bob"):
        await arena.register(name)
        await arena.connect(name)
    played = ladder(arena, store, tmp_path, ladder_config(deals=deals, epoch_sets=1))
    assert await play(played, 1) == 1
    (epoch,) = store.tournaments(["open"])
    return reveal.reveal_path(tmp_path, epoch), epochs.commitment_path(tmp_path, epoch)


def verify(path: Path, committed: Path | None) -> subprocess.CompletedProcess[str]:
    """``croupier verify`` of an epoch's reveal, against its commitment, with the referee's journals."""
    journals = path.parent.parent / "referee" / "matches"  # the test's referee keeps them there
    given = [path, "--journals", journals, *(["--commitment", committed] if committed else [])]
    return subprocess.run(croupier("verify", *map(str, given)), capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("deals", ["pool", "fresh"])
async def test_an_epoch_commits_to_its_luck_stores_each_seats_and_verify_recomputes_it(
    arena: Arena, store: Store, tmp_path: Path, deals: str
) -> None:
    path, committed = await one_epoch(arena, store, tmp_path, deals)
    (epoch,) = store.tournaments(["open"])
    document = json.loads(epochs.document_path(tmp_path, epoch).read_bytes())
    assert document["luck"] == identities(["chinese_ten"]) and document["luck_deal"] is True
    assert committed.read_text().split()[0] == commitment.digest(commitment.encode(document))
    finished = store.finished(epoch.id)
    assert len(finished) == 2
    for match in finished:  # two seats: one's luck is the other's, negated
        first, second = (r.luck for r in sorted(match.results, key=lambda r: r.seat))
        assert first is not None and second is not None and first == pytest.approx(-second)
    checked = await asyncio.to_thread(verify, path, committed)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "the luck of 2 match(es) recomputed from their journals" in checked.stdout, checked.stdout
    alone = await asyncio.to_thread(verify, path, None)  # no commitment kept: its own, to compare
    assert f"own commitment document {committed.read_text().split()[0]}" in alone.stdout, alone.stdout


async def test_verify_names_in_one_line_a_stored_luck_that_differs(
    arena: Arena, store: Store, tmp_path: Path
) -> None:
    path, committed = await one_epoch(arena, store, tmp_path, "fresh")
    (epoch,) = store.tournaments(["open"])
    with sqlite3.connect(store.path) as db:  # one seat's luck, as an operator might flatter it
        db.execute("UPDATE results SET luck = luck + 0.25 WHERE rowid = (SELECT min(rowid) FROM results)")
    reveal.publish(store, tmp_path, epoch, ladder_config().dealing, epochs.committed(tmp_path, epoch))
    checked = await asyncio.to_thread(verify, path, committed)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    problems = checked.stdout.splitlines()[:-1]
    assert len(problems) == 1 and "recomputed from its journal" in problems[0], checked.stdout
    assert checked.stdout.splitlines()[-1].startswith("1 problem(s)")


async def test_the_committed_value_function_cannot_change_after_the_first_deal_unseen(
    arena: Arena, store: Store, tmp_path: Path
) -> None:
    path, committed = await one_epoch(arena, store, tmp_path, "fresh")
    (epoch,) = store.tournaments(["open"])
    changed = epochs.committed(tmp_path, epoch)
    assert changed is not None
    changed["luck"]["chinese_ten"] = default_evaluator(
        "chinese_ten", scale=2.0
    ).identity()  # another V, whole
    reveal.publish(store, tmp_path, epoch, ladder_config().dealing, changed)
    checked = await asyncio.to_thread(verify, path, committed)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "not the ones committed to" in checked.stdout.splitlines()[0], checked.stdout  # said first


async def test_the_ladders_ratings_read_its_sets_less_luck_unless_told_not_to(
    arena: Arena, store: Store, tmp_path: Path
) -> None:
    for name in ("ann", "bob"):
        await arena.register(name)
        await arena.connect(name)
    corrected = ladder(arena, store, tmp_path)
    await play(corrected, 1)
    maker = corrected.makers["chinese_ten"]
    assert maker.model is Model.PAIRWISE and len(maker.sets) == 1
    assert [set(luck) for luck in maker.sets[0].luck] == [{"ann@1", "bob@1"}] * 2
    plain = ladder(arena, store, tmp_path, ladder_config(luck=False))
    await play(plain, 1)
    assert all(not rated.luck for rated in plain.makers["chinese_ten"].sets)


def test_a_refit_rates_set_points_less_luck() -> None:
    """ann won both matches, each by the luck of the cards: less it, bob played better."""
    matches = ({"ann": 1, "bob": 2}, {"ann": 1, "bob": 2})
    luck = ({"ann": 0.8, "bob": -0.8}, {"ann": 0.8, "bob": -0.8})
    plain = refit([RatedSet("open", ("ann", "bob"), matches)], model=Model.PAIRWISE)
    corrected = refit([RatedSet("open", ("ann", "bob"), matches, luck)], model=Model.PAIRWISE)
    assert plain.elo["ann"] > plain.elo["bob"]
    assert corrected.elo["ann"] < corrected.elo["bob"]
