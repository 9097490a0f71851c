"""The connection options every client command takes: which referee, which tokens, how many matches.

Defaults come from $CROUPIER_SERVER, $CROUPIER_TOKEN and $CROUPIER_BOT_NAME, which the tournament
runner sets for the bots it launches. Kept below the SDK and ``croupier bot`` so both can use them.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path


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
    parser.add_argument(
        "--no-stream-options",
        action="store_true",
        help="ask the referee for no stream option (every message on its own, as protocol 1 began)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log every match and stale answer")
