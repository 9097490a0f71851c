"""A person's seat in the web viewer, in a real browser (headless Chromium through Playwright): a
whole match of each game played by keys and clicks against a bundled bot, with every message the
page is sent checked against the seat's own views re-run from the journal; a refused move shows
its reason and changes nothing; a browser without the seat's cookie cannot act, however it tries."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from croupier.clients.bots import HeuristicBot
from croupier.clients.sdk import Client
from croupier.clients.web.app import WebViewer, start_web
from croupier.clients.web.frames import plain
from croupier.clients.web.seat import HumanSeat
from croupier.engine.games import get_game
from croupier.engine.rng import Rng
from croupier.server.app import Croupier
from croupier.server.journal import End, Header, read_records
from croupier.server.messages import apply_record
from croupier.v1 import match_pb2
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


async def play_to_the_end(page: Any, game: str) -> int:
    """Keys (and, in Pair Battle, clicks on the hand then Enter) until the match is over; how many
    moves the person made."""
    moves = 0
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PLAY_SECONDS
    while loop.time() < deadline:
        if await page.locator(".match[data-status='finished']").count():
            return moves
        ready = page.locator(".your-move[data-pending='0'] button.action:not([disabled])")
        if not await ready.count():
            await page.wait_for_timeout(50)
            continue
        if game == "pair_battle" and moves % 2:  # every other set picked by clicking its cards
            text = await ready.first.get_attribute("data-action")
            for card in (text or "").split():
                await page.locator(f".seat.mine svg.card[data-card='{card}']").click()
            await page.keyboard.press("Enter")
        else:
            key = await ready.first.locator("kbd").inner_text()
            await page.keyboard.press(key)
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


async def wait_finished(table: Table) -> Any:
    while True:
        info = table.referee.referee.info(table.match_id)
        if info.status == match_pb2.MATCH_STATUS_FINISHED and info.result.seats:
            return info
        await asyncio.sleep(0.05)
