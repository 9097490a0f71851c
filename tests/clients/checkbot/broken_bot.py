"""A bot with one deliberate flaw per check of ``croupier check-bot``, each a mistake a real bot could
make; otherwise a plain random bot on raw stubs (the SDK would not make them). And a bot on the SDK
with the mistake its users make, which only its own log explains.

    python tests/clients/checkbot/broken_bot.py FLAW    (server and token: $CROUPIER_SERVER, $CROUPIER_TOKEN)
"""

from __future__ import annotations

import os
import queue
import random
import sys
import time
from collections.abc import Iterator
from typing import Any

import grpc

from croupier.clients.sdk import Bot
from croupier.clients.sdk import main as sdk_main
from croupier.v1 import bots_pb2, bots_pb2_grpc

FLAWS = {
    "hello": "says Hello with protocol version 2",
    "several-matches": "sends every move with the id of the first match it saw",
    "refused-move": "never answers a decision again after a refusal",
    "replaced-decision": "after a move, waits for its ActionResult (a stale answer gets an Error instead)",
    "dropped-stream": "stops when the stream ends",
    "resumed-match": "ignores a match that MatchStarted says is resumed",
    "forfeit-and-end": "fails on a message it does not expect: SeatForfeited",
    "clock": "thinks 1.5 s over every decision",
    "every-game": "answers only in Chinese Ten",
}
OPTION_FLAWS = {
    "ignores-batches": bots_pb2.StreamOptions(batches=True),
    "waits-for-accepted": bots_pb2.StreamOptions(quiet_acceptance=True),
}
"""Flaws of a bot that asks for a stream option and mishandles it: it reads a Batch as nothing; it
waits for an ACCEPTED ActionResult before its next move, as the replaced-decision flaw does.
Checked on protocol 1 (``check-bot --protocol-1``) such a bot passes."""
SDK_FLAWS = {"index-out-of-range": "an SDK bot whose choose returns len(legal), one past the last index"}
"""Flaws of an SDK bot: the SDK logs the error and leaves each decision to the clock."""


class OffByOne(Bot):
    def choose(self, view: Any, legal: list[Any]) -> int:
        return len(legal)


def play(flaw: str, server: str, tokens: list[str]) -> None:
    """One stream, until it ends."""
    outbox: queue.Queue[bots_pb2.BotMessage | None] = queue.Queue()
    version = 2 if flaw == "hello" else 1
    hello = bots_pb2.Hello(protocol_version=version, name=flaw, max_matches=8, options=OPTION_FLAWS.get(flaw))
    outbox.put(bots_pb2.BotMessage(hello=hello))

    def requests() -> Iterator[bots_pb2.BotMessage]:
        while (message := outbox.get()) is not None:
            yield message

    first_match = ""
    ignored: set[str] = set()
    awaiting_result: set[str] = set()  # matches with a move of ours not yet answered by an ActionResult
    answered: dict[str, bots_pb2.DecisionRequest] = {}  # the decision answered last, by match

    def answer(decision: bots_pb2.DecisionRequest) -> None:
        match_id = first_match if flaw == "several-matches" else decision.match_id
        index = random.randrange(len(decision.legal_actions))
        move = bots_pb2.Move(match_id=match_id, decision_id=decision.decision_id, index=index)
        outbox.put(bots_pb2.BotMessage(move=move))
        answered[decision.match_id] = decision
        awaiting_result.add(decision.match_id)

    with grpc.insecure_channel(server) as channel:
        try:
            metadata = [("croupier-token", t) for t in tokens]
            for message in bots_pb2_grpc.BotServiceStub(channel).Play(requests(), metadata=metadata):
                kind = message.WhichOneof("message")
                if kind == "match_started":
                    first_match = first_match or message.match_started.match_id
                    if flaw == "resumed-match" and message.match_started.resumed:
                        ignored.add(message.match_started.match_id)
                elif kind == "seat_forfeited" and flaw == "forfeit-and-end":
                    raise RuntimeError("unexpected message: seat_forfeited")
                elif kind == "action_result":
                    result = message.action_result
                    awaiting_result.discard(result.match_id)
                    last = answered.get(result.match_id)
                    refused = result.status == bots_pb2.ActionResult.REFUSED
                    if refused and flaw != "refused-move" and last and last.decision_id == result.decision_id:
                        answer(last)  # the decision stays open: answer it again
                elif kind == "decision":
                    decision = message.decision
                    if decision.match_id in ignored or (
                        flaw in ("replaced-decision", "waits-for-accepted")
                        and decision.match_id in awaiting_result
                    ):
                        continue
                    if flaw == "every-game" and not decision.view.HasField("chinese_ten"):
                        continue
                    if flaw == "clock":
                        time.sleep(1.5)
                    answer(decision)
        except grpc.RpcError as error:
            print(f"stream ended: {error.code().name}: {error.details()}", file=sys.stderr, flush=True)
        finally:
            outbox.put(None)


def main() -> int:
    flaw = sys.argv[1]
    if flaw not in FLAWS | OPTION_FLAWS | SDK_FLAWS:
        print(f"no flaw {flaw!r}: {', '.join(FLAWS | OPTION_FLAWS | SDK_FLAWS)}", file=sys.stderr)
        return 2
    if flaw in SDK_FLAWS:
        sdk_main(OffByOne, [])  # $CROUPIER_SERVER and $CROUPIER_TOKEN
    tokens = os.environ["CROUPIER_TOKEN"].split(",")
    while True:
        play(flaw, os.environ["CROUPIER_SERVER"], tokens)
        if flaw == "dropped-stream":
            print("the stream is over, and so is this bot", file=sys.stderr)
            return 0
        time.sleep(0.5)


if __name__ == "__main__":
    sys.exit(main())
