"""``croupier web`` over HTTP, without a browser: its JSON and event streams, reconnecting,
bad addresses, a referee that is down, the journals it will and will not read, the command
itself, and the self-contained HTML export of ``croupier replay``."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp

from croupier.clients.bots import RandomBot
from croupier.clients.web.app import WebViewer, start_web
from croupier.server.app import Croupier
from tests.clients.terminal.test_spectator_terminal import play
from tests.clients.web import CARD, REPO, Stepper, viewer
from tests.server.botclient import WAIT, Admin

__all__ = ["viewer"]

LONG_CLOCKS = {"decision_ms": 120_000, "bank_ms": 120_000}


async def get(url: str, **headers: str) -> tuple[int, dict[str, str], str]:
    async with aiohttp.ClientSession() as session, session.get(url, headers=headers) as response:
        return response.status, dict(response.headers), await response.text()


async def events(url: str, until: Any, **headers: str) -> list[tuple[str, str, str]]:
    """(id, event, data) of a stream's messages, read until ``until(messages)`` holds or it ends."""
    messages: list[tuple[str, str, str]] = []
    async with aiohttp.ClientSession() as session, session.get(url, headers=headers) as response:
        assert response.headers["Content-Type"] == "text/event-stream"
        fields: dict[str, str] = {}
        async for raw in response.content:
            line = raw.decode().rstrip("\n")
            if line:
                name, _, value = line.partition(": ")
                fields[name] = value
                continue
            if "data" in fields:
                messages.append((fields.get("id", ""), fields.get("event", "message"), fields["data"]))
                if until(messages):
                    break
            fields = {}
    return messages


async def test_a_live_stream_sends_a_snapshot_then_changes_and_catches_up_a_reconnection(
    referee: Croupier, admin: Admin, viewer: WebViewer
) -> None:
    created = await admin.create("chinese_ten", 2, {"target": 100}, seed=9, **LONG_CLOCKS)
    match_id = created.match.match_id
    stepper = Stepper()
    bots = await play(referee, created, stepper.bot)
    await stepper.idle()
    live = f"{viewer.url}api/matches/{match_id}/live"
    status, _, body = await get(f"{viewer.url}api/matches/{match_id}/record")
    assert status == 409 and json.loads(body)["live"], "no record while the match runs"
    first = await events(live, lambda m: len(m) >= 1)
    snapshot = json.loads(first[0][2])
    assert snapshot["header"]["status"] == "running" and snapshot["header"]["players"] == ["p0", "p1"]
    assert snapshot["scene"]["view"]["hands"] == [None, None], "hands hidden: null, never cards"
    assert all(size > 0 for size in snapshot["scene"]["view"]["hand_sizes"])
    last_id = int(first[0][0])

    await stepper.allow(3)
    await stepper.idle()
    missed = await events(live, lambda m: len(m) >= 3, **{"Last-Event-ID": str(last_id)})
    assert [int(m[0]) for m in missed] == [last_id + 1, last_id + 2, last_id + 3], "only what it missed"
    assert all("scene" in json.loads(m[2]) for m in missed)

    await stepper.allow(None)
    await asyncio.wait_for(bots, WAIT)
    ending = await events(live, lambda m: m[-1][1] == "end", **{"Last-Event-ID": str(last_id + 3)})
    assert ending[-1] == ("", "end", ""), "the stream ends with an end event and no error"
    final = json.loads(ending[-2][2])
    assert final["header"]["status"] == "finished" and None not in final["scene"]["view"]["hands"]
    status, _, body = await get(f"{viewer.url}api/matches/{match_id}/record")
    record = json.loads(body)
    assert status == 200 and record["header"]["result"] and len(record["scenes"]) > 3
    assert record["scenes"][0]["view"]["hands"][0], "the replay shows every hand"


async def test_bad_and_unknown_addresses_get_a_clear_404(viewer: WebViewer) -> None:
    for path in (
        "api/matches/no-such-match/record",
        "api/matches/..%2F..%2Fetc%2Fpasswd/record",
        "api/tournaments/7",
        "api/tournaments/x",
        "static/../hub.py",
    ):
        status, _, _ = await get(viewer.url + path)
        assert status == 404, path
    status, _, body = await get(viewer.url + "api/matches/no-such-match/record")
    assert "no match no-such-match" in json.loads(body)["error"]
    gone = await events(f"{viewer.url}api/matches/no-such-match/live", lambda m: False)
    assert gone[-1][1] == "end" and "NOT_FOUND" in gone[-1][2]


async def test_pages_forbid_other_scripts_and_say_what_they_are(viewer: WebViewer) -> None:
    status, headers, body = await get(viewer.url)
    assert status == 200 and '<main id="lobby">' in body
    assert "default-src 'self'" in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"
    status, headers, body = await get(viewer.url + "api/lobby")
    assert headers["Cache-Control"] == "no-store" and json.loads(body)["error"] is None


async def test_only_the_names_it_serves_are_answered_so_no_rebound_page_reads_it(
    viewer: WebViewer, tmp_path: Path
) -> None:
    """A page of evil.example whose DNS answer switches to the viewer's address sends its own
    name as Host: it gets 421 and nothing of the lobby, the live feeds or forks."""
    port = viewer.url.rstrip("/").rpartition(":")[2]
    for host in (f"evil.example:{port}", "evil.example", f"localhost.evil.example:{port}", ""):
        for path in ("", "api/lobby", "api/lobby/live", "api/matches/m-1/live", "static/lobby.js"):
            status, _, body = await get(viewer.url + path, Host=host)
            assert status == 421 and "matches" not in body and "--allow-host" in body, (host, path)
        async with aiohttp.ClientSession() as session:
            fork = viewer.url + "api/matches/m-1/fork"
            async with session.post(fork, json={"step": 1}, headers={"Host": host}) as response:
                assert response.status == 421
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "LOCALHOST", f"[::1]:{port}", "10.1.2.3"):
        status, _, body = await get(viewer.url + "api/lobby", Host=host)
        assert status == 200 and "matches" in json.loads(body), host
    named = await start_web("127.0.0.1:1", "127.0.0.1:0", None, hosts=["croupier.example"])
    try:
        for host, served in (
            ("croupier.example:8080", True),
            ("Croupier.Example.", True),
            ("evil.example", False),
        ):
            status, _, _ = await get(named.url + "api/lobby", Host=host)
            assert (status == 200) == served, host
    finally:
        await named.stop()


async def test_a_referee_that_is_down_is_said_on_the_lobby(tmp_path: Path) -> None:
    web = await start_web("127.0.0.1:1", "127.0.0.1:0", None)
    try:
        status, _, body = await get(web.url + "api/lobby")
        assert status == 200 and "referee 127.0.0.1:1: UNAVAILABLE" in json.loads(body)["error"]
    finally:
        await web.stop()


async def test_finished_journals_replay_from_the_data_folder_but_never_an_unfinished_one_or_its_twin(
    referee: Croupier, admin: Admin, tmp_path: Path
) -> None:
    created = await admin.create("platinum_fish", 2, {}, seed=4)
    await asyncio.wait_for(await play(referee, created, RandomBot), WAIT)
    await admin.wait(created.match.match_id)
    journal = Path(created.journal)
    data = tmp_path / "elsewhere"
    (data / "matches").mkdir(parents=True)
    shutil.copy(journal, data / "matches" / "20000101-000000-finish.jsonl")
    web = await start_web(f"127.0.0.1:{referee.port}", "127.0.0.1:0", data)
    try:
        status, _, body = await get(web.url + "api/matches/20000101-000000-finish/record")
        assert status == 200 and "✓" in json.loads(body)["header"]["note"]
    finally:
        await web.stop()
    # a twin of the same deal that is not over (a set stopped half-played, its referee down)
    lines = journal.read_text().splitlines(keepends=True)
    (data / "matches" / "20000101-000000-unfini.jsonl").write_text("".join(lines[:-1]))
    seed = json.loads(lines[-1])["seed"]
    (data / "matches" / "20000101-000000-unfini.secret").write_text(json.dumps({"seed": seed}))
    web = await start_web(f"127.0.0.1:{referee.port}", "127.0.0.1:0", data)
    try:
        status, _, body = await get(web.url + "api/matches/20000101-000000-unfini/record")
        assert status == 404 and not CARD.search(body), "an unfinished match's secret stays unread"
        status, _, body = await get(web.url + "api/matches/20000101-000000-finish/record")
        assert status == 404 and not CARD.search(body), "a finished twin is sealed while its twin plays"
    finally:
        await web.stop()


def test_the_command_serves_prints_its_address_and_stops_on_sigterm(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "croupier.clients.cli", "web", "--server", "127.0.0.1:1"]
    command += ["--address", "127.0.0.1:0", "--data", str(tmp_path)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("croupier web: serving on 127.0.0.1:") and "(referee 127.0.0.1:1)" in line
        url = line.split()[6]
        status, _, body = asyncio.run(get(url))
        assert status == 200 and "Croupier" in body
        process.send_signal(signal.SIGTERM)
        assert process.wait(WAIT) == 0
    finally:
        process.kill()


async def test_replay_writes_one_self_contained_html_file(
    referee: Croupier, admin: Admin, tmp_path: Path
) -> None:
    """(test_web_browser opens such a file offline and steps through it.)"""
    page, _ = await exported(referee, admin, tmp_path)
    html = page.read_text()
    assert "/static/" not in html and "<link" not in html and " src=" not in html, "nothing to fetch"
    assert html.count("<script") == 4, "the data and three scripts: a name cannot close a script"
    data = html.split('<script id="replay-data" type="application/json">')[1].split("</script>")[0]
    document = json.loads(data)
    assert document["header"]["players"][0] == EVIL and "✓" in document["header"]["note"]
    assert len(document["scenes"]) > 3


EVIL = "</script><script>alert(1)</script>"
"""A bot's name that would end the data's script element if written as it is."""


async def exported(referee: Croupier, admin: Admin, folder: Path) -> tuple[Path, Path]:
    """A finished Chinese Ten match exported by ``croupier replay ID --html``: the page, and the
    match's journal."""
    from croupier.v1 import admin_pb2

    seats = [admin_pb2.SeatSpec(name=EVIL), admin_pb2.SeatSpec(name="bob")]
    created = await admin.create("chinese_ten", seats, {"target": 100}, seed=8)
    await asyncio.wait_for(await play(referee, created, RandomBot), WAIT)
    await admin.wait(created.match.match_id)
    journal = Path(created.journal)
    page = folder / "match.html"
    command = [sys.executable, "-m", "croupier.clients.cli", "replay", journal.stem]
    command += ["--data", str(journal.parent.parent), "--html", str(page)]
    done = await asyncio.to_thread(subprocess.run, command, capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"wrote {page}" in done.stdout.replace("\n", "") and "opens offline" in done.stdout
    return page, journal


UNHURRIED = """
name = "watched"
[clock]
decision_ms = 5000
[[games]]
game = "chinese_ten"
seats = 2
deals = 1
options = { target = 100 }
[[bots]]
name = "ann"
command = "python -m croupier.clients.cli bot --strategy tests.clients.web:UnhurriedBot"
[[bots]]
name = "ben"
command = "python -m croupier.clients.cli bot --strategy tests.clients.web:UnhurriedBot"
"""


def test_a_tournament_with_web_serves_the_viewer_beside_its_referee(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(UNHURRIED)
    command = [sys.executable, "-m", "croupier.clients.cli", "tournament", str(tmp_path / "t.toml")]
    command += ["--data", str(tmp_path / "data"), "--samples", "50", "--plain", "--web", "127.0.0.1:0"]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = next(line for line in process.stdout if "watch it in a browser:" in line).split()[-1]
        lobby = asyncio.run(wait_for_lobby(url, lambda lobby: lobby["matches"] and lobby["tournaments"]))
        assert lobby["tournaments"][0]["name"] == "watched" and lobby["error"] is None
        assert {"ann", "ben"} == set(lobby["matches"][0]["players"])
        rest = process.stdout.read()
        assert process.wait(WAIT) == 0, rest
    finally:
        process.kill()


async def wait_for_lobby(url: str, ready: Any) -> dict[str, Any]:
    """The lobby once ``ready(lobby)`` holds: read from its own event stream."""
    found = await events(f"{url}api/lobby/live", lambda messages: ready(json.loads(messages[-1][2])))
    lobby: dict[str, Any] = json.loads(found[-1][2])
    return lobby


def test_banks_are_spent_as_the_referee_spends_them() -> None:
    """A decision past the per-move time takes the excess from the seat's bank; a timeout empties
    it; the seat to act shows since when it thinks (referee time)."""
    from croupier.clients.web.frames import Banks
    from croupier.v1 import match_pb2, spectator_pb2

    kind = spectator_pb2.Step.Kind
    banks = Banks(2, match_pb2.Clocks(decision_ms=5000, bank_ms=30000))

    def frame(at: int, step: int, seat: int | None = None) -> spectator_pb2.MatchFrame:
        return spectator_pb2.MatchFrame(time_ms=at, step=spectator_pb2.Step(kind=step, seat=seat))

    assert banks.update(frame(0, kind.START), [0])["acting_since_ms"] == [0, None]
    quick = banks.update(frame(3000, kind.ACTION, 0), [1])
    assert quick["banks_ms"] == [30000, 30000] and quick["acting_since_ms"] == [None, 3000]
    banks.update(frame(4000, kind.REFUSAL, 1), [1])  # still its turn: the clock runs on
    slow = banks.update(frame(11000, kind.ACTION, 1), [0])
    assert slow["banks_ms"] == [30000, 27000], "8 s on a 5 s move: 3 s from the bank"
    assert banks.update(frame(50000, kind.TIMEOUT, 0), [1])["banks_ms"] == [0, 27000]


async def test_with_no_referee_the_lobby_lists_the_finished_journals_and_keeps_twins_sealed(
    referee: Croupier, admin: Admin, tmp_path: Path
) -> None:
    """``croupier web --data croupier-data`` after ``make run`` stopped its referee: the finished
    matches from the journals, a match whose twin never ended sealed (no result, no link)."""
    import socket

    done = await admin.create("chinese_ten", 2, {"target": 100}, seed=11)
    alone = await admin.create("chinese_ten", 2, {"target": 100}, seed=12)
    twin = await admin.create("chinese_ten", 2, {"target": 100}, seed=12)  # never played
    for created in (done, alone):
        await asyncio.wait_for(await play(referee, created, RandomBot), WAIT)
        await admin.wait(created.match.match_id)
    await referee.stop(grace=None)
    with socket.socket() as free:  # a port nobody answers on
        free.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{free.getsockname()[1]}"
    web = await start_web(dead, "127.0.0.1:0", tmp_path / "data")
    try:
        lobby = json.loads((await get(f"{web.url}api/lobby"))[2])
        assert lobby["error"] == f"no referee answers at {dead}: the finished matches of {tmp_path / 'data'}"
        listed = {m["match_id"]: m for m in lobby["matches"]}
        assert twin.match.match_id not in listed, "an unfinished journal is not listed as finished"
        finished = listed[done.match.match_id]
        assert finished["status"] == "finished" and finished["watchable"] and finished["result"]
        sealed = listed[alone.match.match_id]
        assert (
            sealed["sealed"] and not sealed["watchable"] and sealed["result"] is None and "seed" not in sealed
        )
        status, _, body = await get(f"{web.url}api/matches/{alone.match.match_id}/record")
        assert status == 409 and json.loads(body)["sealed"] is True and not CARD.search(body)
        status, _, body = await get(f"{web.url}api/matches/{done.match.match_id}/record")
        assert status == 200 and json.loads(body)["header"]["result"]
    finally:
        await web.stop()
