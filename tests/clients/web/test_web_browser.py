"""``croupier web`` in a real browser (headless Chromium through Playwright): the lobby, a live
match advancing, a replay stepped through, a tournament page, and no hidden card in the DOM or
in any response while a match runs. Screenshots go to tests/artifacts/."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from croupier.clients.bots import RandomBot
from croupier.clients.results.luck import default_evaluator
from croupier.clients.results.luck_journal import records_luck
from croupier.clients.results.sets import luck_and_skill
from croupier.clients.web.app import WebViewer
from croupier.server.app import Croupier
from croupier.server.journal import End, read_records
from croupier.v1 import admin_pb2
from tests.clients.terminal.test_spectator_terminal import play
from tests.clients.web import CARD, Recorder, Stepper, browser, hidden_by_seq, screenshots, viewer
from tests.clients.web.test_web import EVIL, exported
from tests.server.botclient import ADMIN_TOKEN, WAIT, Admin

__all__ = ["browser", "viewer"]

LONG_CLOCKS = {"decision_ms": 120_000, "bank_ms": 120_000}
"""The bots wait for the test between moves: no clock may run out meanwhile."""


async def dom_state(page: Any) -> dict[str, Any]:
    """What the page shows now, read in one go: the step it draws, the cards in the DOM (faces
    and cards in the text), its text."""
    state: dict[str, Any] = await page.evaluate(
        """() => {
            const match = document.querySelector('.match');
            return {
                seq: match ? Number(match.dataset.seq) : null,
                status: match ? match.dataset.status : null,
                cards: [...document.querySelectorAll('[data-card]')].map(e => e.dataset.card),
                html: document.documentElement.outerHTML,
                faces: document.querySelectorAll('svg.card:not(.back)').length,
                backs: document.querySelectorAll('.seat svg.card.back').length,
                hands: document.querySelectorAll('.seat > .cards svg.card:not(.back)').length,
            };
        }"""
    )
    return state


async def test_a_live_spoil_five_table_advances_and_shows_no_hidden_card(
    referee: Croupier, admin: Admin, viewer: WebViewer, browser: Any, monkeypatch: Any
) -> None:
    monkeypatch.setenv("CROUPIER_ADMIN_TOKEN", ADMIN_TOKEN)  # the viewer must not pick it up
    created = await admin.create("spoil_five", 4, {}, seed=31, **LONG_CLOCKS)
    match_id = created.match.match_id
    page = await browser.new_page()
    recorder = Recorder(viewer.url)  # every byte the browser is sent
    await page.goto(await recorder.start())
    row = page.locator(f"tr[data-match='{match_id}']")
    await row.wait_for()
    assert "waiting" in await row.inner_text() and "p0, p1, p2, p3" in await row.inner_text()
    await row.get_by_role("link", name="watch").click()  # watched from its start: banks known
    await page.wait_for_selector(".match[data-status='waiting']")  # followed before it starts
    stepper = Stepper()
    bots = await play(referee, created, stepper.bot)
    await stepper.idle()
    await page.wait_for_selector(".match[data-status='running']")
    seen: list[dict[str, Any]] = [await dom_state(page)]
    first = seen[0]
    assert first["faces"] >= 1 and first["backs"] >= 16 and not first["hands"], (
        "hands as backs, the turn-up up"
    )
    text = await page.inner_text(".match")
    assert "Spoil Five" in text and "trumps" in text and "chips" in text and "▶" in text and "bank" in text
    assert "every hand stays face down" in text

    for _ in range(3):  # each time the bots are let go for a few moves, the page follows
        before = seen[-1]["seq"]
        await stepper.allow(3)
        await stepper.idle()
        await page.wait_for_function(
            "before => Number(document.querySelector('.match').dataset.seq) > before", arg=before
        )
        seen.append(await dom_state(page))
    log = await page.inner_text(".events")
    assert "p1" in log or "p2" in log or "p3" in log or "p0" in log, "events name the bots"
    await screenshots(page, "live-spoil-five")
    sent_while_live = recorder.text()

    await stepper.allow(None)
    await asyncio.wait_for(bots, WAIT)
    await admin.wait(match_id)
    await page.wait_for_selector("#controls")  # over: the page turns into the replay
    final = await dom_state(page)
    assert final["status"] == "finished" and final["backs"] == 0, "every hand revealed at the end"
    assert "result" in await page.inner_text(".result")

    hidden = hidden_by_seq(Path(created.journal))
    for state in seen:
        assert not state["hands"], f"a hand shown face up at step {state['seq']}"
        leaked = (set(state["cards"]) | set(CARD.findall(state["html"]))) & hidden[state["seq"]]
        assert not leaked, f"hidden cards in the DOM at step {state['seq']}: {leaked}"
    frames = 0
    for line in sent_while_live.splitlines():
        message = json.loads(line[6:]) if line.startswith("data: {") else {}
        if "scene" in message:  # a frame: only cards the public view had at its step
            leaked = set(CARD.findall(line)) & hidden[message["scene"]["seq"]]
            assert not leaked, f"hidden cards sent at step {message['scene']['seq']}: {leaked}"
            frames += 1
        else:  # pages, scripts, the lobby: no card at all
            assert not CARD.findall(line), f"a card in a response while the match ran: {line[:200]}"
    assert frames >= len(seen), "every frame the page drew was among the bytes checked"
    await recorder.stop()


async def test_the_lobby_lists_matches_as_they_start_and_finish_and_names_stay_text(
    referee: Croupier, admin: Admin, viewer: WebViewer, browser: Any
) -> None:
    page = await browser.new_page()
    await page.goto(viewer.url)
    await page.wait_for_selector("text=no live matches right now")
    seats = [admin_pb2.SeatSpec(name=name) for name in ("<img src=x onerror=alert(1)>", "bob")]
    created = await admin.create("platinum_fish", seats, {}, seed=3)
    match_id = created.match.match_id
    row = page.locator(f"tr[data-match='{match_id}']")
    await row.wait_for()  # no reload: the lobby follows the referee
    assert "<img src=x onerror=alert(1)>, bob" in await row.inner_text(), "a name is shown as text"
    assert await page.locator("img").count() == 0, "and never becomes markup"
    await screenshots(page, "lobby")
    await asyncio.wait_for(await play(referee, created, RandomBot), WAIT)
    info = await admin.wait(match_id)
    await page.wait_for_selector(f"tr.finished[data-match='{match_id}']")
    winner = next(s for s in info.result.seats if s.place == 1)
    assert f"{winner.name} {winner.score}" in await page.locator(f"tr[data-match='{match_id}']").inner_text()
    await page.locator(f"tr[data-match='{match_id}']").get_by_role("link", name="replay").click()
    await page.wait_for_selector("#controls")
    assert await page.locator("img").count() == 0


async def test_a_chinese_ten_replay_steps_forward_back_and_to_any_step_in_its_address(
    referee: Croupier, admin: Admin, viewer: WebViewer, browser: Any
) -> None:
    created = await admin.create("chinese_ten", 3, {"target": 100}, seed=5)
    await asyncio.wait_for(await play(referee, created, RandomBot), WAIT)
    info = await admin.wait(created.match.match_id)
    page = await browser.new_page()
    await page.goto(f"{viewer.url}match/{info.match_id}?step=3")
    await page.wait_for_selector("#controls")
    label = await page.inner_text(".step-of")
    steps = int(label.rsplit(" ", 1)[-1])
    assert (await dom_state(page))["seq"] and await page.input_value(".step-number") == "3"
    first_hands = await page.locator(".seat > .cards svg.card:not(.back)").count()
    assert first_hands > 0, "a replay shows every hand"
    await page.keyboard.press("ArrowRight")
    await page.wait_for_url("**?step=4")
    await page.get_by_title("one step back (←)").click()
    await page.wait_for_url("**?step=3")
    await page.fill(".step-number", "7")
    await page.press(".step-number", "Enter")
    await page.wait_for_url("**?step=7")
    assert await page.locator(".seat.acting .marker").count() == 1, "a replay marks whose turn it is"
    await screenshots(page, "replay-chinese-ten")
    await page.get_by_title("the last step (End)").click()
    await page.wait_for_url(f"**?step={steps}")
    result = await page.inner_text(".result")
    for seat in info.result.seats:
        assert f"{seat.place}. {seat.name} (seat {seat.seat}) {seat.score}" in result
    await page.keyboard.press("Home")
    await page.wait_for_url("**?step=1")
    shared = await browser.new_page()  # the address is shareable: it opens at its step
    await shared.goto(f"{viewer.url}match/{info.match_id}?step={steps - 1}")
    await shared.wait_for_selector("#controls")
    assert await shared.input_value(".step-number") == str(steps - 1)


async def test_a_tournament_page_shows_progress_crosstable_ratings_and_replays(
    referee: Croupier, admin: Admin, viewer: WebViewer, browser: Any
) -> None:
    assert viewer.hub.data is not None
    await tournament_in(viewer.hub.data / "results.db", referee, admin)
    page = await browser.new_page()
    await page.goto(viewer.url)
    await page.get_by_role("link", name="standings").click()
    await page.wait_for_selector("section.game")
    text = await page.inner_text("main")
    assert "web-cup" in text and "3 / 4 matches" in text and "1 playing" not in text
    await page.wait_for_selector(".ratings-slot table")  # fitted after the tables are drawn
    ratings = page.locator(".ratings-slot table.list").first
    rows = await ratings.locator("tbody tr").all_inner_texts()
    assert len(rows) == 2 and {"alice", "bob"} <= {row.split("\t")[1] for row in rows}
    assert all("–" in row for row in rows), "each rating has its 95% interval"
    cross = await page.inner_text("table.cross")
    assert "/3" in cross, "three pairwise results between the two bots"
    await page.locator("details summary").click()
    await screenshots(page, "tournament")
    await page.get_by_role("link", name="replay").first.click()
    await page.wait_for_selector("#controls")
    assert "alice" in await page.inner_text(".seats")


async def tournament_in(db: Path, referee: Croupier, admin: Admin) -> None:
    """A Chinese Ten tournament of alice and bob in ``db``: two deals, each in both seatings,
    the last not played yet."""
    from croupier.clients.results.schedule import MatchKey, ScheduledMatch
    from croupier.clients.results.store import SeatResult, Store

    keys = [MatchKey("chinese_ten", 1, 0, deal, rotation) for deal in (0, 1) for rotation in (0, 1)]
    with Store(db) as store:
        tournament = store.open_tournament("web-cup", "fingerprint", {}, again=False)
        store.schedule(
            tournament.id,
            [
                ScheduledMatch(k, 100 + k.deal, ("alice", "bob")[:: 1 if k.rotation == 0 else -1])
                for k in keys
            ],
        )
        for _, record in sorted(store.matches(tournament.id).items(), key=lambda item: str(item[0]))[:3]:
            seats = [admin_pb2.SeatSpec(name=name) for name in record.seats]
            created = await admin.create("chinese_ten", seats, {"target": 100}, seed=record.seed)
            store.mark_started(record.id, created.match.match_id, None)
            await asyncio.wait_for(await play(referee, created, RandomBot), WAIT)
            info = await admin.wait(created.match.match_id)
            results = [SeatResult(s.seat, s.name, s.score, s.place) for s in info.result.seats]
            store.record_result(record.id, results, created.journal)


async def test_an_exported_replay_opens_offline_and_steps(
    referee: Croupier, admin: Admin, browser: Any, tmp_path: Path
) -> None:
    page_file, journal = await exported(referee, admin, tmp_path)
    await browser.set_offline(True)
    page = await browser.new_page()
    await page.goto(f"{page_file.as_uri()}?step=2")
    await page.wait_for_selector("#controls")
    assert await page.input_value(".step-number") == "2"
    assert EVIL in await page.inner_text(".seats"), "the name as text, no script of it run"
    await page.keyboard.press("End")
    await page.wait_for_selector(".result")
    result = await page.inner_text(".result")
    assert "result" in result
    # each seat's luck and skill, as the terminal's replay and croupier matches show them
    records = read_records(journal)
    end = records[-1]
    assert isinstance(end, End)
    luck = records_luck(records, end.seed, default_evaluator("chinese_ten"), fresh=False)
    assert any(luck), "the stock's turn-ups gave someone luck"
    for seat, value in enumerate(luck):
        assert value is not None
        assert luck_and_skill(end.places, seat, value) in result
    assert "luck: what chance gave the seat after the deal" in result


async def test_pair_battle_in_real_time_is_drawn_as_it_happens_then_replayed(
    referee: Croupier, admin: Admin, viewer: WebViewer, browser: Any
) -> None:
    created = await admin.create("pair_battle", 3, {}, seed=21)
    match_id = created.match.match_id
    page = await browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    await page.goto(f"{viewer.url}match/{match_id}")  # before it starts: the page waits for it
    bots = await play(referee, created, RandomBot)
    await page.wait_for_selector(".match[data-status='running']")  # drawn live, frame by frame
    text = await page.inner_text(".match")
    assert "Pair Battle" in text and "real time" in text and "reserve" in text and "▶" not in text
    await screenshots(page, "live-pair-battle")
    await asyncio.wait_for(bots, WAIT)
    await page.wait_for_selector("#controls")
    assert "result" in await page.inner_text(".result") and not errors
    cards_in = "(where) => [...document.querySelectorAll(where + ' [data-card]')].map(c => c.dataset.card)"
    laid = await page.evaluate(cards_in, ".seat .laid")
    centre = await page.evaluate(cards_in, ".centre .rank-group")
    # (a seat shows its last 16 laid cards)
    assert laid and set(laid) <= set(centre), "the centre draws the laid cards themselves, by rank"
    assert "×" not in await page.inner_text(".centre")


async def test_no_page_asks_for_what_the_viewer_does_not_have(
    referee: Croupier, admin: Admin, viewer: WebViewer, browser: Any
) -> None:
    """No 404 in the browser's console: the icon every page asks for (/favicon.ico) is served, and
    so is each of the pages' resources."""
    created = await admin.create("platinum_fish", 2, {}, seed=3)
    await asyncio.wait_for(await play(referee, created, RandomBot), WAIT)
    await admin.wait(created.match.match_id)
    page = await browser.new_page()
    failed: list[str] = []
    page.on("console", lambda message: message.type == "error" and failed.append(message.text))
    page.on("response", lambda response: response.status >= 400 and failed.append(response.url))
    for path in ("", "follow", "ladders", f"match/{created.match.match_id}"):
        await page.goto(f"{viewer.url}{path}", wait_until="networkidle")
    assert failed == []
