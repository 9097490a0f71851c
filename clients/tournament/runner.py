"""Playing a tournament's schedule on a referee.

Duplicate sets are started whole (every rotation of a deal at once, so no bot
meets a deal it has seen; with fresh deals, which no two matches share, each
match on its own: a person's seat plays one at a time), in schedule order, as long as the tournament's
concurrency and every bot's capacity allow; a set that does not fit waits
while later ones that fit go ahead. Each match is in the store before it
starts and becomes done with its results in one transaction, so a runner
stopped at any point loses nothing: the next run plays what is not done.

Nothing of a set is shown before the whole set is over: the live standings
take a set's results when its last rotation finishes (and the ratings count
only whole sets, store.duplicate_sets).

A match that was in progress when an earlier run stopped is abandoned: its
bots were stopped with that run, so whatever the referee made of it is not a
result, and the referee is told to cancel it. Its bots have seen part of its
deal (their hands, the cards turned up), so its whole set is played again on a
new deal (store.redeal); the set's finished rotations are kept aside, not
counted. With fresh deals only the abandoned match itself is dealt again.

With several referee replicas, each bot plays on every replica (one launched
process each) and its capacity is the sum of theirs; each set is created on
whichever replica the balancing channel picks for its first match (the whole
set on one replica, which seals its twins), waits there if that replica's
streams of its bots are full for the moment, and is followed on that replica.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from croupier.clients.results.luck import Evaluator
from croupier.clients.results.luck_journal import journal_luck, with_luck
from croupier.clients.results.schedule import Deals, DuplicateSet, MatchKey, set_seed
from croupier.clients.results.store import FinishedMatch, MatchRecord, SeatResult, Store, Tournament
from croupier.clients.tournament.config import TournamentConfig
from croupier.clients.tournament.display import Display
from croupier.clients.tournament.referee_client import Replicas, seat_results
from croupier.server.journal import seed_sha256

SetKey = tuple[str, int, int, int]
CHECK_SECONDS = 5.0
"""How often the runner looks at the bots while no match finishes."""
ABANDONED = "abandoned by a stopped tournament run: the next run plays its set again on a new deal"
GONE_SECONDS = 60.0
"""How long a launched bot may stay disconnected before the tournament stops."""


class ScheduleError(Exception):
    """The schedule cannot be played as the bots and settings stand."""


@dataclass(frozen=True, slots=True)
class Entrant:
    """A bot as the runner schedules it."""

    name: str
    bot_id: str
    capacity: int
    """Matches it may play at once, over every replica (each instance, with several)."""
    logs: Mapping[str, Path] = field(default_factory=dict)
    """Where the bot the runner launched for each replica writes; empty for a bot that connects
    by itself."""
    version: str = ""
    instances: tuple[str, ...] = ()
    """With a process per rotation: the bot id of each instance, rotation r played by instance
    r; empty when one bot id plays every rotation."""

    def bot_id_for(self, rotation: int) -> str:
        """Who plays the bot's seat in that rotation of a set."""
        return self.instances[rotation] if self.instances else self.bot_id


class Runner:
    def __init__(
        self,
        config: TournamentConfig,
        store: Store,
        referees: Replicas,
        entrants: Mapping[str, Entrant],
        display: Display,
    ) -> None:
        self.config = config
        self.store = store
        self.referees = referees
        self.entrants = entrants
        self.display = display
        self.stopping = False
        self._stop = asyncio.Event()
        self._unfinished: dict[SetKey, int] = {}
        """Each set's matches not done yet."""
        self._results: dict[SetKey, list[FinishedMatch]] = {}
        """The finished matches of the sets not over yet, kept back from the display."""
        by_id = [(bot_id, e) for e in entrants.values() for bot_id in (e.instances or (e.bot_id,))]
        self._capacities = {bot_id: entrant.capacity for bot_id, entrant in by_id}
        self._names = {bot_id: entrant.name for bot_id, entrant in by_id}
        self._gone_since: dict[tuple[str, str], float] = {}
        """When each (bot, replica) was first seen without a stream."""
        self.luck: dict[str, Evaluator] = {}
        """Each game's luck value function, as the run's schedule committed to it (committed_luck)."""
        self.held: Callable[[Sequence[MatchRecord]], Awaitable[None]] | None = None
        """Awaited before a set's matches are created: a person's seat holds back the matches it
        plays until they have read the last one's result (tournament/cli.py)."""

    def request_stop(self) -> None:
        """Start no more matches; the ones in progress finish and are recorded."""
        self.stopping = True
        self._stop.set()

    async def _hold(self, pending: Sequence[MatchRecord]) -> bool:
        """``held(pending)`` until it returns (True) or a stop is requested (False): a person who
        never comes back to the page must not keep Ctrl-C from ending the run."""
        assert self.held is not None
        holding = asyncio.ensure_future(self.held(pending))
        stop = asyncio.ensure_future(self._stop.wait())
        try:
            await asyncio.wait({holding, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            holding.cancel()
            stop.cancel()
        return not self.stopping

    async def run(self, tournament: Tournament) -> bool:
        """Play every match not done yet; True when the whole tournament is done."""
        if tournament.secret is None:
            raise ScheduleError(
                f"tournament {tournament.name} (run {tournament.run}) was dealt before secret deals; "
                "play it under a new name"
            )
        schedule = self.config.schedule(tournament.secret, tournament.run)
        self.store.schedule(tournament.id, (match for duplicate in schedule for match in duplicate.matches))
        records = await self._redeal_abandoned(tournament, schedule)
        self._unfinished = {d.key: sum(records[m.key].status != "done" for m in d.matches) for d in schedule}
        self._results = {}
        for earlier in self.store.finished(tournament.id):
            if not self._unfinished[earlier.record.key.set_key]:
                self.display.match_done(earlier.record.key.game, earlier.rated_places, replayed=True)
            else:
                self._results.setdefault(earlier.record.key.set_key, []).append(earlier)
        whole = self.config.deals == Deals.DUPLICATE  # fresh deals: no twin, each match on its own
        todo = [
            group
            for duplicate in schedule
            if (pending := [records[m.key] for m in duplicate.matches if records[m.key].status != "done"])
            for group in ([pending] if whole else [[record] for record in pending])
        ]
        for pending in todo:
            self._check_can_start(pending)
        done = len(records) - sum(map(len, todo))
        self.display.begin(f"{tournament.name} (run {tournament.run})", len(records), done)
        running: dict[asyncio.Task[FinishedMatch], MatchRecord] = {}
        busy: Counter[str] = Counter()
        try:
            while todo or running:
                if not self.stopping:
                    for pending in list(todo):
                        if self._fits(pending, len(running), busy):
                            if self.held is not None and not await self._hold(pending):
                                break
                            todo.remove(pending)
                            await self._start(pending, running, busy)
                if not running:
                    break  # stopping, with nothing left in progress
                for match in await self._collect(running, busy):
                    self._publish_when_set_over(match)
        finally:
            await cancel(running)
            self.display.end()
        if todo:
            return False
        self.store.finish_tournament(tournament.id)
        return True

    async def _collect(
        self,
        running: dict[asyncio.Task[FinishedMatch], MatchRecord],
        busy: Counter[str],
        timeout: float = CHECK_SECONDS,
    ) -> list[FinishedMatch]:
        """The matches that finish next (waiting at most ``timeout``), their bots freed; when none
        does, the bots are checked. A referee error ends the run: what is done stays done."""
        finished, _ = await asyncio.wait(running, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if not finished:
            await self._check_connected()
        done = []
        for task in finished:
            busy.subtract(self._seat_ids(running.pop(task)))
            done.append(task.result())
        return done

    async def _redeal_abandoned(
        self, tournament: Tournament, schedule: Sequence[DuplicateSet]
    ) -> dict[MatchKey, MatchRecord]:
        """Call off the matches an earlier run left in progress, and deal their sets again."""
        assert tournament.secret is not None
        records = self.store.matches(tournament.id)
        unknown = await self._cancel_unknown(records)
        abandoned = [
            record for record in records.values() if record.status == "started" or record.key in unknown
        ]
        if not abandoned:
            return records
        for record in abandoned:
            if record.referee_match_id:
                await self.referees.cancel_match(record.replica, record.referee_match_id, ABANDONED)
        fresh = self.config.deals is Deals.FRESH
        sets = {record.key.set_key for record in abandoned}
        for duplicate in schedule:
            if duplicate.key not in sets:
                continue
            again = [
                records[m.key] for m in duplicate.matches if not fresh or records[m.key].status == "started"
            ]
            redeal = max(record.redeal for record in again) + 1
            seeds = [set_seed(tournament.secret, r.key, self.config.deals, redeal) for r in again]
            self.store.redeal(again, redeal, seeds)
        return self.store.matches(tournament.id)

    async def _cancel_unknown(self, records: Mapping[MatchKey, MatchRecord]) -> set[MatchKey]:
        """Call off the live matches an earlier run created but never stored (stopped between
        CreateMatch and its store write): each would wait forever, sealing the set dealt from the
        same seed. They are found by their seeds, which only this run deals; the matches they were
        dealt for are abandoned (their bots may have seen the deal)."""
        by_seed = {seed_sha256(r.seed): r.key for r in records.values() if r.status != "done"}
        found = set()
        for replica, infos in (await self.referees.live_matches()).items():
            for info in infos:
                key = by_seed.get(info.seed_sha256)
                if key is not None:
                    await self.referees.cancel_match(replica, info.match_id, ABANDONED)
                    found.add(key)
        return found

    async def _check_connected(self) -> None:
        """Matches wait for their bots. A launched bot gone this long will not be back (it
        keeps failing: its log says why), so stop rather than wait forever; an external bot
        may yet be restarted by its owner, so say that its matches wait."""
        now = time.monotonic()
        for replica, status in (await self.referees.bots(skip_unreachable=True)).items():
            for entrant in self.entrants.values():
                key = (entrant.name, replica)
                if status[entrant.bot_id].streams:
                    self._gone_since.pop(key, None)
                    continue
                since = self._gone_since.setdefault(key, now)
                log = entrant.logs.get(replica)
                if log is not None and now - since > GONE_SECONDS:
                    raise ScheduleError(
                        f"bot {entrant.name} has been disconnected from {replica} for {GONE_SECONDS:g}s; "
                        f"its log: {log}"
                    )
                if not entrant.logs and since == now:
                    self.display.note(
                        f"external bot {entrant.name} is not connected to {replica}: its matches wait for it"
                    )

    def _publish_when_set_over(self, match: FinishedMatch) -> None:
        """Show a set's results only once its last rotation is over."""
        key = match.record.key.set_key
        self._unfinished[key] -= 1
        self._results.setdefault(key, []).append(match)
        if not self._unfinished[key]:
            for done in self._results.pop(key):
                self.display.match_done(done.record.key.game, done.rated_places)

    def _seat_ids(self, record: MatchRecord) -> list[str]:
        """The bot id playing each seat (the rotation's own instance, with a process per rotation)."""
        return [self.entrants[bot].bot_id_for(record.key.rotation) for bot in record.seats]

    def _capacity(self, bot_id: str) -> int:
        return self._capacities[bot_id]

    def _check_can_start(self, pending: Sequence[MatchRecord]) -> None:
        """A set that could never start (too big for a bot's capacity) is an error now, not a hang.
        (The tournament file is refused when its concurrency is below a set: config.parse.)"""
        key = pending[0].key
        for bot_id, count in Counter(bot for record in pending for bot in self._seat_ids(record)).items():
            capacity = self._capacity(bot_id)
            if count > capacity:
                bot = self._names[bot_id]
                raise ScheduleError(
                    f"bot {bot} plays at most {capacity} match(es) at once, but each {key.game} deal starts "
                    f"{count} together (one per rotation); let it play {count} at once "
                    "(its Hello.max_matches, or capacity in the tournament file)"
                )

    def _fits(self, pending: Sequence[MatchRecord], running: int, busy: Counter[str]) -> bool:
        if running + len(pending) > self.config.concurrency:
            return False
        need = Counter(bot for record in pending for bot in self._seat_ids(record))
        return all(busy[bot] + count <= self._capacity(bot) for bot, count in need.items())

    async def _start(
        self,
        pending: Sequence[MatchRecord],
        running: dict[asyncio.Task[FinishedMatch], MatchRecord],
        busy: Counter[str],
    ) -> None:
        """Create every match of the set, then wait for each in its own task. A set stays on one
        replica: a referee seals a match only against the live twins it holds itself."""
        replica: str | None = None
        for record in pending:
            game = self.config.game(record.key.game)
            seats = list(zip(record.seats, self._seat_ids(record), strict=True))
            replica, created = await self.referees.create_match(game, record.seed, seats, replica)
            match_id = created.match.match_id
            self.store.mark_started(record.id, match_id, created.journal or None, replica)
            started = dataclasses.replace(record, journal=created.journal or None)  # where luck is read
            task = asyncio.create_task(self._finish(started, replica, match_id), name=str(record.key))
            running[task] = record
            busy.update(self._seat_ids(record))

    def deal_is_chance(self) -> bool:
        """Whether a match's luck counts its deal (fresh deals: no twin cancels it)."""
        return self.config.deals == Deals.FRESH

    async def measure_luck(self, record: MatchRecord, results: list[SeatResult]) -> list[SeatResult]:
        """Each seat's luck beside its result, replayed from the match's journal with the value
        function the run committed to (``luck``; none for a journal this machine cannot read: a
        remote referee's)."""
        evaluator = self.luck.get(record.key.game)
        if evaluator is None or not record.journal:
            return results
        fresh = self.deal_is_chance()
        try:
            luck = await asyncio.to_thread(journal_luck, Path(record.journal), evaluator, fresh)
        except Exception as exc:  # a measurement that fails leaves the result plain, never the run
            self.display.note(f"{record.key}: its luck not measured: {exc!r}")
            return results
        return with_luck(results, luck)

    async def _finish(self, record: MatchRecord, replica: str, match_id: str) -> FinishedMatch:
        info = await self.referees.wait_match(replica, match_id)
        versions = [self.entrants[bot].version for bot in record.seats]
        results = await self.measure_luck(record, seat_results(info, record.seats, versions))
        self.store.record_result(record.id, results, None)  # its journal was stored when it started
        return FinishedMatch(record, tuple(results))


async def cancel(running: Mapping[asyncio.Task[FinishedMatch], MatchRecord]) -> None:
    """Stop waiting for the matches in progress (a stopped run: the next one redeals their sets)."""
    for task in running:
        task.cancel()
    for task in running:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
