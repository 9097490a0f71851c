"""A ladder in the web viewer: the live leaderboard and a page per bot, in headless Chromium; and
what an anonymous client reads of a set still in play (nothing)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from croupier.clients.bots import RandomBot
from croupier.clients.ladder.arena import Ladder
from croupier.clients.results.ratings import rate
from croupier.clients.results.schedule import duplicate_set
from croupier.clients.results.sets import TIE_SETS
from croupier.clients.results.store import SeatResult, Store
from croupier.clients.sdk import Client
from croupier.clients.tournament.referee_client import Replicas
from croupier.clients.web import ladders
from croupier.clients.web.app import WebViewer
from croupier.server.app import Croupier
from tests.clients.ladder.test_ladder import ladder_config
from tests.clients.tournament.test_runner import Quiet
from tests.clients.web import browser, screenshots, viewer
from tests.server.botclient import ADMIN_TOKEN

__all__ = ["browser", "viewer"]


async def ladder_played(referee: Croupier, data: Path, sets: int) -> None:
    """Two registered bots connected with their own tokens, ``sets`` sets of the ladder "open"."""
    address = f"127.0.0.1:{referee.port}"
    referees = await Replicas.connect(address, ADMIN_TOKEN)
    clients = []
    for name in ("ann", "bob"):
        _, token = await referees.register_bot(name)
        clients.append(Client(RandomBot, address, [token], name=name, max_matches=4))
    tasks = [asyncio.create_task(client.run()) for client in clients]
    try:
        with Store(data / "results.db") as store:
            ladder = Ladder(ladder_config(), store, referees, Quiet(), data, poll=0.05)
            await asyncio.wait_for(ladder.run_ladder(sets=sets), 60)
    finally:
        for client in clients:
            client.stop()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*tasks)
        await referees.close()


async def test_the_leaderboard_and_a_bots_page_show_ratings_opponents_and_replays(
    referee: Croupier, viewer: WebViewer, browser: Any
) -> None:
    assert viewer.hub.data is not None
    await ladder_played(referee, viewer.hub.data, sets=3)
    page = await browser.new_page()
    await page.goto(f"{viewer.url}ladders")
    await page.get_by_role("link", name="open").click()
    await page.wait_for_selector("tr.rating")
    rows = await page.locator("tr.rating").all_inner_texts()
    assert {row.split("\t")[1] for row in rows} == {"ann@1", "bob@1"}
    assert all("–" in row for row in rows), "each rating has its 95% interval"
    assert all(row.split("\t")[5] == "3" for row in rows), "three sets each"
    assert "Chinese Ten · 3 sets" in await page.inner_text("main")
    await screenshots(page, "ladder")
    await page.get_by_role("link", name="ann@1").click()
    await page.wait_for_selector("tr.recent")
    text = await page.inner_text("main")
    assert "versions: ann@1" in text
    opponent = await page.locator("tr.opponent").all_inner_texts()
    assert len(opponent) == 1 and opponent[0].split("\t")[1:3] == ["bob@1", "3"]
    assert await page.locator("tr.recent").count() == 6  # three sets of two rotations
    await screenshots(page, "ladder-bot")
    await page.get_by_role("link", name="replay").first.click()
    await page.wait_for_selector("#controls")
    assert "ann@1" in await page.inner_text(".seats")


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:  # anyone: no token, no cookie
        return json.load(response)


async def test_an_anonymous_client_reads_nothing_of_a_set_still_in_play(viewer: WebViewer) -> None:
    assert viewer.hub.data is not None
    with Store(viewer.hub.data / "results.db") as store:
        epoch = store.open_tournament("open", "fingerprint", {}, again=False)
        assert epoch.secret is not None
        for name, bot_id in (("ann", "b-1"), ("bob", "b-2")):
            store.add_version("open", bot_id, name)
        for deal in (0, 1):
            dealt = duplicate_set("chinese_ten", ("ann@1", "bob@1"), 0, 0, deal, seed=1, secret=epoch.secret)
            store.schedule(epoch.id, dealt.matches)
        records = sorted(store.matches(epoch.id).values(), key=lambda r: r.key)
        for record in records[:3]:  # the second set's second rotation is still being played
            store.mark_started(record.id, f"m-{record.id}", None)
            results = [
                SeatResult(i, bot.partition("@")[0], 0, i + 1, version="1")
                for i, bot in enumerate(record.seats)
            ]
            store.record_result(record.id, results, None)
        store.mark_started(records[3].id, "m-live", None)
    board = await asyncio.to_thread(get, f"{viewer.url}api/ladders/open")
    [game] = board["games"]
    assert game["sets"] == 1 and {row["sets"] for row in game["ratings"]} == {1}
    page = await asyncio.to_thread(get, f"{viewer.url}api/ladders/open/bots/ann@1")
    assert {m["match_id"] for m in page["recent"]} == {f"m-{records[0].id}", f"m-{records[1].id}"}
    assert page["opponents"] == [{"game": "chinese_ten", "opponent": "bob@1", "sets": 1, "score": 0.5}]


async def test_the_leaderboard_is_computed_in_a_worker_and_served_as_it_was_last_computed(
    referee: Croupier, viewer: WebViewer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its fit is CPU-bound: in the viewer's process it held up the moves the embedded referee
    serves (innocent bots -70% matches a minute under 100 watchers). Built here, it fails."""
    assert viewer.hub.data is not None
    await ladder_played(referee, viewer.hub.data, sets=2)

    def in_this_process(*_: object) -> dict[str, Any]:
        raise AssertionError("the leaderboard was computed in the viewer's process")

    monkeypatch.setattr(ladders, "leaderboard", in_this_process)
    boards = [await asyncio.to_thread(get, f"{viewer.url}api/ladders/open") for _ in range(3)]
    assert [game["sets"] for game in boards[0]["games"]] == [2]
    assert boards[0]["computed_at"] == boards[2]["computed_at"]  # nothing changed: not computed again


def test_the_leaderboard_fits_the_ratings_again_only_when_a_set_is_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Anyone may reload the leaderboard as often as they like: each reload must not cost a
    bootstrap of every set (what the standings pages cache too)."""
    fitted: list[int] = []

    def counted(sets: list[Any], **kwargs: Any) -> Any:
        fitted.append(len(sets))
        return rate(sets, **kwargs)

    monkeypatch.setattr(ladders, "rate", counted)
    db = tmp_path / "results.db"
    with Store(db) as store:
        epoch = store.open_tournament("open", "fingerprint", {}, again=False)
        assert epoch.secret is not None
        for name, bot_id in (("ann", "b-1"), ("bob", "b-2")):
            store.add_version("open", bot_id, name)

        def play_set(deal: int) -> None:
            dealt = duplicate_set("chinese_ten", ("ann@1", "bob@1"), 0, 0, deal, seed=1, secret=epoch.secret)
            store.schedule(epoch.id, dealt.matches)
            for record in store.matches(epoch.id).values():
                if record.status != "done":
                    store.mark_started(record.id, f"m-{record.id}", None)
                    results = [
                        SeatResult(i, bot.partition("@")[0], 0, i + 1, version="1")
                        for i, bot in enumerate(record.seats)
                    ]
                    store.record_result(record.id, results, None)

        play_set(0)
        fits = ladders.Fits(samples=20)
        first = ladders.leaderboard(db, "open", fits)
        assert ladders.leaderboard(db, "open", fits) == first and fitted == [1]  # the second read: no fit
        play_set(1)
        after = ladders.leaderboard(db, "open", fits)
    assert fitted == [1, 2] and after["games"][0]["sets"] == 2


def test_the_leaderboard_shows_a_pair_the_ladder_knows_tied_as_tied_whatever_its_los(tmp_path: Path) -> None:
    """Two bots that split every set (each wins its seat 0) are known tied from the 8th set on: the
    board says so rather than an LOS the bootstrap may put anywhere."""
    db = tmp_path / "results.db"
    with Store(db) as store:
        epoch = store.open_tournament("open", "fingerprint", {}, again=False)
        assert epoch.secret is not None
        for name, bot_id in (("ann", "b-1"), ("bob", "b-2")):
            store.add_version("open", bot_id, name)
        tied = []
        for deal in range(TIE_SETS):
            dealt = duplicate_set("chinese_ten", ("ann@1", "bob@1"), 0, 0, deal, seed=1, secret=epoch.secret)
            store.schedule(epoch.id, dealt.matches)
            for record in store.matches(epoch.id).values():
                if record.status != "done":
                    store.mark_started(record.id, f"m-{record.id}", None)
                    results = [
                        SeatResult(i, bot.partition("@")[0], 0, i + 1, version="1")
                        for i, bot in enumerate(record.seats)
                    ]
                    store.record_result(record.id, results, None)
            rows = ladders.leaderboard(db, "open", ladders.Fits(samples=20))["games"][0]["ratings"]
            tied.append([row["tied_next"] for row in rows])
    assert tied[-1] == [True, False] and all(row == [False, False] for row in tied[:-1]), tied
