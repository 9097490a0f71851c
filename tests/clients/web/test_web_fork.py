"""The web replay in a real browser (headless Chromium through Playwright): a bot's comment beside
its move, and "play on from here", which forks the finished match at the step shown and opens
the fork live; a page of another site cannot make the viewer fork. Screenshots go to
tests/artifacts/."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from croupier.clients.bots import HeuristicBot
from croupier.clients.sdk import Bot, Client, Commented
from croupier.clients.web.app import WebViewer, start_web
from croupier.server.app import Croupier, create_server
from croupier.server.journal import Act, read_records
from tests.clients.web import ARTIFACTS, browser, viewer
from tests.server.botclient import ADMIN_TOKEN, WAIT, Admin

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
    forked = await page.locator(".note.forked").inner_text()
    assert forked.startswith(f"forked from {match_id} at step {step}")
    assert await page.locator(".note.forked a").get_attribute("href") == f"/match/{match_id}?step={step}"
    shown = await page.locator(".result .result-list b").all_inner_texts()  # the fork's own players
    assert sorted(shown) == ["random", "random"]
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


@pytest.mark.parametrize("where", ["its referee", "no referee", "a referee that never knew it"])
async def test_a_finished_match_forks_wherever_its_journal_is_with_the_fork_s_own_players(
    referee: Croupier, admin: Admin, tmp_path: Path, where: str
) -> None:
    """On the viewer's referee if it knows the match; else (``make run`` or ``croupier match`` played
    it and their referee is gone, or the viewer watches ``make serve``'s, which never had it) the
    journal on disk is forked here, as ``croupier replay --fork`` forks it. Either way the fork names
    its own players (what plays them), and its replay says where it came from."""
    match_id = await finished(referee, admin)
    data = tmp_path / "web-data"
    (data / "referee" / "matches").mkdir(parents=True)
    shutil.copy(referee.referee.matches_dir / f"{match_id}.jsonl", data / "referee" / "matches")
    other = await create_server("127.0.0.1:0", tmp_path / "other", admin_token=ADMIN_TOKEN)
    port = {"its referee": referee.port, "no referee": 1, "a referee that never knew it": other.port}[where]
    server = f"127.0.0.1:{port}"
    web = await start_web(server, "127.0.0.1:0", data)
    try:
        async with aiohttp.ClientSession() as session:
            async with session.post(
                f"{web.url}api/matches/{match_id}/fork", data='{"step": 6}', headers={"X-Croupier-Fork": "1"}
            ) as response:
                answer = await response.json()
                assert response.status == 200, answer
            fork_id = answer["match_id"]
            assert answer["forked_from"] == f"{match_id}@6"
            deadline = asyncio.get_running_loop().time() + WAIT
            while True:  # 409 while the fork plays
                async with session.get(f"{web.url}api/matches/{fork_id}/record") as response:
                    if response.status == 200:
                        header = (await response.json())["header"]
                        break
                    assert response.status == 409, await response.text()
                assert asyncio.get_running_loop().time() < deadline, "the fork never finished"
                await asyncio.sleep(0.2)
    finally:
        await web.stop()
        await other.stop(grace=None)
    assert header["players"] == ["heuristic", "heuristic"] and header["status"] == "finished"
    assert header["forked_from"] == f"{match_id}@6" and header["result"]
    forks = referee.referee.matches_dir if where == "its referee" else data / "web-forks" / "matches"
    assert (forks / f"{fork_id}.jsonl").is_file()  # replayable once the viewer stops
