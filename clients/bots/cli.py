"""``croupier bot``: run a bundled bot (or your own Bot class) against a referee.

    croupier bot --server HOST:PORT --token TOKEN --strategy heuristic
    croupier bot --server HOST:PORT --token TOKEN --openspiel ismcts

Server, token and name default to $CROUPIER_SERVER, $CROUPIER_TOKEN and
$CROUPIER_BOT_NAME, which the tournament runner sets for the bots it launches;
--pace-ms to $CROUPIER_PACE_MS, which ``make run PACE=...`` sets.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from croupier.clients.sdk import BotFactory, Match

from croupier.clients.connection import add_connection_arguments


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--strategy",
        default="heuristic",
        help="random, heuristic (the game's own, clients/bots/), boss-1, boss-2 (a search over it), "
        "package.module:BotClass "
        "for a Bot subclass of yours, or FILE.py (FILE.py:BotClass) for the one a file defines "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--openspiel",
        choices=("ismcts", "mcts"),
        help="play one of OpenSpiel's search algorithms instead (the openspiel extra; docs/training.md)",
    )
    parser.add_argument("--seed", type=int, help="seed the random strategy (per match and seat)")
    parser.add_argument(
        "--pace-ms",
        type=int,
        default=int(os.environ.get("CROUPIER_PACE_MS") or 0),
        help="wait this long before each move, so people can watch the matches (make run's demo); "
        "each match waits on its own (default: $CROUPIER_PACE_MS, or 0)",
    )
    add_connection_arguments(parser)


OPENSPIEL = {"ismcts": "Ismcts", "mcts": "Mcts"}
"""``--openspiel``'s algorithms, by their bot classes in clients/openspiel/searchers.py."""


def run(args: argparse.Namespace) -> int:
    from croupier.clients.bots import strategy
    from croupier.clients.sdk import run_client

    if args.openspiel:  # by name: the bundled bots' room does not import the research bridge
        args.strategy = f"croupier.clients.openspiel.searchers:{OPENSPIEL[args.openspiel]}"
    try:
        factory = strategy(args.strategy, args.seed)
    except (ValueError, ImportError, AttributeError) as exc:
        extra = " (--openspiel needs the openspiel extra: pip install 'croupier[openspiel]')"
        print(f"croupier bot: {exc}{extra if args.openspiel and isinstance(exc, ImportError) else ''}")
        return 2
    if not 0 <= args.pace_ms <= 60_000:
        print("croupier bot: --pace-ms must be 0 to 60000")
        return 2
    return run_client(paced(factory, args.pace_ms), args, default_name=args.strategy)


def paced(factory: BotFactory, pace_ms: int) -> BotFactory:
    """``factory``'s bots, each answer held back ``pace_ms`` (an ``async`` wait: other matches go on)."""
    if pace_ms <= 0:
        return factory

    def make(match: Match) -> Any:
        bot = factory(match)
        decide = bot.choose

        async def choose(view: Any, legal: list[Any]) -> Any:
            await asyncio.sleep(pace_ms / 1000)
            choice = decide(view, legal)
            return await choice if inspect.isawaitable(choice) else choice

        bot.choose = choose  # type: ignore[method-assign]
        return bot

    return make
