"""``croupier register NAME``: register a bot on a referee and print its token.

    croupier register mybot
    python mybot.py --server 127.0.0.1:50051 --token TOKEN

A referee on this machine is asked with the admin token it keeps in its data
directory (DATA/admin-token, written by ``croupier serve --data DATA``); give
--admin-token or $CROUPIER_ADMIN_TOKEN for any other. A token read from DATA is
sent only to a referee that first proves it holds it (ProveReferee: an HMAC of
a fresh nonce and the exact address dialled, keyed by the token), and only at
that address, so whatever else listens on the port while the referee is down,
or on [::1] when the referee is on 127.0.0.1, receives nothing. The bot's token is printed
alone on stdout, for scripts; how to use it goes to stderr.

The name is yours from then on: registering it again (a new version, NAME@2 on a ladder) takes
the token of one of its live versions, --owner-token or $CROUPIER_OWNER_TOKEN, whoever asks;
``croupier revoke BOT_ID`` retires a version. On an arena that takes open registrations
(a ladder file's [registration]), --open registers without any admin token:

    croupier register mybot --server arena.example:50051 --open
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from croupier.clients.connection import add_server_argument
from croupier.clients.results.ratings_cli import DEFAULT_DATA, fail
from croupier.wire.names import RULE, name_problem


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help=f"the bot's name in tables and logs ({RULE.removeprefix('use ')})")
    add_server_argument(parser)
    parser.add_argument(
        "--admin-token",
        default=os.environ.get("CROUPIER_ADMIN_TOKEN"),
        help="the referee's admin token (default: $CROUPIER_ADMIN_TOKEN, else DATA/admin-token "
        "for a referee on this machine)",
    )
    parser.add_argument(
        "--owner-token",
        default=os.environ.get("CROUPIER_OWNER_TOKEN", ""),
        help="for a new version of a name already registered: the token of one of its live versions "
        "(default: $CROUPIER_OWNER_TOKEN)",
    )
    parser.add_argument(
        "--open",
        action="store_true",
        help="register without the admin token, on a referee that takes open registrations",
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help="the local referee's data directory, where its admin token is (default: %(default)s)",
    )


def run(args: argparse.Namespace) -> int:
    import asyncio

    problem = name_problem(args.name)
    if problem is not None:
        return fail(f"croupier register: bot name {problem}", 2)
    if args.open:
        return asyncio.run(_register(args.server, "", "", args.name, args.owner_token))
    from croupier.clients.tournament.admin_token import NoAdminToken, find_admin_token

    try:
        admin_token, source, server = find_admin_token(args.server, args.admin_token, args.data)
    except NoAdminToken as exc:
        return fail(f"croupier register: {exc}", exc.code)
    return asyncio.run(_register(server, admin_token, source, args.name, args.owner_token))


async def _register(server: str, admin_token: str, source: str, name: str, owner_token: str = "") -> int:
    """Register ``name``, claimed; without ``admin_token``, as an open registration."""
    import grpc

    from croupier.clients.tournament.referee_client import Referee, RefereeError

    referee = Referee(server, admin_token)
    try:
        bot_id, token = await referee.register_bot(  # patience 0: a referee that is down, say so
            name, patience=0.0, claim=True, owner_token=owner_token
        )
    except RefereeError as exc:
        if admin_token and exc.code in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED):
            return fail(
                f"croupier register: the referee at {server} refused the admin token from {source}: "
                "is it that referee's?",
                1,
            )
        return fail(f"croupier register: {exc}", 1)
    finally:
        await referee.close()
    print(token)
    print(
        f"registered {name} as {bot_id}; play with: --server {server} --token {token}",
        file=sys.stderr,
    )
    return 0
