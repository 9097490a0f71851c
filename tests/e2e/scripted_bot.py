"""A bot for the tournament tests, on the raw stubs: it plays random legal actions,
or misbehaves on purpose.

    python -m tests.e2e.scripted_bot random|crash|sleep [--max-matches N]

Address and token come from CROUPIER_SERVER and CROUPIER_TOKEN (the runner sets them).
``crash`` exits abruptly after its first few decisions in every life; ``sleep`` never answers.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
from collections.abc import AsyncIterator

import grpc
from croupier.v1 import bots_pb2, bots_pb2_grpc

CRASH_AFTER = 3


async def play(behaviour: str, max_matches: int) -> None:
    outbox: asyncio.Queue[bots_pb2.BotMessage] = asyncio.Queue()
    outbox.put_nowait(
        bots_pb2.BotMessage(hello=bots_pb2.Hello(protocol_version=1, name=behaviour, max_matches=max_matches))
    )

    async def outgoing() -> AsyncIterator[bots_pb2.BotMessage]:
        while True:
            yield await outbox.get()

    rng = random.Random(os.getpid())
    answered = 0
    async with grpc.aio.insecure_channel(os.environ["CROUPIER_SERVER"]) as channel:
        stream = bots_pb2_grpc.BotServiceStub(channel).Play(
            outgoing(), metadata=(("croupier-token", os.environ["CROUPIER_TOKEN"]),)
        )
        async for message in stream:
            if message.WhichOneof("message") != "decision" or behaviour == "sleep":
                continue
            if behaviour == "crash" and answered == CRASH_AFTER:
                os._exit(3)
            decision = message.decision
            index = rng.randrange(len(decision.legal_actions))
            outbox.put_nowait(
                bots_pb2.BotMessage(
                    move=bots_pb2.Move(
                        match_id=decision.match_id, decision_id=decision.decision_id, index=index
                    )
                )
            )
            answered += 1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("behaviour", choices=["random", "crash", "sleep"])
    parser.add_argument("--max-matches", type=int, default=8)
    args = parser.parse_args()
    with contextlib.suppress(grpc.aio.AioRpcError):  # the referee went away: so does the bot
        asyncio.run(play(args.behaviour, args.max_matches))


if __name__ == "__main__":
    main()
