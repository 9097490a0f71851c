"""The runner against a real referee on a free port, with in-process SDK bots."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from croupier.clients.bots import RandomBot
from croupier.clients.results.ratings import Places, rate
from croupier.clients.results.schedule import Deals, set_seed
from croupier.clients.results.store import MatchRecord, SeatResult, Store, Tournament
from croupier.clients.sdk import Client
from croupier.clients.tournament.config import TournamentConfig, parse
from croupier.clients.tournament.display import PlainDisplay
from croupier.clients.tournament.referee_client import Replicas
from croupier.clients.tournament.runner import ABANDONED, Entrant, Runner, ScheduleError
from croupier.server.app import create_server
from croupier.v1 import match_pb2

BOTS = ("ann", "bob", "cat")


def config(concurrency: int = 4) -> TournamentConfig:
    return parse(
        {
            "name": "t",
            "concurrency": concurrency,
            "clock": {"decision_ms": 2000},
            "games": [{"game": "chinese_ten", "seats": 2, "deals": 2, "options": {"target": 100}}],
            "bots": [{"name": name, "command": "unused"} for name in BOTS],
        }
    )


def first_set(store: Store) -> tuple[Tournament, list[MatchRecord]]:
    """A tournament of ``config()`` scheduled in the store, and the records of its first set."""
    tournament = store.open_tournament("t", "fp", {}, again=False)
    assert tournament.secret is not None
    store.schedule(tournament.id, (m for d in config().schedule(tournament.secret) for m in d.matches))
    records = sorted(store.matches(tournament.id).values(), key=lambda record: record.id)
    return tournament, [r for r in records if r.key.set_key == records[0].key.set_key]


class Quiet(PlainDisplay):
    """Progress lines nobody reads; counts the matches finished in this session."""

    def __init__(self) -> None:
        from io import StringIO

        from rich.console import Console

        super().__init__(Console(file=StringIO()))
        self.finished = 0

    def match_done(self, game: str, places: Places, replayed: bool = False) -> None:
        super().match_done(game, places, replayed)
        self.finished += not replayed


@pytest.fixture
async def entrants(tmp_path: Path) -> AsyncIterator[tuple[Replicas, dict[str, Entrant]]]:
    """A referee with three random bots connected, each playing up to 4 matches at once."""
    croupier = await create_server("127.0.0.1:0", tmp_path / "referee")
    address = f"127.0.0.1:{croupier.port}"
    referee = await Replicas.connect(address, croupier.admin_token)
    entrants, clients = {}, []
    for name in BOTS:
        bot_id, token = await referee.register_bot(name)
        entrants[name] = Entrant(name, bot_id, capacity=4)
        clients.append(Client(RandomBot, address, [token], name=name, max_matches=4))
    tasks = [asyncio.create_task(client.run()) for client in clients]
    while any(status.streams == 0 for status in (await referee.bots())[address].values()):
        await asyncio.sleep(0.02)
    yield referee, entrants
    for client in clients:
        client.stop()
    await asyncio.gather(*tasks)
    await referee.close()
    await croupier.stop(grace=None)


async def test_every_match_is_played_once_and_the_tournament_finishes(
    tmp_path: Path, entrants: tuple[Replicas, dict[str, Entrant]]
) -> None:
    referee, bots = entrants
    with Store(tmp_path / "r.db") as store:
        tournament = store.open_tournament("t", "fp", {}, again=False)
        display = Quiet()
        assert await Runner(config(), store, referee, bots, display).run(tournament) is True
        records = store.matches(tournament.id).values()
        finished = store.finished(tournament.id)
        assert store.tournaments()[0].finished
        table = rate(store.duplicate_sets("chinese_ten", [tournament.id]), samples=20)
    # 3 pairs x 2 deals x 2 rotations
    assert display.finished == len(finished) == 12
    # the live standings at the end are the final table's ratings (a running Elo was not)
    assert [(bot, round(elo, 6)) for bot, elo, _, _ in display.standings.ranked("chinese_ten")] == [
        (rating.bot, round(rating.elo, 6)) for rating in table
    ]
    assert {record.status for record in records} == {"done"}
    assert all(record.attempts == 1 and record.journal for record in records)
    assert all(sorted(r.place for r in match.results) in ([1, 2], [1, 1]) for match in finished)


async def test_a_match_in_progress_when_a_run_stopped_is_played_again_with_its_set_on_a_new_deal(
    tmp_path: Path, entrants: tuple[Replicas, dict[str, Entrant]]
) -> None:
    referee, bots = entrants
    with Store(tmp_path / "r.db") as store:
        tournament, (first, twin) = first_set(store)
        assert tournament.secret is not None
        store.record_result(twin.id, [SeatResult(i, bot, 0, i + 1) for i, bot in enumerate(twin.seats)], None)
        store.mark_started(first.id, "a-match-the-referee-never-saw", None)
        assert await Runner(config(), store, referee, bots, Quiet()).run(tournament) is True
        again, twin_again = (store.matches(tournament.id)[r.key] for r in (first, twin))
        (match,) = [m for m in store.finished(tournament.id) if m.record.id == first.id]
        voided = store.voided(tournament.id)
    # the abandoned match's bots saw its deal: the whole set is played again, on a deal nobody saw
    assert (again.status, again.attempts, again.redeal) == ("done", 2, 1)
    assert again.seed == twin_again.seed != first.seed
    assert again.seed == set_seed(tournament.secret, first.key, Deals.DUPLICATE, 1)
    assert twin_again.status == "done" and twin_again.referee_match_id
    assert again.referee_match_id != "a-match-the-referee-never-saw"
    assert [r.bot for r in match.results] == list(first.seats)
    assert sorted((record.id, record.seed) for record, _ in voided) == sorted(
        [(first.id, first.seed), (twin.id, twin.seed)]
    )


async def test_a_resumed_run_cancels_the_match_its_stopped_run_left_on_the_referee(
    tmp_path: Path, entrants: tuple[Replicas, dict[str, Entrant]]
) -> None:
    referee, bots = entrants
    with Store(tmp_path / "r.db") as store:
        tournament = store.open_tournament("t", "fp", {}, again=False)
        store.schedule(tournament.id, (m for d in config().schedule(tournament.secret) for m in d.matches))
        first = min(store.matches(tournament.id).values(), key=lambda record: record.id)
        # left waiting on the referee: seats no connected bot is invited to
        replica, created = await referee.create_match(
            config().games[0], first.seed, [("gone", ""), ("gone too", "")]
        )
        abandoned = created.match
        store.mark_started(first.id, abandoned.match_id, None, replica)
        assert await Runner(config(), store, referee, bots, Quiet()).run(tournament) is True
    info = await referee.referees[replica].get_match(abandoned.match_id)
    assert info is not None
    assert (info.status, info.cancel_reason) == (match_pb2.MATCH_STATUS_CANCELLED, ABANDONED)


async def test_a_resumed_run_cancels_a_match_its_stopped_run_created_but_never_stored(
    tmp_path: Path, entrants: tuple[Replicas, dict[str, Entrant]]
) -> None:
    """Stopped between CreateMatch and its store write: the referee holds a waiting match the store
    knows nothing of, dealt from the set's seed, which would seal that set forever."""
    referee, bots = entrants
    with Store(tmp_path / "r.db") as store:
        tournament, (first, _) = first_set(store)
        replica, created = await referee.create_match(
            config().games[0], first.seed, [("gone", ""), ("gone too", "")]
        )
        orphan = created.match
        assert await Runner(config(), store, referee, bots, Quiet()).run(tournament) is True
        again = store.matches(tournament.id)[first.key]
    info = await referee.referees[replica].get_match(orphan.match_id)
    assert info is not None
    assert (info.status, info.cancel_reason) == (match_pb2.MATCH_STATUS_CANCELLED, ABANDONED)
    # its deal may have been seen: the set is played on a new one
    assert (again.status, again.redeal) == ("done", 1) and again.seed != first.seed


async def test_a_stop_request_lets_the_matches_in_progress_finish_and_starts_no_more(
    tmp_path: Path, entrants: tuple[Replicas, dict[str, Entrant]]
) -> None:
    referee, bots = entrants

    class StopAtFirst(Quiet):
        def match_done(self, game: str, places: Places, replayed: bool = False) -> None:
            super().match_done(game, places, replayed)
            runner.request_stop()

    with Store(tmp_path / "r.db") as store:
        tournament = store.open_tournament("t", "fp", {}, again=False)
        runner = Runner(config(concurrency=2), store, referee, bots, StopAtFirst())
        assert await runner.run(tournament) is False
        statuses = [record.status for record in store.matches(tournament.id).values()]
        assert not store.tournaments()[0].finished
        # the next run plays the rest
        display = Quiet()
        assert await Runner(config(), store, referee, bots, display).run(tournament) is True
    # concurrency 2 = one duplicate set at a time: its two rotations finish, nothing else starts
    assert sorted(statuses) == ["done"] * 2 + ["scheduled"] * 10
    assert display.finished == 10


async def test_a_stop_request_ends_a_run_held_for_a_person_who_never_comes_back(
    tmp_path: Path, entrants: tuple[Replicas, dict[str, Entrant]]
) -> None:
    """A person's seat holds the next set until they have read their last result (``held``): Ctrl-C
    must end the run while it waits, not only once they answer the page."""
    referee, bots = entrants
    holds = 0

    async def never_read(pending: Sequence[MatchRecord]) -> None:
        nonlocal holds
        holds += 1
        if holds == 2:  # the second set waits for a person gone from the page
            asyncio.get_running_loop().call_later(0.2, runner.request_stop)
            await asyncio.Event().wait()

    with Store(tmp_path / "r.db") as store:
        tournament = store.open_tournament("t", "fp", {}, again=False)
        runner = Runner(config(concurrency=2), store, referee, bots, Quiet())
        runner.held = never_read
        assert await asyncio.wait_for(runner.run(tournament), 60) is False
        statuses = sorted(record.status for record in store.matches(tournament.id).values())
    assert statuses == ["done"] * 2 + ["scheduled"] * 10  # the first set only, its two rotations


async def test_a_bot_too_small_for_a_duplicate_set_is_refused_before_any_match(
    tmp_path: Path, entrants: tuple[Replicas, dict[str, Entrant]]
) -> None:
    referee, bots = entrants
    bots["bob"] = Entrant("bob", bots["bob"].bot_id, capacity=1)
    with Store(tmp_path / "r.db") as store:
        tournament = store.open_tournament("t", "fp", {}, again=False)
        with pytest.raises(ScheduleError, match="bot bob plays at most 1 match"):
            await Runner(config(), store, referee, bots, Quiet()).run(tournament)
        assert {record.status for record in store.matches(tournament.id).values()} == {"scheduled"}


async def test_the_live_standings_take_a_set_only_once_its_last_rotation_is_over(
    tmp_path: Path, entrants: tuple[Replicas, dict[str, Entrant]]
) -> None:
    referee, bots = entrants
    seen: list[int] = []

    class Counting(Quiet):
        def match_done(self, game: str, places: Places, replayed: bool = False) -> None:
            super().match_done(game, places, replayed)
            seen.append(sum(r.status == "done" for r in store.matches(tournament.id).values()))

    with Store(tmp_path / "r.db") as store:
        tournament = store.open_tournament("t", "fp", {}, again=False)
        # concurrency 2: one set of two rotations at a time
        assert await Runner(config(concurrency=2), store, referee, bots, Counting()).run(tournament) is True
    # each set shown whole: when its first match is shown, both of its rotations are done
    assert seen[0::2] == seen[1::2] == [2, 4, 6, 8, 10, 12]
