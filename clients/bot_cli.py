"""``croupier bot``: run a bundled bot (or your own Bot class) against a referee.

    croupier bot --server HOST:PORT --token TOKEN --strategy heuristic

Server, token and name default to $CROUPIER_SERVER, $CROUPIER_TOKEN and
$CROUPIER_BOT_NAME, which the tournament runner sets for the bots it launches.
"""

from __future__ import annotations

import argparse

from croupier.clients.connection import add_connection_arguments


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--strategy",
        default="heuristic",
        help="random, heuristic (the game's own, clients/bots/), package.module:BotClass "
        "for a Bot subclass of yours, or FILE.py (FILE.py:BotClass) for the one a file defines "
        "(default: %(default)s)",
    )
    parser.add_argument("--seed", type=int, help="seed the random strategy (per match and seat)")
    add_connection_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from croupier.clients.bots import strategy
    from croupier.clients.sdk import run_client

    try:
        factory = strategy(args.strategy, args.seed)
    except (ValueError, ImportError, AttributeError) as exc:
        print(f"croupier bot: {exc}")
        return 2
    return run_client(factory, args, default_name=args.strategy)
