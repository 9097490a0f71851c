"""What ``croupier match --sprt`` keeps of a test as its sets finish: the sets read into the
sequential test (``SprtPlan``), and the live line a person watches (``LiveLine``)."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from croupier.clients.results.schedule import DuplicateSet, duplicate_set, rotation_count
from croupier.clients.results.sets import grid, pair_points, set_score
from croupier.clients.results.sprt import NormalProgress, Progress, Sprt, Status, Verdict
from croupier.clients.results.sprt_estimate import simulated

if TYPE_CHECKING:
    from rich.console import Console

    from croupier.clients.results.luck import Evaluator
    from croupier.clients.results.ratings import Places
    from croupier.clients.results.store import FinishedMatch
    from croupier.clients.tournament.config import TournamentConfig

EXIT_H1, EXIT_H0, EXIT_INCONCLUSIVE, EXIT_INTERRUPTED = 0, 3, 4, 130
LIVE_SECONDS = 2.0
"""How often the live line is printed when it cannot be redrawn in place."""


class SprtPlan:
    """The sets of the test, dealt one by one while it has not decided (``adaptive.Plan``)."""

    def __init__(
        self,
        test: Sprt,
        config: TournamentConfig,
        new: str,
        old: str,
        max_sets: int,
        secret: bytes,
        luck: Evaluator | None = None,
    ) -> None:
        self.config = config
        self.game = config.games[0]
        self.group = config.bots_of(self.game.game)
        self.new, self.old = new, old
        self.max_sets = max_sets
        self.secret = secret
        self.rotations = rotation_count(self.game.seats, config.rotations)
        self.evaluator = luck
        """With the luck correction: each set is read less NEW's luck against OLD, kept in the store
        with every result (so a resumed test reads its earlier sets as it read them)."""
        self.progress: Progress | NormalProgress = (
            Progress(test, grid(self.rotations)) if luck is None else NormalProgress(test)
        )
        self.scores: dict[int, float] = {}
        """Each finished set's score, by deal number; read in deal order, up to the first gap."""
        self.pairs: dict[int, list[float] | None] = {}
        """Each finished set's game pairs, NEW's points in each (None: the seatings make no pairs)."""
        self.pentanomial: list[int] | None = [0] * 5
        """The pairs of the sets the test read, by NEW's points in them: 0, 1/2, 1, 3/2, 2."""
        self.games = 0
        """Games played to the end, the test's and those of sets it no longer needed."""
        self.played_here = 0
        """Games played by this process (not found done on resuming): the speed's."""
        self.began = time.monotonic()
        self.listeners: list[Any] = []

    @property
    def status(self) -> Status:
        return self.progress.status

    @property
    def counted(self) -> int:
        """The games of the sets the test has read."""
        return self.status.sets * self.rotations

    def games_per_second(self) -> float:
        return self.played_here / max(time.monotonic() - self.began, 1e-9)

    def plan(self, deal: int) -> DuplicateSet | None:
        if deal >= self.max_sets:
            return None
        return duplicate_set(
            self.game.game, self.group, 0, 0, deal,
            seed=self.config.seed, secret=self.secret, rotations=self.config.rotations,
        )  # fmt: skip

    def set_over(self, deal: int, matches: Sequence[FinishedMatch], replayed: bool = False) -> None:
        """Set ``deal`` is over (``replayed``: it was found so on resuming)."""
        places: list[Places] = [match.places for match in matches]
        luck = 0.0
        if self.evaluator is not None:
            luck = sum(luck_of(match, self.new) for match in matches) / len(matches)
        self.scores[deal] = set_score(places, self.new, self.old) - luck
        self.pairs[deal] = pair_points_of(matches, self.new, self.old)
        self.games += len(matches)
        if not replayed:
            self.played_here += len(matches)
        while self.status.verdict is Verdict.CONTINUE and self.status.sets in self.scores:
            pairs = self.pairs[self.status.sets]
            if pairs is None or self.pentanomial is None:
                self.pentanomial = None
            else:
                for points in pairs:
                    self.pentanomial[round(2 * points)] += 1
            self.progress.add(self.scores[self.status.sets])
        for listener in self.listeners:
            listener()

    def settled(self) -> bool:
        return self.status.verdict is not Verdict.CONTINUE or self.status.sets >= self.max_sets


class LiveLine:
    """The test as it stands, on one line: redrawn in place on a terminal, else printed now and then.
    Also the tournament runner's display (``display.Display``) on the embedded referee."""

    def __init__(self, console: Console, plan: SprtPlan, new: str, old: str, plain: bool) -> None:
        self.console, self.plan = console, plan
        self.new, self.old = new, old
        self.redraw = console.is_terminal and not plain
        self.printed = 0.0
        plan.listeners.append(self.show)

    def text(self) -> str:
        return line(self.plan)

    def show(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.redraw:
            print("\r\x1b[2K" + self.text(), end="", flush=True)
        elif force or now - self.printed >= LIVE_SECONDS:
            print(self.text(), flush=True)
            self.printed = now

    def begin(self, title: str, total: int, done: int) -> None:
        pass

    def match_done(self, game: str, places: Places, replayed: bool = False) -> None:
        pass  # the plan tells of whole sets

    def note(self, text: str) -> None:
        if self.redraw:
            print("\r\x1b[2K", end="")
        print(text, flush=True)

    def end(self) -> None:
        if self.redraw:
            print(flush=True)


def line(plan: SprtPlan) -> str:
    """The games and sets the test read, the LLR and its bounds, the Elo estimate and interval, the
    set scores' spread, the sets counted by their points (fishtest's pentanomial for pairs), and
    the games played per second."""
    status = plan.status
    return (
        f"{plan.counted} games, {status.sets} sets | LLR {status.llr:+.2f} ({status.lower:+.2f}, "
        f"{status.upper:+.2f}) | Elo {elo_text(status.elo)} "
        f"[{elo_text(status.low)}, {elo_text(status.high)}] | "
        f"set score {status.mean:.3f} ± {status.spread:.3f} | {points(plan)} | "
        f"{plan.games_per_second():.1f} games/s"
    )


def estimate(plan: SprtPlan) -> str:
    """The verdict's Elo line: read from where the test stopped (the live line's, the mean's alone,
    is biased by the stop): simulations of the test itself on the sets' scores (sprt_estimate.py);
    on luck-corrected scores, off the grid, the Brownian reading."""
    progress = plan.progress
    stopped = (
        progress.stopped()
        if isinstance(progress, NormalProgress)
        else simulated(progress.test, progress.counts, progress.grid)
    )
    return (
        f"Elo of {plan.new} over {plan.old}: {elo_text(stopped.elo)} "
        f"(95% interval {elo_text(stopped.low)} to "
        f"{elo_text(stopped.high)}, read from where the test stopped), LOS {stopped.los:.1%}"
    )


def points(plan: SprtPlan) -> str:
    """The pairs of games (NEW and OLD swapped, the other seats alike) by NEW's points in them, as
    fishtest prints them, ``Ptnml(0-2)``; where the seatings make no such pairs (four seats or more),
    the sets by NEW's points in them."""
    if plan.pentanomial is not None:
        return f"Ptnml(0-2) {', '.join(map(str, plan.pentanomial))}"
    if not isinstance(plan.progress, Progress):
        return "sets read less their luck"  # corrected scores fall between the points
    return f"sets by points 0, 1/2 ... {plan.rotations}: {', '.join(map(str, plan.progress.counts))}"


def pair_points_of(matches: Sequence[FinishedMatch], new: str, old: str) -> list[float] | None:
    """NEW's points against OLD in each pair of the set's games whose seatings differ by NEW and OLD
    alone (0 to 2); None if some game has no such twin."""
    swap = {new: old, old: new}
    by_seats = {match.record.seats: match for match in matches}
    pairs = []
    for seats, match in by_seats.items():
        twin = by_seats.get(tuple(swap.get(bot, bot) for bot in seats))
        if twin is None or len(by_seats) != len(matches):
            return None
        if seats < twin.record.seats:  # each pair once
            pairs.append(sum(pair_points(m.places[new], m.places[old]) for m in (match, twin)))
    return pairs


def luck_of(match: FinishedMatch, bot: str) -> float:
    """The luck ``bot`` was measured to have in ``match`` against its rival (0 where none was: the
    set's mean stays right, only its spread is the plain one)."""
    found = next((result.luck for result in match.results if result.bot == bot), None)
    return 0.0 if found is None else found


def elo_text(value: float) -> str:
    return f"{value:+.1f}" if math.isfinite(value) else ("+inf" if value > 0 else "-inf")
