"""``croupier match GAME --bot SPEC --bot SPEC ...``: a bot author's loop, in any language.

    croupier match platinum_fish --bot heuristic --bot "python mybot.py" --games 10

Plays GAME on a referee embedded in this process (or the running one --server
names), one seat per --bot, with duplicate deals: each of the --games deals is
played once in every rotation, so every bot holds every hand. A SPEC is a
bundled strategy (random, heuristic, boss-1, boss-2), ``registered:NAME`` for a bot registered
on the --server referee (``croupier register NAME``) that connects by itself
with its own token, or a shell command that starts a bot; the command is run
with ``--server HOST:PORT`` appended, and with $CROUPIER_SERVER and its token in
$CROUPIER_TOKEN (never on its command line, which every user of the machine
can read). As root, each bot runs isolated (``--isolation``, as a tournament
file's ``isolation``: docs/tournaments.md). It ends with each bot's results and
the ratings of this run, and exits 0 when every match finished and every bot
made moves of its own. Results and journals are kept under --data, as a
tournament's are (``croupier matches``, ``croupier replay``).

With --human you take a seat yourself, in the web viewer: the command prints a link to your seat
(on 127.0.0.1; it works once, in one browser) and opens it where a display is. You see your own
cards and play by clicks or keys; everyone else sees the match as a spectator. A match with you
in it has human-sized clocks (a minute a move, five in the bank), one match at a time, each its
own deal (--games 1 by default: one deal in each seating). After each match the page shows its
result, and the next waits for the person to ask for it; after the last, the tables are printed
and the page stays until they leave it or ask for a rematch (the same bots, new deals).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import os
import re
import secrets
import shlex
import sys
import time
import tomllib
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from croupier.clients.isolation.policy import MODES as ISOLATION
from croupier.clients.results.ratings import DEFAULT_MODEL
from croupier.clients.results.ratings_cli import DEFAULT_DATA, DEFAULT_SAMPLES, RatingProgress, fail, say
from croupier.clients.results.schedule import Rotations, rotation_count
from croupier.clients.web import seat

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from croupier.clients.results.ratings import Places
    from croupier.clients.results.store import FinishedMatch, Store, Tournament
    from croupier.clients.tournament.config import TournamentConfig
    from croupier.clients.tournament.launch import BotProcess

BUNDLED = ("random", "heuristic", "boss-1", "boss-2")
HUMAN = "you"
"""The name of the person's seat (--human)."""
REGISTERED = "registered:"
"""A SPEC seating a bot registered on the referee by its name: ``registered:mybot``."""
SPECTATOR_SECONDS = 60.0
"""How long --watch's spectator may take to show the run's last matches before the tables."""
CONNECT_OPTIONS = ' --server "$CROUPIER_SERVER"'
"""Appended to a SPEC that is a shell command (the shell fills it in from the bot's environment);
the token stays in $CROUPIER_TOKEN: on a command line any user of the machine reads it (ps)."""
LAUNCHERS = frozenset(
    {"python", "python3", "node", "sh", "bash", "java", "ruby", "go", "run", "uv", "exec", "croupier", "bot"}
)
"""Words of a command that name the interpreter, not the bot (``go run mybot.go``: mybot); a path
such as ``./run`` is the bot's program."""
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
GENERIC = frozenset({"run", "main", "bot", "start", "index", "app", "croupier-bot", "a", ""})
"""Program names that say nothing of the bot: it is named after their folder (``bots/alice/run``,
``build/cpp-bot/croupier-bot``, ``./run`` in a folder ``alice``: alice, cpp-bot, alice)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", help="chinese_ten, pair_battle, platinum_fish or spoil_five")
    parser.add_argument(
        "--bot",
        action="append",
        required=True,
        metavar="SPEC",
        help="a seat's bot: random, heuristic, boss-1, boss-2, registered:NAME (a bot registered on the "
        "--server referee, "
        "connected with its own token), or a shell command that starts one (repeat: one per seat). A "
        "command's bot is named after its program (python mybot.py: mybot; croupier bot --strategy X: X; "
        "./run or bots/alice/main.py: the program's folder)",
    )
    parser.add_argument(
        "--games",
        type=int,
        metavar="N",
        help="deals, each played once per rotation of the seats (default: 5; 1 with --human)",
    )
    parser.add_argument(
        "--human",
        action="store_true",
        help="take a seat yourself, in the browser: the first seat is yours, one per --bot follows "
        f"(a link to it is printed; {seat.DECISION_MS // 1000} s a move and {seat.BANK_MS // 1000} s "
        "in the bank for everyone)",
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a game option (docs/games/), e.g. target=300 or timing=lockstep; repeatable",
    )
    parser.add_argument("--seed", type=int, help="deal from this seed (default: a new one, printed)")
    parser.add_argument(
        "--watch",
        action="store_true",
        help="watch the matches in the terminal spectator, and in a browser (its address is printed)",
    )
    parser.add_argument(
        "--web",
        metavar="HOST:PORT",
        help="serve the web viewer here while the matches play (with --watch: on a free local port)",
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help="results, journals and bot logs go here (default: %(default)s)",
    )
    parser.add_argument("--plain", action="store_true", help="plain progress lines, even on a terminal")
    parser.add_argument(
        "--isolation",
        choices=ISOLATION,
        default="auto",
        help="auto: run each command bot as a user of its own where this can (as root), else say so; "
        "required: refuse to play where it cannot; off: run them as you (default: %(default)s)",
    )
    parser.add_argument(
        "--server",
        metavar="HOST:PORT",
        help="play on this running referee instead of one embedded here (registered:NAME bots need one)",
    )
    parser.add_argument(
        "--admin-token",
        default=os.environ.get("CROUPIER_ADMIN_TOKEN"),
        help="with --server: its admin token (default: $CROUPIER_ADMIN_TOKEN, else DATA/admin-token for a "
        "referee on this machine, as croupier register finds it)",
    )


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from croupier.clients.results.store import Store, StoreError
    from croupier.clients.tournament.config import ConfigError, parse

    if args.games is None:
        args.games = 1 if args.human else 5
    if args.games < 1:
        return fail("croupier match: --games must be at least 1", 2)
    try:
        options = dict(_option(text) for text in args.option)
    except ValueError as exc:
        return fail(f"croupier match: {exc}", 2)
    registered = [spec for spec in args.bot if spec.startswith(REGISTERED)]
    if registered and not args.server:
        return fail(
            f"croupier match: --bot {registered[0]} seats a bot registered on a running referee: "
            "give that referee, --server HOST:PORT",
            2,
        )
    if args.server:
        from croupier.clients.tournament.admin_token import NoAdminToken, find_admin_token

        try:
            args.admin_token, _, args.server = find_admin_token(args.server, args.admin_token, args.data)
        except NoAdminToken as exc:
            return fail(f"croupier match: --server: {exc}", exc.code)
    seed = secrets.randbelow(2**31) if args.seed is None else args.seed
    try:
        config = parse(
            settings(
                args.game,
                args.bot,
                args.games,
                options,
                seed,
                fresh=args.watch,
                isolation=args.isolation,
                human=args.human,
            )
        )
    except ConfigError as exc:
        return fail("\n".join(f"croupier match: {_for_the_command_line(p)}" for p in exc.problems), 2)
    console = Console(width=None if sys.stdout.isatty() else 120)
    try:
        store = Store(args.data / "results.db")
        with store:
            store.lock_for_running()
            tournament = store.open_tournament(
                _fresh_name(store, args.game),
                config.fingerprint(),
                config.settings(),
                again=False,
                secret=match_secret(seed),
            )
            say(console, f"{tournament.name}: seed {seed} (--seed {seed} deals the same cards again)")

            def rematch() -> tuple[TournamentConfig, Tournament]:
                """The same bots and settings, new deals: a new seed, a run of its own."""
                seed = secrets.randbelow(2**31)
                again = parse(
                    settings(
                        args.game, args.bot, args.games, options, seed, isolation=args.isolation, human=True
                    )
                )
                run = store.open_tournament(
                    _fresh_name(store, args.game),
                    again.fingerprint(),
                    again.settings(),
                    again=False,
                    secret=match_secret(seed),
                )
                say(console, f"rematch, {run.name}: seed {seed} (--seed {seed} deals the same cards again)")
                return again, run

            return asyncio.run(
                _play(args, console, config, store, tournament, rematch if args.human else None)
            )
    except StoreError as exc:
        return fail(f"croupier match: {exc}", 2)


def settings(
    game: str,
    specs: Sequence[str],
    deals: int,
    options: dict[str, Any],
    seed: int,
    fresh: bool = False,
    isolation: str = "auto",
    human: bool = False,
) -> dict[str, Any]:
    """The match as a tournament file's settings: one game, one table of every bot, ``deals``
    duplicate sets played one at a time. ``fresh`` (--watch): every match its own deal, since a
    referee lets nobody but the admin watch a match while a twin dealt the same cards is live.
    ``human``: a person takes the first seat (``HUMAN``), one match at a time, each its own deal
    (they would remember a duplicate's), on clocks for a person."""
    names = bot_names(specs)
    seats = len(specs) + human
    rotations = rotation_count(max(seats, 1), Rotations.WILLIAMS)
    table: dict[str, Any] = {"game": game, "seats": seats, "deals": deals, "options": options}
    if human:
        table["clock"] = {"decision_ms": seat.DECISION_MS, "bank_ms": seat.BANK_MS}
    bots: list[dict[str, Any]] = [{"name": HUMAN, "human": True}] if human else []
    return {
        "name": "match",
        "seed": seed,
        "rounds": 1,
        "concurrency": 1 if human else rotations,  # a duplicate set (one match per rotation) at a time
        # a registered bot connects by itself: one stream of it must not hold two seats of a deal
        "deals": "fresh" if fresh or human or any(s.startswith(REGISTERED) for s in specs) else "duplicate",
        "isolation": isolation,
        "games": [table],
        "bots": bots
        + [
            {"name": name, "registered": True}
            if spec.startswith(REGISTERED)
            else {"name": name, "command": bot_command(spec, rotations)}
            for name, spec in zip(names, specs, strict=True)
        ],
    }


def match_secret(seed: int) -> bytes:
    """The deals' secret of a ``croupier match`` run: from its seed, so that ``--seed`` deals the
    same cards again. A bot author's own loop wants that; a tournament's secret never comes from
    its file (store.open_tournament draws it from the OS)."""
    return hashlib.sha256(f"croupier match --seed {seed}".encode()).digest()


def bot_command(spec: str, matches: int) -> list[str]:
    """The command that starts a SPEC's bot (placeholders in it escaped: the runner expands them)."""
    if spec in BUNDLED:
        return [
            *(sys.executable, "-m", "croupier.clients.cli", "bot"),
            *("--strategy", spec, "--max-matches", str(matches)),
        ]
    escaped = spec.replace("{", "{{").replace("}", "}}")
    return ["/bin/sh", "-c", escaped + CONNECT_OPTIONS]


def bot_names(specs: Sequence[str]) -> list[str]:
    """A name for each seat's bot: the strategy, the registered name, or the program a command runs
    (``python mybot.py``: mybot; see ``GENERIC``); the same name twice is numbered (random-1,
    random-2), but for registered bots: those are one bot each."""
    bases = [_name_of(spec) for spec in specs]
    numbers: dict[str, int] = {}
    names = []
    for base, spec in zip(bases, specs, strict=True):
        if bases.count(base) == 1 or spec.startswith(REGISTERED):
            names.append(base)
            continue
        numbers[base] = numbers.get(base, 0) + 1
        names.append(f"{base}-{numbers[base]}")
    return names


def _name_of(spec: str) -> str:
    if spec in BUNDLED:
        return spec
    if spec.startswith(REGISTERED):
        return spec.removeprefix(REGISTERED)
    try:
        words = shlex.split(spec)
    except ValueError:
        words = spec.split()
    words = [w for w in words if not ASSIGNMENT.match(w)]  # FOO=1 ./bot: the bot, not the variable
    for flag, value in zip(words, [*words[1:], ""], strict=True):
        if flag == "--strategy" or flag.startswith("--strategy="):  # croupier bot --strategy X
            chosen = flag.partition("=")[2] or value
            return _clean(chosen.rpartition(":")[2]) or "bot"  # package.module:MyBot: MyBot
    if [Path(w).name for w in words[:2]] == ["croupier", "bot"]:
        return "heuristic"  # its default strategy
    program = next((w for w in words if not (_launcher(w) or w.startswith("-"))), "")
    path = Path(program).absolute()  # "." is the folder it names
    if program and Path(program).stem in GENERIC:
        return _clean((path if program.rstrip("/") in ("", ".") else path.parent).name) or "bot"
    return _clean(Path(program).stem) or "bot"


def _launcher(word: str) -> bool:
    """Whether ``word`` runs the bot rather than being it: ``python``, ``/usr/bin/node``, ``go run``'s
    run; but a path to a generic name (``./run``) is a program."""
    name = Path(word).name
    return name in LAUNCHERS and ("/" not in word or name not in GENERIC)


def _clean(name: str) -> str:
    """``name`` as a bot's name: letters, digits, '.', '_', '-', up to 30."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:30].lstrip("._-")


def _option(text: str) -> tuple[str, Any]:
    """``key=value``, the value read as in a tournament file (300 a number, true a boolean) or else
    as text (lockstep)."""
    key, equals, value = text.partition("=")
    if not equals or not key.strip():
        raise ValueError(f"--option {text!r}: write KEY=VALUE, e.g. --option target=300")
    try:
        return key.strip(), tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        return key.strip(), value


def _for_the_command_line(problem: str) -> str:
    """A tournament file's problem in this command's words."""
    problem = re.sub(r"^games\[0\]\.options\.", "--option ", problem)
    problem = re.sub(r"^games\[0\]\.game: ", "", problem)
    return re.sub(r"^games\[0\] \(\w+\): ", "", problem)


def _fresh_name(store: Store, game: str) -> str:
    """A tournament name of its own for this run: match-GAME-DATE-TIME (numbered within a second)."""
    taken = {tournament.name for tournament in store.tournaments()}
    base = f"match-{game}-{time.strftime('%Y%m%d-%H%M%S')}"
    name, number = base, 1
    while name in taken:
        number += 1
        name = f"{base}-{number}"
    return name


async def _play(
    args: argparse.Namespace,
    console: Console,
    config: TournamentConfig,
    store: Store,
    tournament: Tournament,
    rematch: Callable[[], tuple[TournamentConfig, Tournament]] | None = None,
) -> int:
    from croupier.clients.tournament.cli import play

    web = args.web or ("127.0.0.1:0" if args.watch else None)  # a free port: two runs never collide
    # (--human: the viewer starts anyway, on 127.0.0.1: tournament/viewer.py)
    runner_args = argparse.Namespace(
        server=args.server,
        admin_token=args.admin_token,
        data=args.data,
        plain=args.plain,
        samples=DEFAULT_SAMPLES,
        model=DEFAULT_MODEL,  # the live standings fit as _tables rates
        web=web,
        unix_socket=None,
    )
    quiet = _Quiet()

    @contextlib.asynccontextmanager
    async def spectating(target: str) -> AsyncIterator[None]:
        """The spectator, while the referee runs: the matches to come (not those of earlier runs
        on this data), and once they are played, the last of them before the tables."""
        from croupier.clients.terminal.watch import follow, matches_now

        played = asyncio.Event()
        spectator = asyncio.create_task(follow(target, console, played, await matches_now(target)))
        try:
            yield
            played.set()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(spectator, SPECTATOR_SECONDS)
        finally:
            spectator.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await spectator
            quiet.flush()

    runs = [tournament]  # and each rematch's: the last is the one checked for silent bots

    def again() -> tuple[TournamentConfig, Tournament]:
        assert rematch is not None
        config, run = rematch()
        runs.append(run)
        return config, run

    next_run = again if rematch is not None else None
    if not args.watch:
        code = await play(
            runner_args, console, config, store, tournament, tables=_tables, commit=False, rematch=next_run
        )
    else:
        code = await play(
            runner_args, console, config, store, tournament, quiet, spectating, _tables, commit=False,
            rematch=next_run,
        )  # fmt: skip
    tournament = runs[-1]
    silent = silent_bots(store.finished(tournament.id)) if code == 0 else []
    if silent:
        logs = args.data / "logs" / f"{tournament.name}-{tournament.run}"
        return fail(
            f"croupier match: {', '.join(silent)} never played a move: the referee's clock played every one "
            f"(the bot's log in {logs} says why)",
            1,
        )
    return code


def silent_bots(finished: Sequence[FinishedMatch]) -> list[str]:
    """The bots that made no move of their own in ``finished`` (the clock played all theirs), as the
    journals on this machine tell; a match whose journal is elsewhere tells nothing."""
    from croupier.server.journal import Act, RecordError, read_records

    moved: dict[str, bool] = {}
    for match in finished:
        try:
            records = read_records(Path(match.record.journal or ""))
        except (OSError, RecordError):
            continue
        acted = {record.seat for record in records if isinstance(record, Act)}
        for result in match.results:
            moved[result.bot] = moved.get(result.bot, False) or result.seat in acted
    return [bot for bot, did in moved.items() if not did]


def _tables(
    console: Console,
    config: TournamentConfig,
    store: Store,
    tournament: Tournament,
    samples: int,
    launched: Sequence[BotProcess],
    machine: str,
) -> None:
    """Each bot's results, then the ratings of this run; where the journals are."""
    from croupier.clients.results.ratings import rate
    from croupier.clients.results.report import ratings_table
    from croupier.clients.tournament.cli import croupier_command

    finished = store.finished(tournament.id)
    if not finished:
        return
    console.print(results_table(config.games[0].game, finished))
    sets: dict[tuple[int, int, int], list[Places]] = {}
    for match in finished:
        key = match.record.key
        sets.setdefault((key.round, key.group, key.deal), []).append(match.places)
    game = config.games[0].game
    title = f"{game}: ratings of this run (Elo, 95% interval)"
    table = rate(list(sets.values()), samples=samples, progress=RatingProgress(f"{game}: ratings"))
    console.print(ratings_table(game, table, title=title))
    journals = [match.record.journal for match in finished if match.record.journal]
    if journals:
        say(console, f"journals in {Path(journals[0]).parent}")
    data = store.path.parent
    where = "" if data == DEFAULT_DATA else f" --data {data}"
    croupier = croupier_command()
    say(
        console,
        f"list them: {croupier} matches --tournament {tournament.name}{where}; "
        f"replay one: {croupier} replay MATCH_ID{where}",
    )


def results_table(game: str, matches: Sequence[FinishedMatch]) -> Table:
    """Per bot: matches, wins, mean place and score, timeouts, refused actions, forfeits."""
    from rich.table import Table

    lines: dict[str, list[Any]] = {}
    for match in matches:
        for result in match.results:
            line = lines.setdefault(result.bot, [0, 0, 0, 0, 0, 0, 0])
            for index, value in enumerate(
                (1, result.place == 1, result.place, result.score, result.timeouts, result.refusals)
            ):
                line[index] += value
            line[6] += int(result.forfeited)
    table = Table(title=f"{game}: results per bot")
    table.add_column("bot")
    for name in ("matches", "won", "mean place", "mean score", "timeouts", "refused", "forfeits"):
        table.add_column(name, justify="right")
    for bot, (played, won, places, scores, timeouts, refusals, forfeits) in sorted(
        lines.items(), key=lambda item: item[1][2] / item[1][0]
    ):
        table.add_row(
            bot,
            str(played),
            str(won),
            f"{places / played:.2f}",
            f"{scores / played:.1f}",
            *map(str, (timeouts, refusals, forfeits)),
        )
    return table


class _Quiet:
    """The runner's display while the spectator has the screen: notes kept until the end."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def begin(self, title: str, total: int, done: int) -> None:
        pass

    def match_done(self, game: str, places: Places, replayed: bool = False) -> None:
        pass

    def note(self, text: str) -> None:
        self.notes.append(text)

    def end(self) -> None:
        pass

    def flush(self) -> None:
        for text in self.notes:
            print(text, file=sys.stderr)
        self.notes.clear()
