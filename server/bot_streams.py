"""BotService: one bidirectional stream per bot process, carrying any number of matches."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import grpc
import structlog

from croupier.server.referee import Referee, tokens_of
from croupier.server.session import MAX_QUEUED, Options, Session
from croupier.v1 import bots_pb2
from croupier.wire.errors import Context, Malformed, ServiceError, abort
from croupier.wire.framing import Outgoing, batch, serialized
from croupier.wire.reasons import Reason

PROTOCOL_VERSION = 1
MAX_MATCHES_PER_STREAM = 1000
HELLO_SECONDS = 30.0
"""How long a new stream may wait before its Hello: a silent connection holds nothing for long."""

MAX_BATCH_BYTES = 1 << 20
"""A Batch holds messages up to about this size (then the next begins): well under the 4 MiB that
gRPC clients accept by default."""

log = structlog.get_logger("croupier.bots")


class BotService:
    def __init__(self, referee: Referee) -> None:
        self.referee = referee

    async def Play(
        self, requests: AsyncIterator[bots_pb2.BotMessage | Malformed], context: Context
    ) -> AsyncIterator[Outgoing]:
        try:
            identity = self.referee.identify(tokens_of(context))
        except ServiceError as exc:
            await _let_the_bot_finish_writing(requests)
            await abort(context, exc.code, str(exc))
        hello = await _hello(requests, context)
        session = Session(
            name=hello.name[:100] or (identity.bot.name if identity.bot else "bot"),
            bot_id=identity.bot.bot_id if identity.bot else None,
            capacity=min(max(hello.max_matches, 1), MAX_MATCHES_PER_STREAM),
            options=Options.asked(hello),
        )
        structlog.contextvars.bind_contextvars(stream=session.id, bot=session.name)
        session.send(
            bots_pb2.ServerMessage(
                welcome=bots_pb2.Welcome(
                    protocol_version=PROTOCOL_VERSION,
                    bot_id=identity.bot.bot_id if identity.bot else "",
                    bot_name=identity.bot.name if identity.bot else "",
                    options=session.options.to_proto() if hello.HasField("options") else None,
                )
            )
        )
        self.referee.connect(session, identity)
        log.info("bot connected", seats=len(identity.seats), capacity=session.capacity)
        reader = asyncio.get_running_loop().create_task(self._read(requests, session))
        try:
            async for message in _outgoing(session):
                yield message
            if session.revoked:
                await abort(
                    context,
                    grpc.StatusCode.PERMISSION_DENIED,
                    f"bot {session.bot_id} was revoked: its token opens nothing more",
                )
            if session.overrun:
                await abort(
                    context,
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"{MAX_QUEUED} messages were waiting for you to read them: read your stream as "
                    "you go (reconnect to take your seats back)",
                )
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
            self.referee.disconnect(session)
            log.info("bot disconnected")

    async def _read(self, requests: AsyncIterator[bots_pb2.BotMessage | Malformed], session: Session) -> None:
        """Route each message; a bad one is answered with an Error, never ends the stream."""
        try:
            async for message in requests:
                if isinstance(message, Malformed):
                    session.send_error(Reason.REASON_MALFORMED_MESSAGE, message.text)
                    continue
                kind = message.WhichOneof("message")
                if kind == "move":
                    self._route(message.move, session)
                elif kind == "moves":
                    for move in message.moves.moves:
                        self._route(move, session)
                elif kind == "hello":
                    session.send_error(Reason.REASON_HELLO_REPEATED, "hello again? say hello once")
                else:
                    session.send_error(Reason.REASON_EMPTY_MESSAGE, "an empty BotMessage: send a move")
        except grpc.RpcError:
            pass  # the stream broke: the writer's end does the clean-up
        finally:
            session.close()

    def _route(self, move: bots_pb2.Move, session: Session) -> None:
        match = self.referee.matches.get(move.match_id)
        if match is not None:
            match.move(session, move)
        elif move.match_id in self.referee.past:
            over = f"match {move.match_id} is over"
            session.send_error(Reason.REASON_MATCH_OVER, over, move.match_id)
        else:
            unknown = f"no match {move.match_id!r}"
            session.send_error(Reason.REASON_UNKNOWN_MATCH, unknown, move.match_id)


async def _outgoing(session: Session) -> AsyncIterator[Outgoing]:
    """What the stream sends, in order, until the session closes: each message on its own, or,
    with batches, those waiting together as one Batch (written as bytes)."""
    outbox = session.outbox
    while (message := await outbox.get()) is not None:
        if outbox.empty() or not session.options.batches:
            yield message
            continue
        parts = [serialized(message)]
        size = len(parts[0])
        closing = False
        while not outbox.empty() and size < MAX_BATCH_BYTES:
            waiting = outbox.get_nowait()
            if waiting is None:
                closing = True
                break
            parts.append(serialized(waiting))
            size += len(parts[-1])
        yield batch(parts) if len(parts) > 1 else message
        if closing:
            return


REFUSAL_LINGER = 0.5, 2.0
"""Seconds: a refused stream ends once its bot has sent nothing for the first, or after the second.
Ending it while the bot's messages are still on their way makes grpc's client turn its failed
write into INTERNAL, which hides the real status (UNAUTHENTICATED) from the bot; a bot on a busy
machine paused over 0.1 s between two writes (13 of 60 streams at load 12)."""


async def _let_the_bot_finish_writing(requests: AsyncIterator[bots_pb2.BotMessage | Malformed]) -> None:
    quiet, longest = REFUSAL_LINGER
    loop = asyncio.get_running_loop()
    until = loop.time() + longest
    stream = aiter(requests)
    with contextlib.suppress(TimeoutError, StopAsyncIteration, grpc.RpcError):
        while (left := until - loop.time()) > 0:
            await asyncio.wait_for(anext(stream), min(quiet, left))


async def _hello(
    requests: AsyncIterator[bots_pb2.BotMessage | Malformed], context: Context
) -> bots_pb2.Hello:
    try:
        first = await asyncio.wait_for(anext(aiter(requests), None), HELLO_SECONDS)
    except TimeoutError:
        await abort(
            context,
            grpc.StatusCode.DEADLINE_EXCEEDED,
            f"no Hello within {HELLO_SECONDS:g} s: a stream's first message must be a Hello",
        )
    if not isinstance(first, bots_pb2.BotMessage) or first.WhichOneof("message") != "hello":
        await abort(
            context, grpc.StatusCode.INVALID_ARGUMENT, "the first message of a stream must be a Hello"
        )
    if first.hello.protocol_version != PROTOCOL_VERSION:
        await abort(
            context,
            grpc.StatusCode.FAILED_PRECONDITION,
            f"this referee speaks protocol version {PROTOCOL_VERSION}, not {first.hello.protocol_version}",
        )
    return first.hello
