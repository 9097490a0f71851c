"""A ladder's pages from the results database: the leaderboard (ratings with their 95% intervals,
sets, forfeits, when each bot last played, its trend) and a page per bot (its versions, its
results against each opponent, its recent matches with links to their replays).

Only sets that are over are read (``Store.duplicate_sets``, and matches of finished sets here),
as the ratings count them: a rotation finished while its twin is still played says nothing, to
anyone, until the twin is over (DESIGN.md's secrets: a ladder's results, everyone, once the set
is over). The leaderboard is computed in a process of its own (its fit is CPU-bound: on the
viewer's loop, or in a thread holding the interpreter's lock, it held up the moves served beside
it) and only when the results changed (``Boards``): every watcher is served the last board
computed, with when it was, so a hundred watchers cost the play nothing.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import multiprocessing
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from aiohttp import web

from croupier.clients.results.ratings import RatedSet, Rating, anchored_fit, rate
from croupier.clients.results.sets import set_score, ties_known
from croupier.clients.results.store import FinishedMatch, Store
from croupier.clients.web import STATIC
from croupier.clients.web.tournaments import NoDatabase

SAMPLES = 300
"""Bootstrap samples for the leaderboard's intervals."""
TREND_SETS = 10
"""The trend: a bot's rating now against its rating without the last this many sets."""
RECENT = 20
"""Matches listed on a bot's page."""
CHECK_SECONDS = 1.0
"""How often, while it is watched, a board's results are looked at for a change."""


def _open(db: Path, name: str) -> tuple[Store, list[int]]:
    if not db.is_file():
        raise NoDatabase(f"no results database at {db}")
    store = Store(db)
    if name not in store.ladders():
        store.close()
        raise NoDatabase(f"no ladder {name[:40]!r} in {db}")
    return store, [run.id for run in store.tournaments([name])]


def ladder_list(db: Path) -> list[str]:
    if not db.is_file():
        return []
    with Store(db) as store:
        return store.ladders()


class Fits:
    """Each ladder game's ratings and trend, kept until its sets that are over change, and one fit
    at a time (they are CPU-bound; pages asking at once share the first's)."""

    def __init__(self, samples: int = SAMPLES) -> None:
        self.samples = samples
        self._kept: dict[tuple[Path, str, str], tuple[list[RatedSet], list[Rating], dict[str, float]]] = {}
        self._fitting = threading.Lock()

    def of(
        self, db: Path, name: str, game: str, sets: list[RatedSet]
    ) -> tuple[list[Rating], dict[str, float]]:
        """The ratings of these sets, best first, and each bot's Elo without the last TREND_SETS."""
        with self._fitting:
            kept = self._kept.get((db, name, game))
            if kept is None or kept[0] != sets:
                earlier = _elo(sets[:-TREND_SETS]) if len(sets) > TREND_SETS else {}
                kept = self._kept[(db, name, game)] = (sets, rate(sets, samples=self.samples), earlier)
            return kept[1], kept[2]


def leaderboard(db: Path, name: str, fits: Fits | None = None) -> dict[str, Any]:
    """Per game the ratings table, best first; the epochs and their state."""
    fits = fits or Fits()
    store, runs = _open(db, name)
    with store:
        epochs = store.tournaments([name])
        forfeits = store.forfeits(runs)
        last = _last_played(_counted(store, runs))
        games = {game: store.duplicate_sets(game, runs) for game in store.games(runs)}
    tables = []
    for game, sets in games.items():
        ratings, earlier = fits.of(db, name, game, sets)
        ties = ties_known(sets)  # a pair the ladder knows tied is shown so, whatever its LOS
        below = {upper.bot: lower.bot for upper, lower in itertools.pairwise(ratings)}
        played: dict[str, int] = defaultdict(int)
        for rated in sets:
            for bot in rated.group:
                played[bot] += 1
        rows = [
            {
                "bot": r.bot,
                "elo": round(r.elo),
                "low": None if r.low is None else round(r.low),
                "high": None if r.high is None else round(r.high),
                "los_next": r.los_next,
                "tied_next": r.bot in below and tuple(sorted((r.bot, below[r.bot]))) in ties,
                "sets": played[r.bot],
                "games": r.games,
                "forfeits": forfeits.get(r.bot, 0),
                "last_played": last.get(r.bot),
                "trend": None if r.bot not in earlier else round(r.elo - earlier[r.bot]),
            }
            for r in ratings
        ]
        tables.append({"game": game, "sets": len(sets), "ratings": rows})
    return {
        "name": name,
        "epochs": [{"epoch": e.run, "over": e.finished, "revealed": e.revealed} for e in epochs],
        "games": tables,
    }


_FITS = Fits()
"""The board worker's fits, kept from one board to the next (one worker process)."""


def fresh_board(db: Path, name: str, seen: tuple[int, ...] | None) -> tuple[tuple[int, ...], bytes | None]:
    """In the board worker: the results' state now, and the board as JSON if it changed since
    ``seen`` (None: unchanged)."""
    store, _ = _open(db, name)
    with store:
        state = store.state()
    if state == seen:
        return state, None
    board = leaderboard(db, name, _FITS)
    board["computed_at"] = time.time()
    return state, json.dumps(board).encode()


class Boards:
    """Each ladder's last board, served as it is while a worker process computes the next one
    (only once a set is over, or a bot or epoch changed: ``Store.state``)."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._kept: dict[tuple[Path, str], tuple[tuple[int, ...], bytes]] = {}
        self._checked: dict[tuple[Path, str], float] = {}
        self._checking: dict[tuple[Path, str], asyncio.Future[tuple[tuple[int, ...], bytes | None]]] = {}

    async def board(self, db: Path, name: str) -> bytes:
        """The last board computed (the first one is waited for); a check for a newer one is
        started when the last is over CHECK_SECONDS old."""
        key = (db, name)
        if key not in self._kept:
            await self._check(key)
        elif time.monotonic() - self._checked.get(key, 0.0) > CHECK_SECONDS and key not in self._checking:
            # in the background: a failure now is told by the next page that waits for one
            asyncio.ensure_future(self._check(key)).add_done_callback(lambda done: done.exception())
        return self._kept[key][1]

    async def _check(self, key: tuple[Path, str]) -> None:
        pending = self._checking.get(key)
        if pending is None:
            if self._pool is None:  # spawned: a forked copy of a process running gRPC is unsafe
                self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
            seen = self._kept[key][0] if key in self._kept else None
            loop = asyncio.get_running_loop()
            pending = self._checking[key] = loop.run_in_executor(self._pool, fresh_board, *key, seen)
        try:
            state, board = await pending
        finally:
            self._checking.pop(key, None)
        self._checked[key] = time.monotonic()
        if board is not None:
            self._kept[key] = (state, board)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)


def bot_page(db: Path, name: str, identity: str) -> dict[str, Any]:
    """One bot: its versions, its set scores against each opponent, its recent matches."""
    store, runs = _open(db, name)
    with store:
        bot_name = identity.rpartition("@")[0] or identity
        versions = sorted(
            (f"{n}@{v}" for n, v in store.versions(name).values() if n == bot_name), key=_version_order
        )
        if identity not in versions:
            raise NoDatabase(f"no bot {identity[:60]!r} on ladder {name[:40]!r}")
        finished = _counted(store, runs)
        games = {game: store.duplicate_sets(game, runs) for game in store.games(runs)}
    opponents = []
    for game, sets in games.items():
        scores: dict[str, list[float]] = defaultdict(list)
        for rated in sets:
            if identity not in rated.group:
                continue
            for other in rated.group:  # in a deal pool, those it met or was compared with
                if other != identity and any(identity in m and other in m for m in rated.matches):
                    scores[other].append(set_score(rated.matches, identity, other))
        opponents += [
            {"game": game, "opponent": other, "sets": len(got), "score": sum(got) / len(got)}
            for other, got in sorted(scores.items())
        ]
    mine = [m for m in finished if identity in m.rated_places]
    recent = [
        {
            "game": m.record.key.game,
            "match_id": m.record.referee_match_id,
            "seats": list(m.record.seats),
            "place": m.rated_places[identity],
            "forfeited": any(r.forfeited for r in m.results if r.identity == identity),
        }
        for m in sorted(mine, key=lambda m: m.record.started_at or 0.0, reverse=True)[:RECENT]
    ]
    return {"ladder": name, "bot": identity, "versions": versions, "opponents": opponents, "recent": recent}


def _counted(store: Store, runs: list[int]) -> list[FinishedMatch]:
    """The finished matches of sets that are over (a twin still in play hides its set)."""
    counted = []
    for run in runs:
        open_sets = {r.key.set_key for r in store.matches(run).values() if r.status != "done"}
        counted += [m for m in store.finished(run) if m.record.key.set_key not in open_sets]
    return counted


def _last_played(matches: list[FinishedMatch]) -> dict[str, float]:
    last: dict[str, float] = {}
    for match in matches:
        for bot in match.rated_places:
            last[bot] = max(last.get(bot, 0.0), match.record.started_at or 0.0)
    return last


def _elo(sets: list[RatedSet]) -> dict[str, float]:
    return anchored_fit(sets)  # the table's scale: a newcomer does not move the trend of the others


def _version_order(identity: str) -> tuple[str, int]:
    name, _, version = identity.rpartition("@")
    return name, int(version) if version.isdigit() else 0


__all__ = ["bot_page", "ladder_list", "leaderboard"]


# --- HTTP ---------------------------------------------------------------------------------


def add_routes(app: web.Application, data_of: Callable[[web.Request], Path | None]) -> None:
    """The ladder pages and their JSON, open to anyone (what they show is the results of sets
    that are over); ``data_of``: the viewer's --data."""

    boards = Boards()
    app.on_cleanup.append(lambda _: asyncio.to_thread(boards.close))

    def _db(request: web.Request) -> Path:
        data = data_of(request)
        if data is None:
            raise NoDatabase("this viewer was started without --data: no ladders")
        return data / "results.db"

    async def board(request: web.Request) -> web.StreamResponse:
        db, name = _db(request), request.match_info["name"]
        return web.Response(body=await boards.board(db, name), content_type="application/json")

    async def bot(request: web.Request) -> web.StreamResponse:
        db, name = _db(request), request.match_info["name"]
        return web.json_response(await asyncio.to_thread(bot_page, db, name, request.match_info["bot"]))

    async def listed(request: web.Request) -> web.StreamResponse:
        return web.json_response({"ladders": await asyncio.to_thread(ladder_list, _db(request))})

    app.router.add_get("/ladders", _page("ladders.html"))
    app.router.add_get("/ladders/{name}", _page("ladder.html"))
    app.router.add_get("/ladders/{name}/bots/{bot}", _page("ladder_bot.html"))
    app.router.add_get("/api/ladders", listed)
    app.router.add_get("/api/ladders/{name}", board)
    app.router.add_get("/api/ladders/{name}/bots/{bot}", bot)


def _page(name: str) -> Any:
    async def handler(request: web.Request) -> web.StreamResponse:
        return web.FileResponse(STATIC / name, headers={"Cache-Control": "no-cache"})

    return handler
