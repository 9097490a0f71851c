"""The web replay in a real browser (headless Chromium through Playwright): a bot's comment beside
its move, and "play on from here", which forks the finished match at the step shown and opens
the fork live; a page of another site cannot make the viewer fork. Screenshots go to
tests/artifacts/."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp

from croupier.clients.bots import HeuristicBot
from croupier.clients.sdk import Bot, Client, Commented
from croupier.clients.web.app import WebViewer
from croupier.server.app import Croupier
from croupier.server.journal import Act, read_records
from tests.clients.web import ARTIFACTS, browser, viewer
from tests.server.botclient import WAIT, Admin

__all__ = ["browser", "viewer"]


class Explaining(Bot):
    def choose(self, view: Any, legal: list[Any]) -> Commented[Any]:
        return Commented(0, f"the first of {len(legal)}: seat {1 - self.match.seat} holds the Ks, p=0.7")


async def finished(referee: Croupier, admin: Admin) -> str:
    created = await admin.create("chinese_ten", 2, {"target": 100}, seed=12)
    clients = [
        Client(bot, f"127.0.0.1:{referee.port}", [token], stop_after=1)
        for bot, token in zip([Explaining, HeuristicBot], created.seat_tokens, strict=True)
    ]
    await asyncio.wait_for(asyncio.gather(*(c.run() for c in clients)), WAIT)
    await admin.wait(created.match.match_id)
    return created.match.match_id


async def test_the_replay_shows_a_bot_s_comment_and_plays_on_from_a_step(
    referee: Croupier, admin: Admin, viewer: WebViewer, browser: Any
) -> None:
    match_id = await finished(referee, admin)
    records = read_records(referee.referee.matches_dir / f"{match_id}.jsonl")
    first = next(i for i, r in enumerate(records) if isinstance(r, Act) and r.seat == 0)  # steps: from 1
    page = await browser.new_page()
    await page.goto(f"{viewer.url}match/{match_id}?step={first}")
    said = page.locator(".events .comment")
    await said.wait_for()
    assert await said.inner_text() == f"its bot said: {records[first].comment}"  # type: ignore[union-attr]
    ARTIFACTS.mkdir(exist_ok=True)
    await page.set_viewport_size({"width": 1100, "height": 640})
    clip = {"x": 0, "y": 40, "width": 1100, "height": 370}  # the controls, the table, the comment
    await page.screenshot(path=str(ARTIFACTS / "web-replay-comment.png"), clip=clip)
    await page.goto(f"{viewer.url}match/{match_id}?step={first + 1}")  # seat 1's move: none
    await page.wait_for_selector(f".match[data-seq='{first + 1}']")
    assert await page.locator(".events .comment").count() == 0

    step = first + 2
    await page.goto(f"{viewer.url}match/{match_id}?step={step}")
    await page.locator("button.fork").wait_for()
    await page.locator("select.fork-bots").select_option("random")
    await page.locator("button.fork").click()
    await page.wait_for_url(lambda url: "/match/" in url and match_id not in url, timeout=WAIT * 1000)
    fork_id = page.url.split("?")[0].rsplit("/", 1)[1]
    assert fork_id != match_id
    await page.wait_for_selector(".match[data-status='finished']", timeout=WAIT * 1000)
    info = referee.referee.info(fork_id)
    assert info.forked_from == f"{match_id}@{step}"
    fork_records = read_records(referee.referee.matches_dir / f"{fork_id}.jsonl")
    assert fork_records[1 : step + 1] == records[1 : step + 1]


async def test_no_other_site_and_no_live_match_can_be_forked_through_the_viewer(
    referee: Croupier, admin: Admin, viewer: WebViewer
) -> None:
    match_id = await finished(referee, admin)
    live = await admin.create("chinese_ten", 2, {"target": 100}, seed=3)
    url = f"{viewer.url}api/matches/{{}}/fork"
    async with aiohttp.ClientSession() as session:
        # what another site's form or script may send without asking first: no header of ours
        async with session.post(url.format(match_id), data='{"step": 3}') as response:
            assert response.status == 403 and "X-Croupier-Fork" in (await response.json())["error"]
        headers = {"X-Croupier-Fork": "1"}
        async with session.post(
            url.format(live.match.match_id), data='{"step": 1}', headers=headers
        ) as response:
            assert response.status == 409 and "not over" in (await response.json())["error"]
        async with session.post(url.format(match_id), data='{"step": "x"}', headers=headers) as response:
            assert response.status == 400
        async with session.options(
            url.format(match_id), headers={"Origin": "https://evil.example"}
        ) as response:
            assert "Access-Control-Allow-Origin" not in response.headers  # a preflight is never allowed
    assert [m for m in referee.referee.matches.values() if m.forked_from] == []
