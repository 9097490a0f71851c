"""The tables a tournament ends with: crosstable, ratings, incidents (rich renderables)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from croupier.clients.results.ratings import (
    DEFAULT_MODEL,
    DEFAULT_PRIOR,
    DEFAULT_RESAMPLE,
    Model,
    Rating,
    Resample,
    Tally,
)
from croupier.clients.results.store import FinishedMatch

MODEL_NAMES = {Model.PLACKETT_LUCE: "Plackett-Luce", Model.PAIRWISE: "pairwise Bradley-Terry"}


def crosstable(game: str, matches: Sequence[FinishedMatch]) -> Table:
    """Pairwise points of each bot (row) against each other bot (column), out of the results."""
    bots, rows = crosstable_rows(matches)
    table = Table(
        title=f"{game}: crosstable",
        caption="row's points / results vs column",
    )
    table.add_column("bot")
    for bot in bots:
        table.add_column(bot, justify="right")
    table.add_column("total", justify="right")
    for row, cells, total in rows:
        table.add_row(row, *cells, total)
    return table


def crosstable_rows(matches: Sequence[FinishedMatch]) -> tuple[list[str], list[tuple[str, list[str], str]]]:
    """The bots, and per bot its "points/results" against each bot ('' for itself or one it never
    met) and in total: the crosstable's cells, for the terminal and the web page alike."""
    tally = Tally(match.places for match in matches)
    bots = tally.bots
    rows = []
    for row in bots:
        cells = []
        for col in bots:
            pair = (row, col) if row < col else (col, row)
            games = tally.games.get(pair, 0)
            if row == col or not games:
                cells.append("")
                continue
            points = tally.points[pair] if row < col else games - tally.points[pair]
            cells.append(f"{_points(points)}/{games}")
        points, games = tally.score(row)
        rows.append((row, cells, f"{_points(points)}/{games}"))
    return bots, rows


def ratings_table(
    game: str,
    ratings: Sequence[Rating],
    title: str | None = None,
    model: Model = DEFAULT_MODEL,
    resample: Resample = DEFAULT_RESAMPLE,
    prior: float = DEFAULT_PRIOR,
) -> Table:
    """Best first within each group; groups that never met are apart, with no LOS between them.
    The caption says how the ratings were fitted, the prior too: it moves every gap."""
    groups = len({rating.group for rating in ratings})
    table = Table(
        title=title or f"{game}: ratings",
        caption=f"Elo scale, {MODEL_NAMES[model]}, 95% interval (bootstrap over {resample.value}); "
        f"prior {prior:g} virtual draw{'' if prior == 1 else 's'} per pair of bots that met"
        + (f"; {groups} groups that never met: compare ratings within a group only" if groups > 1 else "")
        + (
            f"; n/a: no interval, the results hold fewer than two {resample.value} to resample "
            "(or --samples 0)"
            if any(rating.low is None for rating in ratings)
            else ""
        ),
    )
    columns = [("group", "right")] if groups > 1 else []
    for name, justify in (
        *columns,
        ("#", "right"),
        ("bot", "left"),
        ("Elo", "right"),
        ("95% interval", "right"),
        ("LOS next", "right"),
        ("score", "right"),
        ("results", "right"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    rank = 0
    for index, rating in enumerate(ratings):
        rank = 1 if index == 0 or ratings[index - 1].group != rating.group else rank + 1
        interval = (
            f"{rating.low - rating.elo:+.0f} / {rating.high - rating.elo:+.0f}"
            if rating.low is not None and rating.high is not None
            else "n/a"
        )
        los = f"{100 * rating.los_next:.0f}%" if rating.los_next is not None else ""
        table.add_row(
            *([str(rating.group + 1)] if groups > 1 else []),
            str(rank),
            rating.bot,
            f"{rating.elo:.0f}",
            interval,
            los,
            f"{100 * rating.score:.1f}%",
            str(rating.games),
        )
    return table


def incidents_table(matches: Sequence[FinishedMatch]) -> Table:
    """Per bot: matches played, timeouts, refused actions and forfeits."""
    counts: dict[str, list[int]] = {}
    for match in matches:
        for result in match.results:
            line = counts.setdefault(result.bot, [0, 0, 0, 0])
            line[0] += 1
            line[1] += result.timeouts
            line[2] += result.refusals
            line[3] += int(result.forfeited)
    table = Table(title="timeouts, refused actions and forfeits per bot")
    table.add_column("bot")
    for name in ("matches", "timeouts", "refused", "forfeits"):
        table.add_column(name, justify="right")
    for bot in sorted(counts):
        table.add_row(bot, *map(str, counts[bot]))
    return table


def _points(points: float) -> str:
    return f"{points:g}"
