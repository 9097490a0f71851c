"""Tournament pages from the results database: progress, crosstables, ratings with their 95%
intervals, and every match with a link to its replay.

The database is read as the runner writes it (SQLite in WAL mode lets both go on); each call
opens it, reads and closes, off the event loop. Ratings are fitted over this tournament's own
duplicate sets (``croupier ratings`` gives them over every tournament).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from croupier.clients.results.ratings import Places, rate
from croupier.clients.results.report import crosstable_rows
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


def tournament_page(db: Path, tournament_id: int, samples: int = SAMPLES) -> dict[str, Any]:
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
        game["ratings"] = [
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
                    {"bot": r.bot, "score": r.score, "place": r.place, "forfeited": r.forfeited}
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


def _duplicate_sets(matches: list[FinishedMatch]) -> list[list[Places]]:
    """The matches grouped by duplicate set (every rotation of one deal), as ``rate`` takes them."""
    sets: dict[tuple[str, int, int, int], list[Places]] = {}
    for match in matches:
        sets.setdefault(match.record.key.set_key, []).append(match.places)
    return list(sets.values())
