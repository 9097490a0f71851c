"""A duplicate tournament watched live: the viewer ``croupier tournament --web`` starts holds the
organiser's token and draws the sealed rotations as they are played (public facts only), while an
anonymous gRPC client and the browser of a viewer without the token get no sealed match: the
lobby says "sealed until its twin ends" and links the match once it may be watched. Also the
standings page's first paint (printed, never asserted). Headless Chromium through Playwright."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import grpc
import pytest

from croupier.clients.web.app import start_web
from croupier.v1 import spectator_pb2, spectator_pb2_grpc
from tests.clients.web import REPO, browser
from tests.clients.web.test_web_browser import dom_state
from tests.server.botclient import WAIT

__all__ = ["browser"]

DUPLICATE = """
name = "duplicate"
concurrency = 2
[clock]
decision_ms = 5000
[[games]]
game = "chinese_ten"
seats = 2
deals = 2
options = { target = 100 }
[[bots]]
name = "ann"
command = "python -m croupier.clients.cli bot --strategy random --pace-ms 150"
[[bots]]
name = "ben"
command = "python -m croupier.clients.cli bot --strategy random --pace-ms 150"
"""
"""Two deals, each played in both seatings at once: every live match has a live twin (sealed)."""


class Tournament:
    """``croupier tournament --web`` in a subprocess, its output read as it comes."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.lines: list[str] = []
        self.changed = asyncio.Event()
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        async for raw in self.process.stdout:
            self.lines.append(raw.decode())
            self.changed.set()

    async def line(self, pattern: str) -> re.Match[str]:
        """The first match of ``pattern`` in its output, once it is printed."""
        async with asyncio.timeout(WAIT):
            while True:
                for line in self.lines:
                    if found := re.search(pattern, line):
                        return found
                if self.reader.done():
                    raise AssertionError("the tournament ended without printing it:\n" + "".join(self.lines))
                self.changed.clear()
                await self.changed.wait()


@pytest.fixture
async def tournament(tmp_path: Path) -> AsyncIterator[Tournament]:
    (tmp_path / "t.toml").write_text(DUPLICATE)
    command = [
        "-m",
        "croupier.clients.cli",
        "tournament",
        str(tmp_path / "t.toml"),
        "--data",
        str(tmp_path / "data"),
    ]
    command += ["--samples", "50", "--plain", "--web", "127.0.0.1:0"]
    process = await asyncio.create_subprocess_exec(
        sys.executable, *command, cwd=REPO, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    running = Tournament(process)
    try:
        yield running
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
        running.reader.cancel()


async def lobby_json(url: str) -> dict[str, Any]:
    async with aiohttp.ClientSession() as session, session.get(f"{url}api/lobby") as response:
        lobby: dict[str, Any] = await response.json()
        return lobby


async def until(check: Any, what: str) -> Any:
    """``await check()`` once it is truthy, retried (a guard against hangs, not a timing check)."""
    async with asyncio.timeout(WAIT):
        while not (found := await check()):
            await asyncio.sleep(0.2)
    return found


async def test_the_runners_viewer_shows_sealed_matches_live_and_nobody_else_sees_them(
    tournament: Tournament, browser: Any, tmp_path: Path
) -> None:
    referee = (await tournament.line(r"referee on (\S+?);")).group(1)
    url = (await tournament.line(r"watch it in a browser: (\S+)")).group(1)

    async def live_sealed() -> Any:
        running = [m for m in (await lobby_json(url))["matches"] if m["status"] == "running"]
        return running[0] if running and all(m["sealed"] for m in running) else None

    watched = await until(live_sealed, "a live match, sealed by its twin")
    match_id = watched["match_id"]
    assert watched["watchable"], "the organiser's viewer may show it"

    # an anonymous gRPC client: the listing says it is sealed, the feed is refused
    async with grpc.aio.insecure_channel(referee) as channel:
        anonymous = spectator_pb2_grpc.SpectatorServiceStub(channel)
        listed = await anonymous.ListMatches(spectator_pb2.ListMatchesRequest())
        assert next(m for m in listed.matches if m.match_id == match_id).sealed
        feed = anonymous.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id))
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await feed.read()
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION

    # the runner's viewer: the lobby's link opens the table, which goes on move after move
    page = await browser.new_page()
    await page.goto(url)
    row = page.locator(f'tr[data-match="{match_id}"]')
    await row.get_by_role("link", name="watch").click()
    await page.wait_for_selector('.match[data-status="running"]')
    first = (await dom_state(page))["seq"]

    async def moved_on() -> Any:
        now = await dom_state(page)
        return now if now["seq"] > first else None

    state = await until(moved_on, "a later move drawn")
    hands = await page.evaluate(
        "() => [...document.querySelectorAll('.seat')].map(s => s.querySelector('.cards').className)"
    )
    assert state["status"] == "running" and hands == ["cards backs"] * 2, "every hand face down"
    assert await page.locator(".problem").count() == 0

    # a viewer without the token (anyone's croupier web): no link, no error page, no frame
    other = await start_web(referee, "127.0.0.1:0", tmp_path / "data")
    try:
        anonymous_page = await browser.new_page()
        await anonymous_page.goto(other.url)
        cell = anonymous_page.locator(f'tr[data-match="{match_id}"] .sealed')
        await cell.wait_for()
        assert await cell.inner_text() == "sealed until its twin ends"
        assert await anonymous_page.locator(f'tr[data-match="{match_id}"] a').count() == 0
        await anonymous_page.goto(f"{other.url}match/{match_id}")
        note = anonymous_page.locator(".note.sealed")
        await note.wait_for()
        assert "sealed until its twin ends" in await note.inner_text()
        assert await anonymous_page.locator(".problem, .match").count() == 0
        async with aiohttp.ClientSession() as session:
            for what in ("record", "live"):
                async with session.get(f"{other.url}api/matches/{match_id}/{what}") as response:
                    assert response.status == 409 and (await response.json())["sealed"] is True

        # follow mode on the runner's viewer opens a live match by itself
        follower = await browser.new_page()
        await follower.goto(f"{url}follow")
        await follower.wait_for_url(re.compile(r"/match/[^?]+\?follow=1$"))
        await follower.wait_for_selector(".match")
        assert await follower.locator("nav.following").count() == 1

        # once the tournament is over, the match is anyone's: the sealed page opens it by itself
        assert await asyncio.wait_for(tournament.process.wait(), 240) == 0, "".join(tournament.lines)
        await anonymous_page.wait_for_selector("#controls", timeout=WAIT * 1000)
        await anonymous_page.goto(other.url)
        await (
            anonymous_page.locator(f'tr[data-match="{match_id}"]')
            .get_by_role("link", name="replay")
            .wait_for()
        )

        # the standings page: its tables first, the ratings after (printed: a figure, not a check)
        standings = await browser.new_page()
        started = await standings_paint(standings, f"{other.url}tournament/1")
        print(f"\nstandings page, 4 matches: tables painted {started[0]:.0f} ms, ratings {started[1]:.0f} ms")
    finally:
        await other.stop()


async def standings_paint(page: Any, address: str) -> tuple[float, float]:
    """Milliseconds from navigation to the first table drawn, and to the ratings table drawn."""
    await page.goto(address)
    await page.wait_for_selector("section.game table.list")
    tables = await page.evaluate("performance.now()")
    await page.wait_for_selector(".ratings-slot table")
    ratings = await page.evaluate("performance.now()")
    return float(tables), float(ratings)
