"""``croupier tournament FILE``: run (or resume) a tournament and print its tables.

By default the referee runs inside this process, on a free local port, with
its journals under the data directory; ``--server`` plays on a running referee
instead, or spreads the matches over several replicas (``ipv4:H:P,H:P``,
``dns:///NAME:PORT``). The runner registers the bots, launches the ones with a command,
waits for all to connect, plays the schedule with a live display and ends with
the crosstable, the ratings, the incidents and where the journals are.

``--in-process`` plays a tournament of Python SDK bots without a referee, in worker processes
(``--cluster ADDRESS``: a Dask cluster's): the same deals, results and tables, no journals
(docs/tournaments.md).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import os
import shutil
import signal
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from croupier.clients.isolation import containers
from croupier.clients.results.ratings_cli import (
    DEFAULT_DATA,
    DEFAULT_SAMPLES,
    add_model_argument,
    fail,
    rating_options,
    say,
)
from croupier.clients.tournament.tables import report
from croupier.clients.tournament.viewer import until_read, web_viewer

if TYPE_CHECKING:
    from rich.console import Console

    from croupier.clients.isolation.policy import Jail
    from croupier.clients.results.store import Store, Tournament
    from croupier.clients.tournament.config import BotConfig, TournamentConfig
    from croupier.clients.tournament.display import Display
    from croupier.clients.tournament.launch import BotProcess
    from croupier.clients.tournament.referee_client import BotStatus, Replicas
    from croupier.clients.tournament.runner import Entrant, Runner
    from croupier.clients.web.seat import HumanSeat

CONNECT_SECONDS = 60.0
"""How long launched bots may take to connect before the tournament gives up."""
EXITS_BEFORE_CONNECTING = 3
"""A launched bot that exits this often before it ever connects is broken (a typo in its command)."""
EXIT_INTERRUPTED = 130


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="the tournament file (TOML; see docs/tournaments.md)")
    parser.add_argument(
        "--server",
        metavar="TARGET",
        help="play on this running referee (HOST:PORT; one worker of `croupier serve --workers` spreads over "
        "all) instead of one embedded in this process, or spread "
        "the matches over several replicas: ipv4:HOST:PORT,HOST:PORT,... or dns:///NAME:PORT "
        "(every address NAME resolves to, e.g. a Kubernetes headless Service)",
    )
    parser.add_argument(
        "--admin-token",
        default=os.environ.get("CROUPIER_ADMIN_TOKEN"),
        help="the referee's admin token, with --server (default: $CROUPIER_ADMIN_TOKEN, else "
        "DATA/admin-token for a referee on this machine, as croupier register finds it)",
    )
    parser.add_argument(
        "--unix-socket",
        type=Path,
        metavar="PATH",
        help="with --server: the referee's Unix socket on this machine (croupier serve --unix-socket), "
        "which bots given as an image reach it through (an embedded referee makes its own)",
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
        "--web",
        metavar="HOST:PORT",
        help="also serve the web viewer (croupier web) of the referee here while the tournament runs "
        "(a free port if this one is taken); it shows every live match, a duplicate set's sealed "
        "rotations too: give its address to no one with a bot in the tournament",
    )
    parser.add_argument(
        "--samples",
        type=int,
        default=DEFAULT_SAMPLES,
        help="bootstrap samples for the 95%% rating intervals (default: %(default)s)",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="play a tournament of Python bots (croupier bot --strategy ..., python FILE.py) in worker "
        "processes, one per core, without a referee: the same deals, results and tables, no journals",
    )
    parser.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="with --in-process: play the sets on the workers of the Dask scheduler at ADDRESS "
        "(tcp://HOST:8786); needs croupier[cluster] (docs/operations.md)",
    )
    add_model_argument(parser)


def run(args: argparse.Namespace) -> int:
    """Over a referee; ``--in-process`` runs are croupier.clients.author.tournament_cli's (clients/cli.py
    sends them there: the author's loop is built on by nothing of this room)."""
    from rich.console import Console

    from croupier.clients.results.store import Store, StoreError
    from croupier.clients.tournament.config import ConfigError, load

    if args.cluster:
        return fail(
            "croupier tournament: --cluster plays Python bots on a Dask cluster: give --in-process too", 2
        )
    console = Console(width=None if sys.stdout.isatty() else 120)
    try:
        config = load(args.file)
    except ConfigError as exc:
        return fail(str(exc), 2)
    if args.server:  # found as croupier register finds it (replicas: given only)
        from croupier.clients.tournament.admin_token import NoAdminToken, find_admin_token

        try:
            args.admin_token, _, args.server = find_admin_token(args.server, args.admin_token, args.data)
        except NoAdminToken as exc:
            return fail(f"--server: {exc}", exc.code)
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
            report(
                console, config, store, tournament, args.samples, [], _journals_where(args),
                **rating_options(args), data=args.data,
            )  # fmt: skip
            return 0
        return asyncio.run(play(args, console, config, store, tournament))


Report = Callable[
    ["Console", "TournamentConfig", "Store", "Tournament", int, Sequence["BotProcess"], str], None
]
"""What is printed once the matches are played (``report``, or ``croupier match``'s)."""
RunnerFactory = Callable[
    ["TournamentConfig", "Store", "Replicas", Mapping[str, "Entrant"], "Display"], "Runner"
]
"""What makes the runner of ``play``: the runner itself, or one of its kin."""


async def play(
    args: argparse.Namespace,
    console: Console,
    config: TournamentConfig,
    store: Store,
    tournament: Tournament,
    display: Display | None = None,
    beside: Callable[[str], contextlib.AbstractAsyncContextManager[None]] | None = None,
    tables: Report | None = None,
    make_runner: RunnerFactory | None = None,
    *,
    commit: bool = True,
    rematch: Callable[[], tuple[TournamentConfig, Tournament]] | None = None,
) -> int:
    """Play the tournament's matches not done yet (``args``: ``croupier tournament``'s) and print the
    tables; the exit status. ``beside(address)`` runs beside the embedded referee (``croupier match
    --watch``'s spectator); ``make_runner`` makes a runner (``--sprt``'s grows its schedule as it
    plays); ``commit``: commit to the schedule first (not for ``croupier match``: a public --seed).
    A person's page stays with the results until they leave, or ask for ``rematch()``'s next run."""
    from croupier.clients.audit import commitment
    from croupier.clients.isolation.policy import IsolationError, require
    from croupier.clients.tournament.display import make_display
    from croupier.clients.tournament.referee_client import RefereeError, Replicas, TargetError
    from croupier.clients.tournament.runner import Runner, ScheduleError

    registered = [bot.name for bot in config.bots if bot.registered]
    if registered and not args.server:
        return fail(
            f"{', '.join(registered)}: registered = true seats a bot registered on a running referee: "
            "give that referee, --server HOST:PORT",
            2,
        )
    display = display or make_display(console, plain=True if args.plain else None, model=args.model)
    if commit and tournament.secret is not None:  # before any match: anyone checks the run against it
        value, where = commitment.commit(args.data, config, tournament)
        display.note(
            f"schedule of {tournament.name} run {tournament.run} committed: sha256 {value} ({where}); "
            "keep it to check the whole run after it: croupier verify ARCHIVE --commitment HASH"
        )
    logs = args.data / "logs" / f"{tournament.name}-{tournament.run}"
    try:  # before the referee starts: nothing to stop
        if _jailed(config):
            require(config.isolation, _isolation_setting(config))
    except IsolationError as exc:
        return fail(str(exc), 2)
    launched: list[BotProcess] = []
    complete = False
    started = False
    reported = False  # this run's tables printed already (a person's, before they answer the page)
    if tables is None:
        tables = functools.partial(report, **rating_options(args), data=args.data)
    main = asyncio.current_task()
    assert main is not None
    try:
        async with (
            _referee(args, config) as (target, admin_token, socket),
            contextlib.AsyncExitStack() as alongside,
        ):
            jail = await _jail(args, config, store, display, socket)
            if not args.server:
                display.note(
                    f"referee on {target}; watch its matches: "
                    f"{croupier_command()} watch --server {target} --follow"
                )
            viewer = await alongside.enter_async_context(
                web_viewer(args, console, config, target, admin_token)
            )
            if not args.server and beside is not None:
                await alongside.enter_async_context(beside(target))
            referees = await Replicas.connect(target, admin_token)
            if len(referees.names) > 1:
                display.note(
                    f"matches spread over {len(referees.names)} referees: {', '.join(referees.names)}"
                )
            try:
                seat = viewer.seat if viewer is not None else None
                entrants = await _enter_bots(config, referees, logs, display, launched, socket, jail, seat)
                while True:
                    runner = (make_runner or Runner)(config, store, referees, entrants, display)
                    runner.luck = commitment.committed_luck(args.data, tournament, display.note)
                    if seat is not None:
                        runner.held = functools.partial(until_read, seat)
                    _on_interrupt(runner, display, main)
                    started = True
                    complete = await runner.run(tournament)
                    if seat is None or not complete:
                        break
                    tournament = store.tournaments([tournament.name])[-1]  # finished now
                    tables(console, config, store, tournament, args.samples, launched, _journals_where(args))
                    reported = True
                    say(console, "your seat's page shows the results; the run ends when you leave the table")
                    if not await seat.run_over(rematch is not None) or rematch is None:
                        break
                    config, tournament = rematch()
                    reported = False
            finally:
                await asyncio.gather(*(bot.stop() for bot in launched))
                await referees.close()
                if socket is not None and any(bot.image for bot in config.bots):  # a killed launcher's
                    await asyncio.to_thread(containers.reap, containers.label_of(logs))
    except IsolationError as exc:
        return fail(str(exc), 2)
    except TargetError as exc:
        return fail(f"--server: {exc}", 2)
    except (RefereeError, ScheduleError, BotsNotReady) as exc:
        if not started:  # nothing was played: the one line says what to mend
            return fail(str(exc), 1)
        return fail(
            f"tournament stopped: {exc}\nwhat finished is saved; run the same command again to go on", 1
        )
    except asyncio.CancelledError:
        return fail(
            "interrupted; what finished is saved: run the same command again to go on", EXIT_INTERRUPTED
        )
    if complete and not reported:
        tournament = store.tournaments([tournament.name])[-1]  # finished now
    if not reported:
        tables(console, config, store, tournament, args.samples, launched, _journals_where(args))
    if not complete:
        say(console, "stopped early; run the same command again to play the rest")
        return EXIT_INTERRUPTED
    return 0


def _isolation_setting(config: TournamentConfig) -> str:
    """Where "required" was said, for the one line that says it cannot be had."""
    return f'{config.source}: isolation = "required"' if config.source else "--isolation required"


def _jailed(config: TournamentConfig) -> list[BotConfig]:
    """The bots the runner launches on this machine, not in a container: a jail's."""
    return [bot for bot in config.bots if bot.command is not None and bot.image is None]


async def _jail(
    args: argparse.Namespace, config: TournamentConfig, store: Store, display: Display, socket: Path | None
) -> Jail | None:
    """The jail the command bots are launched in, if they can be and should be (the one line
    about it said); the data directory and the database are what it hides, the referee's Unix
    ``socket`` the bots' way out."""
    from croupier.clients.isolation.policy import choose, limits_of

    jailed = _jailed(config)
    if not jailed:
        return None  # nothing of ours runs a bot's own code on this machine
    setting = _isolation_setting(config)
    hide = [args.data]
    if not store.path.absolute().is_relative_to(args.data.absolute()):  # --db elsewhere: its files
        hide += [store.path.with_name(store.path.name + end) for end in ("", "-wal", "-shm", ".lock")]
    share = limits_of(jailed[0].sandbox)
    jail, line = await asyncio.to_thread(choose, config.isolation, hide, setting, socket, share)
    if line is not None:
        display.note(line)
    return jail


def croupier_command() -> str:
    """How to type the ``croupier`` this process runs: plain if it is the one on PATH, else its
    path (``.venv/bin/croupier`` under ``make run``)."""
    script = Path(sys.executable).parent / "croupier"
    on_path = shutil.which("croupier")
    if on_path is not None and Path(on_path).resolve() == script.resolve():
        return "croupier"
    if not script.exists():
        return f"{sys.executable} -m croupier.clients.cli"
    with contextlib.suppress(ValueError):
        return str(script.relative_to(Path.cwd()))
    return str(script)


@contextlib.asynccontextmanager
async def _referee(
    args: argparse.Namespace, config: TournamentConfig
) -> AsyncIterator[tuple[str, str, Path | None]]:
    """The target and admin token of the referee(s) to play on, given or one started here, and
    the Unix socket that bots in containers reach it through."""
    if args.server:
        yield args.server, args.admin_token, args.unix_socket
        return
    from croupier.clients.tournament.referee_client import embedded

    jailed = config.isolation != "off" and bool(_jailed(config))
    with containers.referee_socket(config.bots, jailed) as socket:
        # its own folder: a referee run by `croupier serve` on DATA never shares its journals
        async with embedded("127.0.0.1:0", args.data / "referee", args.data / "logs", socket) as croupier:
            yield f"127.0.0.1:{croupier.port}", croupier.admin_token, socket


class BotsNotReady(Exception):
    """A bot did not connect in time."""


async def _enter_bots(
    config: TournamentConfig,
    referees: Replicas,
    logs: Path,
    display: Display,
    launched: list[BotProcess],
    socket: Path | None,
    jail: Jail | None = None,
    seat: HumanSeat | None = None,
) -> dict[str, Entrant]:
    """Register every instance of every bot on every replica (one id and token for all), launch
    the ones with a command once per replica (in its container, for a bot given as an image), wait
    until all are connected to each. A bot has one instance, or with ``processes =
    "per_rotation"`` one per rotation of its sets, each its own bot id, token and process:
    rotation r of every set is played by instance r. A human bot's token goes to ``seat``, the
    web viewer's, where the person plays it."""
    from croupier.clients.isolation.policy import limits_of
    from croupier.clients.tournament.launch import Instance
    from croupier.clients.tournament.runner import Entrant

    replicas = referees.names
    try:
        removed = await asyncio.to_thread(
            containers.prepare, config.bots, replicas, socket, containers.label_of(logs)
        )
    except RuntimeError as exc:
        raise BotsNotReady(f"bots in containers: {exc}") from None
    if removed:
        display.note(f"removed {removed} bot container(s) left by an earlier run of this tournament")
    if jail is not None and len(replicas) > 1:
        raise BotsNotReady("jailed bots reach one referee, through its Unix socket: play on one referee")
    ids: dict[str, str] = {}  # instance label -> bot id
    processes: dict[tuple[str, str], BotProcess] = {}
    for bot in config.bots:
        if bot.registered:
            ids[bot.name], connected = await referees.registered_bot(bot.name)
            if not connected:
                display.note(f"waiting for registered bot {bot.name} to connect with its own token")
            continue
        for rotation in range(config.instances(bot.name)) if config.per_rotation else [None]:
            instance = Instance(bot.name, rotation)
            bot_id, token = await referees.register_bot(instance.label)
            ids[instance.label] = bot_id
            if bot.human:  # the web viewer's seat, where the person plays (viewer.py)
                if seat is None:
                    raise BotsNotReady(f"bot {bot.name}: a person plays through a web viewer of one referee")
                seat.take([token])
                continue
            if bot.command is None and bot.image is None:
                where = replicas[0] if len(replicas) == 1 else "each of " + ", ".join(replicas)
                display.note(
                    f"waiting for external bot {instance.label}: connect to {where} with token {token}"
                )
                continue
            for replica in replicas:
                server = containers.bot_server(bot, replica, socket)
                if jail is not None and jail.server is not None and bot.image is None:
                    server = jail.server
                try:
                    process = instance.process(
                        bot.command or (),
                        server,
                        token,
                        logs,
                        display.note,
                        replica=replica if len(replicas) > 1 else None,
                        wrap=lambda argv, bot=bot: (  # type: ignore[misc]
                            containers.bot_command(bot, argv, socket, containers.label_of(logs))
                            if bot.image is not None or jail is None
                            else jail.wrap(argv, limits_of(bot.sandbox))
                        ),
                    )
                except ValueError as exc:
                    raise BotsNotReady(f"bot {bot.name}: {exc}") from None
                process.start()
                launched.append(process)
                processes[instance.label, replica] = process
    status = await _wait_connected(referees, ids, processes)
    entrants = {}
    for bot in config.bots:
        labels = [label for label in ids if label.partition("#")[0] == bot.name]
        capacities = []
        for label in labels:
            capacity = 0
            for bots in status.values():  # each replica's streams of the bot play their own share
                declared = bots[ids[label]].max_matches
                limits = [limit for limit in (bot.capacity, declared) if limit]
                capacity += min(limits) if limits else 1
            capacities.append(capacity)
        bot_logs = {replica: p.log_path for (label, replica), p in processes.items() if label == labels[0]}
        entrants[bot.name] = Entrant(
            bot.name,
            ids[labels[0]],
            min(capacities),
            bot_logs,
            bot.version,
            tuple(ids[label] for label in labels) if config.per_rotation else (),
        )
    return entrants


async def _wait_connected(
    referees: Replicas, ids: Mapping[str, str], launched: Mapping[tuple[str, str], BotProcess]
) -> dict[str, dict[str, BotStatus]]:
    """Wait until every bot has a stream on every replica; a launched bot that cannot connect is
    an error with its log."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CONNECT_SECONDS
    while True:
        status = await referees.bots()
        waiting = [
            (name, replica)
            for replica, bots in status.items()
            for name, bot_id in ids.items()
            if bots[bot_id].streams == 0
        ]
        if not waiting:
            return status
        for key in waiting:
            bot = launched.get(key)
            if bot is None:
                continue  # external: it comes when its owner starts it
            if len(bot.exits) >= EXITS_BEFORE_CONNECTING:
                problem = f"it exited {len(bot.exits)} times (last exit code {bot.exits[-1]})"
            elif loop.time() > deadline:
                problem = (
                    f"not within {CONNECT_SECONDS:g}s (does it use $CROUPIER_SERVER and $CROUPIER_TOKEN?)"
                )
            else:
                continue
            # the bot's own last words, not the runner's "--- starting" line before each start
            said = [line for line in bot.log_tail(20).splitlines() if not line.startswith("--- ")]
            last = said[-1] if said else ""
            raise BotsNotReady(
                f"bot {bot.name} never connected: {problem}; "
                + (
                    f"its log ends {last!r} (all of it: {bot.log_path})"
                    if last
                    else f"its log: {bot.log_path}"
                )
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


def _journals_where(args: argparse.Namespace) -> str:
    """Where the journals are, as the report says it: here, or on the referees' machines."""
    from croupier.clients.tournament.referee_client import SPREAD_SCHEMES

    if not args.server:
        return ""
    spread = args.server.startswith(SPREAD_SCHEMES)
    return " on the referees' machines" if spread else " on the referee's machine"
