"""``croupier match GAME --bot SPEC --bot SPEC ...``: a bot author's loop, in any language.

    croupier match platinum_fish --bot heuristic --bot "python mybot.py" --games 10

Plays GAME on a referee embedded in this process, one seat per --bot, with
duplicate deals: each of the --games deals is played once in every rotation,
so every bot holds every hand. A SPEC is a bundled strategy (random,
heuristic) or a shell command that starts a bot; the command is run with
``--server HOST:PORT --token TOKEN`` appended, and with the same in
$CROUPIER_SERVER and $CROUPIER_TOKEN. It ends with each bot's results and
the ratings of this run, and exits 0 when every match finished. Results and
journals are kept under --data, as a tournament's are
(``croupier matches``, ``croupier replay``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import re
import secrets
import shlex
import sys
import time
import tomllib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from croupier.clients.results.ratings_cli import DEFAULT_DATA, DEFAULT_SAMPLES, fail, say
from croupier.clients.results.schedule import Rotations, rotation_count

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from croupier.clients.results.ratings import Places
    from croupier.clients.results.store import FinishedMatch, Store, Tournament
    from croupier.clients.tournament.bots import BotProcess
    from croupier.clients.tournament.config import TournamentConfig

BUNDLED = ("random", "heuristic")
SPECTATOR_SECONDS = 60.0
"""How long --watch's spectator may take to show the run's last matches before the tables."""
CONNECT_OPTIONS = ' --server "$CROUPIER_SERVER" --token "$CROUPIER_TOKEN"'
"""Appended to a SPEC that is a shell command (the shell fills them in from the bot's environment)."""
LAUNCHERS = frozenset(
    {"python", "python3", "node", "sh", "bash", "java", "ruby", "go", "run", "uv", "exec", "croupier", "bot"}
)
"""Words of a command that name the interpreter, not the bot: the bot is named after what follows
(``croupier bot --strategy random``: random)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", help="chinese_ten, pair_battle, platinum_fish or spoil_five")
    parser.add_argument(
        "--bot",
        action="append",
        required=True,
        metavar="SPEC",
        help="a seat's bot: random, heuristic, or a shell command that starts one (repeat: one per seat)",
    )
    parser.add_argument(
        "--games",
        type=int,
        default=5,
        metavar="N",
        help="deals, each played once per rotation of the seats (default: %(default)s)",
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


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from croupier.clients.results.store import Store, StoreError
    from croupier.clients.tournament.config import ConfigError, parse

    if args.games < 1:
        return fail("croupier match: --games must be at least 1", 2)
    try:
        options = dict(_option(text) for text in args.option)
    except ValueError as exc:
        return fail(f"croupier match: {exc}", 2)
    seed = secrets.randbelow(2**31) if args.seed is None else args.seed
    try:
        config = parse(settings(args.game, args.bot, args.games, options, seed, fresh=args.watch))
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
            return asyncio.run(_play(args, console, config, store, tournament))
    except StoreError as exc:
        return fail(f"croupier match: {exc}", 2)


def settings(
    game: str, specs: Sequence[str], deals: int, options: dict[str, Any], seed: int, fresh: bool = False
) -> dict[str, Any]:
    """The match as a tournament file's settings: one game, one table of every bot, ``deals``
    duplicate sets played one at a time. ``fresh`` (--watch): every match its own deal, since a
    referee lets nobody but the admin watch a match while a twin dealt the same cards is live."""
    names = bot_names(specs)
    rotations = rotation_count(max(len(specs), 1), Rotations.WILLIAMS)
    return {
        "name": "match",
        "seed": seed,
        "rounds": 1,
        "concurrency": rotations,  # a duplicate set (one match per rotation) at a time
        "deals": "fresh" if fresh else "duplicate",
        "games": [{"game": game, "seats": len(specs), "deals": deals, "options": options}],
        "bots": [
            {"name": name, "command": bot_command(spec, rotations)}
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
    """A name for each seat's bot: the strategy, or the program a command runs (``python
    mybot.py``: mybot); the same name twice is numbered (random-1, random-2)."""
    bases = [_name_of(spec) for spec in specs]
    numbers: dict[str, int] = {}
    names = []
    for base in bases:
        if bases.count(base) == 1:
            names.append(base)
            continue
        numbers[base] = numbers.get(base, 0) + 1
        names.append(f"{base}-{numbers[base]}")
    return names


def _name_of(spec: str) -> str:
    if spec in BUNDLED:
        return spec
    try:
        words = shlex.split(spec)
    except ValueError:
        words = spec.split()
    words = [w for w in words if "=" not in w.split("/")[0]]  # FOO=1 ./bot: the bot, not the variable
    program = next((w for w in words if Path(w).name not in LAUNCHERS and not w.startswith("-")), "bot")
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", Path(program).stem)[:30].lstrip("._-")
    return name or "bot"


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
    args: argparse.Namespace, console: Console, config: TournamentConfig, store: Store, tournament: Tournament
) -> int:
    from croupier.clients.tournament.cli import play

    web = args.web or ("127.0.0.1:0" if args.watch else None)  # a free port: two runs never collide
    runner_args = argparse.Namespace(
        server=None, admin_token=None, data=args.data, plain=args.plain, samples=DEFAULT_SAMPLES, web=web
    )
    quiet = _Quiet()

    @contextlib.asynccontextmanager
    async def spectating(target: str) -> AsyncIterator[None]:
        """The spectator, while the referee runs: the matches to come (not those of earlier runs
        on this data), and once they are played, the last of them before the tables."""
        from croupier.clients.spectator.watch import follow, matches_now

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

    if not args.watch:
        return await play(runner_args, console, config, store, tournament, tables=_tables)
    return await play(runner_args, console, config, store, tournament, quiet, spectating, _tables)


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
    title = f"{config.games[0].game}: ratings of this run (Elo, 95% interval)"
    console.print(
        ratings_table(config.games[0].game, rate(list(sets.values()), samples=samples), title=title)
    )
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
