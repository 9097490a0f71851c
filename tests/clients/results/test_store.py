"""The results database: scheduled before played, done once, resumable."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from croupier.clients.results.schedule import game_schedule
from croupier.clients.results.store import SeatResult, Store, StoreError

SECRET = bytes(32)
VERSION_5_TO_4 = "ALTER TABLE results DROP COLUMN luck; "
VERSION_3_TO_2 = (
    VERSION_5_TO_4 + "DROP TABLE ladder_versions; "
    "ALTER TABLE tournaments DROP COLUMN secret; ALTER TABLE tournaments DROP COLUMN revealed_at; "
    "ALTER TABLE matches DROP COLUMN redeal; ALTER TABLE results DROP COLUMN version; DROP TABLE voided; "
)
VERSION_2_TO_1 = VERSION_3_TO_2 + "ALTER TABLE matches DROP COLUMN replica; PRAGMA user_version = 1;"


def results_of(seats: tuple[str, ...]) -> list[SeatResult]:
    return [SeatResult(seat, bot, score=10 - seat, place=seat + 1) for seat, bot in enumerate(seats)]


def test_a_new_database_is_in_wal_mode_with_a_schema_version(tmp_path: Path) -> None:
    Store(tmp_path / "r.db").close()
    db = sqlite3.connect(tmp_path / "r.db")
    assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert db.execute("PRAGMA user_version").fetchone() == (5,)


def test_a_version_1_database_gains_the_replica_column_and_its_started_matches_resume(tmp_path: Path) -> None:
    matches = [m for d in game_schedule("g", ["a", "b"], 2, 1, 1, seed=1, secret=SECRET) for m in d.matches]
    with Store(tmp_path / "r.db") as store:
        t = store.open_tournament("t", "fp", {}, again=False)
        store.schedule(t.id, matches)
        store.mark_started(store.matches(t.id)[matches[0].key].id, "m-1", None)
    # as version 1 left it: no replica column
    old = sqlite3.connect(tmp_path / "r.db")
    old.executescript(VERSION_2_TO_1)
    old.close()
    with Store(tmp_path / "r.db") as store:
        records = store.matches(t.id)
        store.mark_started(records[matches[1].key].id, "m-2", None, replica="10.0.0.2:50051")
        again = store.matches(t.id)
    assert (records[matches[0].key].referee_match_id, records[matches[0].key].replica) == ("m-1", "")
    assert (again[matches[1].key].referee_match_id, again[matches[1].key].replica) == (
        "m-2",
        "10.0.0.2:50051",
    )
    assert sqlite3.connect(tmp_path / "r.db").execute("PRAGMA user_version").fetchone() == (5,)


def test_a_seats_luck_is_kept_with_its_result_and_a_version_4_database_reads_none(tmp_path: Path) -> None:
    (duplicate,) = game_schedule("g", ["a", "b"], 2, 1, 1, seed=1, secret=SECRET)
    with Store(tmp_path / "r.db") as store:
        t = store.open_tournament("t", "fp", {}, again=False)
        store.schedule(t.id, duplicate.matches)
        first, second = store.matches(t.id).values()
        store.record_result(
            first.id, [SeatResult(0, "a", 3, 1, luck=0.25), SeatResult(1, "b", 1, 2, luck=-0.25)], None
        )
    with Store(tmp_path / "r.db") as store:
        ((match,),) = [store.finished(t.id)]
    assert [r.luck for r in match.results] == [0.25, -0.25]
    db = sqlite3.connect(tmp_path / "r.db")
    db.executescript(VERSION_5_TO_4 + "PRAGMA user_version = 4;")
    db.close()
    with Store(tmp_path / "r.db") as store:
        store.record_result(second.id, results_of(second.seats), None)
        done = store.finished(t.id)
    assert [[r.luck for r in m.results] for m in done] == [[None, None], [None, None]]


def test_a_database_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    Store(tmp_path / "r.db").close()
    sqlite3.connect(tmp_path / "r.db").execute("PRAGMA user_version = 99")
    with pytest.raises(StoreError, match="schema version 99"):
        Store(tmp_path / "r.db")


def test_another_sqlite_database_is_refused(tmp_path: Path) -> None:
    other = sqlite3.connect(tmp_path / "other.db")
    other.execute("CREATE TABLE x (y)")
    other.commit()
    with pytest.raises(StoreError, match="not a croupier results database"):
        Store(tmp_path / "other.db")


def test_scheduling_twice_keeps_the_first_record(tmp_path: Path) -> None:
    matches = [
        m for d in game_schedule("g", ["a", "b", "c"], 2, 1, 1, seed=1, secret=SECRET) for m in d.matches
    ]
    with Store(tmp_path / "r.db") as store:
        t = store.open_tournament("t", "fp", {}, again=False)
        store.schedule(t.id, matches)
        first = store.matches(t.id)
        store.mark_started(first[matches[0].key].id, "m-1", "journals/m-1")
        store.schedule(t.id, matches)
        again = store.matches(t.id)
    assert len(again) == 6
    assert again[matches[0].key].status == "started"
    assert again[matches[0].key].referee_match_id == "m-1"


def test_a_result_is_counted_once(tmp_path: Path) -> None:
    (duplicate,) = game_schedule("g", ["a", "b"], 2, 1, 1, seed=1, secret=SECRET)
    with Store(tmp_path / "r.db") as store:
        t = store.open_tournament("t", "fp", {}, again=False)
        store.schedule(t.id, duplicate.matches)
        record = store.matches(t.id)[duplicate.matches[0].key]
        assert store.record_result(record.id, results_of(record.seats), "j1") is True
        assert store.record_result(record.id, results_of(record.seats), "j1") is False
        (finished,) = store.finished(t.id)
    assert finished.results == tuple(results_of(record.seats))
    assert finished.record.journal == "j1"


def test_an_interrupted_tournament_resumes_with_its_matches(tmp_path: Path) -> None:
    (duplicate,) = game_schedule("g", ["a", "b"], 2, 1, 1, seed=1, secret=SECRET)
    with Store(tmp_path / "r.db") as store:
        t = store.open_tournament("t", "fp", {}, again=False)
        store.schedule(t.id, duplicate.matches)
        done = store.matches(t.id)[duplicate.matches[0].key]
        store.record_result(done.id, results_of(done.seats), None)
    with Store(tmp_path / "r.db") as store:  # a new process
        resumed = store.open_tournament("t", "fp", {}, again=True)
        assert resumed == t
        statuses = {key: record.status for key, record in store.matches(t.id).items()}
    assert sorted(statuses.values()) == ["done", "scheduled"]


def test_a_changed_schedule_cannot_resume(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        store.open_tournament("t", "fp", {}, again=False)
        with pytest.raises(StoreError, match="started with other games, bots, rounds or seed"):
            store.open_tournament("t", "other", {}, again=False)


def test_a_finished_tournament_is_played_again_only_when_asked(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        first = store.open_tournament("t", "fp", {}, again=False)
        store.finish_tournament(first.id)
        assert store.open_tournament("t", "fp", {}, again=False).run == 1
        second = store.open_tournament("t", "fp", {}, again=True)
        assert (second.run, second.finished) == (2, False)
        assert store.open_tournament("t", "fp", {}, again=True) == second  # unfinished: resumed


def test_a_failed_match_is_scheduled_again(tmp_path: Path) -> None:
    (duplicate,) = game_schedule("g", ["a", "b"], 2, 1, 1, seed=1, secret=SECRET)
    with Store(tmp_path / "r.db") as store:
        t = store.open_tournament("t", "fp", {}, again=False)
        store.schedule(t.id, duplicate.matches)
        record = store.matches(t.id)[duplicate.matches[0].key]
        store.mark_started(record.id, "m-1", None)
        store.mark_failed(record.id, "referee restarted")
        after = store.matches(t.id)[record.key]
    assert (after.status, after.referee_match_id, after.attempts) == ("scheduled", None, 1)


def test_duplicate_sets_group_the_rotations_of_a_deal_across_tournaments(tmp_path: Path) -> None:
    schedule = game_schedule("g", ["a", "b", "c"], 2, 1, 1, seed=1, secret=SECRET)
    with Store(tmp_path / "r.db") as store:
        for name in ("t1", "t2"):
            t = store.open_tournament(name, "fp", {}, again=False)
            store.schedule(t.id, [m for d in schedule for m in d.matches])
            for record in store.matches(t.id).values():
                store.record_result(record.id, results_of(record.seats), None)
        sets = store.duplicate_sets("g")
        assert store.games() == ["g"]
    assert len(sets) == 2 * 3
    assert all(len(rated.matches) == 2 for rated in sets)
    assert [rated.tournament for rated in sets] == ["t1"] * 3 + ["t2"] * 3
    assert {"a": 1, "b": 2} in sets[0].matches and {"b": 1, "a": 2} in sets[0].matches
    assert sets[0].group == ("a", "b")


def test_one_runner_at_a_time(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as first:
        first.lock_for_running()
        with Store(tmp_path / "r.db") as second:
            with pytest.raises(StoreError, match=r"in use by another tournament runner \(pid \d+\)"):
                second.lock_for_running()
            assert second.games() == []  # reading is never held up
    with Store(tmp_path / "r.db") as third:
        third.lock_for_running()  # the first one's lock went with it


def test_a_version_2_database_keeps_its_runs_without_a_secret_and_new_runs_get_one(tmp_path: Path) -> None:
    (duplicate,) = game_schedule("g", ["a", "b"], 2, 1, 1, seed=1, secret=SECRET)
    with Store(tmp_path / "r.db") as store:
        old = store.open_tournament("old", "fp", {}, again=False)
        store.schedule(old.id, duplicate.matches)
        for record in store.matches(old.id).values():
            store.record_result(record.id, results_of(record.seats), None)
    db = sqlite3.connect(tmp_path / "r.db")
    db.executescript(VERSION_3_TO_2 + "PRAGMA user_version = 2;")
    db.close()
    with Store(tmp_path / "r.db") as store:
        (before,) = store.tournaments()
        new = store.open_tournament("new", "fp", {}, again=False)
        (rated,) = store.duplicate_sets("g")
    assert before.secret is None and not before.revealed
    assert new.secret is not None and len(new.secret) == 32
    assert rated.group == ("a", "b")  # results from before versions: under the bot's name


def test_every_run_gets_its_own_secret_from_the_os(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        first = store.open_tournament("t", "fp", {}, again=False)
        store.finish_tournament(first.id)
        second = store.open_tournament("t", "fp", {}, again=True)
        assert store.open_tournament("t", "fp", {}, again=False).secret == second.secret  # resumed: kept
    assert first.secret and second.secret and first.secret != second.secret


def test_a_secret_is_revealed_only_once_its_run_is_finished(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        t = store.open_tournament("t", "fp", {}, again=False)
        store.reveal(t.id)
        assert not store.tournaments()[0].revealed
        store.finish_tournament(t.id)
        store.reveal(t.id)
        assert store.tournaments()[0].revealed


def test_a_set_dealt_again_keeps_its_old_matches_aside_and_counts_only_the_new_deal(tmp_path: Path) -> None:
    (duplicate,) = game_schedule("g", ["a", "b"], 2, 1, 1, seed=1, secret=SECRET)
    with Store(tmp_path / "r.db") as store:
        t = store.open_tournament("t", "fp", {}, again=False)
        store.schedule(t.id, duplicate.matches)
        done, abandoned = (store.matches(t.id)[m.key] for m in duplicate.matches)
        store.record_result(done.id, results_of(done.seats), "j-done")
        store.mark_started(abandoned.id, "m-abandoned", "j-abandoned")
        assert store.duplicate_sets("g") == []  # a set still being played publishes nothing
        records = [store.matches(t.id)[m.key] for m in duplicate.matches]
        store.redeal(records, 1, [11, 12])
        after = store.matches(t.id)
        voided = store.voided(t.id)
        assert store.finished(t.id) == []
    assert [(after[m.key].status, after[m.key].seed, after[m.key].redeal) for m in duplicate.matches] == [
        ("scheduled", 11, 1),
        ("scheduled", 12, 1),
    ]
    assert [(record.seed, record.status, record.referee_match_id, redeal) for record, redeal in voided] == [
        (duplicate.matches[0].seed, "done", None, 0),
        (duplicate.matches[1].seed, "started", "m-abandoned", 0),
    ]


def test_ratings_read_bots_under_their_versions(tmp_path: Path) -> None:
    (duplicate,) = game_schedule("g", ["a", "b"], 2, 1, 1, seed=1, secret=SECRET)
    with Store(tmp_path / "r.db") as store:
        t = store.open_tournament("t", "fp", {}, again=False)
        store.schedule(t.id, duplicate.matches)
        for record in store.matches(t.id).values():
            results = [
                SeatResult(seat, bot, 0, seat + 1, version="v2" if bot == "a" else "")
                for seat, bot in enumerate(record.seats)
            ]
            store.record_result(record.id, results, None)
        (rated,) = store.duplicate_sets("g")
        assert store.duplicate_sets("g", [t.id + 1]) == []
    assert rated.group == ("a@v2", "b")


def test_finished_matches_are_read_in_one_snapshot_while_a_writer_commits(tmp_path: Path) -> None:
    """A match done with its results between the two reads of ``finished`` (the matches, then their
    results) is in neither: seen in the second only, it was a KeyError (HTTP 500s on the board)."""
    (duplicate,) = game_schedule("g", ["a", "b"], 2, 1, 1, seed=1, secret=SECRET)
    with Store(tmp_path / "r.db") as store, Store(tmp_path / "r.db") as writer:
        t = store.open_tournament("t", "fp", {}, again=False)
        store.schedule(t.id, duplicate.matches)
        first, second = (store.matches(t.id)[m.key] for m in duplicate.matches)
        store.record_result(first.id, results_of(first.seats), None)
        wrote = []

        def between(statement: str) -> None:
            """The other process's commit, just as the results are about to be read."""
            if "FROM results r" in statement and not wrote:
                wrote.append(writer.record_result(second.id, results_of(second.seats), None))

        store._db.set_trace_callback(between)
        seen = store.finished(t.id)
        store._db.set_trace_callback(None)
        assert wrote == [True]
        assert [(m.record.id, len(m.results)) for m in seen] == [(first.id, 2)]
        assert [(m.record.id, len(m.results)) for m in store.finished(t.id)] == [
            (first.id, 2),
            (second.id, 2),
        ]
