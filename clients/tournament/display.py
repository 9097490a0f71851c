"""What a running tournament shows: progress, rate, time left and live standings.

On a terminal: a rich progress bar over a standings table, redrawn in place.
Otherwise (a log, a pipe, CI): a plain line now and then. The standings are the
final table's fit (ratings.anchored_fit) of the sets over so far, without its
intervals: a running Elo, order-dependent, showed a bot at 1611 that the table
put at 1749, and one "leading" a game it finished last.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Protocol

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn
from rich.table import Table

from croupier.clients.results.ratings import DEFAULT_MODEL, TIE, Model, Places, RatedSet, Tally, anchored_fit
from croupier.clients.results.ratings_cli import say

PLAIN_EVERY_SECONDS = 5.0
REFIT_SECONDS = 3.0
"""While play goes on, the standings are fitted again at most this often."""
INLINE_SECONDS = 0.005
"""A fit quicker than this runs on the runner's loop; once one is slower, they run in a worker."""


class Display(Protocol):
    def begin(self, title: str, total: int, done: int) -> None:
        """Play starts: ``total`` matches (0: as many as come), ``done`` of them already."""

    def match_done(self, game: str, places: Places, replayed: bool = False) -> None:
        """One more finished match (``replayed``: finished in an earlier session)."""

    def note(self, text: str) -> None:
        """A message worth a line of its own (a bot restarted, the runner stopping)."""

    def end(self) -> None: ...


def standings_fit(matches: Sequence[Places], model: Model) -> dict[str, float]:
    """The final table's ratings of these matches (a worker's job: module level, picklable). The
    fit's point does not depend on how the matches fall into sets, only its intervals do."""
    return anchored_fit([RatedSet("", (), tuple(matches))], model=model)


class Standings:
    """Per game: the finished matches, each bot's pairwise score, and the last fit of them.

    A fit starts when matches were added, at most every ``every`` seconds; on the caller's thread
    while fits take under ``INLINE_SECONDS``, else in a worker process (as the ladder's FitWorker:
    spawned, a forked copy of a process running gRPC is unsafe), whose fit is shown once over.
    ``refresh(final=True)`` fits what is left at once: play is over, the table is the final one."""

    def __init__(
        self,
        model: Model = DEFAULT_MODEL,
        every: float = REFIT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.model = model
        self.matches: dict[str, list[Places]] = {}
        self.tally: dict[str, Tally] = {}
        self.elo: dict[str, dict[str, float]] = {}
        """Each game's last finished fit."""
        self.fitted: dict[str, int] = {}
        """The matches in each game's last finished fit."""
        self._every, self._clock = every, clock
        self._last = -float("inf")
        self._slow = False
        self._pool: ProcessPoolExecutor | None = None
        self._running: dict[str, tuple[int, Future[dict[str, float]]]] = {}

    def add(self, game: str, places: Places) -> None:
        self.matches.setdefault(game, []).append(dict(places))
        self.tally.setdefault(game, Tally()).add(places)

    def refresh(self, final: bool = False) -> None:
        """Show the fits the worker finished; start the fits due (``final``: all, here, now)."""
        for game, (count, future) in list(self._running.items()):
            if future.done() or final:
                del self._running[game]
                self._show(game, count, future.result())
        stale = [game for game, matches in self.matches.items() if self.fitted.get(game) != len(matches)]
        if final:
            for game in stale:
                self._show(game, len(self.matches[game]), standings_fit(self.matches[game], self.model))
            self.close()
            return
        stale = [game for game in stale if game not in self._running]
        if not stale or self._clock() - self._last < self._every:
            return
        self._last = self._clock()
        for game in stale:
            matches = list(self.matches[game])
            if self._slow:
                if self._pool is None:
                    self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
                self._running[game] = (len(matches), self._pool.submit(standings_fit, matches, self.model))
            else:
                start = time.perf_counter()
                self._show(game, len(matches), standings_fit(matches, self.model))
                self._slow = time.perf_counter() - start > INLINE_SECONDS

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def _show(self, game: str, count: int, elo: dict[str, float]) -> None:
        # replaced whole: a live display's refresh thread may be reading the old one
        self.elo, self.fitted = {**self.elo, game: elo}, {**self.fitted, game: count}

    def ranked(self, game: str) -> list[tuple[str, float, float, int]]:
        """(bot, fitted Elo, score share, results), best first (as the final table orders them)."""
        elo, tally = self.elo[game], self.tally[game]
        rows = []
        for bot in elo:
            points, games = tally.score(bot)
            rows.append((bot, elo[bot], points / games if games else 0.0, games))
        return sorted(rows, key=lambda row: (-round(row[1] / TIE), row[0]))

    def table(self) -> Table:
        table = Table(title="live standings (the final table's fit, no intervals)", title_justify="left")
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

    def __init__(self, console: Console, model: Model = DEFAULT_MODEL) -> None:
        self.console = console
        self.standings = Standings(model)
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
        self.standings.refresh()
        self._live.start()

    def match_done(self, game: str, places: Places, replayed: bool = False) -> None:
        self.standings.add(game, places)
        if not replayed:
            self.standings.refresh()
        if not replayed and self._task is not None:
            self.progress.advance(self._task)
            done = int(self.progress.tasks[0].completed)
            self.progress.update(self._task, rate=self._clock.text(done))

    def note(self, text: str) -> None:
        say(self.console, text)

    def end(self) -> None:
        self.standings.refresh(final=True)
        self._live.stop()


class PlainDisplay:
    """Progress as plain lines, for logs and pipes: every few seconds and at every tenth."""

    def __init__(self, console: Console, model: Model = DEFAULT_MODEL) -> None:
        self.console = console
        self.standings = Standings(model)
        self._title = ""
        self._total = self._done = 0
        self._last_line = 0.0
        self._last_tenth = 0
        self._clock = _Rate()

    def begin(self, title: str, total: int, done: int) -> None:
        self._title, self._total, self._done = title, total, done
        self._clock.start(done)
        self._last_tenth = self._tenth()
        self.standings.refresh()
        self._line()

    def match_done(self, game: str, places: Places, replayed: bool = False) -> None:
        self.standings.add(game, places)
        if replayed:
            return
        self.standings.refresh()
        self._done += 1
        if self._tenth() > self._last_tenth or time.monotonic() - self._last_line >= PLAIN_EVERY_SECONDS:
            self._last_tenth = self._tenth()
            self._line()

    def note(self, text: str) -> None:
        say(self.console, text)

    def end(self) -> None:
        self.standings.refresh(final=True)

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


def make_display(
    console: Console, plain: bool | None = None, model: Model = DEFAULT_MODEL
) -> LiveDisplay | PlainDisplay:
    """The live display on a terminal, plain lines otherwise (or when asked); its standings fit
    ``model``, as the final tables do."""
    if plain is None:
        plain = not console.is_terminal
    return PlainDisplay(console, model) if plain else LiveDisplay(console, model)
