"""``croupier ratings``: the Elo table of every game, from every tournament in the database."""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_DATA = Path("croupier-data")
DEFAULT_SAMPLES = 1000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="data directory (default: %(default)s)"
    )
    parser.add_argument("--db", type=Path, help="results database (default: DATA/results.db)")
    parser.add_argument("--game", action="append", help="only this game (repeatable)")
    parser.add_argument(
        "--samples",
        type=int,
        default=DEFAULT_SAMPLES,
        help="bootstrap samples for the 95%% intervals (default: %(default)s)",
    )


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from server.tournament.ratings import rate
    from server.tournament.report import ratings_table
    from server.tournament.store import Store, StoreError

    console = Console()
    db = args.db or args.data / "results.db"
    if not db.exists():
        console.print(f"no results database at {db}: run a tournament first (croupier tournament FILE)")
        return 1
    try:
        store = Store(db)
    except StoreError as exc:
        console.print(f"cannot read {db}: {exc}", markup=False)
        return 1
    with store:
        games = store.games()
        wanted = args.game or games
        unknown = [game for game in wanted if game not in games]
        if unknown:
            console.print(
                f"no results for {', '.join(unknown)} in {db}; games with results: {', '.join(games)}"
            )
            return 1
        if not games:
            console.print(f"no finished matches in {db} yet")
            return 0
        for game in wanted:
            console.print(ratings_table(game, rate(store.duplicate_sets(game), samples=args.samples)))
    return 0
