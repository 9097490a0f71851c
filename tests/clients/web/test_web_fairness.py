"""The web viewer shares live matches out by browser address: one visitor with a page open on
every live match cannot lock the other browsers out of the rest (before, its pages took every
feed the referee grants the viewer, 16, until those matches ended)."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack

import aiohttp
import pytest

from croupier.clients.web import hub
from croupier.clients.web.app import WebViewer
from croupier.clients.web.hub import LIVE_PER_CLIENT
from tests.clients.web import viewer
from tests.server.botclient import WAIT, Admin

__all__ = ["viewer"]

ONE, OTHER = "127.0.0.1", "127.0.0.2"
"""Two browsers' addresses: every 127.x.y.z is this machine's loopback."""


async def first_message(session: aiohttp.ClientSession, url: str, pages: AsyncExitStack) -> tuple[int, str]:
    """A live page's stream opened (kept open in ``pages``): its status, and its first event
    ("message": a snapshot of the table; "end": the feed was refused or ended)."""
    response = await pages.enter_async_context(session.get(url))
    if response.status != 200:
        return response.status, ""
    fields: dict[str, str] = {}
    async with asyncio.timeout(WAIT):
        async for raw in response.content:
            line = raw.decode().rstrip("\n")
            if line:
                name, _, value = line.partition(": ")
                fields[name] = value
            elif "data" in fields:
                return response.status, fields.get("event", "message")
    return response.status, "closed"


async def browser_from(address: str, stack: AsyncExitStack) -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(local_addr=(address, 0), limit=0)
    return await stack.enter_async_context(aiohttp.ClientSession(connector=connector))


async def test_one_browser_with_every_live_match_open_leaves_the_others_theirs(
    admin: Admin, viewer: WebViewer
) -> None:
    matches = [
        (await admin.create("chinese_ten", 2, {"target": 100}, seed=n)).match.match_id for n in range(17)
    ]
    await viewer.hub.refresh_lobby()
    async with AsyncExitStack() as pages:
        greedy = await browser_from(ONE, pages)
        opened = [
            await first_message(greedy, f"{viewer.url}api/matches/{m}/live", pages) for m in matches[:16]
        ]
        other = await browser_from(OTHER, pages)
        theirs = await first_message(other, f"{viewer.url}api/matches/{matches[16]}/live", pages)
        assert theirs == (200, "message"), "another browser still gets a live table"
        assert opened[:LIVE_PER_CLIENT] == [(200, "message")] * LIVE_PER_CLIENT
        assert {status for status, _ in opened[LIVE_PER_CLIENT:]} == {503}, "its share, no more"
        # and a match the first browser has open costs the other nothing more
        assert await first_message(other, f"{viewer.url}api/matches/{matches[0]}/live", pages) == (
            200,
            "message",
        )


async def test_a_match_nobody_has_open_any_more_stops_holding_a_feed(
    admin: Admin, viewer: WebViewer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hub, "IDLE_SECONDS", 0.1)
    match_id = (await admin.create("chinese_ten", 2, {"target": 100})).match.match_id
    async with AsyncExitStack() as pages:
        browser = await browser_from(ONE, pages)
        assert await first_message(browser, f"{viewer.url}api/matches/{match_id}/live", pages) == (
            200,
            "message",
        )
        assert match_id in viewer.hub.live, "followed while its page is open"
    async with asyncio.timeout(WAIT):
        while match_id in viewer.hub.live:
            await asyncio.sleep(0.05)


async def events_until_end(response: aiohttp.ClientResponse) -> str:
    """The data of a live page's ``end`` event, read on to it."""
    event = ""
    async with asyncio.timeout(WAIT):
        async for raw in response.content:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("data: ") and event == "end":
                return line.removeprefix("data: ")
            elif not line:
                event = ""
    return "closed without an end"


async def test_browsers_holding_every_feed_give_one_up_for_a_browser_with_none(
    admin: Admin, viewer: WebViewer
) -> None:
    """Four addresses with four live pages each hold the referee's 16 feeds for this viewer; a
    fifth still gets a live table: one of theirs is given up for it (before, its feed was refused
    by the referee, RESOURCE_EXHAUSTED, and it got no live match at all)."""
    matches = [
        (await admin.create("chinese_ten", 2, {"target": 100}, seed=n)).match.match_id for n in range(17)
    ]
    await viewer.hub.refresh_lobby()
    async with AsyncExitStack() as pages:
        held: dict[str, aiohttp.ClientResponse] = {}
        for browser in range(4):
            session = await browser_from(f"127.0.0.{browser + 1}", pages)
            for match_id in matches[browser * 4 : browser * 4 + 4]:
                url = f"{viewer.url}api/matches/{match_id}/live"
                held[match_id] = await pages.enter_async_context(session.get(url))
                assert held[match_id].status == 200
        followed = dict(viewer.hub.live)
        assert len(followed) == hub.FEEDS
        fifth = await browser_from("127.0.0.5", pages)
        url = f"{viewer.url}api/matches/{matches[16]}/live"
        assert await first_message(fifth, url, pages) == (200, "message")
        [given] = [match_id for match_id, match in followed.items() if match.given_up]
        assert "given up for another browser" in await events_until_end(held[given])
        assert len([m for m in viewer.hub.live.values() if not m.done.is_set()]) == hub.FEEDS
