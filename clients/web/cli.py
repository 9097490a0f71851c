"""``croupier web``: watch a referee's matches in a browser.

The lobby lists the live and finished matches (updating as they change) and the tournaments
of the results database; a match's page draws its table live, hands as card backs until the
end, then steps through it as a replay (``?step=N`` in the address); a tournament's page shows
its progress, crosstable and ratings; ``/follow`` moves from one live match to the next. The
viewer is a spectator like any other: it holds no admin token and sees only what the referee
shows anyone (a sealed match: not until its twin ends; ``croupier tournament --web`` starts one
that holds the organiser's token: docs/spectator.md). With no referee answering, the lobby lists
the finished journals of --data. A replay's "play on from here" may keep a seat for you: the
page then opens your seat (``/play``), which only that browser may play.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from croupier.clients.connection import add_server_argument

DEFAULT_ADDRESS = "127.0.0.1:8080"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_server_argument(parser)
    parser.add_argument(
        "--data",
        type=Path,
        default=Path("croupier-data"),
        help="data directory: tournaments from its results.db, replays of finished journals the "
        "referee no longer knows (default: %(default)s)",
    )
    parser.add_argument(
        "--address",
        default=DEFAULT_ADDRESS,
        help="where to serve the pages, HOST:PORT (default: %(default)s)",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a name browsers reach the viewer by (repeatable); besides it, only localhost, an IP "
        "and --address's host are answered (421 otherwise: no DNS-rebinding page can read it)",
    )
    parser.add_argument(
        "--feeds",
        type=int,
        default=16,
        help="live feeds the referee grants this viewer (its --feeds-per-client; default: %(default)s): "
        "one per match watched, shared by every browser watching it",
    )
    parser.add_argument("--tls-ca", type=Path, help="PEM root certificate: connect to the referee with TLS")


def run(args: argparse.Namespace) -> int:
    import asyncio

    try:
        return asyncio.run(_serve(args))
    except KeyboardInterrupt:
        return 0


async def _serve(args: argparse.Namespace) -> int:
    import asyncio
    import signal

    from croupier.clients.web.app import start_web

    if args.feeds < 1:
        print(f"croupier web: --feeds {args.feeds}: at least 1")
        return 2
    try:
        viewer = await start_web(
            args.server, args.address, args.data, args.tls_ca, hosts=args.allow_host, feeds=args.feeds
        )
    except (OSError, ValueError) as exc:
        print(f"croupier web: cannot serve on {args.address}: {exc}")
        return 1
    listening = viewer.url.removeprefix("http://").rstrip("/")
    print(f"croupier web: serving on {listening}: open {viewer.url} (referee {args.server})", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        await viewer.stop()
    return 0
