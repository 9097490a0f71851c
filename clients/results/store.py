"""The results database: tournaments, matches, per-seat results (SQLite, WAL).

The one module that speaks SQL. "Nothing lost, none counted twice" rests on
two rules: every match is written as scheduled, under its stable key, before
it starts; and it becomes done together with its results in one transaction
that only succeeds once. An interrupted runner finds the unfinished matches
and plays them again; a result that arrives twice is ignored.

Calls are synchronous and short (one small transaction each); the runner
makes them from its event loop.

Over 600 lines, kept whole: every table's SQL (tournaments, matches, results,
voided sets, a ladder's versions) is here and nowhere else, so that the one
module that changes with the schema is this one.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from croupier.clients.results.ratings import Places, RatedSet
from croupier.clients.results.schedule import SECRET_BYTES, MatchKey, ScheduledMatch
from croupier.clients.results.sets import Table, evidence
from croupier.server.datafiles import FILE_MODE, FOLDER_MODE, open_private

SCHEMA_VERSION = 5
IN_PROCESS = "in-process"
"""The referee recorded for a match played without one (clients/author/inprocess.py): it has no journal."""

_SCHEMA = """
CREATE TABLE tournaments (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    run INTEGER NOT NULL,               -- 1, then 2, 3 ... each time it is played again
    fingerprint TEXT NOT NULL,          -- of what decides the schedule: a changed file cannot resume
    config TEXT NOT NULL,               -- the settings, as JSON
    started_at REAL NOT NULL,
    finished_at REAL,
    secret TEXT,                        -- hex; every deal seed derives from it (NULL before version 3)
    revealed_at REAL,                   -- when the secret was published (after the last match)
    UNIQUE (name, run)
);
CREATE TABLE matches (
    id INTEGER PRIMARY KEY,
    tournament_id INTEGER NOT NULL REFERENCES tournaments (id),
    game TEXT NOT NULL,
    round INTEGER NOT NULL,
    grp INTEGER NOT NULL,
    deal INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    seats TEXT NOT NULL,                -- JSON list of bot names, seat 0 first
    status TEXT NOT NULL CHECK (status IN ('scheduled', 'started', 'done')),
    referee_match_id TEXT,
    replica TEXT NOT NULL DEFAULT '',   -- the referee holding it (its advertised address); '' = unknown
    journal TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    started_at REAL,
    finished_at REAL,
    redeal INTEGER NOT NULL DEFAULT 0,  -- times its set was dealt again after an abandoned match
    UNIQUE (tournament_id, game, round, grp, deal, rotation)
);
CREATE TABLE results (
    match_id INTEGER NOT NULL REFERENCES matches (id),
    seat INTEGER NOT NULL,
    bot TEXT NOT NULL,
    score INTEGER NOT NULL,
    place INTEGER NOT NULL,             -- 1 best; equal results share a place
    timeouts INTEGER NOT NULL,
    refusals INTEGER NOT NULL,          -- actions the referee refused
    forfeited INTEGER NOT NULL,         -- 0 or 1
    note TEXT NOT NULL DEFAULT '',      -- why it forfeited, if it did
    version TEXT NOT NULL DEFAULT '',   -- the bot's version ('' before schema version 3)
    luck REAL,                          -- what chance gave the seat after the deal (NULL: not measured)
    PRIMARY KEY (match_id, seat)
);
CREATE INDEX matches_by_game ON matches (game, status);
"""
_VOIDED = """
CREATE TABLE voided (                   -- matches of a set dealt again: kept, never counted
    id INTEGER PRIMARY KEY,
    match_id INTEGER NOT NULL REFERENCES matches (id),
    redeal INTEGER NOT NULL,            -- the deal it was played on (the match's redeal then)
    seed INTEGER NOT NULL,
    status TEXT NOT NULL,
    referee_match_id TEXT,
    replica TEXT NOT NULL,
    journal TEXT,
    results TEXT NOT NULL,              -- JSON list of its seats' results, if it finished
    voided_at REAL NOT NULL
);
"""
_SCHEMA += _VOIDED
_VERSIONS = """
CREATE TABLE ladder_versions (          -- a ladder's bots: each registration of a name is a version
    ladder TEXT NOT NULL,
    bot_id TEXT NOT NULL,               -- the referee's id of that registration
    name TEXT NOT NULL,
    version TEXT NOT NULL,              -- 1, 2 ... in the order the ladder first saw them
    first_seen REAL NOT NULL,
    PRIMARY KEY (ladder, bot_id),
    UNIQUE (ladder, name, version)
);
"""
_SCHEMA += _VERSIONS
_MIGRATIONS = {
    # 1 -> 2: which referee replica holds each match; '' for the matches of a runner that did not say
    1: "ALTER TABLE matches ADD COLUMN replica TEXT NOT NULL DEFAULT ''",
    # 2 -> 3: secret deals (older runs keep NULL: dealt from the file's seed, nothing to verify),
    # sets dealt again after an abandoned match, bot versions
    2: "ALTER TABLE tournaments ADD COLUMN secret TEXT; "
    "ALTER TABLE tournaments ADD COLUMN revealed_at REAL; "
    "ALTER TABLE matches ADD COLUMN redeal INTEGER NOT NULL DEFAULT 0; "
    "ALTER TABLE results ADD COLUMN version TEXT NOT NULL DEFAULT ''; " + _VOIDED,
    # 3 -> 4: ladders (croupier ladder) and their bots' versions
    3: _VERSIONS,
    # 4 -> 5: each seat's luck, where it was measured (results/luck.py), so a resumed test reads it
    4: "ALTER TABLE results ADD COLUMN luck REAL",
}
"""From each older schema version to the next."""


class StoreError(Exception):
    """A database this version cannot use, or a tournament that cannot resume."""


@dataclass(frozen=True, slots=True)
class SeatResult:
    """One seat's line in a finished match."""

    seat: int
    bot: str
    score: int
    place: int
    timeouts: int = 0
    refusals: int = 0
    forfeited: bool = False
    note: str = ""
    version: str = ""
    luck: float | None = None
    """What chance gave this seat after the deal against the seat it was measured with (results/luck.py,
    ``LuckMeter.seat_luck``); None where it was not measured."""

    @property
    def identity(self) -> str:
        """Whom ratings credit: the bot's name with its version (config.BotConfig.identity)."""
        return f"{self.bot}@{self.version}" if self.version else self.bot


@dataclass(frozen=True, slots=True)
class Tournament:
    id: int
    name: str
    run: int
    finished: bool
    secret: bytes | None = None
    """What every deal seed of this run derives from; None for a run from before schema 3."""
    revealed: bool = False
    started_at: float = 0.0


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """A match as the database knows it."""

    id: int
    key: MatchKey
    seed: int
    seats: tuple[str, ...]
    status: str
    referee_match_id: str | None
    journal: str | None
    attempts: int
    replica: str = ""
    """The referee holding the match, as it advertises itself; '' if not known."""
    redeal: int = 0
    """Times its set was dealt again (each time on a new deal) after an abandoned match."""
    started_at: float | None = None
    """When the referee accepted it (None: not started, or voided)."""


@dataclass(frozen=True, slots=True)
class FinishedMatch:
    record: MatchRecord
    results: tuple[SeatResult, ...]

    @property
    def places(self) -> Places:
        return {result.bot: result.place for result in self.results}

    @property
    def rated_places(self) -> Places:
        """Places under each bot's identity (name and version), as ratings keep them."""
        return {result.identity: result.place for result in self.results}


def _create_private(path: Path) -> None:
    """``path`` created empty and 0600 unless it exists; an existing file is never opened here."""
    try:
        os.close(open_private(path, os.O_RDWR | os.O_EXCL))
    except FileExistsError:
        return


class Store:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
        # The tournament's secret and its seeds are in it: its owner's only (SQLite gives its WAL
        # files the database's mode). Created here only if missing: closing any descriptor on an
        # open database drops every POSIX lock this process holds on it (fcntl's rule), and a reader
        # process that then finds it unlocked takes itself for the last one and deletes the WAL
        # under the writer, and with it every commit not yet checkpointed.
        _create_private(self.path)
        self.path.chmod(FILE_MODE)
        self._lock: TextIO | None = None
        self._db = sqlite3.connect(self.path, isolation_level=None)  # transactions are explicit
        self._db.execute("PRAGMA journal_mode = WAL")
        # WAL with NORMAL: a commit survives a crash of the process (not of the machine); commits stay fast
        self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.execute("PRAGMA foreign_keys = ON")
        self._db.execute("PRAGMA busy_timeout = 5000")
        self._migrate()

    def close(self) -> None:
        self._db.close()
        if self._lock is not None:
            self._lock.close()  # closing the file releases the lock

    def lock_for_running(self) -> None:
        """Claim the database for one runner at a time (two would play the same matches twice
        over, only one result counting); readers such as ``croupier ratings`` are not held up.
        The lock goes with the process, however it ends."""
        lock = (self.path.parent / f"{self.path.name}.lock").open("a+")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            holder = lock.read().strip() or "another process"
            lock.close()
            raise StoreError(f"{self.path} is in use by another tournament runner ({holder})") from None
        lock.truncate(0)
        lock.write(f"pid {os.getpid()}\n")
        lock.flush()
        self._lock = lock

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _migrate(self) -> None:
        (version,) = self._db.execute("PRAGMA user_version").fetchone()
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} has schema version {version}; this croupier knows up to {SCHEMA_VERSION}"
            )
        if version == 0:
            if self._db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                raise StoreError(f"{self.path} is an SQLite database but not a croupier results database")
            self._db.executescript(
                f"BEGIN IMMEDIATE; {_SCHEMA}; PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
            )
            return
        for older in range(version, SCHEMA_VERSION):
            self._db.executescript(
                f"BEGIN IMMEDIATE; {_MIGRATIONS[older]}; PRAGMA user_version = {older + 1}; COMMIT;"
            )

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    def _snapshot(self) -> _Transaction:
        """One read transaction: its statements see the database as it was at the first one, however
        a writer commits in between (two autocommit reads could see a match done without its results)."""
        return _Transaction(self._db, "BEGIN DEFERRED")

    # --- tournaments ---------------------------------------------------------------

    def open_tournament(
        self, name: str, fingerprint: str, config: Mapping[str, Any], again: bool, secret: bytes | None = None
    ) -> Tournament:
        """The tournament's latest run, resumed; or a new run if there is none, or if
        ``again`` and the latest one finished. A changed schedule cannot resume. A new run's deals
        derive from a secret drawn from the OS (``secret``: given, for croupier match's --seed)."""
        with self._transaction():
            row = self._db.execute(
                "SELECT id, run, fingerprint, finished_at FROM tournaments WHERE name = ? "
                "ORDER BY run DESC LIMIT 1",
                (name,),
            ).fetchone()
            if row is not None:
                tournament_id, run, stored_fingerprint, finished_at = row
                if stored_fingerprint != fingerprint and (finished_at is None or not again):
                    raise StoreError(
                        f"tournament {name!r} (run {run}) in {self.path} was started with other games, "
                        "bots, rounds or seed; give the changed tournament a new name"
                        + (" or finish the old one" if finished_at is None else " or play it --again")
                    )
                if finished_at is None or not again:
                    return self._tournament(tournament_id)
            run = 1 if row is None else row[1] + 1
            # a new run, a new secret: from the OS, never from the file
            secret = secret or secrets.token_bytes(SECRET_BYTES)
            cursor = self._db.execute(
                "INSERT INTO tournaments (name, run, fingerprint, config, started_at, secret) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (name, run, fingerprint, json.dumps(config, sort_keys=True), time.time(), secret.hex()),
            )
            assert cursor.lastrowid is not None
            return self._tournament(cursor.lastrowid)

    def finish_tournament(self, tournament_id: int) -> None:
        with self._transaction():
            self._db.execute(
                "UPDATE tournaments SET finished_at = ? WHERE id = ? AND finished_at IS NULL",
                (time.time(), tournament_id),
            )

    def reveal(self, tournament_id: int) -> None:
        """Mark the secret published; only a finished run's (its deals are all played)."""
        with self._transaction():
            self._db.execute(
                "UPDATE tournaments SET revealed_at = ? "
                "WHERE id = ? AND finished_at IS NOT NULL AND revealed_at IS NULL",
                (time.time(), tournament_id),
            )

    def tournaments(self, names: Sequence[str] = ()) -> list[Tournament]:
        """Every run of every tournament (or of those ``names``), oldest first."""
        rows = self._db.execute(f"SELECT {_TOURNAMENT_COLUMNS} FROM tournaments ORDER BY id").fetchall()
        found = [_tournament(row) for row in rows]
        return [t for t in found if not names or t.name in names]

    def _tournament(self, tournament_id: int) -> Tournament:
        row = self._db.execute(
            f"SELECT {_TOURNAMENT_COLUMNS} FROM tournaments WHERE id = ?", (tournament_id,)
        ).fetchone()
        return _tournament(row)

    # --- matches ---------------------------------------------------------------------

    def schedule(self, tournament_id: int, matches: Iterable[ScheduledMatch]) -> None:
        """Record the matches as scheduled; the ones already known are left as they are."""
        with self._transaction():
            self._db.executemany(
                "INSERT OR IGNORE INTO matches "
                "(tournament_id, game, round, grp, deal, rotation, seed, seats, status) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'scheduled')",
                [(tournament_id, *_key_columns(m.key), m.seed, json.dumps(list(m.seats))) for m in matches],
            )

    def matches(self, tournament_id: int) -> dict[MatchKey, MatchRecord]:
        rows = self._db.execute(
            f"SELECT {_MATCH_COLUMNS} FROM matches WHERE tournament_id = ?", (tournament_id,)
        )
        return {record.key: record for record in map(_match_record, rows)}

    def mark_started(
        self, match_id: int, referee_match_id: str, journal: str | None, replica: str = ""
    ) -> None:
        """The referee accepted the match: remember its id (a result can be fetched again), which
        referee replica holds it and its journal."""
        with self._transaction():
            self._db.execute(
                "UPDATE matches SET status = 'started', referee_match_id = ?, replica = ?, journal = ?, "
                "started_at = ?, attempts = attempts + 1 WHERE id = ? AND status != 'done'",
                (referee_match_id, replica, journal, time.time(), match_id),
            )

    def mark_failed(self, match_id: int, error: str) -> None:
        """The match could not be played to a result (referee lost it): it will be played again."""
        with self._transaction():
            self._db.execute(
                "UPDATE matches SET status = 'scheduled', referee_match_id = NULL, replica = '', "
                "last_error = ? WHERE id = ? AND status != 'done'",
                (error, match_id),
            )

    def redeal(self, set_records: Sequence[MatchRecord], redeal: int, seeds: Sequence[int]) -> None:
        """Deal a set again, on new ``seeds`` (one per match): an abandoned match's bots have seen
        its deal, so its set is replayed on cards nobody has seen. What the set's matches were and
        did is kept in ``voided``, never counted."""
        now = time.time()
        with self._transaction():
            for record, seed in zip(set_records, seeds, strict=True):
                (status, replica) = self._db.execute(
                    "SELECT status, replica FROM matches WHERE id = ?", (record.id,)
                ).fetchone()
                if status == "scheduled":  # never dealt: only its seed changes
                    self._db.execute(
                        "UPDATE matches SET seed = ?, redeal = ? WHERE id = ?", (seed, redeal, record.id)
                    )
                    continue
                results = self._db.execute(
                    "SELECT seat, bot, score, place, timeouts, refusals, forfeited, note, version "
                    "FROM results WHERE match_id = ? ORDER BY seat",
                    (record.id,),
                ).fetchall()
                self._db.execute(
                    "INSERT INTO voided (match_id, redeal, seed, status, referee_match_id, replica, journal, "
                    "results, voided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        record.id,
                        record.redeal,
                        record.seed,
                        status,
                        record.referee_match_id,
                        replica,
                        record.journal,
                        json.dumps(results),
                        now,
                    ),
                )
                self._db.execute("DELETE FROM results WHERE match_id = ?", (record.id,))
                self._db.execute(
                    "UPDATE matches SET status = 'scheduled', seed = ?, redeal = ?, "
                    "referee_match_id = NULL, replica = '', journal = NULL, started_at = NULL, "
                    "finished_at = NULL WHERE id = ?",
                    (seed, redeal, record.id),
                )

    def voided(self, tournament_id: int) -> list[tuple[MatchRecord, int]]:
        """The matches set aside when their sets were dealt again, each with the redeal it had."""
        rows = self._db.execute(
            "SELECT m.id, m.game, m.round, m.grp, m.deal, m.rotation, v.seed, m.seats, v.status, "
            "v.referee_match_id, v.journal, m.attempts, v.replica, v.redeal, NULL "
            "FROM voided v JOIN matches m ON m.id = v.match_id WHERE m.tournament_id = ? ORDER BY v.id",
            (tournament_id,),
        )
        return [((record := _match_record(row)), record.redeal) for row in rows]

    def record_result(self, match_id: int, results: Sequence[SeatResult], journal: str | None) -> bool:
        """Mark the match done with its results, atomically; False if it was done already."""
        with self._transaction():
            return self._record(match_id, results, journal)

    def record_set(self, matches: Sequence[tuple[int, Sequence[SeatResult]]]) -> list[bool]:
        """Mark a set's matches done with their results (match id, results) in one transaction: a run
        killed in between leaves none of them done, never part of the set; each False if done already."""
        with self._transaction():
            return [self._record(match_id, results, None) for match_id, results in matches]

    def _record(self, match_id: int, results: Sequence[SeatResult], journal: str | None) -> bool:
        cursor = self._db.execute(
            "UPDATE matches SET status = 'done', finished_at = ?, journal = coalesce(?, journal) "
            "WHERE id = ? AND status != 'done'",
            (time.time(), journal, match_id),
        )
        if cursor.rowcount == 0:
            return False
        self._db.executemany(
            "INSERT INTO results "
            "(match_id, seat, bot, score, place, timeouts, refusals, forfeited, note, version, luck) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    match_id,
                    r.seat,
                    r.bot,
                    r.score,
                    r.place,
                    r.timeouts,
                    r.refusals,
                    int(r.forfeited),
                    r.note,
                    r.version,
                    r.luck,
                )
                for r in results
            ],
        )
        return True

    # --- results ----------------------------------------------------------------------

    def finished(self, tournament_id: int | None = None, game: str | None = None) -> list[FinishedMatch]:
        """Finished matches with their results, in the order they finished."""
        where: list[str] = ["m.status = 'done'"]
        params: list[int | str] = []
        if tournament_id is not None:
            where.append("m.tournament_id = ?")
            params.append(tournament_id)
        if game is not None:
            where.append("m.game = ?")
            params.append(game)
        with self._snapshot():
            rows = self._db.execute(
                f"SELECT {_MATCH_COLUMNS} FROM matches m WHERE {' AND '.join(where)} "
                "ORDER BY m.finished_at, m.id",
                params,
            ).fetchall()
            result_rows = self._db.execute(
                "SELECT r.match_id, r.seat, r.bot, r.score, r.place, r.timeouts, r.refusals, r.forfeited, "
                "r.note, r.version, r.luck FROM results r JOIN matches m ON m.id = r.match_id "
                f"WHERE {' AND '.join(where)} ORDER BY r.match_id, r.seat",
                params,
            ).fetchall()
        records = [_match_record(row) for row in rows]
        seat_rows: dict[int, list[SeatResult]] = {record.id: [] for record in records}
        for (
            match_id,
            seat,
            bot,
            score,
            place,
            timeouts,
            refusals,
            forfeited,
            note,
            version,
            luck,
        ) in result_rows:
            seat_rows[match_id].append(
                SeatResult(seat, bot, score, place, timeouts, refusals, bool(forfeited), note, version, luck)
            )
        return [FinishedMatch(record, tuple(seat_rows[record.id])) for record in records]

    def games(self, tournament_ids: Sequence[int] | None = None) -> list[str]:
        """The games with at least one finished match (in those tournament runs)."""
        where, params = _runs(tournament_ids)
        rows = self._db.execute(
            f"SELECT DISTINCT game FROM matches m WHERE status = 'done' AND {where} ORDER BY game", params
        )
        return [game for (game,) in rows]

    def duplicate_sets(
        self, game: str, tournament_ids: Sequence[int] | None = None, luck: bool = False
    ) -> list[RatedSet]:
        """Every duplicate set (or deal pool) of a game whose matches are all done (in those
        tournament runs, or all), as ``sets.evidence`` reads it: a set still being played publishes
        nothing, not even its finished rotations. ``luck``: with each seat's luck where it was
        measured (the ratings then read the sets luck-corrected: ratings.set_choices)."""
        where, params = _runs(tournament_ids)
        rows = self._db.execute(
            "SELECT t.name, m.tournament_id, m.round, m.grp, m.deal, r.match_id, m.seed, r.seat, r.bot, "
            "r.version, r.place, r.luck "
            "FROM results r JOIN matches m ON m.id = r.match_id JOIN tournaments t ON t.id = m.tournament_id "
            f"WHERE m.game = ? AND {where} AND NOT EXISTS (SELECT 1 FROM matches o "
            "WHERE o.tournament_id = m.tournament_id AND o.game = m.game AND o.round = m.round "
            "AND o.grp = m.grp AND o.deal = m.deal AND o.status != 'done') "
            "ORDER BY m.tournament_id, m.round, m.grp, m.deal, r.match_id, r.seat",
            (game, *params),
        )
        sets: dict[tuple[int, int, int, int], tuple[str, dict[int, Table], dict[int, dict[str, float]]]] = {}
        for (
            name,
            tournament_id,
            round_number,
            group,
            deal,
            match_id,
            seed,
            _,
            bot,
            version,
            place,
            lucky,
        ) in rows:
            _, tables, lucks = sets.setdefault((tournament_id, round_number, group, deal), (name, {}, {}))
            identity = SeatResult(0, bot, 0, 0, version=version).identity
            table = tables.setdefault(match_id, Table(seed, (), {}))
            tables[match_id] = Table(seed, (*table.seats, identity), {**table.places, identity: place})
            measured = lucks.setdefault(match_id, {})
            if lucky is not None:
                measured[identity] = lucky
        return [
            RatedSet(
                name,
                tuple(sorted({bot for table in tables.values() for bot in table.seats})),
                evidence(list(tables.values())),
                tuple(lucks[match_id] for match_id in tables) if luck else (),
            )
            for name, tables, lucks in sets.values()
        ]

    def state(self) -> tuple[int, ...]:
        """What changes when a result, a voided set, a bot's version or an epoch does: a page built
        from the database is built again only when this differs."""
        row = self._db.execute(
            "SELECT (SELECT count(*) FROM matches WHERE status = 'done'), (SELECT count(*) FROM voided), "
            "(SELECT count(*) FROM ladder_versions), (SELECT count(*) FROM tournaments), "
            "(SELECT count(finished_at) + count(revealed_at) FROM tournaments)"
        ).fetchone()
        return tuple(int(value) for value in row)

    # --- ladders ----------------------------------------------------------------------

    def ladders(self) -> list[str]:
        """The names of the ladders that have seen a bot."""
        rows = self._db.execute("SELECT DISTINCT ladder FROM ladder_versions ORDER BY ladder")
        return [name for (name,) in rows]

    def versions(self, ladder: str) -> dict[str, tuple[str, str]]:
        """The ladder's bots as it has seen them: bot id -> (name, version)."""
        rows = self._db.execute(
            "SELECT bot_id, name, version FROM ladder_versions WHERE ladder = ?", (ladder,)
        )
        return {bot_id: (name, version) for bot_id, name, version in rows}

    def add_version(self, ladder: str, bot_id: str, name: str) -> str:
        """The version of the registration ``bot_id`` of ``name``: the next number for a
        registration the ladder has not seen, the one it was given for one it has."""
        with self._transaction():
            row = self._db.execute(
                "SELECT version FROM ladder_versions WHERE ladder = ? AND bot_id = ?", (ladder, bot_id)
            ).fetchone()
            if row is not None:
                return str(row[0])
            (count,) = self._db.execute(
                "SELECT count(*) FROM ladder_versions WHERE ladder = ? AND name = ?", (ladder, name)
            ).fetchone()
            version = str(count + 1)
            self._db.execute(
                "INSERT INTO ladder_versions (ladder, bot_id, name, version, first_seen) "
                "VALUES (?, ?, ?, ?, ?)",
                (ladder, bot_id, name, version, time.time()),
            )
            return version

    def voided_count(self, tournament_ids: Sequence[int]) -> int:
        """Matches of those runs voided with their sets: dealt again, never counted."""
        where, params = _runs(tournament_ids)
        (count,) = self._db.execute(
            f"SELECT COUNT(*) FROM voided v JOIN matches m ON m.id = v.match_id WHERE {where}", params
        ).fetchone()
        return int(count)

    def forfeits(self, tournament_ids: Sequence[int]) -> dict[str, int]:
        """Seats forfeited in those runs, by identity (NAME@VERSION): in matches that count (a last
        place) and in those voided with their sets (an arena fault: the set was dealt again)."""
        where, params = _runs(tournament_ids)
        found: dict[str, int] = {}
        rows = self._db.execute(
            f"SELECT r.bot, r.version FROM results r JOIN matches m ON m.id = r.match_id "
            f"WHERE r.forfeited AND {where}",
            params,
        ).fetchall()
        voided = self._db.execute(
            f"SELECT v.results FROM voided v JOIN matches m ON m.id = v.match_id WHERE {where}", params
        )
        for (results,) in voided:
            rows += [
                (bot, version)
                for _, bot, _, _, _, _, forfeited, _, version in json.loads(results)
                if forfeited
            ]
        for bot, version in rows:
            identity = SeatResult(0, bot, 0, 0, version=version).identity
            found[identity] = found.get(identity, 0) + 1
        return found


def _runs(tournament_ids: Sequence[int] | None) -> tuple[str, list[int]]:
    """An SQL condition on ``m.tournament_id``: in those runs, or true for all."""
    if tournament_ids is None:
        return "1", []
    return f"m.tournament_id IN ({', '.join('?' * len(tournament_ids))})", list(tournament_ids)


_TOURNAMENT_COLUMNS = "id, name, run, finished_at, secret, revealed_at, started_at"


def _tournament(row: Sequence[Any]) -> Tournament:
    id_, name, run, finished_at, secret, revealed_at, started_at = row
    return Tournament(
        id_,
        name,
        run,
        finished_at is not None,
        bytes.fromhex(secret) if secret else None,
        revealed_at is not None,
        started_at,
    )


_MATCH_COLUMNS = (
    "id, game, round, grp, deal, rotation, seed, seats, status, referee_match_id, journal, attempts, "
    "replica, redeal, started_at"
)


def _key_columns(key: MatchKey) -> tuple[str, int, int, int, int]:
    return key.game, key.round, key.group, key.deal, key.rotation


def _match_record(row: Sequence[Any]) -> MatchRecord:
    """A row of ``_MATCH_COLUMNS``: the key's columns, then the record's other fields in their order."""
    id_, game, round_number, group, deal, rotation, seed, seats, *rest = row
    key = MatchKey(game, round_number, group, deal, rotation)
    return MatchRecord(id_, key, seed, tuple(json.loads(seats)), *rest)


class _Transaction:
    """BEGIN IMMEDIATE (or ``begin``) ... COMMIT, or ROLLBACK on any error (the connection is in
    autocommit mode)."""

    def __init__(self, db: sqlite3.Connection, begin: str = "BEGIN IMMEDIATE") -> None:
        self._db = db
        self._begin = begin

    def __enter__(self) -> None:
        self._db.execute(self._begin)

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self._db.execute("ROLLBACK" if exc_type is not None else "COMMIT")
