"""``croupier match GAME --bot NEW --bot OLD --sprt elo0=0 elo1=10``: is NEW better than OLD?

Plays duplicate sets of NEW against OLD (one deal in every rotation of the seats, as a tournament
does; in games of more than two seats the others are held by --opponents, the bundled heuristic
unless told, the same in every rotation) until a sequential probability ratio test decides:
H1, NEW is better by elo1 or more (wrongly at most --alpha of the time), or H0, it is not better
by elo1 (wrongly at most --beta of the time), or until --max-games is reached (inconclusive).
elo0 and elo1 are NEW's head-to-head logistic Elo over OLD in the sets (with more than two seats
not the gap on the default Plackett-Luce ratings table); the statistic reads each set's score
(sets.py) as fishtest reads game pairs (results/sprt.py, docs/testing-bots.md).

The deals are a tournament's: secret (from the OS, or from --seed), published when the test is
over for ``croupier verify``, every result in the results database. Interrupted (Ctrl-C once:
the sets in progress finish; twice: at once), the same command goes on where it stopped.
--in-process plays Python SDK bots (random, heuristic, boss-1, boss-2, FILE.py, module:Class) inside worker
processes, one per core, without a referee or gRPC: the same views, much faster; with
--luck-correction, in the games of ``LUCK_GAMES``, it reads each set's score less the luck chance
dealt after the deal (results/luck.py, kept with every result so a resumed test reads its earlier
sets alike) with the normalised GSPRT.

Exit codes: 0 H1 accepted, 3 H0 accepted, 4 inconclusive, 130 interrupted (run it again to go
on), 1 a failure (a bot that never connected, a referee error), 2 a command line to mend.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import math
import re
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from croupier.clients.author.match_run import (
    BUNDLED,
    _for_the_command_line,
    _option,
    bot_command,
    bot_names,
    match_secret,
)
from croupier.clients.author.sprt_plan import LiveLine, SprtPlan, estimate, line
from croupier.clients.results.ratings_cli import DEFAULT_DATA, DEFAULT_SAMPLES, fail, say
from croupier.clients.results.schedule import Deals, Rotations, rotation_count
from croupier.clients.results.sprt import Sprt, Verdict

if TYPE_CHECKING:
    from rich.console import Console

    from croupier.clients.results.luck import Evaluator
    from croupier.clients.results.store import Store, Tournament
    from croupier.clients.tournament.config import TournamentConfig

EXIT_H1, EXIT_H0, EXIT_INCONCLUSIVE, EXIT_INTERRUPTED = 0, 3, 4, 130
LUCK_GAMES = frozenset({"chinese_ten"})
"""Games whose --in-process tests can read luck-corrected set scores (--luck-correction): where the
correction measurably narrows them (bench.luck, docs/testing-bots.md). Not the default: the normal
GSPRT that reads them fell short of its power on near-equal bots (0.905 for 0.95) and accepted H1
falsely in 10 of 100 three-seat Chinese Ten tests on plain sets, where the default GSPRT holds both."""
EXITS = {Verdict.H1: EXIT_H1, Verdict.H0: EXIT_H0, Verdict.CONTINUE: EXIT_INCONCLUSIVE}
DEFAULT_MAX_GAMES = 20_000
SETS_AT_ONCE = 2
"""Sets in play at once on the embedded referee: the next one starts while the last rotation of
the other is still being played."""
SDK_SPEC = re.compile(r"(random|heuristic|boss-[12]|[\w.]+:\w+|[^\s:]+\.py(:\w+)?)")
"""A bot given as a strategy of the Python SDK (``croupier bot --strategy``), not as a command."""
PYTHON_FILE = re.compile(r"(?:\S*/)?python3?(?:\.\d+)? +([^\s:]+\.py)")
"""``python FILE.py``: a command that runs an SDK bot's file, playable in-process as FILE.py."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``croupier match`` that make it a sequential test."""
    group = parser.add_argument_group("sequential test (is the first --bot better than the second?)")
    group.add_argument(
        "--sprt",
        nargs=2,
        metavar=("elo0=E0", "elo1=E1"),
        help="play duplicate sets until an SPRT decides between H0: the first bot is E0 Elo better than "
        "the second, and H1: E1 better (head-to-head logistic Elo, e.g. elo0=0 elo1=10); exit 0 for H1, "
        "3 for H0, 4 if --max-games decides nothing",
    )
    group.add_argument(
        "--alpha", type=float, default=0.05, help="the chance of a false H1 (default: %(default)s)"
    )
    group.add_argument(
        "--beta", type=float, default=0.05, help="the chance of a false H0 (default: %(default)s)"
    )
    group.add_argument(
        "--max-games",
        type=int,
        default=DEFAULT_MAX_GAMES,
        metavar="N",
        help="stop undecided after this many games (default: %(default)s)",
    )
    group.add_argument(
        "--opponents",
        nargs="+",
        metavar="SPEC",
        help="who holds the other seats of a game of more than two (one SPEC for all, or one per seat; "
        "default: heuristic), the same in every rotation",
    )
    group.add_argument(
        "--in-process",
        action="store_true",
        help="play Python SDK bots (random, heuristic, boss-1, boss-2, FILE.py, module:Class) in worker "
        "processes, one "
        "per core, without a referee: the same views, many times faster",
    )
    group.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="with --in-process: play the sets on the workers of the Dask scheduler at ADDRESS "
        "(tcp://HOST:8786) instead of this machine's cores; needs croupier[cluster] (docs/operations.md)",
    )
    group.add_argument(
        "--luck-correction",
        action=argparse.BooleanOptionalAction,
        help="with --in-process, in " + ", ".join(sorted(LUCK_GAMES)) + ": read each set's score less "
        "the luck chance dealt after the deal, with the normalised GSPRT (docs/testing-bots.md: not yet "
        "the default, its error rates are not yet shown to hold); --no-luck-correction: the plain scores",
    )


def run(args: argparse.Namespace) -> int:
    """The test, from the parsed command line: its exit code."""
    from rich.console import Console

    from croupier.clients.results.store import Store, StoreError
    from croupier.clients.tournament.config import ConfigError, parse

    try:
        test, specs, options = _checked(args)
    except ValueError as exc:
        return fail(f"croupier match: {exc}", 2)
    seed = 0 if args.seed is None else args.seed
    names = _names(specs)
    try:
        config = parse(_settings(args.game, names, specs, options, seed, args.max_games, args.in_process))
    except ConfigError as exc:
        return fail("\n".join(f"croupier match: {_for_the_command_line(p)}" for p in exc.problems), 2)
    game = config.games[0]
    rotations = rotation_count(game.seats, Rotations.WILLIAMS)
    strategies: dict[str, str] = {}
    if args.in_process:
        try:
            strategies = _strategies(names, specs)
        except ValueError as exc:
            return fail(f"croupier match --in-process: {exc}", 2)
    console = Console(width=None if sys.stdout.isatty() else 120)
    luck = None
    if args.luck_correction and not (args.in_process and args.game in LUCK_GAMES):
        return fail(
            "croupier match: --luck-correction needs --in-process and one of "
            + ", ".join(sorted(LUCK_GAMES)),
            2,
        )
    if args.luck_correction:
        from croupier.clients.results.luck import default_evaluator

        luck = default_evaluator(args.game)
    name = _test_name(args.game, specs, game.options, test, args.max_games, args.seed, luck)
    try:
        store = Store(args.data / "results.db")
        with store:
            store.lock_for_running()
            secret = None if args.seed is None else match_secret(args.seed)
            tournament = store.open_tournament(
                name, config.fingerprint(), config.settings(), again=True, secret=secret
            )
            assert tournament.secret is not None
            plan = SprtPlan(
                test, config, names[0], names[1], max(1, args.max_games // rotations), tournament.secret, luck
            )
            live = LiveLine(console, plan, names[0], names[1], plain=args.plain)
            begun = store.matches(tournament.id)
            say(
                console,
                f"{tournament.name} run {tournament.run}: {names[0]} (new) against {names[1]} (old), "
                f"{args.game} in sets of {rotations} games; "
                + (
                    f"resuming after {len(begun)} scheduled games" if begun else "the same command resumes it"
                ),
            )
            if args.in_process:
                if luck is not None:
                    say(
                        console,
                        f"luck-corrected set scores, V {luck.identity()['hash'][:16]}"
                        " (--no-luck-correction: plain)",
                    )
                code = _play_in_process(store, tournament, config, plan, strategies, live, args.cluster)
            else:
                code = asyncio.run(_play_on_referee(args, console, config, store, tournament, plan, live))
            if code == 0:
                tournament = store.tournaments([tournament.name])[-1]
            return _report(console, config, store, tournament, plan, code, args.data)
    except StoreError as exc:
        return fail(f"croupier match: {exc}", 2)


def _checked(args: argparse.Namespace) -> tuple[Sprt, list[str], dict[str, Any]]:
    """The test, every seat's SPEC (NEW, OLD, then the opponents) and the game's options, or a
    ValueError saying what to mend."""
    from croupier.engine.core import CroupierError
    from croupier.engine.games import get_game

    if len(args.bot) != 2:
        raise ValueError(
            f"--sprt compares two bots, the new then the old: give --bot twice, not {len(args.bot)} times"
        )
    if args.watch:
        raise ValueError("--sprt plays too many games to watch; watch one with croupier watch meanwhile")
    if args.max_games < 1:
        raise ValueError("--max-games must be at least 1")
    if args.cluster:
        from croupier.clients.author.cluster import ClusterError, batch_seconds, require

        if not args.in_process:
            raise ValueError("--cluster plays Python SDK bots on a Dask cluster: give --in-process too")
        try:
            require()
            batch_seconds()  # the configuration's mistake said before anything is begun
        except ClusterError as exc:
            raise ValueError(f"--cluster: {exc}") from None
    bounds: dict[str, float] = {}
    for text in args.sprt:
        key, equals, value = text.partition("=")
        try:
            if key not in ("elo0", "elo1") or not equals:
                raise ValueError
            bounds[key] = float(value)
        except ValueError:
            raise ValueError(f"--sprt {text!r}: write elo0=E0 elo1=E1, e.g. --sprt elo0=0 elo1=10") from None
    if set(bounds) != {"elo0", "elo1"} or not all(math.isfinite(v) for v in bounds.values()):
        raise ValueError("--sprt needs both elo0=E0 and elo1=E1, e.g. --sprt elo0=0 elo1=10")
    test = Sprt(bounds["elo0"], bounds["elo1"], args.alpha, args.beta)
    options = dict(_option(text) for text in args.option)
    try:
        spec = get_game(args.game)
    except CroupierError:
        spec = None  # the tournament file's check names it
    seats = options.get("players", spec.options().players if spec else 2)
    others = args.opponents or []
    if not isinstance(seats, int) or seats <= 2:
        if others:
            raise ValueError(f"{args.game} is played by {seats} here: no seat is left for --opponents")
        return test, list(args.bot), options
    if not others:
        others = ["heuristic"]
    if len(others) == 1:
        others = others * (seats - 2)
    if len(others) != seats - 2:
        raise ValueError(
            f"{args.game} at {seats} seats leaves {seats - 2} for --opponents: give one SPEC or {seats - 2}"
        )
    return test, [*args.bot, *others], options


def _names(specs: Sequence[str]) -> list[str]:
    """NEW's and OLD's names (their SPECs', numbered if the same), then opp1-SPEC, opp2-SPEC..."""
    pair = bot_names(specs[:2])
    return pair + [
        f"opp{number}-{bot_names([spec])[0]}"[:40] for number, spec in enumerate(specs[2:], start=1)
    ]


def _settings(
    game: str,
    names: Sequence[str],
    specs: Sequence[str],
    options: dict[str, Any],
    seed: int,
    max_games: int,
    in_process: bool,
) -> dict[str, Any]:
    """The test as a tournament file's settings: one game, one table of every bot, sets of every
    rotation, as many as --max-games allows (only those played are ever scheduled)."""
    seats = len(specs)
    rotations = rotation_count(seats, Rotations.WILLIAMS)
    capacity = rotations * SETS_AT_ONCE
    return {
        "name": "sprt",
        "seed": seed,
        "rounds": 1,
        "concurrency": capacity,
        "deals": Deals.DUPLICATE.value,
        "games": [
            {"game": game, "seats": seats, "deals": max(1, max_games // rotations), "options": options}
        ],
        "bots": [
            {"name": name, "command": _command(spec, capacity)}
            for name, spec in zip(names, specs, strict=True)
        ],
    }


def _command(spec: str, capacity: int) -> list[str]:
    """How the embedded referee's runner starts a SPEC's bot: a bundled one or an SDK strategy by
    ``croupier bot``, anything else as the shell command it is."""
    if SDK_SPEC.fullmatch(spec) and spec not in BUNDLED:
        launch = [sys.executable, "-m", "croupier.clients.cli", "bot", "--strategy", spec]
        return [*launch, "--max-matches", str(capacity)]
    return bot_command(spec, capacity)


def _strategies(names: Sequence[str], specs: Sequence[str]) -> dict[str, str]:
    """Each bot's SDK strategy for in-process play, every one loaded once here so that a mistake is
    told now, in one line."""
    from croupier.clients.bots import strategy

    found = {}
    for name, spec in zip(names, specs, strict=True):
        command = PYTHON_FILE.fullmatch(spec)
        chosen = command.group(1) if command else spec
        if not SDK_SPEC.fullmatch(chosen):
            raise ValueError(
                f"{spec!r} is a command, not a Python SDK bot: "
                "give FILE.py, package.module:Class, random, heuristic, boss-1 or boss-2"
            )
        try:
            strategy(chosen)
        except Exception as exc:  # an import error of the bot's own code: its words
            raise ValueError(f"{spec}: {exc}") from None
        found[name] = chosen
    return found


def _test_name(
    game: str,
    specs: Sequence[str],
    options: Any,
    test: Sprt,
    max_games: int,
    seed: int | None,
    luck: Evaluator | None = None,
) -> str:
    """The test's name in the results database: from everything that makes it this test, so the
    same command resumes it (and, once it is over, plays it again on new deals); with the luck
    correction, its value function's identity (another V is another test)."""
    what = [game, list(specs), dict(options), test.elo0, test.elo1, test.alpha, test.beta, max_games, seed]
    if luck is not None:
        what.append(luck.identity()["hash"])
    return f"sprt-{game}-{hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:10]}"


def _play_in_process(
    store: Store,
    tournament: Tournament,
    config: TournamentConfig,
    plan: SprtPlan,
    strategies: dict[str, str],
    live: LiveLine,
    address: str | None = None,
) -> int:
    """Play in worker processes, this machine's or those of the Dask cluster at ``address``; 0 once
    the test is settled, 130 if interrupted, 1 if a set failed."""
    from croupier.clients.author import cluster, inprocess, inprocess_run

    stopping = False

    def interrupted(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a second Ctrl-C: at once
        live.note("stopping once the sets in progress finish (Ctrl-C again to stop now)")

    versions = {bot.name: bot.version for bot in config.bots}
    previous = signal.signal(signal.SIGINT, interrupted)
    try:
        with contextlib.ExitStack() as stack:
            executor, processes, player, batch_seconds = None, None, inprocess.play_set, 0.0
            if address is not None:
                workers = stack.enter_context(cluster.connect(address, strategies))
                executor, processes, player = workers.executor, workers.threads, cluster.play_shipped_set
                batch_seconds = workers.batch_seconds
                strategies = workers.specs
                live.note(f"playing on the Dask cluster at {address}, sets at a time: {workers.threads}")
            settled = inprocess_run.play_plan(
                plan,
                store,
                tournament,
                strategies,
                versions,
                dict(config.games[0].options),
                stopping=lambda: stopping,
                luck=None if plan.evaluator is None else (plan.new, plan.old, plan.evaluator),
                processes=processes,
                executor=executor,
                player=player,
                batch_seconds=batch_seconds,
            )
    except KeyboardInterrupt:
        settled = False
    except (cluster.ClusterError, inprocess_run.SetFailed) as exc:
        return fail(inprocess_run.failure("croupier match", exc), 1)
    finally:
        signal.signal(signal.SIGINT, previous)
        live.end()
    if not settled:
        return EXIT_INTERRUPTED
    store.finish_tournament(tournament.id)
    return 0


async def _play_on_referee(
    args: argparse.Namespace,
    console: Console,
    config: TournamentConfig,
    store: Store,
    tournament: Tournament,
    plan: SprtPlan,
    live: LiveLine,
) -> int:
    """Play on a referee embedded in this process, the bots launched as a tournament launches them."""
    import functools

    from croupier.clients.tournament.adaptive import AdaptiveRunner
    from croupier.clients.tournament.cli import play

    runner_args = argparse.Namespace(
        server=None, admin_token=None, data=args.data, plain=args.plain, samples=DEFAULT_SAMPLES, web=args.web
    )
    return await play(
        runner_args,
        console,
        config,
        store,
        tournament,
        display=live,
        tables=lambda *_: None,
        make_runner=functools.partial(AdaptiveRunner, plan=plan),
        commit=False,  # its sets are dealt as the test asks for them: no schedule to commit to first
    )


def _report(
    console: Console,
    config: TournamentConfig,
    store: Store,
    tournament: Tournament,
    plan: SprtPlan,
    code: int,
    data: Path,
) -> int:
    """The verdict, the estimate and where it all is; the exit code."""
    status = plan.status
    print(line(plan))
    test = plan.progress.test
    if code != 0:
        say(console, f"{tournament.name}: not decided yet; the same command goes on where it stopped")
        return code
    if status.verdict is Verdict.H1:
        verdict = (
            f"H1 accepted: {plan.new} is better than {plan.old} by {test.elo1:g} Elo or more "
            f"(a false H1 at most {test.alpha:g} of the time)"
        )
    elif status.verdict is Verdict.H0:
        verdict = (
            f"H0 accepted: {plan.new} is not better than {plan.old} by {test.elo1:g} Elo "
            f"(a false H0 at most {test.beta:g} of the time)"
        )
    else:
        verdict = f"inconclusive: {plan.max_sets * plan.rotations} games (--max-games) did not decide"
    print(verdict)
    print(estimate(plan))
    if plan.games > plan.counted:
        print(
            f"{plan.games - plan.counted} more games were played in sets still in play at the verdict: "
            "in the results database, not in the test"
        )
    where = "" if data == DEFAULT_DATA else f" --data {data}"
    say(console, f"ratings of every game played: croupier ratings --tournament {tournament.name}{where}")
    if tournament.finished and tournament.secret is not None:
        from croupier.clients.audit import reveal

        path = reveal.publish(store, data, tournament, Deals.DUPLICATE)
        say(
            console,
            f"secret of {tournament.name} run {tournament.run}: {tournament.secret.hex()} "
            f"(check every deal: croupier verify {path})",
        )
    return EXITS[status.verdict]
