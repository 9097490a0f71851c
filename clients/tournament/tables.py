"""The tables a tournament run ends with (``croupier tournament``'s, over a referee or in-process):
each game's crosstable, the incidents, the ratings of the run; once it is over, its secret revealed."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from croupier.clients.results.ratings import DEFAULT_MODEL, DEFAULT_RESAMPLE, Model, Resample
from croupier.clients.results.ratings_cli import DEFAULT_DATA, RatingProgress, say

if TYPE_CHECKING:
    from rich.console import Console

    from croupier.clients.results.store import Store, Tournament
    from croupier.clients.tournament.config import TournamentConfig
    from croupier.clients.tournament.launch import BotProcess


def report(
    console: Console,
    config: TournamentConfig,
    store: Store,
    tournament: Tournament,
    samples: int,
    launched: Sequence[BotProcess],
    machine: str,
    *,
    model: Model = DEFAULT_MODEL,
    resample: Resample = DEFAULT_RESAMPLE,
    data: Path = DEFAULT_DATA,
    luck: bool = False,
) -> None:
    """The tables a tournament ends with, the ratings of this run last, where the eye lands (``luck``:
    luck-corrected); and, once it is over, its secret revealed (under ``data``)."""
    from croupier.clients.results.ratings import rate
    from croupier.clients.results.report import crosstable, incidents_table, ratings_table

    finished = store.finished(tournament.id)
    for game in config.games:
        matches = [match for match in finished if match.record.key.game == game.game]
        if matches:
            console.print(crosstable(game.game, matches))
    if finished:
        console.print(incidents_table(finished))
    restarted = [f"{bot.name} {len(bot.exits)}x" for bot in launched if bot.exits]
    if restarted:
        say(console, f"bots restarted after exiting: {', '.join(restarted)}")
    journals = [match.record.journal for match in finished if match.record.journal]
    if journals:
        folder = os.path.commonpath(journals) if len(journals) > 1 else os.path.dirname(journals[0])
        say(
            console,
            f"journals: {len(journals)} in {folder}{machine} (each match's: {store.path}, table matches)",
        )
    if tournament.finished:
        _reveal(console, config, store, tournament, data, journaled=bool(journals))
    for game in config.games:
        sets = store.duplicate_sets(game.game, [tournament.id], luck=luck)
        progress = RatingProgress(f"{game.game}: ratings")
        table = rate(sets, samples=samples, model=model, resample=resample, progress=progress)
        if table:
            title = f"{game.game}: ratings of {tournament.name} run {tournament.run}{luck * ', less luck'}"
            console.print(ratings_table(game.game, table, title=title, model=model, resample=resample))
    if len(store.tournaments()) > 1:
        say(console, "(every run and tournament pooled: croupier ratings; some of them: --tournament NAME)")


def _reveal(
    console: Console,
    config: TournamentConfig,
    store: Store,
    tournament: Tournament,
    data: Path,
    *,
    journaled: bool,
) -> None:
    """Publish a finished run's secret: every deal it played can be checked from now on. Done by
    default, not on request: a deal can be checked only once the secret is out, and once the
    last match is over nothing is left that the secret could give away. A run without journals
    (played in-process) has no archive to export."""
    from croupier.clients.audit import commitment, reveal

    if tournament.secret is None:
        return  # dealt before secret deals: nothing to reveal
    path = reveal.publish(store, data, tournament, config.deals)
    say(
        console,
        f"secret of {tournament.name} run {tournament.run}: {tournament.secret.hex()} "
        f"(every deal is HMAC-SHA256 of it; check them all: croupier verify {path})",
    )
    if commitment.publish(data, tournament) is None:
        return  # committed to no schedule: nothing to audit it against
    if not journaled:
        say(console, "played without a referee (--in-process): no journals, nothing for croupier export")
    else:
        where = "" if data == DEFAULT_DATA else f" --data {data}"
        say(
            console,
            f"publish the whole run (schedule, journals, results, ratings) for anyone to audit: "
            f"croupier export {tournament.name} --run {tournament.run}{where}",
        )
