"""What the web viewer's tests share: bots that move only when a test lets them (played with
the terminal spectator tests' ``play``), the viewer on a free port, a headless Chromium (Debian's,
through Playwright), a relay that records what the browser is sent, and the oracle of which
cards were hidden at each step of a match."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from croupier.clients.bots import RandomBot
from croupier.clients.sdk import Match
from croupier.clients.web.app import WebViewer, start_web
from croupier.clients.web.frames import plain
from croupier.engine.games import get_game
from croupier.engine.rng import Rng
from croupier.server.app import Croupier
from croupier.server.journal import End, Header, read_records
from croupier.server.messages import replay_frames
from croupier.wire import convert
from tests.server.botclient import WAIT
from tests.toolchains import missing, need

REPO = Path(__file__).resolve().parents[3]
ARTIFACTS = REPO / "tests" / "artifacts"
"""Screenshots of the pages (not committed: .gitignore)."""
SIZES = {"desktop": (1280, 800), "phone": (390, 844)}
CARD = re.compile(r"(?<![\w])(?:10|[2-9JQKA])[cdhs](?![\w])")
"""A card's text form ("10h", "Qs") inside any text: JSON, HTML, the DOM's attributes."""
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class Recorder:
    """A TCP relay between the browser and the viewer that keeps every byte the viewer sends
    back: every response the browser gets, event streams included, exactly as it got them."""

    def __init__(self, target: str) -> None:
        self.host, _, port = target.removeprefix("http://").rstrip("/").rpartition(":")
        self.port = int(port)
        self.connections: list[bytearray] = []
        self.server: asyncio.Server | None = None

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/"

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()

    def text(self) -> str:
        """All that was sent so far, connection after connection."""
        return "\n".join(bytes(c).decode(errors="replace") for c in self.connections)

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection(self.host, self.port)
        received = bytearray()
        self.connections.append(received)

        async def pipe(
            source: asyncio.StreamReader, sink: asyncio.StreamWriter, keep: bytearray | None
        ) -> None:
            try:
                while data := await source.read(65536):
                    if keep is not None:
                        keep.extend(data)
                    sink.write(data)
                    await sink.drain()
            except (ConnectionError, asyncio.CancelledError):
                pass
            finally:
                sink.close()

        await asyncio.gather(pipe(reader, upstream_writer, None), pipe(upstream_reader, writer, received))


class Stepper:
    """The bots of a match, making moves only as the test allows them (``allow``); ``idle`` waits
    until every allowed move is made and a bot is waiting for the next permission."""

    def __init__(self) -> None:
        self.allowed: int | None = 0
        self.made = 0
        self.changed = asyncio.Condition()
        self.waiting = False

    async def allow(self, moves: int | None) -> None:
        """``moves`` more moves (None: every move, to the end)."""
        async with self.changed:
            self.allowed = None if moves is None or self.allowed is None else self.allowed + moves
            self.changed.notify_all()

    async def idle(self) -> None:
        async with self.changed:
            await asyncio.wait_for(self.changed.wait_for(lambda: self.waiting), WAIT)

    def bot(self, match: Match) -> RandomBot:
        stepper = self

        class Stepped(RandomBot):
            async def choose(self, view: Any, legal: list[Any]) -> int:  # type: ignore[override]
                async with stepper.changed:
                    stepper.waiting = True
                    stepper.changed.notify_all()
                    await stepper.changed.wait_for(
                        lambda: stepper.allowed is None or stepper.made < stepper.allowed
                    )
                    stepper.waiting = False
                    stepper.made += 1
                return super().choose(view, legal)

        return Stepped(match)


@pytest.fixture
async def viewer(referee: Croupier, tmp_path: Path) -> AsyncIterator[WebViewer]:
    """``croupier web`` on a free port, beside the test's referee, with ``tmp_path/web-data``."""
    web = await start_web(f"127.0.0.1:{referee.port}", "127.0.0.1:0", tmp_path / "web-data")
    yield web
    await web.stop()


@pytest.fixture
async def browser(tmp_path: Path) -> AsyncIterator[Any]:
    """A headless Chromium context (Debian's chromium, driven by Playwright) with a fresh profile."""
    chromium = need("chromium", "the web viewer's browser tests drive a headless Chromium")
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        missing("the playwright package is not installed (make .venv/.installed-dev)")
    async with async_playwright() as driver:
        context = await driver.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=chromium,
            headless=True,
            chromium_sandbox=False,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1280, "height": 800},
        )
        try:
            yield context
        finally:
            await context.close()


async def screenshots(page: Any, name: str) -> None:
    """The page at a desktop's and a phone's size, under tests/artifacts/."""
    ARTIFACTS.mkdir(exist_ok=True)
    for size, (width, height) in SIZES.items():
        await page.set_viewport_size({"width": width, "height": height})
        await page.wait_for_timeout(100)  # a relayout, not a timing check
        await page.screenshot(path=str(ARTIFACTS / f"{name}-{size}.png"))
    await page.set_viewport_size({"width": 1280, "height": 800})


def cards_of(value: Any) -> set[str]:
    """Every card in an engine value (a view), by its text form."""
    found: set[str] = set()

    def walk(item: Any) -> None:
        if isinstance(item, str):
            if CARD.fullmatch(item):
                found.add(item)
        elif isinstance(item, dict):
            for inner in item.values():
                walk(inner)
        elif isinstance(item, list):
            for inner in item:
                walk(inner)

    walk(plain(value))
    return found


def hidden_by_seq(journal: Path) -> dict[int, set[str]]:
    """Per frame number: the cards the full view holds and the public view does not (hands, the
    stock, a robber's discard), less those a public event has named by then (the cuts for the
    deal are seen by all, then shuffled into the deck), re-run here from the match's journal."""
    records = read_records(journal)
    head, end = records[0], records[-1]
    assert isinstance(head, Header) and isinstance(end, End)
    seed = end.seed
    spec = get_game(head.game)
    options = spec.options(head.options)
    codec = convert.codec(spec.name)
    full = replay_frames(spec, options, seed, records, reveal=True)
    public = replay_frames(spec, options, seed, records, reveal=False)
    before = spec.new_game(options, Rng(seed))  # a snapshot while it waits: record 0, dealt
    hidden = {0: cards_of(before.full_view()) - cards_of(before.public_view())}
    named: set[str] = set()
    for f, p in zip(full, public, strict=True):
        named.update(card for event in p.events for card in CARD.findall(event.text))
        hidden[f.seq] = (
            cards_of(codec.view_from_proto(f.view)) - cards_of(codec.view_from_proto(p.view)) - named
        )
    return hidden


class UnhurriedBot(RandomBot):
    """Plays at random, a tenth of a second a move, so a test can look at a tournament in play
    (``croupier bot --strategy tests.clients.web:UnhurriedBot`` from the repository root)."""

    async def choose(self, view: Any, legal: list[Any]) -> int:  # type: ignore[override]
        await asyncio.sleep(0.1)
        return super().choose(view, legal)
