"""``croupier ratings``: the ratings table of every game, from the tournaments asked for (all by default)."""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from rich.console import Console

    from croupier.clients.results.ratings import Model, Rating, Resample

DEFAULT_DATA = Path("croupier-data")
DEFAULT_SAMPLES = 1000
FORMATS = ("table", "json", "csv")
COLUMNS = ("game", "group", "rank", "bot", "elo", "low", "high", "los_next", "score", "results")
"""One line of --format json or csv: a bot's rating in one game, best first within each group (1 the
largest); low and high bound the 95% interval, empty (null) with too few sets."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="data directory (default: %(default)s)"
    )
    parser.add_argument("--db", type=Path, help="results database (default: DATA/results.db)")
    parser.add_argument("--game", action="append", help="only this game (repeatable)")
    parser.add_argument(
        "--tournament",
        action="append",
        metavar="NAME",
        help="pool only this tournament's runs (repeatable; default: every tournament in the database)",
    )
    parser.add_argument(
        "--ladder",
        metavar="NAME",
        help="pool every epoch of this ladder (croupier ladder); its forfeits are listed after the tables",
    )
    add_model_argument(parser)
    parser.add_argument(
        "--samples",
        type=int,
        default=DEFAULT_SAMPLES,
        help="bootstrap samples for the 95%% intervals (default: %(default)s)",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="a table per game (default), or one line per game and bot for programs: a JSON list, or CSV "
        f"with a header ({', '.join(COLUMNS)})",
    )


def add_model_argument(parser: argparse.ArgumentParser) -> None:
    """--model and --bootstrap, for every command that prints ratings."""
    from croupier.clients.results.ratings import DEFAULT_MODEL, DEFAULT_RESAMPLE, Model, Resample

    parser.add_argument(
        "--model",
        type=Model,
        default=DEFAULT_MODEL,
        metavar="{" + ",".join(model.value for model in Model) + "}",
        help="the rating model (default: %(default)s, which predicts held-out rankings better; "
        "docs/tournaments.md)",
    )
    parser.add_argument(
        "--luck-correction",
        action="store_true",
        help="rate each set's pairwise points less what chance gave each bot after the deal (its luck, "
        "measured from the journals with the value function the run committed to: issue #46); the model "
        "is then pairwise, and a match with no luck measured counts plain (default off: not measured yet "
        "whether it ranks bots better)",
    )
    parser.add_argument(
        "--bootstrap",
        type=Resample,
        default=DEFAULT_RESAMPLE,
        metavar="{" + ",".join(resample.value for resample in Resample) + "}",
        help="what the 95%% intervals resample: duplicate sets, or groups of bots then their sets "
        "(default: %(default)s)",
    )


def rating_model(args: argparse.Namespace) -> Model:
    """The model asked for: pairwise with --luck-correction (corrected points are pairwise ones)."""
    from croupier.clients.results.ratings import Model

    model: Model = Model.PAIRWISE if args.luck_correction else args.model
    return model


class RatingOptions(TypedDict):
    """What ``add_model_argument`` asks for, as a report takes it."""

    model: Model
    resample: Resample
    luck: bool


def rating_options(args: argparse.Namespace) -> RatingOptions:
    return {"model": rating_model(args), "resample": args.bootstrap, "luck": args.luck_correction}


def say(console: Console, text: str) -> None:
    """A line of plain text: never wrapped, never styled."""
    console.print(text, markup=False, highlight=False, soft_wrap=True)


class RatingProgress:
    """The ``progress`` of ``rate``, on stderr (stdout keeps the tables alone): silent for the
    first second (the demo's ratings take a fraction of one), then a line a second, so that a long
    wait is not silence."""

    def __init__(
        self,
        what: str,
        console: Console | None = None,
        after: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        from rich.console import Console

        self.what, self.after, self.clock = what, after, clock
        self.console = console or Console(stderr=True)
        self.started = clock()
        self.shown: float | None = None

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if now - self.started < self.after or (self.shown is not None and now - self.shown < 1.0):
            return
        self.shown = now
        say(self.console, f"{self.what}: bootstrap {done}/{total} samples, {now - self.started:.0f}s so far")


def fail(text: str, code: int) -> int:
    """An error for the user, on stderr; returns the exit status."""
    print(text, file=sys.stderr)
    return code


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from croupier.clients.results.ratings import rate
    from croupier.clients.results.report import ratings_table
    from croupier.clients.results.store import Store, StoreError

    console = Console()
    db = args.db or args.data / "results.db"
    if not db.exists():
        return fail(f"no results database at {db}: run a tournament first (croupier tournament FILE)", 1)
    try:
        store = Store(db)
    except StoreError as exc:
        return fail(f"cannot read {db}: {exc}", 1)
    with store:
        runs = None
        if args.ladder:
            if args.tournament:
                return fail("--ladder and --tournament: give one", 2)
            runs = [t.id for t in store.tournaments([args.ladder])]
            if not runs:
                return fail(f"no ladder {args.ladder} in {db}: croupier ladder FILE plays one", 1)
        elif args.tournament:
            found = store.tournaments(args.tournament)
            missing = sorted(set(args.tournament) - {t.name for t in found})
            if missing:
                known = ", ".join(sorted({t.name for t in store.tournaments()})) or "none"
                return fail(f"no tournament {', '.join(missing)} in {db}; tournaments: {known}", 1)
            runs = [t.id for t in found]
        games = store.games(runs)
        wanted = args.game or games
        unknown = [game for game in wanted if game not in games]
        if unknown:
            known = ", ".join(games) or "none"
            return fail(f"no results for {', '.join(unknown)} in {db}; games with results: {known}", 1)
        if not games and args.format == "table":
            say(console, f"no finished matches in {db} yet")
            return 0
        pooled = ", ".join(args.tournament) if args.tournament else "every tournament"
        if args.ladder:
            pooled = f"every epoch of ladder {args.ladder}"
        forfeits = store.forfeits(runs) if args.ladder and runs else {}
        model = rating_model(args)
        corrected = ", less luck" if args.luck_correction else ""
        lines: list[dict[str, Any]] = []
        for game in wanted:
            sets = store.duplicate_sets(game, runs, luck=args.luck_correction)
            progress = RatingProgress(f"{game}: ratings")
            table = rate(sets, samples=args.samples, model=model, resample=args.bootstrap, progress=progress)
            if args.format != "table":
                lines += rows(game, table)
                continue
            title = f"{game}: ratings over {pooled}{corrected}"
            console.print(ratings_table(game, table, title=title, model=model, resample=args.bootstrap))
        if forfeits and args.format == "table":
            listed = ", ".join(f"{bot} {count}" for bot, count in sorted(forfeits.items()))
            say(console, f"forfeited seats (last places that count, unless voided): {listed}")
        voided = store.voided_count(runs) if args.ladder and runs else 0
        if voided and args.format == "table":
            say(
                console,
                f"voided matches: {voided} (an arena fault, a ladder restart or a referee outage, "
                "dealt their sets again; never counted)",
            )
    if args.format == "json":
        json.dump(lines, sys.stdout, indent=1)
        print()
    elif args.format == "csv":
        writer = csv.DictWriter(sys.stdout, COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(lines)
    return 0


def rows(game: str, ratings: Sequence[Rating]) -> list[dict[str, Any]]:
    """The ratings of ``game`` as ``COLUMNS``, ranked as the table ranks them (Elo to 0.1)."""
    lines = []
    rank = 0
    for index, rating in enumerate(ratings):
        rank = 1 if index == 0 or ratings[index - 1].group != rating.group else rank + 1
        values = (
            game,
            rating.group + 1,
            rank,
            rating.bot,
            round(rating.elo, 1),
            None if rating.low is None else round(rating.low, 1),
            None if rating.high is None else round(rating.high, 1),
            None if rating.los_next is None else round(rating.los_next, 4),
            round(rating.score, 4),
            rating.games,
        )
        lines.append(dict(zip(COLUMNS, values, strict=True)))
    return lines
