"""A standing arena: every registered bot that is connected gets rated duplicate sets, scheduled
where the ratings are least certain (``croupier ladder FILE``).

It is the tournament runner (runner.py) with a schedule that never ends: each next set is chosen
when there is room for one (matchmaking.py), put in the store and started whole, and its result
counts once its last rotation is over, as a tournament's does. What the runner guarantees holds
here: a match is stored before it starts and done with its results in one transaction, so a
ladder killed at any point loses nothing and counts nothing twice; what it left in progress is
abandoned and its set dealt again (runner._redeal_abandoned), and the scheduling resumes from the
sets in the store.

The bots. Each registered bot connected to the referee (every replica) is a candidate; its
identity is NAME@VERSION, a version being each registration of the name in the order the ladder
first saw it connected (``croupier register mybot`` again: mybot@2, whose history starts afresh
while mybot@1's stays). A bot not connected is not seated. No bot is dealt one deal twice: a
set is a deal pool (one deal at two tables of different bots) or one group on fresh deals
(ladder_config.py). A bot that leaves a set, times out or forfeits loses what it left (the
referee places a forfeited seat last); only the arena's own faults void a set (a ladder or
referee restart), which is dealt again on a new deal; forfeits are counted (``Store.forfeits``).
A bot is seated in at most ``concurrent_sets`` sets at once, within the matches its streams
declared (Hello.max_matches), and starts at most ``sets_per_hour``.

Epochs. Each epoch is one run of the ladder's name in the store, with its own secret: every deal
is HMAC-SHA256(secret, set key) (schedule.set_seed). Its SHA-256, with the luck value function of
each game measured (epoch.py), is committed to when the epoch opens
(``DATA/reveals/NAME-EPOCH.commitment.sha256``); after ``epoch_sets`` sets or
``epoch_hours``, no more sets are started in it, and once its sets are over the secret is
revealed (``DATA/reveals/NAME-EPOCH.json``, checked by ``croupier verify FILE --commitment
HASH``) and the next epoch opens. A set voided and waiting for a bot that has not come back by
then is given up: its new deal, never dealt, is in the reveal with no match id.

Luck. Each finished match's journal is replayed with the V the epoch committed to, as the
tournament runner does (Runner.measure_luck), the deal counted as chance (deal_is_chance), and each
seat's luck is stored with its result; with ``luck = true`` the ratings read each set's pairwise
points less it (ratings.set_choices, the pairwise model).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import random
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from croupier.clients.audit import reveal
from croupier.clients.ladder import epoch as epochs
from croupier.clients.ladder.epoch import commitment_path
from croupier.clients.ladder.matchmaking import Fit, Matchmaker, refit
from croupier.clients.ladder.settings import POOL, LadderConfig
from croupier.clients.results.ratings import DEFAULT_MODEL, Model, RatedSet
from croupier.clients.results.schedule import (
    DuplicateSet,
    MatchKey,
    ScheduledMatch,
    duplicate_set,
    seatings,
    set_seed,
)
from croupier.clients.results.sets import Table, evidence
from croupier.clients.results.store import FinishedMatch, MatchRecord, Store, Tournament
from croupier.clients.tournament.display import Display
from croupier.clients.tournament.referee_client import Replicas, seat_results
from croupier.clients.tournament.runner import CHECK_SECONDS, Entrant, Runner, SetKey, cancel

DISCONNECTED = "disconnected"
"""The referee's reason for a seat forfeited by a bot that left (server/timekeeping.py)."""
HOUR = 3600.0


@dataclass(frozen=True, slots=True)
class Candidate:
    """A connected bot as the ladder may seat it."""

    identity: str
    bot_id: str
    capacity: int
    """Matches its streams play at once, over every replica."""


class FitWorker:
    """Each game's ratings fitted in a process of its own: CPU-bound, on the loop (or in a thread,
    holding the interpreter's lock) a fit would hold up the moves and pages served beside it. The
    matchmakers choose on the last fit finished, the sets over since added to it at once."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._running: dict[str, Future[Fit]] = {}

    def refresh(self, makers: Mapping[str, Matchmaker]) -> None:
        """Hand each finished fit to its matchmaker; start a fit where the sets changed since."""
        for game, maker in makers.items():
            future = self._running.get(game)
            if future is not None:
                if not future.done():
                    continue
                del self._running[game]
                done = future.result()
                if done.sets <= len(maker.sets):  # else the sets were read back meanwhile: fit again
                    maker.fitted(done)
            if maker.fit_is_stale:
                if self._pool is None:  # spawned: a forked copy of a process running gRPC is unsafe
                    self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
                self._running[game] = self._pool.submit(refit, list(maker.sets), maker.prior, maker.model)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)


class Ladder(Runner):
    """The ladder's loop, on the runner's ways of starting sets and collecting their results."""

    def __init__(
        self,
        config: LadderConfig,
        store: Store,
        referees: Replicas,
        display: Display,
        data: Path,
        *,
        poll: float = CHECK_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(config.tournament(), store, referees, {}, display)
        self.ladder = config
        self.data = data
        self.poll = poll
        self.clock = clock
        self.entrants: dict[str, Entrant] = {}
        self.makers = {
            game.game: Matchmaker(
                game.seats,
                config.per_bot(game.game),
                config.floor,
                float(config.provisional_width),
                model=Model.PAIRWISE if config.luck else DEFAULT_MODEL,  # corrected points are pairwise
                fits_itself=False,
            )
            for game in config.games
        }
        self._fitter = FitWorker()
        """Each game's ratings are fitted there, off the loop that serves moves and pages."""
        self.candidates: dict[str, Candidate] = {}
        """The bots connected at the last look, by identity."""
        self.sets_done = 0
        """Sets over (counted, or voided) in this session."""
        self.voided_sets = 0
        """Sets voided in this session by the arena's own fault (a referee restart)."""
        self._outlived: set[int] = set()
        """Matches (their store ids) whose referee was down or restarting while they were played."""
        self._pending: list[list[MatchRecord]] = []
        """Sets of the epoch not started yet: voided ones dealt again, waiting for their bots."""
        self._running_sets: Counter[str] = Counter()
        """Sets each identity is seated in now."""
        self._starts: list[tuple[float, tuple[str, ...]]] = []
        """When each set of the last hour started, and who sat at it (for sets_per_hour)."""
        self._unfinished: dict[SetKey, int] = {}
        self._results: dict[SetKey, list[FinishedMatch]] = {}
        self._told: set[str] = set()
        self._epoch_sets: dict[SetKey, list[MatchRecord]] = {}
        """Every set of the epoch, by key."""
        self._versions = {bot_id: version for bot_id, (_, version) in store.versions(config.name).items()}
        """Each registration's version, as the store keeps them."""
        self._committed: dict[str, Any] | None = None
        """The epoch's commitment document (epoch.py): its luck value functions, fixed at its opening."""

    # --- the loop -----------------------------------------------------------------------

    async def run_ladder(self, sets: int | None = None) -> int:
        """Play until stopped (request_stop, or ``sets`` sets over in this session): the number
        of sets over. Matches in progress when it stops are left to the next session (abandoned,
        their sets dealt again), as a tournament's are."""
        epoch: Tournament | None = await self._resume(self._epoch())
        running: dict[asyncio.Task[FinishedMatch], MatchRecord] = {}
        busy: Counter[str] = Counter()
        self.display.begin(f"ladder {self.ladder.name}", 0, 0)
        try:
            while True:
                if sets is not None and self.sets_done >= sets:
                    self.request_stop()
                if epoch is not None and self._over(epoch, running):
                    self._reveal(epoch)
                    epoch = None
                if self.stopping and not running:
                    break
                if not self.stopping:
                    if epoch is None:
                        epoch = await self._resume(self._epoch())
                    await self._look_at_bots()
                    self._fitter.refresh(self.makers)
                    await self._fill(epoch, running, busy)
                if running:
                    assert epoch is not None  # an epoch is revealed only with nothing of it running
                    for match in await self._collect(running, busy, self.poll):
                        self._match_over(epoch, match)
                else:
                    await asyncio.sleep(self.poll)
        finally:
            await cancel(running)
            self._fitter.close()
            self.display.end()
        return self.sets_done

    async def _fill(
        self,
        epoch: Tournament,
        running: dict[asyncio.Task[FinishedMatch], MatchRecord],
        busy: Counter[str],
    ) -> None:
        """Start every set there is room for: voided sets whose bots are back, then new ones
        while the epoch is open."""
        for pending in list(self._pending):
            ready = self._can_seat(pending)
            if ready and self._fits(pending, len(running), busy):
                self._pending.remove(pending)
                await self._start_set(pending, running, busy)
        while not self._closed(epoch):
            chosen = self._choose(len(running), busy)
            if chosen is None:
                break
            pending = self._deal(epoch, *chosen)
            await self._start_set(pending, running, busy)

    def _over(self, epoch: Tournament, running: Mapping[asyncio.Task[FinishedMatch], MatchRecord]) -> bool:
        """The epoch is closed and its sets are over (but those waiting for a bot that is gone)."""
        return self._closed(epoch) and not running and not self._waiting_ready()

    def _choose(self, running: int, busy: Counter[str]) -> tuple[str, tuple[tuple[str, ...], ...]] | None:
        """The next set's game and groups (one per table): the games in turn (the one with fewest
        sets in this epoch first), each asked for its most informative group among the bots free
        to play; a pool's next table is the most informative group of bots not at its first, nor
        of their names (two versions of a name are one owner's)."""
        counts = Counter(records[0].key.game for records in self._epoch_sets.values())
        for game in sorted(self.makers, key=lambda name: (counts[name], name)):
            if running + self.ladder.tables(game) > self.config.concurrency:
                continue
            per_bot = self.ladder.per_bot(game)
            free = [c.identity for c in self.candidates.values() if self._free(c, per_bot, busy)]
            maker = self.makers[game]
            if self.ladder.deals == POOL:
                pool = maker.choose_tables(free, self.ladder.tables(game), self.candidates, _name)
                if pool is not None:
                    return game, pool
                continue
            group = maker.choose(free, present=self.candidates)
            if group is not None:
                maker.seated(group, free, present=self.candidates)
                return game, (group,)
        return None

    def _free(self, candidate: Candidate, per_bot: int, busy: Counter[str]) -> bool:
        """Whether the bot may be seated in one more set now."""
        if self._running_sets[candidate.identity] >= self.ladder.concurrent_sets:
            return False
        if busy[candidate.bot_id] + per_bot > candidate.capacity:
            if candidate.capacity < per_bot and candidate.identity not in self._told:
                self._told.add(candidate.identity)
                self.display.note(
                    f"{candidate.identity} plays {candidate.capacity} match(es) at once, but each set plays "
                    f"{per_bot} together (one per rotation, each on its own deal): it waits until it "
                    f"declares --max-matches {per_bot} (Hello.max_matches)"
                )
            return False
        limit = self.ladder.sets_per_hour
        if limit:
            since = self.clock() - HOUR
            if sum(candidate.identity in seats for at, seats in self._starts if at > since) >= limit:
                return False
        return True

    def _can_seat(self, pending: Sequence[MatchRecord]) -> bool:
        per_bot = self.ladder.per_bot(pending[0].key.game)
        return all(
            bot in self.candidates
            and self._running_sets[bot] < self.ladder.concurrent_sets
            and per_bot <= self.candidates[bot].capacity
            for bot in _bots(pending)
        )

    def _waiting_ready(self) -> list[list[MatchRecord]]:
        """The voided sets dealt again whose bots are all connected: they are played before an
        epoch closes."""
        return [p for p in self._pending if all(bot in self.candidates for bot in _bots(p))]

    def _deal(self, epoch: Tournament, game: str, groups: Sequence[tuple[str, ...]]) -> list[MatchRecord]:
        """A new set in the epoch, on the next deal of the epoch's secret: stored. Fresh: the one
        group in every rotation, each match dealt its own cards. A pool: table t is group t, seated
        as row t of the rotations' design, every table dealt the same cards."""
        assert epoch.secret is not None
        deal = 1 + max((key[3] for key in self._epoch_sets if key[0] == game), default=-1)
        if self.ladder.deals == POOL:
            matches = []
            for table, group in enumerate(groups):
                members = list(group)
                random.Random(f"{epoch.run}:{game}:{deal}:{table}").shuffle(members)
                rows = seatings(members, self.ladder.rotations)
                key = MatchKey(game, 0, 0, deal, table)
                seed = set_seed(epoch.secret, key, self.ladder.dealing)
                matches.append(ScheduledMatch(key, seed, rows[table % len(rows)]))
            duplicate = DuplicateSet(tuple(matches))
        else:
            (group,) = groups
            duplicate = duplicate_set(
                game,
                group,
                0,
                0,
                deal,
                seed=epoch.run,
                secret=epoch.secret,
                rotations=self.ladder.rotations,
                dealing=self.ladder.dealing,
            )
        self.store.schedule(epoch.id, duplicate.matches)
        stored = self.store.matches(epoch.id)
        records = [stored[m.key] for m in duplicate.matches]
        self._epoch_sets[duplicate.key] = records
        return records

    async def _start_set(
        self,
        pending: list[MatchRecord],
        running: dict[asyncio.Task[FinishedMatch], MatchRecord],
        busy: Counter[str],
    ) -> None:
        seats = tuple(sorted(_bots(pending)))
        self._unfinished[pending[0].key.set_key] = len(pending)
        self._running_sets.update(seats)
        now = self.clock()
        self._starts = [(at, bots) for at, bots in self._starts if at > now - HOUR] + [(now, seats)]
        await self._start(pending, running, busy)

    def _match_over(self, epoch: Tournament, match: FinishedMatch) -> None:
        """A match is over; when its set is, it counts: a bot that left, timed out or forfeited
        loses what it left (the referee places a forfeited seat last), its opponents keep their
        results. Only the arena's own fault voids a set: a bot left a match that lived through a
        referee restart (the bots' streams dropped with it); it is dealt again."""
        key = match.record.key.set_key
        self._unfinished[key] -= 1
        self._results.setdefault(key, []).append(match)
        if self._unfinished[key]:
            return
        matches = self._results.pop(key)
        del self._unfinished[key]
        self._running_sets.subtract(_bots([m.record for m in matches]))
        self.sets_done += 1
        restarted = [m for m in matches if m.record.id in self._outlived]
        self._outlived.difference_update(m.record.id for m in matches)
        left = sorted({r.identity for m in restarted for r in m.results if r.note == DISCONNECTED})
        if left:
            self.voided_sets += 1
            self._redeal(epoch, [m.record for m in matches])
            self.display.note(
                f"{', '.join(left)} did not come back to a {key[0]} set after a referee restart: the "
                f"arena's fault, so the set is voided and played again on a new deal "
                f"({self.voided_sets} voided in this session)"
            )
            return
        for done in matches:
            self.display.match_done(key[0], done.rated_places)
        self.makers[key[0]].add(_rated(self.ladder.name, matches, self.ladder.luck))

    def _redeal(self, epoch: Tournament, records: Sequence[MatchRecord]) -> None:
        assert epoch.secret is not None
        stored = self.store.matches(epoch.id)
        current = [stored[r.key] for r in records]
        redeal = max(r.redeal for r in current) + 1
        seeds = [set_seed(epoch.secret, r.key, self.ladder.dealing, redeal) for r in current]
        self.store.redeal(current, redeal, seeds)
        stored = self.store.matches(epoch.id)
        self._pending.append([stored[r.key] for r in current])

    async def _finish(self, record: MatchRecord, replica: str, match_id: str) -> FinishedMatch:
        """As the runner's, each seat's result under the bot's name and version."""
        referee = self.referees.referees.get(replica)
        outages = referee.outages if referee is not None else 0
        info = await self.referees.wait_match(replica, match_id)
        if referee is not None and referee.outages != outages:
            self._outlived.add(record.id)
        names, versions = zip(*(identity.rpartition("@")[::2] for identity in record.seats), strict=True)
        results = await self.measure_luck(record, seat_results(info, names, versions))
        self.store.record_result(record.id, results, None)
        return FinishedMatch(record, tuple(results))

    async def _check_connected(self) -> None:
        """Nothing finished for a while: the ladder looks at its bots each turn anyway."""

    # --- the bots -----------------------------------------------------------------------

    async def _look_at_bots(self) -> None:
        """Which registered bots are connected now (to every replica that answers), each under
        its identity; the runner's tables of ids and capacities follow."""
        status = await self.referees.bots(skip_unreachable=True)
        if not status:
            self.candidates = {}
            return
        replicas = list(status.values())
        found: dict[str, Candidate] = {}
        for bot_id, bot in replicas[0].items():
            if "#" in bot.name or not all(bot_id in r and r[bot_id].streams for r in replicas):
                continue  # a tournament's per-rotation instance, or not connected everywhere
            if bot_id not in self._versions:  # first seen: its version is stored before it plays
                self._versions[bot_id] = self.store.add_version(self.ladder.name, bot_id, bot.name)
            version = self._versions[bot_id]
            identity = f"{bot.name}@{version}"
            capacity = sum(r[bot_id].max_matches or 1 for r in replicas)
            found[identity] = Candidate(identity, bot_id, capacity)
            self.entrants[identity] = Entrant(identity, bot_id, capacity, version=version)
            self._capacities[bot_id] = capacity
            self._names[bot_id] = identity
        for gone in set(self.candidates) - set(found):
            self.display.note(f"{gone} is not connected: not seated until it is back")
        for new in set(found) - set(self.candidates):
            self.display.note(f"{new} is connected")
        self.candidates = found

    # --- epochs -------------------------------------------------------------------------

    def _epoch(self) -> Tournament:
        """The epoch being played: the ladder's latest run, or a new one (a new secret) after it."""
        epoch = self.store.open_tournament(
            self.ladder.name, self.ladder.fingerprint(), self.ladder.settings(), again=True
        )
        assert epoch.secret is not None
        made = epochs.commit(self.data, self.ladder, epoch)  # before its first deal
        self._committed = epochs.committed(self.data, epoch) if made is not None else None
        self.luck = epochs.committed_luck(self._committed, self.display.note)
        if made is not None and made[2]:
            digest, path, _ = made
            self.display.note(
                f"epoch {epoch.run} of {epoch.name}: its commitment (the secret's sha256 and the luck value "
                f"functions) is {digest} ({path}); revealed when the epoch is over: croupier verify REVEAL "
                "--commitment HASH"
            )
        return epoch

    def deal_is_chance(self) -> bool:
        """A pool's table and a fresh match play their deal in one seating: no twin cancels it."""
        return bool(self._committed and self._committed.get("luck_deal"))

    async def _resume(self, epoch: Tournament) -> Tournament:
        """Take up an epoch: what an earlier session left started is called off and dealt again,
        and the ratings' history is read back."""
        records = self.store.matches(epoch.id)
        sets: dict[SetKey, list[MatchRecord]] = {}
        for record in sorted(records.values(), key=lambda r: r.key):
            sets.setdefault(record.key.set_key, []).append(record)
        scheduled = (tuple(ScheduledMatch(r.key, r.seed, r.seats) for r in group) for group in sets.values())
        schedule = [DuplicateSet(matches) for matches in scheduled]
        records = await self._redeal_abandoned(epoch, schedule)
        self._epoch_sets = {key: [records[r.key] for r in group] for key, group in sets.items()}
        self._pending = [
            group for group in self._epoch_sets.values() if all(r.status == "scheduled" for r in group)
        ]
        runs = [run.id for run in self.store.tournaments([self.ladder.name])]
        for game, maker in self.makers.items():
            maker.reset(self.store.duplicate_sets(game, runs, luck=self.ladder.luck))
        since = self.clock() - HOUR
        self._starts = [
            (r.started_at, tuple(sorted(_bots(group))))
            for group in self._epoch_sets.values()
            if (r := group[0]).started_at is not None and r.started_at > since
        ]
        return epoch

    def _closed(self, epoch: Tournament) -> bool:
        """No more new sets in this epoch: it has had its sets, or its time."""
        return (
            len(self._epoch_sets) >= self.ladder.epoch_sets
            or self.clock() - epoch.started_at >= self.ladder.epoch_hours * HOUR
        )

    def _reveal(self, epoch: Tournament) -> None:
        """Every set of the epoch is over: publish its secret and every deal it dealt."""
        self.store.finish_tournament(epoch.id)
        path = reveal.publish(self.store, self.data, epoch, self.ladder.dealing, self._committed)
        self.display.note(
            f"epoch {epoch.run} of {epoch.name} is over: its secret and deals are in {path} "
            f"(croupier verify {path} --commitment {commitment_path(self.data, epoch)})"
        )


def _rated(ladder: str, matches: Sequence[FinishedMatch], luck: bool) -> RatedSet:
    """A set's matches as the ratings read them (Store.duplicate_sets reads them so too); ``luck``:
    with each seat's luck where it was measured (ratings.set_choices reads them corrected)."""
    ordered = sorted(matches, key=lambda m: m.record.key)
    tables = [
        Table(
            m.record.seed, tuple(r.identity for r in sorted(m.results, key=lambda r: r.seat)), m.rated_places
        )
        for m in ordered
    ]
    lucks = tuple({r.identity: r.luck for r in m.results if r.luck is not None} for m in ordered)
    bots = tuple(sorted({bot for t in tables for bot in t.seats}))
    return RatedSet(ladder, bots, evidence(tables), lucks if luck else ())


def _bots(records: Sequence[MatchRecord]) -> set[str]:
    """Every bot seated in a set (a pool's tables hold different ones)."""
    return {bot for record in records for bot in record.seats}


def _name(identity: str) -> str:
    return identity.rpartition("@")[0] or identity
