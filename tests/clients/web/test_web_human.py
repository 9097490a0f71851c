"""A person's seat in the web viewer, in a real browser (headless Chromium through Playwright): a
whole match of each game played by keys and clicks against a bundled bot, with every message the
page is sent checked against the seat's own views re-run from the journal; a refused move shows
its reason and changes nothing; a browser without the seat's cookie cannot act, however it tries."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from croupier.clients.bots import HeuristicBot
from croupier.clients.sdk import Client
from croupier.clients.web.app import WebViewer, start_web
from croupier.clients.web.frames import plain
from croupier.clients.web.seat import COOKIE, HumanSeat
from croupier.engine.games import get_game
from croupier.engine.rng import Rng
from croupier.server.app import Croupier
from croupier.server.journal import Act, End, Header, Refuse, read_records
from croupier.server.messages import apply_record
from croupier.v1 import bots_pb2, match_pb2
from croupier.wire import convert
from croupier.wire.seat_view import shown
from tests.clients.web import ARTIFACTS, CARD, Recorder, browser, cards_of
from tests.server.botclient import WAIT, Admin

__all__ = ["browser"]

GAMES = {
    "chinese_ten": {"target": 60},
    "spoil_five": {},
    "platinum_fish": {},
    "pair_battle": {"countdown_tick": 0.0},
}
HUMAN_CLOCKS = {"decision_ms": 60_000, "bank_ms": 300_000}
PLAY_SECONDS = 240


class Table:
    """A match with the person in seat 0 (this viewer's seat) and a heuristic bot in seat 1."""

    def __init__(self, referee: Croupier, viewer: WebViewer, match_id: str, bot: Client) -> None:
        self.referee, self.viewer, self.match_id, self.bot = referee, viewer, match_id, bot
        self.bot_task = asyncio.ensure_future(bot.run())


@pytest.fixture
async def seated(referee: Croupier, admin: Admin, tmp_path: Path, request: Any) -> AsyncIterator[Table]:
    game, options = request.param
    created = await admin.create(game, 2, options, seed=11, **HUMAN_CLOCKS)
    server = f"127.0.0.1:{referee.port}"
    seat = HumanSeat(server)
    viewer = await start_web(server, "127.0.0.1:0", tmp_path / "web", seat=seat)
    seat.take([created.seat_tokens[0]], matches=1)
    bot = Client(HeuristicBot, server, [created.seat_tokens[1]], stop_after=1)
    table = Table(referee, viewer, created.match.match_id, bot)
    yield table
    bot.stop()
    await asyncio.gather(table.bot_task, return_exceptions=True)
    await viewer.stop()


def seat_views(journal: Path, seat: int) -> tuple[list[Any], set[str]]:
    """Every view the seat had over the match, by the one definition (wire/seat_view.py), re-run
    from the journal; and every card it ever knew (its views, and the events it was told)."""
    records = read_records(journal)
    head, end = records[0], records[-1]
    assert isinstance(head, Header) and isinstance(end, End)
    spec = get_game(head.game)
    state = spec.new_game(spec.options(head.options), Rng(end.seed))
    views = [plain(shown(state, seat))]
    known = cards_of(shown(state, seat))
    for record in records:
        events = apply_record(spec, state, record)
        views.append(plain(shown(state, seat)))
        known |= cards_of(shown(state, seat))
        known |= {card for event in events for card in CARD.findall(str(event))}  # events are public
    return views, known


def page_messages(recorded: str) -> list[dict[str, Any]]:
    """The seat feed's messages, as the browser got them."""
    return [json.loads(data) for data in re.findall(r"^data: (\{.*\})$", recorded, re.M) if '"you"' in data]


async def play_to_the_end(page: Any, game: str, over: Callable[[], bool] | None = None) -> int:
    """Keys (and, in Pair Battle, clicks on the hand then Enter) until the match is over (or, given,
    until ``over()``); how many moves the person made."""
    from playwright.async_api import TimeoutError as PlaywrightTimeout  # only where a browser runs

    moves = 0
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PLAY_SECONDS
    while loop.time() < deadline:
        if over() if over is not None else await page.locator(".match[data-status='finished']").count():
            return moves
        ready = page.locator(".your-move[data-pending='0'] button.action:not([disabled])")
        if not await ready.count():
            await page.wait_for_timeout(50)
            continue
        try:  # the page redraws as the match goes on: a button counted may be gone a moment later
            if game == "pair_battle" and moves % 2:  # every other set picked by clicking its cards
                text = await ready.first.get_attribute("data-action", timeout=1000)
                for card in (text or "").split():
                    await page.locator(f".seat.mine svg.card[data-card='{card}']").click(timeout=1000)
                await page.keyboard.press("Enter")
            else:
                key = await ready.first.locator("kbd").inner_text(timeout=1000)
                await page.keyboard.press(key)
        except PlaywrightTimeout:
            continue
        moves += 1
        await page.wait_for_timeout(30)
    raise AssertionError(f"the match did not end within {PLAY_SECONDS} s")


@pytest.mark.parametrize("seated", list(GAMES.items()), ids=list(GAMES), indirect=True)
async def test_a_person_plays_a_whole_match_and_sees_only_their_seat(seated: Table, browser: Any) -> None:
    relay = Recorder(seated.viewer.url)
    url = await relay.start()
    page = await browser.new_page()
    assert seated.viewer.seat is not None
    await page.goto(f"{url}seat/{seated.viewer.seat.new_link()}")
    await page.wait_for_url(f"{url}play")
    await page.locator(".match").wait_for(timeout=WAIT * 1000)
    game = await page.evaluate("document.querySelector('.match').className.match(/game-(\\w+)/)[1]")
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"web-seat-{game}.png"))
    moves = await play_to_the_end(page, game)
    info = await asyncio.wait_for(wait_finished(seated), WAIT)
    await relay.stop()
    assert moves > 0 and info.result.seats
    journal = seated.referee.referee.matches_dir / f"{seated.match_id}.jsonl"
    views, known = seat_views(journal, 0)
    messages = page_messages(relay.text())
    playing = [m for m in messages if m.get("scene") and m["header"]["status"] == "running"]
    assert playing, "the page was sent no view of the match"
    for message in playing:
        assert message["scene"]["view"] in views, "the page was shown a view the seat never had"
        text = json.dumps(message)
        assert set(CARD.findall(text)) <= known, (
            f"a card seat 0 never knew: {set(CARD.findall(text)) - known}"
        )
    assert (await page.locator(".result").count()) == 1
    assert (await page.locator(".your-move .results").inner_text()).startswith("results\nseating 1: you ")


@pytest.mark.parametrize("seated", [("chinese_ten", {"target": 60})], ids=["chinese_ten"], indirect=True)
async def test_the_seat_page_speaks_to_its_person_in_the_second_person(seated: Table, browser: Any) -> None:
    """The referee's "seat 0 plays", "seat 0's 7h captures", "seat 0 turns up" are "you play",
    "your 7h captures", "you turn up" on seat 0's page; another seat's stay in the third person."""
    page = await browser.new_page()
    assert seated.viewer.seat is not None
    await page.goto(f"{seated.viewer.url}seat/{seated.viewer.seat.new_link()}")
    await page.locator(".match").wait_for(timeout=WAIT * 1000)
    said = await page.evaluate(
        """(lines) => lines.map((line) =>
            window.Croupier.words(line, Object.assign(["you", "bob"], { mine: 0 })).textContent)""",
        ["seat 0 plays 7h", "seat 0's 7h captures 3c", "seat 0 turns up Kd",
         "seat 0 (dealer) captures the four", "seat 0 was refused: too late", "seat 1 plays 2s",
         "seat 1's 5h captures 5c"],
    )  # fmt: skip
    assert said == [
        "you play 7♥", "your 7♥ captures 3♣", "you turn up K♦", "you (dealer) capture the four",
        "you were refused: too late", "bob plays 2♠", "bob's 5♥ captures 5♣",
    ]  # fmt: skip


async def wait_finished(table: Table) -> Any:
    while True:
        info = table.referee.referee.info(table.match_id)
        if info.status == match_pb2.MATCH_STATUS_FINISHED and info.result.seats:
            return info
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("seated", [("spoil_five", {})], ids=["spoil_five"], indirect=True)
async def test_a_refused_move_shows_its_reason_and_changes_nothing(seated: Table, browser: Any) -> None:
    page = await browser.new_page()
    assert seated.viewer.seat is not None
    await page.goto(f"{seated.viewer.url}seat/{seated.viewer.seat.new_link()}")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PLAY_SECONDS
    while True:  # play by keys until a card of the hand is not among the legal plays (must follow)
        assert loop.time() < deadline, "no decision came where a card of the hand may not be played"
        state = seated.viewer.seat.state
        asked = state.get("asked")
        ready = page.locator(".your-move[data-pending='0'] button.action")
        if asked and await ready.count() == len(asked["legal"]):
            hand = state["scene"]["view"]["hands"][0]
            listed = {action["cards"][0] for action in asked["legal"] if action["cards"]}
            barred = [card for card in hand if card not in listed]
            if barred and all(action["text"] in hand for action in asked["legal"]):
                break
            await page.keyboard.press(await ready.first.locator("kbd").inner_text())
        await page.wait_for_timeout(30)
    before = (
        await page.locator(".seat.mine").inner_text(),
        await page.locator(".your-move .actions").inner_text(),
    )
    # a card of the hand that may not be played is greyed out, and a click on it is said here, never
    # sent: the referee counts no refusal
    barred_face = page.locator(f".seat.mine svg.card[data-card='{barred[0]}']")
    assert "unplayable" in (await barred_face.get_attribute("class") or "")
    await barred_face.click()
    said = page.locator(".your-move .refused")
    await said.wait_for(timeout=WAIT * 1000)
    assert await said.inner_text() == f"{barred[0]} cannot be played now: choose one of the actions listed"
    await page.wait_for_timeout(500)  # a move sent would have its answer by now
    assert seated.viewer.seat.state.get("refused") is None
    # sent all the same (as by another script of the page), the referee refuses it and says why
    await page.evaluate(
        """([decision_id, card]) => fetch("/api/seat/move", {method: "POST",
             headers: {"Content-Type": "application/json", "X-Croupier-Seat": "1"},
             body: JSON.stringify({decision_id, text: card})})""",
        [asked["decision_id"], barred[0]],
    )
    refused = page.locator(".your-move .refused", has_text="refused: ")
    await refused.wait_for(timeout=WAIT * 1000)
    assert re.fullmatch(r"refused: must follow [a-z ()]+: you hold .+", await refused.inner_text())
    ARTIFACTS.mkdir(exist_ok=True)
    await page.set_viewport_size({"width": 1100, "height": 600})
    await page.screenshot(path=str(ARTIFACTS / "web-seat-refused.png"))  # docs/images/web-seat-spoil-five.png
    after = (
        await page.locator(".seat.mine").inner_text(),
        await page.locator(".your-move .actions").inner_text(),
    )
    assert after == before  # the same hand, the same choices: nothing was played
    assert seated.viewer.seat.state["asked"]["decision_id"] == asked["decision_id"]  # still open
    await page.keyboard.press(await page.locator(".your-move button.action kbd").first.inner_text())
    await refused.wait_for(state="detached", timeout=WAIT * 1000)  # an accepted move clears it


@pytest.mark.parametrize("seated", [("chinese_ten", {"target": 60})], ids=["chinese_ten"], indirect=True)
async def test_only_the_browser_that_opened_the_link_can_act(seated: Table, browser: Any) -> None:
    seat = seated.viewer.seat
    assert seat is not None
    base = seated.viewer.url
    link = f"{base}seat/{seat.new_link()}"
    page = await browser.new_page()
    await page.goto(link)
    await page.locator(".your-move").wait_for()
    cookie = next(c for c in await browser.cookies() if c["name"] == COOKIE)
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert link.rsplit("/", 1)[1] not in page.url  # the spent key is not the page's address
    move = {"decision_id": 1, "index": 0}
    ours = {"X-Croupier-Seat": "1"}
    async with aiohttp.ClientSession() as other:  # another browser: the same link, again
        async with other.get(link, allow_redirects=False) as response:
            assert response.status == 403 and "used already" in await response.text()
        async with other.get(f"{base}play") as response:  # the page itself is no secret
            assert response.status == 200
        async with other.get(f"{base}api/seat/live") as response:
            assert response.status == 403
        async with other.post(f"{base}api/seat/move", json=move, headers=ours) as response:
            assert response.status == 403
    forged = {COOKIE: "x" * 43}
    async with aiohttp.ClientSession(cookies=forged) as other:  # a cookie of its own making
        async with other.post(f"{base}api/seat/move", json=move, headers=ours) as response:
            assert response.status == 403
        async with other.get(f"{base}api/seat/live") as response:
            assert response.status == 403
    held = {COOKIE: cookie["value"]}
    async with aiohttp.ClientSession(cookies=held) as site:  # what another origin's page could send
        async with site.post(f"{base}api/seat/move", data=json.dumps(move)) as response:
            assert response.status == 403  # a form or a simple fetch: no header of ours
        headers = {"X-Croupier-Seat": "1", "Origin": "https://evil.example"}
        async with site.post(f"{base}api/seat/move", json=move, headers=headers) as response:
            assert response.status == 403  # our header, from another origin
        preflight = {"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
        async with site.options(f"{base}api/seat/move", headers=preflight) as response:
            assert "Access-Control-Allow-Origin" not in response.headers
    evil = await browser.new_page()  # a page of another origin, in the very browser holding the seat
    await evil.goto(f"{base}static/style.css".replace("127.0.0.1", "localhost"))
    status = await evil.evaluate(
        """async (url) => { try { const r = await fetch(url, {method: "POST", credentials: "include",
        headers: {"X-Croupier-Seat": "1", "Content-Type": "application/json"}, body: "{}"});
        return r.status; } catch (e) { return "blocked"; } }""",
        f"{base}api/seat/move",
    )
    assert status == "blocked"
    async with aiohttp.ClientSession(cookies=held) as mine:  # the seat's own cookie, bad moves
        for bad in (
            '{"decision_id": true, "index": 0}',
            '{"decision_id": 1, "index": 4294967296}',
            '{"decision_id": 1, "index": 1.5}',
            '{"decision_id": -1, "text": "7h"}',
            '{"text": "7h", "index": 0}',
            '{"text": "' + "7h " * 30 + '"}',
            "[1]",
            "not JSON",
        ):
            async with mine.post(f"{base}api/seat/move", data=bad, headers=ours) as response:
                said = (await response.json())["error"]
                assert response.status == 400 and "\n" not in said, (bad, said)
    assert seat.state["refused"] is None  # nothing of theirs reached the referee
    journal = seated.referee.referee.matches_dir / f"{seated.match_id}.jsonl"
    assert not [r for r in read_records(journal) if isinstance(r, Act | Refuse) and r.seat == 0]


async def test_croupier_match_human_seats_you_in_the_browser(tmp_path: Path, browser: Any) -> None:
    """The README's path: ``croupier match GAME --human --bot heuristic`` prints the seat's link; the
    person plays one deal in each seating. After each match the page shows who won and the scores,
    and the next waits until they ask for it; after the pair, the two seatings combined and the run's
    tables, the page alive with a rematch (the same opponent, new deals) and a way out."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    command = [sys.executable, "-m", "croupier.clients.cli", "match", "platinum_fish", "--human"]
    command += ["--bot", "heuristic", "--data", str(tmp_path / "data"), "--plain", "--isolation", "off"]
    run = await asyncio.create_subprocess_exec(
        *command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env
    )
    assert run.stdout is not None
    said: list[str] = []

    async def read_until(pattern: str) -> re.Match[str]:
        while not (found := re.search(pattern, "".join(said))):
            line = await asyncio.wait_for(run.stdout.readline(), WAIT)  # type: ignore[union-attr]
            assert line, f"croupier match ended before it printed {pattern!r}: " + "".join(said)
            said.append(line.decode())
        return found

    try:
        link = (await read_until(r"your seat: open (http://127\.0\.0\.1:\d+/seat/\S+)"))[1]
        page = await browser.new_page()
        await page.goto(link)
        screen = page.locator(".your-move .result-screen")
        first = await page_match_id(page)
        assert await play_to_the_end(page, "platinum_fish") > 0
        # seating 1's result, and the next seating held back until the person asks for it
        outcome = await screen.locator(".outcome").inner_text(timeout=WAIT * 1000)
        assert re.fullmatch(r"(you|heuristic) won|you and heuristic share first place", outcome), outcome
        scores = await screen.locator(".scores li").all_inner_texts()
        assert sorted(s.split(":")[0] for s in scores) == ["heuristic", "you"], scores
        assert all(re.fullmatch(r"\w+: [12](st|nd), -?\d+ points", s) for s in scores), scores
        await screen.locator("button.next-match").click(timeout=WAIT * 1000)
        await page.locator(".match[data-status='running']").wait_for(timeout=WAIT * 1000)
        second = await page_match_id(page)
        assert second != first
        assert await play_to_the_end(page, "platinum_fish") > 0
        # the pair: seating 2's result, both combined, the run's tables printed, the page still served
        await screen.locator(".final").wait_for(timeout=WAIT * 1000)
        assert (await screen.locator(".outcome").inner_text()).startswith("seating 2: ")
        combined = await screen.locator(".combined-outcome").inner_text()
        assert re.fullmatch(
            r"both seatings together: .+ \((you|heuristic) -?\d+ · (you|heuristic) -?\d+\)", combined
        )
        assert await screen.locator(".final").inner_text() == "The run is over: these are its final results."
        ARTIFACTS.mkdir(exist_ok=True)
        await page.screenshot(path=str(ARTIFACTS / "web-seat-result.png"))
        await read_until(r"│ you +│ +2 │")  # its results table: one match in each seating
        results = await page.locator(".your-move .results").inner_text()
        assert "seating 1: " in results and "seating 2: " in results and "combined, 2 seatings: " in results
        # a rematch: a new run, the same opponent, new deals
        await screen.locator("button.rematch").click()
        rematch = await read_until(r"rematch, (match-platinum_fish-\S+): seed (\d+)")
        await page.locator(".match[data-status='running']").wait_for(timeout=WAIT * 1000)
        assert await page_match_id(page) not in (first, second)
        assert "heuristic" in await page.locator(".match").inner_text()
        assert await play_to_the_end(page, "platinum_fish") > 0
        await screen.locator("button.next-match").click(timeout=WAIT * 1000)
        await page.locator(".match[data-status='running']").wait_for(timeout=WAIT * 1000)
        assert await play_to_the_end(page, "platinum_fish") > 0
        # leaving ends the run; the page keeps its results and says so
        await screen.locator("button.leave").click(timeout=WAIT * 1000)
        said.append((await asyncio.wait_for(run.stdout.read(), WAIT)).decode())
        assert await asyncio.wait_for(run.wait(), WAIT) == 0, "".join(said)
    finally:
        if run.returncode is None:
            run.kill()
            await run.wait()
    out = "".join(said)
    assert out.count("results per bot") == 2 and rematch[1] in out
    assert "the link works once" in out
    await page.locator(".your-move .over").wait_for(timeout=WAIT * 1000)
    assert await screen.locator(".final").inner_text() == "You left the table: these results are final."
    listed = await page.locator(".your-move .results").inner_text()
    assert listed.count("seating ") == 2  # the rematch's pair, on its own


async def page_match_id(page: Any) -> str:
    """The match the seat page shows now (its feed's header)."""
    await page.locator(".match").wait_for(timeout=WAIT * 1000)
    return str(await page.locator(".match").get_attribute("data-match"))


async def test_the_next_match_waits_for_the_seat_to_see_the_last_ones_end() -> None:
    """The runner may learn that a person's match ended before the seat's stream delivers its end:
    holding the next match must wait for that end and for the person, not see the previous
    match's "read" and let the next seating take the result off the page."""
    spec, codec = get_game("chinese_ten"), convert.codec("chinese_ten")
    options = spec.options({"players": 2, "target": 100})
    state = spec.new_game(options, Rng(3))
    seat = HumanSeat("127.0.0.1:1")
    players = [match_pb2.Player(seat=i, name=name) for i, name in enumerate(["you", "bot"])]
    started = bots_pb2.MatchStarted(
        match_id="m1", game="chinese_ten", options=codec.options(options), seat=0, players=players
    )
    await seat._receive(bots_pb2.ServerMessage(match_started=started))
    ready = asyncio.create_task(seat.ready())  # the referee has ended m1; the seat has not heard yet
    await asyncio.sleep(0.05)
    assert not ready.done()
    ended = bots_pb2.MatchEnded(match_id="m1", seat=0, view=codec.view(state.view(0)))
    await seat._receive(bots_pb2.ServerMessage(match_ended=ended))
    await asyncio.sleep(0.05)
    assert not ready.done() and seat.state["next"]  # the result on the page, the next held back
    seat.go_on()
    await asyncio.wait_for(ready, 5)
    assert not seat.state["next"]
