"""``croupier register NAME``: register a bot on a referee and print its token.

    croupier register mybot
    python mybot.py --server 127.0.0.1:50051 --token TOKEN

A referee on this machine is asked with the admin token it keeps in its data
directory (DATA/admin-token, written by ``croupier serve --data DATA``); give
--admin-token or $CROUPIER_ADMIN_TOKEN for any other. A token read from DATA is
sent only to a referee that first proves it holds it (ProveReferee: an HMAC of
a fresh nonce and its port, keyed by the token), so whatever else listens on
the port while the referee is down receives nothing. The bot's token is printed
alone on stdout, for scripts; how to use it goes to stderr.
"""

from __future__ import annotations

import argparse
import hmac
import os
import secrets
import sys
from pathlib import Path

from croupier.clients.connection import add_server_argument
from croupier.clients.results.ratings_cli import DEFAULT_DATA, fail
from croupier.wire.names import RULE, name_problem

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "0.0.0.0"})
PROVE_SECONDS = 10.0


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
    try:
        admin_token, source = find_admin_token(args.server, args.admin_token, args.data)
    except NoAdminToken as exc:
        return fail(f"croupier register: {exc}", exc.code)
    return asyncio.run(_register(args.server, admin_token, source, args.name))


class NoAdminToken(Exception):
    """No admin token was given or found, or none may be sent; the message says why in one line,
    ``code`` is the exit status (2: give one, 1: what answers is not the referee)."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def find_admin_token(server: str, given: str | None, data: Path) -> tuple[str, str]:
    """The admin token for the referee at ``server`` and where it came from: ``given`` (--admin-token,
    $CROUPIER_ADMIN_TOKEN), else for a referee on this machine the one ``croupier serve --data DATA``
    keeps in DATA/admin-token, once that referee proved it holds it. When no referee runs there,
    ``NoAdminToken`` says so, not that the token file is missing."""
    import asyncio

    from croupier.wire.errors import no_referee

    if given:
        return given, "--admin-token or $CROUPIER_ADMIN_TOKEN"
    if server.rpartition(":")[0] not in LOCAL_HOSTS:
        raise NoAdminToken(
            f"give the admin token of the referee at {server}: --admin-token or $CROUPIER_ADMIN_TOKEN"
        )
    port = server.rpartition(":")[2]
    if not port.isdigit():
        raise NoAdminToken(f"--server {server}: HOST:PORT, please")
    path = data / "admin-token"
    try:
        admin_token = path.read_text().strip()
    except OSError:
        if asyncio.run(_unproven(server, int(port), "", path)) == no_referee(server):  # anyone there?
            raise NoAdminToken(no_referee(server)) from None
        raise NoAdminToken(
            f"no admin token at {path}: give the --data of `croupier serve` (or --admin-token)"
        ) from None
    unproven = asyncio.run(_unproven(server, int(port), admin_token, path))
    if unproven is not None:
        raise NoAdminToken(unproven, 1)
    return admin_token, str(path)


async def _unproven(server: str, port: int, admin_token: str, path: Path) -> str | None:
    """Why the admin token read from ``path`` must not go to ``server`` (None: the server proved it
    holds that token already)."""
    import grpc

    from croupier.v1 import admin_pb2, admin_pb2_grpc
    from croupier.wire.errors import no_referee
    from croupier.wire.proof import admin_key, referee_proof

    nonce = secrets.token_bytes(32)
    request = admin_pb2.ProveRefereeRequest(nonce=nonce)
    async with grpc.aio.insecure_channel(server) as channel:
        try:  # no token in this call's metadata: it is the question whom to send one to
            reply = await admin_pb2_grpc.AdminServiceStub(channel).ProveReferee(
                request, timeout=PROVE_SECONDS
            )
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.UNAVAILABLE:
                return no_referee(server)
            why = f"{exc.code().name}: {exc.details()}"
        else:
            if hmac.compare_digest(reply.proof, referee_proof(admin_key(admin_token), port, nonce)):
                return None
            why = "a wrong proof"
    return (
        f"what answers at {server} did not prove it is the referee of {path.parent} ({why}), so its admin "
        "token was not sent: is that referee running there? (another one: give --admin-token)"
    )


async def _register(server: str, admin_token: str, source: str, name: str) -> int:
    import grpc

    from croupier.clients.tournament.referee import Referee, RefereeError

    referee = Referee(server, admin_token)
    try:
        bot_id, token = await referee.register_bot(name, patience=0.0)  # a referee that is down: say so
    except RefereeError as exc:
        if exc.code in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED):
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
