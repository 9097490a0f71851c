"""The web viewer beside a tournament (``--web``), and the seat of a person who plays in it
(a ``human = true`` bot, ``croupier match --human``).

A viewer for watching holds the organiser's token, so a duplicate set's sealed rotations can be
watched as they run: whoever reaches it sees them, so it listens on 127.0.0.1 unless --web says
otherwise (docs/spectator.md). A viewer with a person's seat never holds that token (the person
plays the tournament: a twin's live table would be a peek), and is started whether --web is given
or not, on 127.0.0.1 and a free port by default, its seat's one-time link printed (and opened in
a browser where a display is).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import webbrowser
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING

from croupier.clients.results.ratings_cli import say

if TYPE_CHECKING:
    from rich.console import Console

    from croupier.clients.results.store import MatchRecord
    from croupier.clients.tournament.config import TournamentConfig
    from croupier.clients.web.app import WebViewer
    from croupier.clients.web.seat import HumanSeat

HUMAN_ADDRESS = "127.0.0.1:0"
"""Where a viewer with a person's seat listens unless --web says: this machine only."""


@contextlib.asynccontextmanager
async def web_viewer(
    args: argparse.Namespace, console: Console, config: TournamentConfig, target: str, admin_token: str
) -> AsyncIterator[WebViewer | None]:
    """``croupier web`` on this event loop beside the referee, its address printed: with --web, or
    when a person plays (then the viewer holds their seat: ``WebViewer.seat``)."""
    from croupier.clients.tournament.referee_client import SPREAD_SCHEMES
    from croupier.server.referee import organiser_token

    human = next((bot.name for bot in config.bots if bot.human), None)
    if not args.web and human is None:
        yield None
        return
    if target.startswith(SPREAD_SCHEMES):
        say(
            console, "--web: the web viewer follows one referee; give it one: croupier web --server HOST:PORT"
        )
        yield None
        return
    from croupier.clients.web.app import start_web
    from croupier.clients.web.seat import HumanSeat

    seat = None if human is None else HumanSeat(target, human)
    token = organiser_token(admin_token) if seat is None else None
    address = args.web or HUMAN_ADDRESS
    try:
        viewer = await start_web(target, address, args.data, token=token, seat=seat)
    except OSError as exc:  # the port is taken: any free one will do for a demo
        viewer = await start_web(target, "127.0.0.1:0", args.data, token=token, seat=seat)
        say(console, f"--web {args.web}: {exc.strerror or exc}; serving on a free port instead")
    if seat is None:
        say(console, f"watch it in a browser: {viewer.url}")
    else:
        offer_seat(viewer, lambda text: say(console, text))
    try:
        yield viewer
    finally:
        await viewer.stop()
        say(
            console,
            f"the web viewer stopped with the tournament; browse it again: croupier web --data {args.data}",
        )


async def until_read(seat: HumanSeat, pending: Sequence[MatchRecord]) -> None:
    """Hold back a set the person plays in until they have read their last match's result (the
    runner's ``held``): the next seating would take the result off their page."""
    if any(seat.name in record.seats for record in pending):
        await seat.ready()


def offer_seat(viewer: WebViewer, say: Callable[[str], None]) -> None:
    """Print the link to the viewer's seat, and open it in a browser where a display is."""
    link = viewer.seat_link()
    say(f"your seat: open {link} (the link works once, in one browser; the others watch {viewer.url})")
    if _display():
        with contextlib.suppress(Exception):  # no browser here: the printed link will do
            webbrowser.open(link)


def _display() -> bool:
    """Whether a browser could open a window here (not over ssh without X, not in CI)."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        return False
    return sys.platform in ("darwin", "win32") or bool(
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )
