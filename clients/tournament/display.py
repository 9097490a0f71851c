"""What a running tournament shows: progress, rate, time left and live standings.

On a terminal: a rich progress bar over a standings table, redrawn in place.
Otherwise (a log, a pipe, CI): a plain line now and then. The standings use a
running Elo, cheap to update after every match; the final tables use the
maximum-likelihood fit instead.
"""

from __future__ import annotations

import time
from typing import Protocol

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn
from rich.table import Table

from croupier.clients.results.ratings import Places, RunningElo, Tally
from croupier.clients.results.ratings_cli import say

PLAIN_EVERY_SECONDS = 5.0


class Display(Protocol):
    def begin(self, title: str, total: int, done: int) -> None:
        """Play starts: ``total`` matches (0: as many as come), ``done`` of them already."""

    def match_done(self, game: str, places: Places, replayed: bool = False) -> None:
        """One more finished match (``replayed``: finished in an earlier session)."""

    def note(self, text: str) -> None:
        """A message worth a line of its own (a bot restarted, the runner stopping)."""

    def end(self) -> None: ...


class Standings:
    """Per game: running Elo and pairwise score of every bot so far."""

    def __init__(self) -> None:
        self.elo: dict[str, RunningElo] = {}
        self.tally: dict[str, Tally] = {}

    def add(self, game: str, places: Places) -> None:
        self.elo.setdefault(game, RunningElo()).add(places)
        self.tally.setdefault(game, Tally()).add(places)

    def ranked(self, game: str) -> list[tuple[str, float, float, int]]:
        """(bot, running Elo, score share, results), best first."""
        elo, tally = self.elo[game].elo, self.tally[game]
        rows = []
        for bot in elo:
            points, games = tally.score(bot)
            rows.append((bot, elo[bot], points / games if games else 0.0, games))
        return sorted(rows, key=lambda row: (-row[1], row[0]))

    def table(self) -> Table:
        table = Table(title="live standings (running Elo)", title_justify="left")
        for name, justify in (("game", "left"), ("bot", "left"), ("Elo", "right"), ("score", "right")):
            table.add_column(name, justify=justify)  # type: ignore[arg-type]
        for game in sorted(self.elo):
            for index, (bot, elo, share, _) in enumerate(self.ranked(game)):
                table.add_row(game if index == 0 else "", bot, f"{elo:.0f}", f"{100 * share:.0f}%")
            table.add_section()
        return table

    def leaders(self) -> str:
        return "; ".join(
            f"{game}: {ranked[0][0]} {ranked[0][1]:.0f}"
            for game in sorted(self.elo)
            for ranked in [self.ranked(game)]
            if ranked
        )


class LiveDisplay:
    """A progress bar and the standings, redrawn in place on a terminal."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.standings = Standings()
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("matches"),
            TextColumn("{task.fields[rate]}"),
            TimeRemainingColumn(),
            TextColumn("left"),
            console=console,
        )
        self._task: TaskID | None = None
        self._live = Live(self, console=console, refresh_per_second=4, transient=False)
        self._clock = _Rate()

    def __rich__(self) -> RenderableType:
        return Group(self.progress, self.standings.table()) if self.standings.elo else self.progress

    def begin(self, title: str, total: int, done: int) -> None:
        # total 0: open-ended (a ladder), a bar with no end
        self._task = self.progress.add_task(title, total=total or None, completed=done, rate="")
        self._clock.start(done)
        self._live.start()

    def match_done(self, game: str, places: Places, replayed: bool = False) -> None:
        self.standings.add(game, places)
        if not replayed and self._task is not None:
            self.progress.advance(self._task)
            done = int(self.progress.tasks[0].completed)
            self.progress.update(self._task, rate=self._clock.text(done))

    def note(self, text: str) -> None:
        say(self.console, text)

    def end(self) -> None:
        self._live.stop()


class PlainDisplay:
    """Progress as plain lines, for logs and pipes: every few seconds and at every tenth."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.standings = Standings()
        self._title = ""
        self._total = self._done = 0
        self._last_line = 0.0
        self._last_tenth = 0
        self._clock = _Rate()

    def begin(self, title: str, total: int, done: int) -> None:
        self._title, self._total, self._done = title, total, done
        self._clock.start(done)
        self._last_tenth = self._tenth()
        self._line()

    def match_done(self, game: str, places: Places, replayed: bool = False) -> None:
        self.standings.add(game, places)
        if replayed:
            return
        self._done += 1
        if self._tenth() > self._last_tenth or time.monotonic() - self._last_line >= PLAIN_EVERY_SECONDS:
            self._last_tenth = self._tenth()
            self._line()

    def note(self, text: str) -> None:
        say(self.console, text)

    def end(self) -> None:
        pass

    def _tenth(self) -> int:
        return 10 * self._done // self._total if self._total else 10

    def _line(self) -> None:
        self._last_line = time.monotonic()
        done, total = self._done, self._total
        counted = f"{done}/{total} matches ({100 * done / total:.0f}%)" if total else f"{done} matches"
        parts = [f"{self._title}: {counted}"]  # no total: open-ended, a ladder
        rate = self._clock.text(self._done, self._total or None)
        if rate:
            parts.append(rate)
        leaders = self.standings.leaders()
        if leaders:
            parts.append(f"leading: {leaders}")
        say(self.console, ", ".join(parts))


class _Rate:
    """Matches per second in this session, and the time left at that rate."""

    def __init__(self) -> None:
        self._start = time.monotonic()
        self._done_at_start = 0

    def start(self, done: int) -> None:
        self._start = time.monotonic()
        self._done_at_start = done

    def text(self, done: int, total: int | None = None) -> str:
        played = done - self._done_at_start
        elapsed = time.monotonic() - self._start
        if played <= 0 or elapsed <= 0:
            return ""
        rate = played / elapsed
        text = f"{rate:.1f}/s"
        if total is not None:
            left = (total - done) / rate
            text += f", {int(left) // 60}:{int(left) % 60:02d} left"
        return text


def make_display(console: Console, plain: bool | None = None) -> LiveDisplay | PlainDisplay:
    """The live display on a terminal, plain lines otherwise (or when asked)."""
    if plain is None:
        plain = not console.is_terminal
    return PlainDisplay(console) if plain else LiveDisplay(console)
