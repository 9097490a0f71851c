"""``croupier matches``: the matches of a tournament (or a ``croupier match`` run), from the
results database: ids, seats, scores and places, for ``croupier replay ID``.

Without --tournament, the tournament run most recently started (that got as far as scheduling
its matches); the other tournaments in the database are named at the end.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from croupier.clients.results.ratings_cli import DEFAULT_DATA, fail, say
from croupier.clients.results.sets import luck_and_skill

if TYPE_CHECKING:
    from rich.table import Table

    from croupier.clients.results.store import FinishedMatch, MatchRecord


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tournament", metavar="NAME", help="this tournament's latest run")
    parser.add_argument("--game", help="only this game's matches")
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="data directory (default: %(default)s)"
    )
    parser.add_argument("--db", type=Path, help="results database (default: DATA/results.db)")


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from croupier.clients.results.store import Store, StoreError
    from croupier.wire.names import did_you_mean

    db = args.db or args.data / "results.db"
    if not db.exists():
        return fail(
            f"no results database at {db}: play first (make run, croupier match, croupier tournament FILE)", 1
        )
    console = Console(width=None if sys.stdout.isatty() else 200)
    try:
        store = Store(db)
    except StoreError as exc:
        return fail(f"cannot read {db}: {exc}", 1)
    with store:
        tournaments = store.tournaments()
        names = list(dict.fromkeys(t.name for t in tournaments))
        wanted = [t for t in tournaments if args.tournament in (None, t.name)]
        if not wanted:
            if not tournaments:
                say(console, f"no tournaments in {db} yet")
                return 0
            return fail(
                f"no tournament {args.tournament!r} in {db}{did_you_mean(args.tournament, names)}; "
                f"there: {', '.join(names)}",
                1,
            )
        # the latest run with matches (a run that stopped before its first has none to list)
        tournament = next((t for t in reversed(wanted) if store.matches(t.id)), wanted[-1])
        records = sorted(store.matches(tournament.id).values(), key=lambda r: r.id)
        results = {match.record.id: match for match in store.finished(tournament.id)}
        shown = [r for r in records if args.game in (None, r.key.game)]
        title = f"{tournament.name} (run {tournament.run}): {len(shown)} matches in {db}"
        console.print(matches_table(title, shown, results))
        others = [name for name in names if name != tournament.name]
        if others:
            say(console, f"other tournaments: {', '.join(others)} (--tournament NAME)")
        say(
            console,
            "replay one: croupier replay MATCH_ID"
            + ("" if args.data == DEFAULT_DATA else f" --data {args.data}"),
        )
    return 0


def matches_table(title: str, records: list[MatchRecord], results: dict[int, FinishedMatch]) -> Table:
    from rich.table import Table

    table = Table(
        title=title,
        title_justify="left",
        caption="set: round/group/deal/rotation; seats: seat bot score (place; where measured, luck: what "
        "chance gave it after the deal, and skill: its points against the others, 1 ahead, ½ level, 0 "
        "behind, less its luck; why it forfeited), a bot playing in several versions as bot@version",
        caption_justify="left",
    )
    table.add_column("match", no_wrap=True, min_width=len("20250101-120000-abcdef"))  # to copy whole
    for column in ("game", "set", "seats", "status"):
        # a narrow terminal wraps a name, never cuts it; the seats, the widest, take what is left
        table.add_column(column, overflow="fold", ratio=1 if column == "seats" else None)
    versions: dict[str, set[str]] = {}
    for match in results.values():
        for r in match.results:
            versions.setdefault(r.bot, set()).add(r.version)
    for record in records:
        finished = results.get(record.id)
        if finished is not None:
            places = [r.place for r in finished.results]
            seats = " · ".join(
                f"{r.seat} {r.identity if len(versions[r.bot]) > 1 else r.bot} {r.score} ({r.place}"
                + ("" if r.luck is None else f"; {luck_and_skill(places, r.seat, r.luck)}")
                + (f", forfeited: {r.note or 'yes'})" if r.forfeited else ")")
                for r in finished.results
            )
        else:
            seats = " · ".join(f"{seat} {bot}" for seat, bot in enumerate(record.seats))
        key = record.key
        table.add_row(
            record.referee_match_id or "—",
            key.game,
            f"{key.round}/{key.group}/{key.deal}/{key.rotation}",
            seats,
            record.status,
        )
    return table
