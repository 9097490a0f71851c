"""``croupier tournament FILE``: run (or resume) a tournament and print its tables.

By default the referee runs inside this process, on a free local port, with
its journals under the data directory; ``--server`` plays on a running referee
instead. The runner registers the bots, launches the ones with a command,
waits for all to connect, plays the schedule with a live display and ends with
the crosstable, the ratings, the incidents and where the journals are.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from server.tournament.ratings_cli import DEFAULT_DATA, DEFAULT_SAMPLES, fail, say

if TYPE_CHECKING:
    from rich.console import Console

    from server.tournament.bots import BotProcess
    from server.tournament.config import TournamentConfig
    from server.tournament.display import Display
    from server.tournament.referee import BotStatus, Referee
    from server.tournament.runner import Entrant, Runner
    from server.tournament.store import Store, Tournament

CONNECT_SECONDS = 60.0
"""How long launched bots may take to connect before the tournament gives up."""
EXITS_BEFORE_CONNECTING = 3
"""A launched bot that exits this often before it ever connects is broken (a typo in its command)."""
EXIT_INTERRUPTED = 130


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="the tournament file (TOML; see docs/tournaments.md)")
    parser.add_argument(
        "--server",
        metavar="HOST:PORT",
        help="play on this running referee instead of one embedded in this process",
    )
    parser.add_argument(
        "--admin-token",
        default=os.environ.get("CROUPIER_ADMIN_TOKEN"),
        help="the referee's admin token, with --server (default: $CROUPIER_ADMIN_TOKEN)",
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help="results database, journals and bot logs go here (default: %(default)s)",
    )
    parser.add_argument("--db", type=Path, help="results database (default: DATA/results.db)")
    parser.add_argument(
        "--again",
        action="store_true",
        help="if the tournament already finished, play it again with new deals (an unfinished one resumes)",
    )
    parser.add_argument("--plain", action="store_true", help="plain progress lines, even on a terminal")
    parser.add_argument(
        "--samples",
        type=int,
        default=DEFAULT_SAMPLES,
        help="bootstrap samples for the 95%% rating intervals (default: %(default)s)",
    )


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from server.tournament.config import ConfigError, load
    from server.tournament.store import Store, StoreError

    console = Console(width=None if sys.stdout.isatty() else 120)
    try:
        config = load(args.file)
    except ConfigError as exc:
        return fail(str(exc), 2)
    if args.server and not args.admin_token:
        return fail("--server needs the referee's admin token: --admin-token or $CROUPIER_ADMIN_TOKEN", 2)
    db = args.db or args.data / "results.db"
    try:
        store = Store(db)
    except StoreError as exc:
        return fail(str(exc), 2)
    with store:
        try:
            tournament = store.open_tournament(
                config.name, config.fingerprint(), config.settings(), args.again
            )
        except StoreError as exc:
            return fail(str(exc), 2)
        if not tournament.finished:
            try:
                store.lock_for_running()
            except StoreError as exc:
                return fail(str(exc), 2)
        if tournament.finished:
            say(
                console,
                f"tournament {tournament.name} (run {tournament.run}) already finished; "
                "its tables follow (--again plays it again with new deals)",
            )
            report(console, config, store, tournament, args.samples, [], bool(args.server))
            return 0
        return asyncio.run(_play(args, console, config, store, tournament))


async def _play(
    args: argparse.Namespace, console: Console, config: TournamentConfig, store: Store, tournament: Tournament
) -> int:
    from server.tournament.display import make_display
    from server.tournament.referee import Referee, RefereeError
    from server.tournament.runner import Runner, ScheduleError

    display = make_display(console, plain=True if args.plain else None)
    logs = args.data / "logs" / f"{tournament.name}-{tournament.run}"
    launched: list[BotProcess] = []
    complete = False
    main = asyncio.current_task()
    assert main is not None
    try:
        async with _referee(args) as (address, admin_token):
            referee = Referee(address, admin_token)
            try:
                entrants = await _enter_bots(config, referee, address, logs, display, launched)
                runner = Runner(config, store, referee, entrants, display)
                _on_interrupt(runner, display, main)
                complete = await runner.run(tournament)
            finally:
                await asyncio.gather(*(bot.stop() for bot in launched))
                await referee.close()
    except (RefereeError, ScheduleError, BotsNotReady) as exc:
        return fail(
            f"tournament stopped: {exc}\nwhat finished is saved; run the same command again to go on", 1
        )
    except asyncio.CancelledError:
        return fail(
            "interrupted; what finished is saved: run the same command again to go on", EXIT_INTERRUPTED
        )
    report(console, config, store, tournament, args.samples, launched, bool(args.server))
    if not complete:
        say(console, "stopped early; run the same command again to play the rest")
        return EXIT_INTERRUPTED
    return 0


@contextlib.asynccontextmanager
async def _referee(args: argparse.Namespace) -> AsyncIterator[tuple[str, str]]:
    """The address and admin token of the referee to play on: given, or started here."""
    if args.server:
        yield args.server, args.admin_token
        return
    import structlog

    from server import logs
    from server.app import create_server

    # The referee logs to a file, not over the live display: claim the process's one logging
    # configuration (later calls do nothing), then point it at the file before anything logs.
    log_dir = args.data / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    with (log_dir / "referee.log").open("a", encoding="utf-8") as log_file:
        logs.configure(json=True)
        structlog.configure(logger_factory=structlog.PrintLoggerFactory(log_file))
        # its own folder: a referee run by `croupier serve` on DATA never shares its journals
        croupier = await create_server("127.0.0.1:0", args.data / "referee")
        try:
            yield f"127.0.0.1:{croupier.port}", croupier.admin_token
        finally:
            await croupier.stop(grace=1.0)


class BotsNotReady(Exception):
    """A bot did not connect in time."""


async def _enter_bots(
    config: TournamentConfig,
    referee: Referee,
    address: str,
    logs: Path,
    display: Display,
    launched: list[BotProcess],
) -> dict[str, Entrant]:
    """Register every bot, launch the ones with a command, wait until all are connected."""
    from server.tournament.bots import BotProcess, bot_environment, expand
    from server.tournament.runner import Entrant

    ids: dict[str, str] = {}
    for bot in config.bots:
        bot_id, token = await referee.register_bot(bot.name)
        ids[bot.name] = bot_id
        if bot.command is None:
            display.note(f"waiting for external bot {bot.name}: connect to {address} with token {token}")
            continue
        values = {"server": address, "token": token, "name": bot.name}
        try:
            argv = expand(bot.command, values)
        except ValueError as exc:
            raise BotsNotReady(f"bot {bot.name}: {exc}") from None
        process = BotProcess(
            bot.name, argv, bot_environment(bot.name, address, token), logs / f"{bot.name}.log", display.note
        )
        process.start()
        launched.append(process)
    by_name = {process.name: process for process in launched}
    status = await _wait_connected(referee, ids, by_name)
    entrants = {}
    for bot in config.bots:
        declared = status[ids[bot.name]].max_matches
        limits = [limit for limit in (bot.capacity, declared) if limit]
        log = by_name[bot.name].log_path if bot.name in by_name else None
        entrants[bot.name] = Entrant(bot.name, ids[bot.name], min(limits) if limits else 1, log)
    return entrants


async def _wait_connected(
    referee: Referee, ids: Mapping[str, str], launched: Mapping[str, BotProcess]
) -> dict[str, BotStatus]:
    """Wait until every bot has a stream; a launched bot that cannot connect is an error with its log."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CONNECT_SECONDS
    while True:
        status = await referee.bots()
        waiting = [name for name, bot_id in ids.items() if status[bot_id].streams == 0]
        if not waiting:
            return status
        for name in waiting:
            bot = launched.get(name)
            if bot is None:
                continue  # external: it comes when its owner starts it
            if len(bot.exits) >= EXITS_BEFORE_CONNECTING:
                problem = f"exited {len(bot.exits)} times without connecting (last exit code {bot.exits[-1]})"
            elif loop.time() > deadline:
                problem = f"did not connect within {CONNECT_SECONDS:g}s"
            else:
                continue
            raise BotsNotReady(
                f"bot {name} {problem}; the end of its log ({bot.log_path}):\n{bot.log_tail()}"
            )
        await asyncio.sleep(0.1)


def _on_interrupt(runner: Runner, display: Display, main: asyncio.Task[int]) -> None:
    """First Ctrl-C: finish the matches in progress and stop. Second: stop now."""
    loop = asyncio.get_running_loop()

    def interrupted() -> None:
        if runner.stopping:
            main.cancel()
            return
        runner.request_stop()
        display.note("stopping once the matches in progress finish (Ctrl-C again to stop now)")

    with contextlib.suppress(NotImplementedError):  # no signal handlers on some platforms
        loop.add_signal_handler(signal.SIGINT, interrupted)


def report(
    console: Console,
    config: TournamentConfig,
    store: Store,
    tournament: Tournament,
    samples: int,
    launched: Sequence[BotProcess],
    remote: bool,
) -> None:
    """The tables a tournament ends with; the ratings last, where the eye lands."""
    from server.tournament.ratings import rate
    from server.tournament.report import crosstable, incidents_table, ratings_table

    finished = store.finished(tournament.id)
    for game in config.games:
        matches = [match for match in finished if match.record.key.game == game.game]
        if matches:
            console.print(crosstable(game.game, matches))
    if finished:
        console.print(incidents_table(finished))
    restarted = [f"{bot.name} {len(bot.exits)}x" for bot in launched if bot.exits]
    if restarted:
        say(console, f"bots restarted after exiting: {', '.join(restarted)}")
    journals = [match.record.journal for match in finished if match.record.journal]
    if journals:
        folder = os.path.commonpath(journals) if len(journals) > 1 else os.path.dirname(journals[0])
        machine = " on the referee's machine" if remote else ""
        say(
            console,
            f"journals: {len(journals)} in {folder}{machine} (each match's: {store.path}, table matches)",
        )
    for game in config.games:
        table = rate(store.duplicate_sets(game.game), samples=samples)
        if table:
            title = f"{game.game}: ratings over every tournament"
            console.print(ratings_table(game.game, table, title=title))
