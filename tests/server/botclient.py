"""Scripted clients for the referee tests: real stubs over a real channel."""

from __future__ import annotations

import asyncio
import random
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import grpc

from croupier.v1 import admin_pb2, admin_pb2_grpc, bots_pb2, match_pb2, spectator_pb2_grpc
from croupier.wire import convert

ADMIN_TOKEN = "admin-test-token"
WAIT = 60.0
"""Seconds before a test gives up waiting for a message: a guard against hangs, never a timing check."""


def token(value: str) -> list[tuple[str, str]]:
    return [("croupier-token", value)]


ADMIN = token(ADMIN_TOKEN)


class Admin:
    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.stub = admin_pb2_grpc.AdminServiceStub(channel)
        self.spectator = spectator_pb2_grpc.SpectatorServiceStub(channel)

    async def create(
        self,
        game: str,
        seats: int | Sequence[admin_pb2.SeatSpec],
        options: dict[str, Any] | None = None,
        seed: int | None = 7,
        **clocks: int,
    ) -> admin_pb2.CreateMatchResponse:
        if isinstance(seats, int):
            seats = [admin_pb2.SeatSpec(name=f"p{i}") for i in range(seats)]
        spec_seats = list(seats)
        codec = convert.codec(game)
        values = {"players": len(spec_seats), **(options or {})}
        request = admin_pb2.CreateMatchRequest(
            options=codec.options(codec.spec.options(values)),
            seats=spec_seats,
            seed=seed,
            clocks=match_pb2.Clocks(**clocks),
        )
        response: admin_pb2.CreateMatchResponse = await self.stub.CreateMatch(request, metadata=ADMIN)
        return response

    async def wait(self, match_id: str) -> match_pb2.MatchInfo:
        info: match_pb2.MatchInfo = await asyncio.wait_for(
            self.stub.WaitMatch(admin_pb2.GetMatchRequest(match_id=match_id), metadata=ADMIN), WAIT
        )
        return info

    async def get(self, match_id: str) -> match_pb2.MatchInfo:
        info: match_pb2.MatchInfo = await self.stub.GetMatch(
            admin_pb2.GetMatchRequest(match_id=match_id), metadata=ADMIN
        )
        return info


Policy = Callable[[bots_pb2.DecisionRequest], bots_pb2.Move | None]


def first_legal(decision: bots_pb2.DecisionRequest) -> bots_pb2.Move:
    return bots_pb2.Move(match_id=decision.match_id, decision_id=decision.decision_id, index=0)


def random_legal(seed: int) -> Policy:
    rng = random.Random(seed)

    def choose(decision: bots_pb2.DecisionRequest) -> bots_pb2.Move:
        index = rng.randrange(len(decision.legal_actions))
        return bots_pb2.Move(match_id=decision.match_id, decision_id=decision.decision_id, index=index)

    return choose


PLAY = "/croupier.v1.BotService/Play"


def _raw(data: bytes) -> bytes:
    return data


class Bot:
    """One bot stream. Everything the referee sends is kept in ``received``, in order, a Batch's
    messages one by one (``batches`` counts the Batches)."""

    def __init__(
        self,
        channel: grpc.aio.Channel,
        *tokens: str,
        name: str = "bot",
        max_matches: int = 1,
        options: bots_pb2.StreamOptions | None = None,
    ) -> None:
        # read as bytes: each message is checked to be protobuf's own serialization of itself
        play = channel.stream_stream(PLAY, bots_pb2.BotMessage.SerializeToString, _raw)
        self.call = play(metadata=[("croupier-token", t) for t in tokens])
        self.name = name
        self.max_matches = max_matches
        self.options = options
        self.received: list[bots_pb2.ServerMessage] = []
        self.batches = 0
        self._unread: deque[bots_pb2.ServerMessage] = deque()

    async def hello(self) -> bots_pb2.Welcome:
        hello = bots_pb2.Hello(
            protocol_version=1, name=self.name, max_matches=self.max_matches, options=self.options
        )
        await self.write(bots_pb2.BotMessage(hello=hello))
        return (await self.expect("welcome")).welcome

    async def write(self, message: bots_pb2.BotMessage) -> None:
        await self.call.write(message)

    async def move(self, **fields: Any) -> None:
        await self.write(bots_pb2.BotMessage(move=bots_pb2.Move(**fields)))

    async def read(self) -> bots_pb2.ServerMessage:
        if not self._unread:
            raw = await asyncio.wait_for(self.call.read(), WAIT)
            if raw is grpc.aio.EOF:
                raise EOFError("the referee ended the stream")
            assert isinstance(raw, bytes)
            message = bots_pb2.ServerMessage.FromString(raw)
            assert message.SerializeToString() == raw, f"not written as protobuf writes it: {message}"
            if message.HasField("batch"):
                self.batches += 1
                assert len(message.batch.messages) > 1, "a batch of one is a message on its own"
                assert not any(m.HasField("batch") for m in message.batch.messages), "a batch in a batch"
                self._unread.extend(message.batch.messages)
            else:
                self._unread.append(message)
        message = self._unread.popleft()
        self.received.append(message)
        return message

    async def expect(self, *kinds: str) -> bots_pb2.ServerMessage:
        """Read until a message of one of ``kinds`` arrives (others are kept in ``received``)."""
        while True:
            message = await self.read()
            if message.WhichOneof("message") in kinds:
                return message

    async def play(self, policy: Policy = first_legal, matches: int = 1) -> list[bots_pb2.MatchEnded]:
        """Answer every decision with ``policy`` until ``matches`` matches have ended."""
        ended: list[bots_pb2.MatchEnded] = []
        while len(ended) < matches:
            message = await self.read()
            kind = message.WhichOneof("message")
            if kind == "decision":
                move = policy(message.decision)
                if move is not None:
                    await self.write(bots_pb2.BotMessage(move=move))
            elif kind == "match_ended":
                ended.append(message.match_ended)
        return ended

    def of_kind(self, kind: str) -> list[Any]:
        return [getattr(m, kind) for m in self.received if m.WhichOneof("message") == kind]

    async def close(self) -> None:
        self.call.cancel()
