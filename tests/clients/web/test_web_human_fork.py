"""A person plays on from a step of a finished match, in the browser: ``croupier replay MATCH
--fork STEP --human`` (or ``--bot human`` for the seat of their choice), on a referee embedded in
the command or on a running one; the fork gets a person's clocks, and nothing else of its own."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import grpc

from croupier.clients.web.app import WebViewer
from croupier.clients.web.play import SEATS
from croupier.server.app import Croupier
from croupier.server.journal import Header, read_records
from croupier.v1 import match_pb2, spectator_pb2, spectator_pb2_grpc
from tests.clients.terminal.test_fork_cli import finished, forked_journal
from tests.clients.web import ARTIFACTS, browser, viewer
from tests.clients.web.test_web_human import play_to_the_end
from tests.server.botclient import WAIT, Admin

__all__ = ["browser", "viewer"]
LINK = re.compile(r"your seat: open (http://127\.0\.0\.1:\d+/seat/\S+)")


async def person_plays(command: list[str], page: Any) -> str:
    """Run ``croupier ...command``, take the seat its link names, play until it exits; its output."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    run = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "croupier.clients.cli", *command,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
    )  # fmt: skip
    assert run.stdout is not None
    said = ""
    try:
        while not (found := LINK.search(said)):
            line = await asyncio.wait_for(run.stdout.readline(), WAIT)
            assert line, f"it ended before printing the seat's link: {said}"
            said += line.decode()
        await page.goto(found.group(1))
        rest = asyncio.ensure_future(run.stdout.read())
        assert await play_to_the_end(page, "chinese_ten", over=rest.done) > 0
        said += (await asyncio.wait_for(rest, WAIT)).decode()
        assert await asyncio.wait_for(run.wait(), WAIT) == 0, said
    finally:
        if run.returncode is None:
            run.kill()
            await run.wait()
    return said.replace("\n", " ")


async def test_a_person_plays_a_fork_on_from_a_step_in_the_browser(
    referee: Croupier, admin: Admin, browser: Any
) -> None:
    journal = await finished(referee, admin)
    data = journal.parent.parent
    page = await browser.new_page()
    command = [
        "replay",
        journal.stem,
        "--data",
        str(data),
        "--fork",
        "4",
        "--bot",
        "heuristic",
        "--bot",
        "human",
    ]
    output = await person_plays(command, page)
    assert "heuristic, you play on" in output and "over (never rated)" in output
    header = read_records(forked_journal(data, output))[0]
    assert isinstance(header, Header) and header.forked_from == f"{journal.stem}@4"
    assert [p.name for p in header.players] == ["heuristic", "you"]
    original = read_records(journal)[0]
    assert isinstance(original, Header)
    assert (header.clocks.decision, header.clocks.bank) == (60.0, 300.0)  # a person's, not the bots' 5 s
    assert (header.clocks.grace, header.clocks.max_timeouts) == (
        original.clocks.grace,
        original.clocks.max_timeouts,
    )


async def test_a_fork_on_a_running_referee_seats_the_person_first_with_human(
    referee: Croupier, admin: Admin, browser: Any, tmp_path: Path
) -> None:
    journal = await finished(referee, admin)
    server = f"127.0.0.1:{referee.port}"
    page = await browser.new_page()
    command = ["replay", journal.stem, "--server", server, "--data", str(tmp_path / "elsewhere")]
    output = await person_plays([*command, "--fork", "3", "--human", "--bot", "random"], page)
    assert "you, random play on" in output
    fork_id = output.split(" as ")[1].split(":")[0]
    info = referee.referee.info(fork_id)
    assert info.forked_from == f"{journal.stem}@3" and info.clocks.decision_ms == 60_000


def test_one_person_plays_a_fork() -> None:
    twice = ["replay", "x", "--fork", "2", "--human", "--bot", "human"]
    done = subprocess.run(
        [sys.executable, "-m", "croupier.clients.cli", *twice], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "one person plays a fork" in done.stdout


async def test_anyone_asking_for_a_fork_sets_only_its_times_to_move(referee: Croupier, admin: Admin) -> None:
    """A spectator may fork a finished match and ask a person's clocks for it; the grace of a seat
    nobody plays, the timeouts and refusals it may have stay the match's, so a fork nobody plays
    still ends."""
    journal = await finished(referee, admin)
    asked = match_pb2.Clocks(decision_ms=60_000, bank_ms=300_000, grace_ms=86_400_000, max_timeouts=1000)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}") as channel:  # no token: anyone
        stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
        answer = await stub.ForkMatch(
            spectator_pb2.ForkMatchRequest(match_id=journal.stem, step=3, clocks=asked)
        )
    original = referee.referee.info(journal.stem).clocks
    clocks = referee.referee.info(answer.match.match_id).clocks
    assert (clocks.decision_ms, clocks.bank_ms) == (60_000, 300_000)
    assert (clocks.grace_ms, clocks.max_timeouts) == (original.grace_ms, original.max_timeouts)


async def test_play_on_from_here_seats_the_person_who_asked(
    referee: Croupier, admin: Admin, viewer: WebViewer, browser: Any
) -> None:
    journal = await finished(referee, admin)
    page = await browser.new_page()
    await page.goto(f"{viewer.url}match/{journal.stem}?step=5")
    await page.locator("select.fork-you").select_option("1")
    ARTIFACTS.mkdir(exist_ok=True)
    await page.locator(".fork-control").screenshot(path=str(ARTIFACTS / "web-fork-you.png"))
    await page.locator("button.fork").click()
    await page.wait_for_url(f"{viewer.url}play", timeout=WAIT * 1000)
    await page.locator(".seat.mine[data-seat='1']").wait_for(timeout=WAIT * 1000)
    async with aiohttp.ClientSession() as other:  # one person at a time: a second is told so
        asked = {"step": 5, "bots": "random", "you": 0}
        url = f"{viewer.url}api/matches/{journal.stem}/fork"
        async with other.post(url, json=asked, headers={"X-Croupier-Fork": "1"}) as response:
            assert response.status == 503 and "a person plays" in (await response.json())["error"]
        async with other.post(url, json={**asked, "you": True}, headers={"X-Croupier-Fork": "1"}) as response:
            assert response.status == 400
    assert await play_to_the_end(page, "chinese_ten") > 0
    seat = viewer.runner.app[SEATS].seat
    assert seat is not None and seat.done
    info = await admin.wait(seat.state["header"]["match_id"])
    assert info.forked_from == f"{journal.stem}@5"
    assert [p.name for p in sorted(info.players, key=lambda p: p.seat)] == ["heuristic", "you"]
    assert info.clocks.decision_ms == 60_000
