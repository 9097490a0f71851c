"""``croupier ladder FILE``: a standing arena. Every bot registered on the referee that connects
with its own token plays rated duplicate sets, scheduled where the ratings are least certain.

    croupier ladder ladder.toml                 # with a referee of its own on 127.0.0.1:50051
    croupier register mybot                     # in another terminal: mybot's token
    python mybot.py --server 127.0.0.1:50051 --token TOKEN --max-matches 2

By default the referee runs inside this process, on --listen, with its data (and admin token,
which ``croupier register`` finds) in --data, as ``croupier serve`` keeps them; ``--server``
plays on a running referee or its replicas instead. It runs until interrupted (Ctrl-C: the sets
in progress finish first; a second one stops at once), and taken up again by the same command:
nothing finished is lost or counted twice. The ratings: ``croupier ratings --ladder NAME``; the
leaderboard: ``croupier web`` (or --web here), page /ladders/NAME. Every bot connected to the
referee is seated: give a ladder a referee of its own. docs/tournaments.md says more.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from croupier.clients.results.ratings_cli import DEFAULT_DATA, fail

if TYPE_CHECKING:
    from croupier.clients.ladder.settings import LadderConfig
    from croupier.clients.results.store import Store
    from croupier.clients.tournament.display import Display
    from croupier.server.registration import OpenRegistration

DEFAULT_LISTEN = "127.0.0.1:50051"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="the ladder file (TOML; see docs/tournaments.md)")
    parser.add_argument(
        "--server",
        metavar="TARGET",
        help="play on this running referee (HOST:PORT, or replicas as croupier tournament takes them) "
        "instead of one embedded in this process",
    )
    parser.add_argument(
        "--listen",
        default=DEFAULT_LISTEN,
        metavar="HOST:PORT",
        help="where the embedded referee listens for bots (default: %(default)s)",
    )
    parser.add_argument(
        "--admin-token",
        default=os.environ.get("CROUPIER_ADMIN_TOKEN"),
        help="with --server: the referee's admin token (default: $CROUPIER_ADMIN_TOKEN, else "
        "DATA/admin-token for a referee on this machine)",
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help="results database, reveals, and the embedded referee's journals and admin token "
        "(default: %(default)s)",
    )
    parser.add_argument("--db", type=Path, help="results database (default: DATA/results.db)")
    parser.add_argument(
        "--web",
        metavar="HOST:PORT",
        help="also serve the web viewer here, as anyone sees it: the leaderboard, the bots' pages and "
        "the tables anyone may watch",
    )
    parser.add_argument(
        "--sets",
        type=int,
        metavar="N",
        help="stop once N sets are over in this session (default: run until interrupted)",
    )
    parser.add_argument("--plain", action="store_true", help="plain progress lines, even on a terminal")


def run(args: argparse.Namespace) -> int:
    from croupier.clients.ladder.settings import load
    from croupier.clients.results.store import Store, StoreError
    from croupier.clients.tournament.config import ConfigError

    try:
        config = load(args.file)
    except ConfigError as exc:
        return fail(str(exc), 2)
    if args.sets is not None and args.sets < 1:
        return fail(f"--sets {args.sets}: at least 1", 2)
    if args.server and config.registration is not None:
        return fail(
            f"{args.file}: [registration] opens the referee this ladder embeds; with --server, open "
            "that referee's (croupier serve --open-registration) and leave it out of the ladder file",
            2,
        )
    if args.server:
        from croupier.clients.tournament.admin_token import NoAdminToken, find_admin_token

        try:
            args.admin_token, _, args.server = find_admin_token(args.server, args.admin_token, args.data)
        except NoAdminToken as exc:
            return fail(f"--server: {exc}", exc.code)
    try:
        store = Store(args.db or args.data / "results.db")
        store.lock_for_running()
    except StoreError as exc:
        return fail(str(exc), 2)
    with store:
        try:
            return asyncio.run(_play(args, config, store))
        except StoreError as exc:
            return fail(str(exc), 2)


async def _play(args: argparse.Namespace, config: LadderConfig, store: Store) -> int:
    from rich.console import Console

    from croupier.clients.ladder.arena import Ladder
    from croupier.clients.tournament.display import make_display
    from croupier.clients.tournament.referee_client import RefereeError, Replicas, TargetError

    console = Console()
    display = make_display(console, plain=True if args.plain else None)
    try:
        async with _referee(args, config.registration) as (target, admin_token):
            display.note(f"ladder {config.name} on the referee at {target}")
            async with _web(args, target, display):
                referees = await Replicas.connect(target, admin_token)
                try:
                    ladder = Ladder(config, store, referees, display, args.data)
                    loop = asyncio.get_running_loop()
                    main = asyncio.current_task()
                    assert main is not None

                    def interrupted() -> None:
                        if ladder.stopping:
                            main.cancel()
                            return
                        ladder.request_stop()
                        display.note("stopping once the sets in progress finish (Ctrl-C again to stop now)")

                    for sig in (signal.SIGINT, signal.SIGTERM):
                        with contextlib.suppress(NotImplementedError):
                            loop.add_signal_handler(sig, interrupted)
                    done = await ladder.run_ladder(args.sets)
                finally:
                    await referees.close()
    except TargetError as exc:
        return fail(f"--server: {exc}", 2)
    except RefereeError as exc:
        return fail(f"ladder stopped: {exc}\nwhat finished is saved; run the same command again to go on", 1)
    except asyncio.CancelledError:
        return fail("interrupted; what finished is saved: run the same command again to go on", 130)
    display.note(f"{done} set(s) over in this session; ratings: croupier ratings --ladder {config.name}")
    return 0


@contextlib.asynccontextmanager
async def _referee(
    args: argparse.Namespace, registration: OpenRegistration | None
) -> AsyncIterator[tuple[str, str]]:
    """The target and admin token of the referee to play on: given, or started here on --listen
    with its data in --data (its admin token in DATA/admin-token, as croupier serve keeps it),
    taking open registrations within ``registration`` (None: none)."""
    if args.server:
        yield args.server, args.admin_token
        return
    from croupier.clients.tournament.referee_client import embedded

    async with embedded(
        args.listen, args.data, args.data / "logs", open_registration=registration
    ) as croupier:
        host = args.listen.rpartition(":")[0]
        yield f"{host}:{croupier.port}", croupier.admin_token


@contextlib.asynccontextmanager
async def _web(args: argparse.Namespace, target: str, display: Display) -> AsyncIterator[None]:
    """With --web: the viewer as anyone sees it (no organiser token: sealed tables stay sealed)."""
    if not args.web:
        yield
        return
    from croupier.clients.web.app import start_web

    viewer = await start_web(target, args.web, args.data)
    display.note(f"leaderboard: {viewer.url}ladders")
    try:
        yield
    finally:
        await viewer.stop()
