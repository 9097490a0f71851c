"""``croupier tournament FILE --in-process [--cluster ADDRESS]``: a tournament of Python SDK bots
played in worker processes, this machine's or a Dask cluster's, without a referee (inprocess_run.py).

Kept from a run over the referee: the schedule, dealt from the run's secret and committed to before
the first set (audit/commitment.py); the results database, written the same way (a set's matches
done in one transaction, so a set counts once; an interrupted run goes on with the same command, a
set it left in play dealt again); the live standings, the tables, the ratings and the revealed
secret; each seat's luck where the run measures it. Not kept: journals (so no ``croupier export``:
``croupier verify`` checks the deals from the reveal alone), and time: every move takes the
referee's step, so no bot is ever slow. The file's clock is told to the bots, and its max_timeouts
and max_refusals forfeit a bot that fails to answer or keeps answering what the rules refuse.

Its bots must be Python SDK bots: ``croupier bot --strategy SPEC`` (``--seed``, ``--openspiel``)
or ``python FILE.py``. Refused in one line: any other command, an image, a bot that connects by
itself or is a person, ``isolation = "required"`` (nothing jails the bots' code here), --server,
--web, --unix-socket, and a ladder's file.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import re
import shlex
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from croupier.clients.results.ratings_cli import fail, rating_options, say
from croupier.clients.tournament.cli import EXIT_INTERRUPTED

if TYPE_CHECKING:
    from rich.console import Console

    from croupier.clients.author.inprocess import Played
    from croupier.clients.results.schedule import DuplicateSet
    from croupier.clients.results.store import FinishedMatch, MatchRecord, SeatResult, Store, Tournament
    from croupier.clients.tournament.config import BotConfig, TournamentConfig
    from croupier.clients.tournament.display import Display

PYTHON = re.compile(r"python3?(\.\d+)?")
CLI_MODULE = ("-m", "croupier.clients.cli", "bot")
NOT_HERE = {
    "server": "plays on a referee",
    "web": "watches a referee's matches",
    "unix_socket": "is a referee's socket",
}
"""Options that need a referee, and what they are for."""


class Refused(ValueError):
    """What this path cannot play, in one line."""


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from croupier.clients.results.store import Store, StoreError
    from croupier.clients.tournament.config import ConfigError
    from croupier.clients.tournament.tables import report

    try:
        config, strategies, seeds = checked(args)
    except Refused as exc:
        return fail(f"croupier tournament --in-process: {exc}", 2)
    except ConfigError as exc:
        return fail(str(exc), 2)
    console = Console(width=None if sys.stdout.isatty() else 120)
    try:
        store = Store(args.db or args.data / "results.db")
    except StoreError as exc:
        return fail(str(exc), 2)
    with store:
        try:
            tournament = store.open_tournament(
                config.name, config.fingerprint(), config.settings(), args.again
            )
            if not tournament.finished:
                store.lock_for_running()
        except StoreError as exc:
            return fail(str(exc), 2)
        options = rating_options(args)
        if tournament.finished:
            say(
                console,
                f"tournament {tournament.name} (run {tournament.run}) already finished; "
                "its tables follow (--again plays it again with new deals)",
            )
            report(console, config, store, tournament, args.samples, [], "", **options, data=args.data)
            return 0
        code = _play(args, console, config, store, tournament, strategies, seeds)
        if code == 0:
            tournament = store.tournaments([tournament.name])[-1]  # finished now
        if code in (0, EXIT_INTERRUPTED):
            report(console, config, store, tournament, args.samples, [], "", **options, data=args.data)
        if code == EXIT_INTERRUPTED:
            say(console, "stopped early; run the same command again to play the rest")
        return code


def checked(args: argparse.Namespace) -> tuple[TournamentConfig, dict[str, str], dict[str, int]]:
    """The tournament file and each bot's SDK strategy and seed, every one loaded once here so that
    a mistake is told now; Refused for what this path cannot play."""
    from croupier.clients.bots import strategy
    from croupier.clients.tournament.config import ConfigError, load

    given = [f"--{name.replace('_', '-')} {why}" for name, why in NOT_HERE.items() if getattr(args, name)]
    if given:
        raise Refused(f"{given[0]}: in-process play has no referee")
    if args.cluster:
        from croupier.clients.author.cluster import ClusterError, batch_seconds, require

        try:
            require()
            batch_seconds()  # the configuration's mistake said before anything is begun
        except ClusterError as exc:
            raise Refused(f"--cluster: {exc}") from None
    try:
        config = load(args.file)
    except ConfigError:
        _refuse_a_ladder(args.file)
        raise
    if config.isolation == "required":
        raise Refused(
            f'{config.source}: isolation = "required", but in-process play runs the bots\' code unjailed '
            "in its worker processes: play it over the referee"
        )
    strategies, seeds = {}, {}
    for bot in config.bots:
        strategies[bot.name], seed = strategy_of(bot)
        if seed is not None:
            seeds[bot.name] = seed
        try:
            strategy(strategies[bot.name], seed)
        except Exception as exc:  # an import error of the bot's own code: its words
            raise Refused(f"bot {bot.name}: {exc}") from None
    return config, strategies, seeds


def _refuse_a_ladder(path: Path) -> None:
    from croupier.clients.ladder.settings import load
    from croupier.clients.tournament.config import ConfigError

    with contextlib.suppress(ConfigError):
        load(path)
        raise Refused(
            f"{path} is a ladder's file (croupier ladder): its bots register on a referee and play as they "
            "connect; --in-process plays a tournament file's Python bots"
        )


class _Options(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise Refused(message)


def strategy_of(bot: BotConfig) -> tuple[str, int | None]:
    """The SDK strategy (and its seed) a bot's command plays: ``croupier bot`` or ``python -m
    croupier.clients.cli bot`` with its options, or ``python FILE.py``; Refused for anything else."""
    from croupier.clients.bots import cli as bots_cli

    if bot.registered or bot.human or bot.image is not None or bot.command is None:
        kind = (
            "is registered on a referee"
            if bot.registered
            else "is a person's seat"
            if bot.human
            else "runs in a container image"
            if bot.image is not None
            else "connects by itself"
        )
        raise Refused(f"bot {bot.name} {kind}: in-process play seats Python SDK bots only")
    words = list(bot.command)
    options = _bot_options(words)
    if options is None:
        if len(words) == 2 and PYTHON.fullmatch(Path(words[0]).name) and words[1].endswith(".py"):
            return words[1], None
        raise Refused(
            f"bot {bot.name}: {shlex.join(words)!r} is a command, not a Python SDK bot: "
            "give croupier bot --strategy SPEC or python FILE.py, or play it over the referee"
        )
    parser = _Options(prog=f"bot {bot.name}: croupier bot", add_help=False)
    bots_cli.add_arguments(parser)
    try:
        chosen, unknown = parser.parse_known_args(options)
    except Refused as exc:
        raise Refused(f"bot {bot.name}: {exc}") from None
    if unknown:
        raise Refused(f"bot {bot.name}: croupier bot has no option {unknown[0]}")
    if any(word.startswith("--pace-ms") for word in options):
        raise Refused(f"bot {bot.name}: --pace-ms holds its moves back for watchers; in-process, drop it")
    if chosen.openspiel:
        return f"croupier.clients.openspiel.searchers:{bots_cli.OPENSPIEL[chosen.openspiel]}", chosen.seed
    return str(chosen.strategy), chosen.seed


def _bot_options(words: Sequence[str]) -> list[str] | None:
    """The options of a ``croupier bot`` command line, None if it is not one."""
    if len(words) >= 2 and Path(words[0]).name == "croupier" and words[1] == "bot":
        return list(words[2:])
    if len(words) >= 4 and PYTHON.fullmatch(Path(words[0]).name) and tuple(words[1:4]) == CLI_MODULE:
        return list(words[4:])
    return None


class Schedule:
    """The tournament's schedule as the loop's plan: its sets in order, settled once every one is
    over; each set's matches shown once the whole set is (as the runner shows them)."""

    def __init__(self, sets: Sequence[DuplicateSet], display: Display) -> None:
        self.sets = sets
        self.display = display
        self.over: set[int] = set()

    def plan(self, deal: int) -> DuplicateSet | None:
        return self.sets[deal] if deal < len(self.sets) else None

    def set_over(self, deal: int, matches: Sequence[FinishedMatch], replayed: bool = False) -> None:
        self.over.add(deal)
        for match in matches:
            self.display.match_done(match.record.key.game, match.rated_places, replayed=replayed)

    def settled(self) -> bool:
        return len(self.over) == len(self.sets)


def _play(
    args: argparse.Namespace,
    console: Console,
    config: TournamentConfig,
    store: Store,
    tournament: Tournament,
    strategies: dict[str, str],
    seeds: dict[str, int],
) -> int:
    """Play the run's sets not done yet: 0 once all are, 130 if interrupted, 1 if a set failed."""
    from croupier.clients.audit import commitment
    from croupier.clients.author import cluster, inprocess, inprocess_run
    from croupier.clients.results.luck_journal import LUCK_DIGITS
    from croupier.clients.results.schedule import Deals
    from croupier.clients.tournament.display import make_display

    assert tournament.secret is not None
    display = make_display(console, plain=True if args.plain else None, model=args.model)
    value, where = commitment.commit(args.data, config, tournament)  # before any set, as over a referee
    display.note(
        f"schedule of {tournament.name} run {tournament.run} committed: sha256 {value} ({where}); "
        "the schedule published at its end must hash to it (sha256sum -c)"
    )
    luck = commitment.committed_luck(args.data, tournament, display.note)
    schedule = config.schedule(tournament.secret, tournament.run)
    store.schedule(tournament.id, (match for duplicate in schedule for match in duplicate.matches))
    plan = Schedule(schedule, display)
    versions = {bot.name: bot.version for bot in config.bots}
    fresh = config.deals is Deals.FRESH

    def job(pending: Sequence[MatchRecord]) -> inprocess.SetJob:
        game = config.game(pending[0].key.game)
        return inprocess.SetJob(
            game.game, dict(game.options), tuple((r.id, r.seed, r.seats) for r in pending), specs,
            clock=game.clock.as_dict(), every_pair=luck.get(game.game), fresh=fresh, seeds=seeds,
        )  # fmt: skip

    def results(record: MatchRecord, played: Played) -> list[SeatResult]:
        lines = inprocess.seat_results(record, played, versions)
        return [  # rounded as a journal's luck is stored (luck_journal.py)
            dataclasses.replace(line, luck=None if line.luck is None else round(line.luck, LUCK_DIGITS))
            for line in lines
        ]

    stopping = False

    def interrupted(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a second Ctrl-C: at once
        display.note("stopping once the sets in progress finish (Ctrl-C again to stop now)")

    specs = strategies
    previous = signal.signal(signal.SIGINT, interrupted)
    records = store.matches(tournament.id)
    done = sum(record.status == "done" for record in records.values())
    display.begin(f"{tournament.name} (run {tournament.run}, in-process)", len(records), done)
    try:
        with contextlib.ExitStack() as stack:
            executor, processes, player, batch_seconds = None, None, inprocess.play_set, 0.0
            if args.cluster:
                workers = stack.enter_context(cluster.connect(args.cluster, strategies))
                executor, processes, player = workers.executor, workers.threads, cluster.play_shipped_set
                batch_seconds, specs = workers.batch_seconds, workers.specs
                display.note(
                    f"playing on the Dask cluster at {args.cluster}, sets at a time: {workers.threads}"
                )
            settled = inprocess_run.play_sets(
                plan, store, tournament, job, results,
                deals=config.deals, processes=processes, stopping=lambda: stopping,
                executor=executor, player=player, batch_seconds=batch_seconds,
                named=lambda key: f"{key.game} round {key.round} group {key.group} deal {key.deal}",
            )  # fmt: skip
    except KeyboardInterrupt:
        settled = False
    except (cluster.ClusterError, inprocess_run.SetFailed) as exc:
        return fail(inprocess_run.failure("croupier tournament", exc), 1)
    finally:
        signal.signal(signal.SIGINT, previous)
        display.end()
    if not settled:
        return EXIT_INTERRUPTED
    store.finish_tournament(tournament.id)
    return 0
