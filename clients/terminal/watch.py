"""``croupier watch``: list the live matches of a referee, attach to one and draw it as it changes.

A spectator sees what the referee shows anyone: public facts, hands as card
backs, until the match is over; with the admin token, every hand.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from croupier.clients.connection import add_server_argument

if TYPE_CHECKING:  # imported in run(): `croupier --help` stays quick
    from rich.console import Console

    from croupier.v1 import match_pb2
    from croupier.v1.spectator_pb2_grpc import SpectatorServiceAsyncStub as Stub

Metadata = tuple[tuple[str, str], ...]

POLL_SECONDS = 1.0
"""How often --follow looks for the next match."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("match", nargs="?", help="the match id (default: choose among the live matches)")
    add_server_argument(parser)
    parser.add_argument(
        "--admin-token",
        default=os.environ.get("CROUPIER_ADMIN_TOKEN"),
        help="see every hand while the match runs (default: $CROUPIER_ADMIN_TOKEN)",
    )
    parser.add_argument("--list", action="store_true", help="list the live matches and exit")
    parser.add_argument("--game", help="only matches of this game (chinese_ten, pair_battle, ...)")
    parser.add_argument(
        "--from-start", action="store_true", help="replay the match from its start, then go live"
    )
    parser.add_argument("--follow", action="store_true", help="when the match ends, watch the next one")
    parser.add_argument("--tls-ca", type=Path, help="PEM root certificate: connect with TLS")


def run(args: argparse.Namespace) -> int:
    import asyncio

    from rich.console import Console

    console = Console()
    try:
        return asyncio.run(_watch(args, console))
    except KeyboardInterrupt:
        return 0


async def _watch(args: argparse.Namespace, console: Console) -> int:
    import grpc

    from croupier.v1 import spectator_pb2_grpc
    from croupier.wire.errors import no_referee

    credentials = grpc.ssl_channel_credentials(args.tls_ca.read_bytes()) if args.tls_ca else None
    channel = (
        grpc.aio.secure_channel(args.server, credentials)
        if credentials
        else grpc.aio.insecure_channel(args.server)
    )
    metadata = (("croupier-token", args.admin_token),) if args.admin_token else ()
    async with channel:
        stub: Stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
        try:
            return await _session(args, console, stub, metadata)
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.UNAVAILABLE:
                print(f"croupier watch: {no_referee(args.server)}", file=sys.stderr)
            else:
                print(f"croupier watch: {args.server}: {exc.code().name}: {exc.details()}", file=sys.stderr)
            return 1


async def follow(server: str, console: Console, done: asyncio.Event, skip: set[str]) -> int:
    """Watch every match of the referee at ``server`` but those in ``skip``, each from its start,
    one after another; once ``done`` is set, return when none is left (``croupier match --watch``)."""
    args = argparse.Namespace(
        every=done,
        skip=skip,
        match=None,
        server=server,
        admin_token=None,
        list=False,
        game=None,
        from_start=True,
        follow=True,
        tls_ca=None,
    )
    return await _watch(args, console)


async def matches_now(server: str) -> set[str]:
    """The ids of every match the referee at ``server`` knows now (for ``follow``'s ``skip``)."""
    import grpc

    from croupier.v1 import spectator_pb2_grpc

    async with grpc.aio.insecure_channel(server) as channel:
        stub: Stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
        return {m.match_id for m in await _live_matches(stub, None, ended=True)}


async def _session(args: argparse.Namespace, console: Console, stub: Stub, metadata: Metadata) -> int:
    import asyncio

    import grpc

    every: asyncio.Event | None = getattr(args, "every", None)
    watched: set[str] = set(getattr(args, "skip", ()))
    match_id = args.match
    waiting = False
    while True:
        if match_id is None:
            # every match: one over before the poll came is still shown, as its last screen
            finishing = every is not None and every.is_set()  # set before the listing: it has them all
            live = await _live_matches(stub, args.game, ended=every is not None)
            live = [m for m in live if m.match_id not in watched]
            sealed = 0
            if args.follow and not metadata:  # a sealed match waits for its twin: follow another
                sealed = sum(m.sealed for m in live)
                live = [m for m in live if not m.sealed]
            if args.list:
                _print_list(console, live, args.server)
                return 0
            if not live:
                if finishing:
                    return 0
                if not args.follow:
                    console.print(f"no live matches on {args.server}")
                    return 0
                if not waiting:
                    game = f"{args.game} " if args.game else ""
                    console.print(
                        f"{sealed} live matches are sealed until their twins end (a duplicate set's "
                        "rotations, dealt the same cards): waiting for one to open (Ctrl-C to stop)"
                        if sealed
                        else f"waiting for a {game}match to start on {args.server} (Ctrl-C to stop)"
                    )
                    waiting = True
                await asyncio.sleep(POLL_SECONDS)
                continue
            waiting = False
            # following: the oldest live match, without asking (and the next one after it)
            match_id = live[0].match_id if watched or args.follow else _choose(console, live, args.server)
            if match_id is None:
                return 0
        try:
            await _attach(console, stub, metadata, match_id, args.from_start)
        except grpc.aio.AioRpcError as exc:
            if not args.follow or exc.code() != grpc.StatusCode.FAILED_PRECONDITION:
                raise
            console.print(f"match {match_id}: {exc.details()}; following the next one")  # sealed since
        watched.add(match_id)
        if not args.follow:
            return 0
        match_id = None


async def _live_matches(stub: Stub, game: str | None, ended: bool = False) -> list[match_pb2.MatchInfo]:
    from croupier.v1 import match_pb2, spectator_pb2

    found: list[match_pb2.MatchInfo] = []
    statuses = [match_pb2.MATCH_STATUS_RUNNING, match_pb2.MATCH_STATUS_WAITING]
    for status in [match_pb2.MATCH_STATUS_FINISHED, *statuses] if ended else statuses:
        page_token = ""
        while True:  # a page at a time
            request = spectator_pb2.ListMatchesRequest(status=status, game=game or "", page_token=page_token)
            response = await stub.ListMatches(request)
            found.extend(response.matches)
            if not (page_token := response.next_page_token):
                break
    return found


def _print_list(console: Console, matches: list[match_pb2.MatchInfo], server: str) -> None:
    from rich.table import Table

    from croupier.clients.scenes import describe

    if not matches:
        console.print(f"no live matches on {server}")
        return
    table = Table(title=f"live matches on {server}", title_justify="left")
    for column in ("#", "match", "game", "players", "status"):
        table.add_column(column)
    for number, info in enumerate(matches, start=1):
        row = describe(info)
        table.add_row(str(number), row["id"], row["game"], row["players"], row["status"])
    console.print(table)


def _choose(console: Console, matches: list[match_pb2.MatchInfo], server: str) -> str | None:
    """The only match, or the one picked by number on a terminal (the first otherwise)."""
    if len(matches) == 1 or not sys.stdin.isatty():
        return matches[0].match_id
    _print_list(console, matches, server)
    while True:
        answer = console.input(f"watch which? [1-{len(matches)}, Enter: 1, q: quit] ").strip().lower()
        if answer in ("q", "quit"):
            return None
        if not answer:
            return matches[0].match_id
        if answer.isdigit() and 1 <= int(answer) <= len(matches):
            return matches[int(answer) - 1].match_id
        console.print(f"type a number from 1 to {len(matches)}")


async def _attach(console: Console, stub: Stub, metadata: Metadata, match_id: str, from_start: bool) -> None:
    """Draw one match until its stream ends (the match is over)."""
    import time

    from rich.console import RenderableType
    from rich.live import Live

    from croupier.clients.scenes import Header, Scene, Scenes, header_of
    from croupier.clients.terminal.render import render
    from croupier.v1 import spectator_pb2

    header: Header | None = None
    scenes: Scenes | None = None
    scene: Scene | None = None
    over_before = False
    """The match had ended when we came: its record streams by, and only its last screen is true."""
    received = time.monotonic()

    def screen() -> RenderableType:
        if header is None or scene is None:
            return f"waiting for match {match_id} ..."
        if over_before:
            return f"match {match_id} is {header.status}: reading its record ..."
        running = header.status == "running"
        now = scene.time_ms + (int((time.monotonic() - received) * 1000) if running else 0)
        return render(header, scene, clock_ms=now, footer="Ctrl-C: stop watching")

    request = spectator_pb2.WatchMatchRequest(match_id=match_id, from_start=from_start)
    # transient: where the output is no terminal, only the final screen (printed below) is written
    with Live(
        get_renderable=screen,
        console=console,
        refresh_per_second=4,
        screen=console.is_terminal,
        transient=True,
    ) as live:
        async for frame in stub.WatchMatch(request, metadata=metadata):
            if frame.HasField("info"):
                header = header_of(frame.info, _note(frame.info, admin=bool(metadata)))
                if scenes is None:
                    scenes = Scenes(frame.info.game)
                    over_before = header.status not in ("running", "waiting")
            if scenes is None:
                continue
            scene = scenes.scene(frame)
            received = time.monotonic()
            live.refresh()
    if header is not None and scene is not None:
        console.print(render(header, scene))
        console.print(f"match {match_id} is {header.status}")


def _note(info: match_pb2.MatchInfo, admin: bool) -> str:
    """Whose hands the screen shows, as the match's status has it now: a match caught up with
    after its end shows them all."""
    from croupier.v1 import match_pb2

    if admin:
        return "admin: every hand shown"
    if info.status == match_pb2.MATCH_STATUS_FINISHED:
        return "the match is over: every hand shown"
    if info.status == match_pb2.MATCH_STATUS_CANCELLED:
        return "the match was called off: hands stay hidden"
    return "spectator: hands stay hidden until the end"
