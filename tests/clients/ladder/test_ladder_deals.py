"""What a ladder's bots can and cannot get from their seats, against a real referee: no bot is dealt
one deal twice (a bot that holds a match back finds no twin), and leaving a set is losing it."""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, ClassVar

import pytest

from croupier.clients.bots import RandomBot
from croupier.clients.results.ratings import rate
from croupier.clients.results.store import Store
from croupier.clients.sdk import Client, Match
from tests.clients.ladder import test_ladder
from tests.clients.ladder.test_ladder import Arena, ladder, ladder_config, play

arena = test_ladder.arena
store = test_ladder.store

GAMES = [
    {"game": "chinese_ten", "seats": 2, "options": {"target": 100}},
    {"game": "pair_battle", "seats": 2, "options": {"timing": "lockstep"}},
    {"game": "platinum_fish", "seats": 2},
    {"game": "spoil_five", "seats": 2},
]
"""Every game, two seats: a pool is two tables of two."""


class Spy(RandomBot):
    """Holds its first decision in each match back until it has been dealt another match (or a
    second has passed), then plays at random; remembers the match ids it was dealt, by token."""

    dealt: ClassVar[dict[str, set[str]]] = defaultdict(set)
    """Match ids dealt to each spy, by its name."""

    def __init__(self, match: Match) -> None:
        super().__init__(match)
        self.held = False
        me = match.players[match.seat]
        Spy.dealt[me].add(match.id)

    async def choose(self, view: Any, legal: list[Any]) -> int:  # type: ignore[override]
        if not self.held:  # hold this match back: does a twin of it start meanwhile?
            self.held = True
            me = self.match.players[self.match.seat]
            count = len(Spy.dealt[me])
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):
                    while len(Spy.dealt[me]) == count:
                        await asyncio.sleep(0.02)
        return self.rng.randrange(len(legal))


@pytest.mark.parametrize("deals", ["pool", "fresh"])
async def test_a_bot_that_holds_a_match_back_is_never_dealt_a_deal_it_has_seen_in_any_game(
    arena: Arena, store: Store, tmp_path: Path, deals: str
) -> None:
    Spy.dealt.clear()
    names = ("ann", "bob", "cat", "dan", "eve")
    for name in names:
        await arena.register(name)
        await arena.connect(name, bot=Spy)
    config = ladder_config(deals=deals, games=GAMES, concurrency=8, concurrent_sets=2)
    await play(ladder(arena, store, tmp_path, config), 12)
    referee = arena.referees.referees[arena.address]
    digests: dict[str, str] = {}
    for ids in Spy.dealt.values():
        for match_id in ids:
            info = await referee.get_match(match_id)
            assert info is not None
            digests[match_id] = info.seed_sha256  # public: ListMatches shows it to anyone
    games = Counter(key.game for t in store.tournaments(["open"]) for key in store.matches(t.id))
    assert set(games) == {g["game"] for g in GAMES}, games  # every game was dealt
    for name, ids in Spy.dealt.items():
        seen = Counter(digests[match_id] for match_id in ids)
        assert len(ids) >= 4 and max(seen.values()) == 1, (name, seen)  # no deal twice
    if deals == "pool":  # and a deal was dealt at several tables: the pool compares them
        assert max(Counter(digests.values()).values()) == 2


class Aborter(RandomBot):
    """Random, but drops its stream whenever, a match scored, it is behind or tied: a bot that
    would keep only the sets it wins. Its supervisor (``keep_aborting``) sees ``abort`` set."""

    abort = threading.Event()

    def choose(self, view: Any, legal: list[Any]) -> int:
        mine = view.scores[view.seat]
        best_other = max(score for seat, score in enumerate(view.scores) if seat != view.seat)
        if max(view.scores) > 0 and mine <= best_other:
            Aborter.abort.set()
        return self.rng.randrange(len(legal))


async def keep_aborting(where: Arena, token: str, grace: float) -> None:
    """Connect the aborter, drop its stream whenever it asks, come back after the grace."""
    while True:
        Aborter.abort.clear()
        client = Client(Aborter, where.address, [token], name="quitter", max_matches=1)
        task = asyncio.create_task(client.run())
        try:
            while not Aborter.abort.is_set():
                await asyncio.sleep(0.01)
        finally:
            task.cancel()  # the stream drops, as a killed bot's does
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await asyncio.sleep(grace + 0.1)  # its seats forfeited, then back


async def test_a_bot_that_leaves_whenever_it_is_behind_rates_no_higher_than_an_honest_one(
    arena: Arena, store: Store, tmp_path: Path
) -> None:
    random.seed(39)
    token = await arena.register("quitter")
    for name in ("ann", "bob", "cat"):
        await arena.register(name)
        await arena.connect(name)
    supervisor = asyncio.create_task(keep_aborting(arena, token, 0.3))
    config = ladder_config(
        deals="pool",
        games=[{"game": "platinum_fish", "seats": 2}],
        clock={"decision_ms": 2000, "grace_ms": 300},
    )
    try:
        await asyncio.wait_for(ladder(arena, store, tmp_path, config).run_ladder(sets=40), 300)
    finally:
        supervisor.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await supervisor
    runs = [t.id for t in store.tournaments(["open"])]
    assert store.forfeits(runs).get("quitter@1", 0) >= 5  # it did leave, often
    table = {r.bot: r for r in rate(store.duplicate_sets("platinum_fish", runs), samples=200, seed=39)}
    quitter = table["quitter@1"]
    honest = max(table[f"{name}@1"].elo for name in ("ann", "bob", "cat"))
    half = (quitter.high - quitter.low) / 2 if quitter.high is not None and quitter.low is not None else 0.0
    assert quitter.elo <= honest + half, table
    assert not any(store.voided(run) for run in runs)  # nothing it did voided a set


def test_duplicate_deals_are_refused_where_a_bot_connects_by_itself() -> None:
    from croupier.clients.tournament.config import ConfigError
    from croupier.clients.tournament.config import parse as parse_tournament

    with pytest.raises(ConfigError, match=r'stream dealt a duplicate set holds every seat.*use "pool"'):
        ladder_config(deals="duplicate")
    tournament = {
        "name": "t",
        "games": [{"game": "platinum_fish", "seats": 2}],
        "bots": [{"name": "mine", "external": True}, {"name": "theirs", "registered": True}],
    }
    with pytest.raises(ConfigError, match=r'mine, theirs connect.*use deals = "fresh"'):
        parse_tournament(tournament)
    assert parse_tournament({**tournament, "deals": "fresh"}).bots
