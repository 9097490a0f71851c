"""A tap between a bot and a referee, for ``croupier check-bot``: it serves ``BotService.Play``,
passes every stream on to the referee, records what goes each way (parsed, with the time), and lets
a check tamper: rewrite a bot's message, hold back the referee's, or drop the stream.

Bytes pass through as they came: a bot's malformed message reaches the referee, which answers it as
it would any bot; the tap parses a copy for the record. A Hello's stream options go through as
asked, so a bot is checked on the flow it plays tournaments in (``Tap(protocol_1=True)`` takes
them out, as ``check-bot --protocol-1`` asks). The record and the tampering see a Batch as its
parts and a ``moves`` message as its moves, so a check reads one flow whatever the options; what a
tamper passes on of a batch goes to the bot as a batch again. A bot granted batches gets each
match's MatchStarted in one Batch with its first DecisionRequest (``_opening`` says why).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from croupier.v1 import bots_pb2

PLAY = "/croupier.v1.BotService/Play"
DROPPED = "croupier check-bot dropped this stream (a check of reconnecting)"


@dataclass
class Stream:
    """One stream of the bot's, as the tap saw it."""

    number: int
    sent: list[tuple[float, bots_pb2.BotMessage | None]] = field(default_factory=list)
    """What the bot sent, in order, with the monotonic time it arrived (None: unreadable bytes)."""
    received: list[tuple[float, bots_pb2.ServerMessage]] = field(default_factory=list)
    """What the bot was sent, in order, with the time it was passed on; a Batch's parts one by one."""
    batches: int = 0
    """How many Batches the bot was sent."""
    batched: set[tuple[str, int]] = field(default_factory=set)
    """The decisions (match id, decision id) the bot was sent inside a Batch."""
    ended: str | None = None
    """How it ended: "the bot closed it", "dropped", or the referee's status; None while it is open."""
    drop: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def asked(self) -> bots_pb2.StreamOptions:
        """The stream options the bot's Hello asked for (none before it)."""
        first = self.sent[0][1] if self.sent else None
        return first.hello.options if first is not None else bots_pb2.StreamOptions()

    @property
    def granted(self) -> bots_pb2.StreamOptions:
        """The stream options the referee's Welcome granted (none before it)."""
        first = self.received[0][1] if self.received else None  # a Welcome comes first or not at all
        return first.welcome.options if first is not None else bots_pb2.StreamOptions()

    def moves(self, match_id: str) -> list[tuple[float, bots_pb2.Move]]:
        """The bot's moves in one match, a ``moves`` message's one by one."""
        return [
            (at, move)
            for at, m in self.sent
            if m is not None
            for move in moves_in(m)
            if move.match_id == match_id
        ]

    def all_moves(self) -> list[bots_pb2.Move]:
        """The bot's moves in every match, in order."""
        return [move for _, m in self.sent if m is not None for move in moves_in(m)]

    def accepted(self, match_id: str, upto: int | None = None) -> int:
        """How many of the bot's moves in ``match_id`` the referee said it accepted in the stream's first
        ``upto`` messages (all): see ``accepted_in``."""
        return accepted_in((message for _, message in self.received[:upto]), match_id)

    def of_kind(self, kind: str, match_id: str | None = None) -> list[tuple[float, Any]]:
        """What the bot was sent of one kind (``"decision"``, ...), about one match if given."""
        found = []
        for at, message in self.received:
            if message.WhichOneof("message") == kind:
                body = getattr(message, kind)
                if match_id is None or getattr(body, "match_id", None) == match_id:
                    found.append((at, body))
        return found


class Tamper:
    """What a check does to the traffic: by default nothing. One stream's messages come in order."""

    def to_referee(self, stream: Stream, message: bots_pb2.BotMessage) -> bots_pb2.BotMessage:
        """The bot's message as the referee should get it."""
        return message

    def to_bot(self, stream: Stream, message: bots_pb2.ServerMessage) -> list[bots_pb2.ServerMessage]:
        """What the bot should get now for the referee's ``message``, never a Batch: each of a Batch's
        parts comes on its own (none: held back). Several go out as one Batch if the bot has batches."""
        return [message]


class Tap:
    """The bot's side of check-bot: a BotService that forwards to ``referee`` ("host:port")."""

    def __init__(self, referee: str, protocol_1: bool = False) -> None:
        self.referee = referee
        self.protocol_1 = protocol_1
        """Take the stream options out of every Hello: the bot is checked on protocol 1."""
        self.streams: list[Stream] = []
        self.tamper = Tamper()
        self._server: grpc.aio.Server | None = None
        self._channel: grpc.aio.Channel | None = None

    async def start(self, socket: Path | None = None) -> int:
        """Listen on a free loopback port, and on ``socket`` (a jailed bot's way in); the port."""
        self._channel = grpc.aio.insecure_channel(self.referee)
        self._server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
        handler = grpc.stream_stream_rpc_method_handler(self._play)  # bytes in, bytes out
        self._server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("croupier.v1.BotService", {"Play": handler}),)
        )
        port = self._server.add_insecure_port("127.0.0.1:0")
        if socket is not None:
            self._server.add_insecure_port(f"unix:{socket}")
        await self._server.start()
        if socket is not None:
            socket.chmod(0o666)  # connecting takes write permission; the bot is another user
        return port

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop(None)
        if self._channel is not None:
            await self._channel.close(None)

    async def _play(self, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        assert self._channel is not None
        stream = Stream(len(self.streams) + 1)
        self.streams.append(stream)
        tokens = [(k, v) for k, v in context.invocation_metadata() or () if k == "croupier-token"]
        # bytes both ways; no request iterator: we write ourselves (grpc-stubs miss this form)
        call: Any = self._channel.stream_stream(PLAY, None, None)(metadata=tokens)  # type: ignore[call-arg]
        upward = asyncio.create_task(self._upward(stream, requests, call))
        replies: asyncio.Queue[bytes | None] = asyncio.Queue()
        downward = asyncio.create_task(self._downward(stream, call, replies))
        dropped = asyncio.create_task(stream.drop.wait())
        try:
            while True:
                reply = asyncio.create_task(replies.get())
                await asyncio.wait({reply, dropped}, return_when=asyncio.FIRST_COMPLETED)
                if dropped.done():
                    reply.cancel()
                    stream.ended = "dropped"
                    await context.abort(grpc.StatusCode.UNAVAILABLE, DROPPED)
                data = reply.result()
                if data is None:
                    break
                yield data
            if downward.done() and (error := downward.result()) is not None:
                stream.ended = f"{error.code().name}: {error.details()}"
                await context.abort(error.code(), error.details() or "")
            stream.ended = stream.ended or "the referee ended it"
        finally:
            stream.ended = stream.ended or "the bot closed it"
            call.cancel()
            for task in (upward, downward, dropped):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, grpc.RpcError):
                    await task

    async def _upward(self, stream: Stream, requests: AsyncIterator[bytes], call: Any) -> None:
        with contextlib.suppress(grpc.RpcError, asyncio.InvalidStateError):
            async for data in requests:
                message = _parse(bots_pb2.BotMessage, data)
                stream.sent.append((time.monotonic(), message))
                if message is not None:
                    changed = self.tamper.to_referee(
                        stream, _without_options(message) if self.protocol_1 else message
                    )
                    if changed is not message:
                        data = changed.SerializeToString()
                await call.write(data)
            await call.done_writing()

    async def _downward(
        self, stream: Stream, call: Any, replies: asyncio.Queue[bytes | None]
    ) -> grpc.aio.AioRpcError | None:
        """Pass the referee's messages on; the error the referee ended the stream with, if any."""
        waiting: list[bots_pb2.ServerMessage] = []
        try:
            async for data in call:
                message = _parse(bots_pb2.ServerMessage, data)
                if message is None:
                    continue
                passed, waiting = waiting, []
                for part in message.batch.messages if message.HasField("batch") else [message]:
                    for out in self.tamper.to_bot(stream, part):
                        stream.received.append((time.monotonic(), out))  # before the next part's tamper
                        passed.append(out)
                if not stream.granted.batches:
                    for out in passed:
                        replies.put_nowait(out.SerializeToString())
                elif _opening(passed):
                    waiting = passed  # goes with the match's first decision (or its end), as one Batch
                elif len(passed) > 1:
                    stream.batches += 1
                    stream.batched.update(
                        (m.decision.match_id, m.decision.decision_id)
                        for m in passed
                        if m.HasField("decision")
                    )
                    replies.put_nowait(
                        bots_pb2.ServerMessage(batch=bots_pb2.Batch(messages=passed)).SerializeToString()
                    )
                elif passed:
                    replies.put_nowait(passed[0].SerializeToString())
            return None
        except grpc.aio.AioRpcError as error:
            return error
        finally:
            replies.put_nowait(None)


def _opening(messages: list[bots_pb2.ServerMessage]) -> bool:
    """A MatchStarted, and nothing after it but ViewUpdates: the tap holds these back for a bot with
    batches, to go out with the next decision (or MatchEnded) as one Batch. The referee batches only
    what waits for a stream, which a tap that reads at once rarely lets happen, and a batching bot
    must meet a Batch that asks it to act in every match to be checked."""
    kinds = [m.WhichOneof("message") for m in messages]
    return "match_started" in kinds and set(kinds) <= {"match_started", "view_update"}


def accepted_in(messages: Iterable[bots_pb2.ServerMessage], match_id: str) -> int:
    """How many of the bot's moves in ``match_id`` the referee said it accepted in ``messages`` (one
    stream's, in order, no Batch): one ACCEPTED ActionResult each (protocol 1), or with quiet
    acceptance the seat's ``accepted`` count, which its next DecisionRequest or ViewUpdate carries
    (MatchEnded has none: ``Trial.settled`` reads the end)."""
    results = counted = 0
    for message in messages:
        kind = message.WhichOneof("message")
        if kind == "action_result":
            result = message.action_result
            results += result.match_id == match_id and result.status == bots_pb2.ActionResult.ACCEPTED
        elif kind in ("decision", "view_update") and getattr(message, kind).match_id == match_id:
            counted = max(counted, getattr(message, kind).accepted)  # check-bot's bot holds one seat
    return results + counted


def moves_in(message: bots_pb2.BotMessage) -> list[bots_pb2.Move]:
    """The moves a bot's message carries (a ``moves`` message's in order), as parts of ``message``:
    a tamper changes a move in a copy of the message by changing what this returns of the copy."""
    kind = message.WhichOneof("message")
    if kind == "move":
        return [message.move]
    return list(message.moves.moves) if kind == "moves" else []


def _without_options(message: bots_pb2.BotMessage) -> bots_pb2.BotMessage:
    """``message``, or a copy of a Hello without its stream options."""
    if not (message.HasField("hello") and message.hello.HasField("options")):
        return message
    plain = bots_pb2.BotMessage()
    plain.CopyFrom(message)
    plain.hello.ClearField("options")
    return plain


def _parse(kind: Any, data: bytes) -> Any:
    message = kind()
    try:
        message.ParseFromString(data)
    except Exception:  # a bot's garbage: the referee answers it, the record says unreadable
        return None
    return message
