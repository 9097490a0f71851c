"""``croupier bot``: run a bundled bot (or your own Bot class) against a referee.

    croupier bot --server HOST:PORT --token TOKEN --strategy heuristic

Server, token and name default to $CROUPIER_SERVER, $CROUPIER_TOKEN and
$CROUPIER_BOT_NAME, which the tournament runner sets for the bots it launches.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--strategy",
        default="heuristic",
        help="random, heuristic (the game's own, clients/bots/), or package.module:BotClass "
        "for a Bot subclass of yours (default: %(default)s)",
    )
    parser.add_argument("--seed", type=int, help="seed the random strategy (per match and seat)")
    add_connection_arguments(parser)


def add_server_argument(parser: argparse.ArgumentParser) -> None:
    """--server, as every command that talks to one referee takes it."""
    parser.add_argument(
        "--server",
        default=os.environ.get("CROUPIER_SERVER", "127.0.0.1:50051"),
        help="the referee, HOST:PORT (default: $CROUPIER_SERVER, else %(default)s)",
    )


def add_connection_arguments(parser: argparse.ArgumentParser) -> None:
    """The connection options shared by ``main`` and ``croupier bot``."""
    add_server_argument(parser)
    parser.add_argument(
        "--token",
        action="append",
        help="a bot token or a seat token; repeat for several (default: $CROUPIER_TOKEN)",
    )
    parser.add_argument(
        "--name",
        default=os.environ.get("CROUPIER_BOT_NAME", ""),
        help="the name in the referee's logs (default: $CROUPIER_BOT_NAME)",
    )
    parser.add_argument(
        "--max-matches", type=int, default=8, help="matches played at once (default: %(default)s)"
    )
    parser.add_argument("--matches", type=int, help="stop after this many matches have ended")
    parser.add_argument("--tls-ca", type=Path, help="PEM root certificate: connect with TLS")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every match and stale answer")


def run(args: argparse.Namespace) -> int:
    from croupier.clients.bots import strategy
    from croupier.clients.sdk import run_client

    try:
        factory = strategy(args.strategy, args.seed)
    except (ValueError, ImportError, AttributeError) as exc:
        print(f"croupier bot: {exc}")
        return 2
    return run_client(factory, args, default_name=args.strategy)
