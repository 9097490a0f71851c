"""Playing a schedule that grows as it is played: duplicate sets one after another, until the
``Plan`` has seen enough (``croupier match --sprt``; the ladder's scheduling can build on it).

The plan gives the set of each deal number in turn and is told of each set once all its rotations
are done; it says when nothing more is to be played. Everything else is the tournament runner's
(runner.py): a set is in the store before it starts and starts whole, as many at once as the
concurrency and the bots' capacities allow, each match done with its results in one transaction;
a set an interrupted run left started is dealt again. Only the sets started are ever scheduled,
so the reveal lists no deal that was not played.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from croupier.clients.results.schedule import DuplicateSet
from croupier.clients.results.store import FinishedMatch, MatchRecord, Store, Tournament
from croupier.clients.tournament.runner import Entrant, Runner, ScheduleError, cancel

if TYPE_CHECKING:
    from croupier.clients.tournament.config import TournamentConfig
    from croupier.clients.tournament.display import Display
    from croupier.clients.tournament.referee_client import Replicas


class Plan(Protocol):
    """What decides which sets are played, and until when."""

    def plan(self, deal: int) -> DuplicateSet | None:
        """The set of deal number ``deal`` (0, 1, 2 ...), or None past the last one there may be."""

    def set_over(self, deal: int, matches: Sequence[FinishedMatch], replayed: bool = False) -> None:
        """Every rotation of the deal's set is done (also for those of earlier runs: ``replayed``)."""

    def settled(self) -> bool:
        """Nothing more needs playing (sets still in progress finish and are recorded)."""


class AdaptiveRunner(Runner):
    """The tournament runner, its sets taken from a ``Plan`` while it wants more."""

    def __init__(
        self,
        config: TournamentConfig,
        store: Store,
        referees: Replicas,
        entrants: Mapping[str, Entrant],
        display: Display,
        *,
        plan: Plan,
    ) -> None:
        super().__init__(config, store, referees, entrants, display)
        self.plan = plan

    async def run(self, tournament: Tournament) -> bool:
        """Play until the plan is settled (True) or the runner is stopped (False)."""
        if tournament.secret is None:
            raise ScheduleError(f"tournament {tournament.name} was dealt before secret deals")
        known = self.store.matches(tournament.id)
        dealt = 1 + max((key.deal for key in known), default=-1)
        schedule = [duplicate for deal in range(dealt) if (duplicate := self.plan.plan(deal)) is not None]
        records = await self._redeal_abandoned(tournament, schedule)
        finished: dict[int, list[FinishedMatch]] = {}
        for match in self.store.finished(tournament.id):
            finished.setdefault(match.record.key.deal, []).append(match)
        sizes = {duplicate.key[3]: len(duplicate.matches) for duplicate in schedule}
        todo: list[list[MatchRecord]] = []
        for duplicate in schedule:
            deal = duplicate.key[3]
            if len(finished.get(deal, ())) == sizes[deal]:
                self._set_over(deal, finished[deal], replayed=True)
            else:
                todo.append([records[m.key] for m in duplicate.matches if records[m.key].status != "done"])
        self.display.begin(
            f"{tournament.name} (run {tournament.run})", len(records), len(records) - len(todo)
        )
        running: dict[asyncio.Task[FinishedMatch], MatchRecord] = {}
        busy: Counter[str] = Counter()
        try:
            while True:
                while not self.stopping and not self.plan.settled():
                    if not todo:
                        duplicate = self.plan.plan(dealt)
                        if duplicate is None:
                            break
                        self.store.schedule(tournament.id, duplicate.matches)
                        stored = self.store.matches(tournament.id)
                        todo.append([stored[m.key] for m in duplicate.matches])
                        sizes[dealt] = len(duplicate.matches)
                        dealt += 1
                    self._check_can_start(todo[0])
                    if not self._fits(todo[0], len(running), busy):
                        break
                    await self._start(todo.pop(0), running, busy)
                if not running:
                    break
                for match in await self._collect(running, busy):
                    deal = match.record.key.deal
                    finished.setdefault(deal, []).append(match)
                    if len(finished[deal]) == sizes[deal]:
                        self._set_over(deal, finished[deal])
        finally:
            await cancel(running)
            self.display.end()
        if not self.plan.settled():
            return False
        self.store.finish_tournament(tournament.id)
        return True

    def _set_over(self, deal: int, matches: Sequence[FinishedMatch], replayed: bool = False) -> None:
        for match in matches:
            self.display.match_done(match.record.key.game, match.rated_places, replayed=replayed)
        self.plan.set_over(deal, matches, replayed)
