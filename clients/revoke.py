"""``croupier revoke BOT_ID``: retire a version of your bot. Its token opens no stream any more
(a stream playing with it is ended, and a seat it held is forfeited as any bot's that leaves), it
is no longer listed or seated; its matches and results stay.

    croupier revoke b-1f2e3d4c5b6a --server arena.example:50051 --token TOKEN

The token is the version's own, the token of another live version of its name (its owner's), or
the referee's admin token: --token, else $CROUPIER_TOKEN.
"""

from __future__ import annotations

import argparse
import os

from croupier.clients.connection import add_server_argument
from croupier.clients.results.ratings_cli import fail


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bot_id", help="the version's bot id, as croupier register printed it")
    add_server_argument(parser)
    parser.add_argument(
        "--token",
        default=os.environ.get("CROUPIER_TOKEN", ""),
        help="its own token, its owner's or the admin token (default: $CROUPIER_TOKEN)",
    )


def run(args: argparse.Namespace) -> int:
    import asyncio

    if not args.token:
        return fail(
            "croupier revoke: give the bot's token, its owner's or the admin's: --token or $CROUPIER_TOKEN", 2
        )
    return asyncio.run(_revoke(args.server, args.bot_id, args.token))


async def _revoke(server: str, bot_id: str, token: str) -> int:
    import grpc

    from croupier.clients.tournament.referee_client import TOKEN_METADATA
    from croupier.v1 import admin_pb2, admin_pb2_grpc
    from croupier.wire.errors import no_referee

    async with grpc.aio.insecure_channel(server) as channel:
        stub = admin_pb2_grpc.AdminServiceStub(channel)
        request = admin_pb2.RevokeBotRequest(bot_id=bot_id)
        try:
            reply = await stub.RevokeBot(request, metadata=((TOKEN_METADATA, token),))
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.UNAVAILABLE:
                return fail(f"croupier revoke: {no_referee(server)}", 1)
            return fail(f"croupier revoke: {exc.code().name}: {exc.details()}", 1)
    print(f"revoked {reply.name} ({bot_id}): its token opens nothing more; its results stay")
    return 0
