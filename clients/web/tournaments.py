"""Tournament pages from the results database: progress, crosstables, ratings with their 95%
intervals, and every match with a link to its replay.

The database is read as the runner writes it (SQLite in WAL mode lets both go on); each call
opens it, reads and closes, off the event loop. Ratings are fitted over this tournament's own
duplicate sets (``croupier ratings`` gives them over every tournament). The page's tables come
first (``tournament_page``: a few milliseconds), the ratings after (``Ratings``: seconds of
bootstrap for a demo's 192 matches), each game's fitted again only once its finished matches
change, so the page paints at once and a refresh while play goes on costs a fit per change.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from croupier.clients.results.ratings import Places, rate
from croupier.clients.results.report import crosstable_rows
from croupier.clients.results.sets import seat_points
from croupier.clients.results.store import FinishedMatch, Store

SAMPLES = 300
"""Bootstrap samples for the intervals: enough for a page refreshed while play goes on."""


class NoDatabase(LookupError):
    """No results database, or no such tournament in it."""


def _open(db: Path) -> Store:
    if not db.is_file():
        raise NoDatabase(f"no results database at {db}")
    return Store(db)


def tournament_list(db: Path) -> list[dict[str, Any]]:
    """Every tournament run, newest first, with its progress."""
    if not db.is_file():
        return []
    with _open(db) as store:
        found = []
        for tournament in reversed(store.tournaments()):
            statuses = [m.status for m in store.matches(tournament.id).values()]
            found.append(
                {
                    "id": tournament.id,
                    "name": tournament.name,
                    "run": tournament.run,
                    "finished": tournament.finished,
                    "done": statuses.count("done"),
                    "total": len(statuses),
                }
            )
        return found


def tournament_page(db: Path, tournament_id: int) -> dict[str, Any]:
    """Progress, crosstables and every match; each game's ``ratings`` None (``Ratings`` has them)."""
    with _open(db) as store:
        tournament = next((t for t in store.tournaments() if t.id == tournament_id), None)
        if tournament is None:
            raise NoDatabase(f"no tournament {tournament_id} in {db}")
        scheduled = store.matches(tournament_id)
        finished = store.finished(tournament_id)
    games: dict[str, dict[str, Any]] = {}
    for record in scheduled.values():
        game = games.setdefault(
            record.key.game, {"game": record.key.game, "done": 0, "started": 0, "total": 0}
        )
        game["total"] += 1
        game["done"] += record.status == "done"
        game["started"] += record.status == "started"
    results = {match.record.id: match for match in finished}
    for name, game in games.items():
        played = [match for match in finished if match.record.key.game == name]
        bots, rows = crosstable_rows(played)
        game["crosstable"] = {"bots": bots, "rows": [{"bot": b, "cells": c, "total": t} for b, c, t in rows]}
        game["ratings"] = None
    matches = []
    for record in sorted(
        scheduled.values(), key=lambda r: (r.key.game, r.key.round, r.key.group, r.key.deal, r.key.rotation)
    ):
        done = results.get(record.id)
        matches.append(
            {
                "key": str(record.key),
                "game": record.key.game,
                "seats": list(record.seats),
                "status": record.status,
                "match_id": record.referee_match_id,
                "results": None
                if done is None
                else [
                    {
                        "bot": r.bot,
                        "score": r.score,
                        "place": r.place,
                        "forfeited": r.forfeited,
                        "note": r.note,
                        # what chance gave the seat after the deal; its points less that (None: not measured)
                        "luck": r.luck,
                        "skill": None
                        if r.luck is None
                        else seat_points([o.place for o in done.results], r.seat) - r.luck,
                    }
                    for r in done.results
                ],
            }
        )
    return {
        "id": tournament.id,
        "name": tournament.name,
        "run": tournament.run,
        "finished": tournament.finished,
        "done": sum(g["done"] for g in games.values()),
        "total": sum(g["total"] for g in games.values()),
        "games": list(games.values()),
        "matches": matches,
    }


class Ratings:
    """Each game's ratings table of a tournament, as the page shows it, kept until the game's
    finished matches change (the runner only adds to them)."""

    def __init__(self, samples: int = SAMPLES) -> None:
        self.samples = samples
        self._tables: dict[tuple[Path, int, str], tuple[frozenset[int], list[dict[str, Any]]]] = {}
        self._fitting = threading.Lock()
        """One fit at a time (they are CPU-bound; two pages asking at once share the first's)."""

    def of(self, db: Path, tournament_id: int) -> dict[str, list[dict[str, Any]]]:
        """game -> its ratings rows, best first (called off the event loop)."""
        with _open(db) as store:
            if not any(t.id == tournament_id for t in store.tournaments()):
                raise NoDatabase(f"no tournament {tournament_id} in {db}")
            finished = store.finished(tournament_id)
        by_game: dict[str, list[FinishedMatch]] = {}
        for match in finished:
            by_game.setdefault(match.record.key.game, []).append(match)
        with self._fitting:
            tables = {}
            for game, played in by_game.items():
                key, ids = (db, tournament_id, game), frozenset(m.record.id for m in played)
                kept = self._tables.get(key)
                if kept is None or kept[0] != ids:
                    kept = self._tables[key] = (ids, _ratings_rows(played, self.samples))
                tables[game] = kept[1]
            return tables


def _ratings_rows(played: list[FinishedMatch], samples: int) -> list[dict[str, Any]]:
    return [
        {
            "bot": r.bot,
            "elo": round(r.elo),
            "low": None if r.low is None else round(r.low),
            "high": None if r.high is None else round(r.high),
            "los_next": r.los_next,
            "score": r.score,
            "games": r.games,
        }
        for r in rate(_duplicate_sets(played), samples=samples)
    ]


def _duplicate_sets(matches: list[FinishedMatch]) -> list[list[Places]]:
    """The matches grouped by duplicate set (every rotation of one deal), as ``rate`` takes them."""
    sets: dict[tuple[str, int, int, int], list[Places]] = {}
    for match in matches:
        sets.setdefault(match.record.key.set_key, []).append(match.places)
    return list(sets.values())
