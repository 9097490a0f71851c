"""Domain errors -> gRPC status codes: the one mapping, used by every service.

Unary and server-streaming calls end with the status; on a bot's stream the
same code travels in an ``Error`` message and the stream goes on. Anything
unexpected is logged with its traceback and left to grpc (UNKNOWN): never a
blanket INTERNAL for an error the caller could act on.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, NoReturn, TypeVar

import grpc
from google.protobuf.message import DecodeError, Message

from croupier.engine.core import IllegalAction, InvalidOptions, MalformedInput

R = TypeVar("R")

MAX_ECHO = 300
"""Characters of a caller's input an error message, refusal reason or journal record repeats: enough
to recognise it, never a caller's megabyte copied into every frame, record and reply."""


def clip(text: str, limit: int = MAX_ECHO) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"


class ServiceError(Exception):
    """An error a caller can act on, with its status code."""

    code = grpc.StatusCode.INVALID_ARGUMENT


class InvalidArgument(ServiceError):
    code = grpc.StatusCode.INVALID_ARGUMENT


class NotFound(ServiceError):
    code = grpc.StatusCode.NOT_FOUND


class PermissionDenied(ServiceError):
    code = grpc.StatusCode.PERMISSION_DENIED


class Unauthenticated(ServiceError):
    code = grpc.StatusCode.UNAUTHENTICATED


class FailedPrecondition(ServiceError):
    code = grpc.StatusCode.FAILED_PRECONDITION


class ResourceExhausted(ServiceError):
    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class AlreadyExists(ServiceError):
    code = grpc.StatusCode.ALREADY_EXISTS


class Unavailable(ServiceError):
    """For the moment: the same call a little later may succeed."""

    code = grpc.StatusCode.UNAVAILABLE


def status_of(exc: BaseException) -> grpc.StatusCode | None:
    """The status for an error a caller can act on; None for a bug."""
    if isinstance(exc, ServiceError):
        return exc.code
    if isinstance(exc, MalformedInput | InvalidOptions):
        return grpc.StatusCode.INVALID_ARGUMENT
    if isinstance(exc, IllegalAction):
        return grpc.StatusCode.FAILED_PRECONDITION
    return None


class Malformed:
    """What the lenient deserializer returns for bytes that are not the expected message."""

    def __init__(self, message_type: str, error: str) -> None:
        self.text = f"not a valid {message_type}: {error}"


def lenient_parser(message_class: type[Message]) -> Callable[[bytes], Message | Malformed]:
    """Parse request bytes without letting garbage crash the call: the handler answers it."""
    name = message_class.DESCRIPTOR.full_name

    def parse(data: bytes) -> Message | Malformed:
        try:
            return message_class.FromString(data)
        except DecodeError as exc:
            return Malformed(name, str(exc) or "cannot decode")

    return parse


Context = Any  # grpc.aio.ServicerContext: generic in grpc-stubs, plain at run time


async def abort(context: Context, code: grpc.StatusCode, details: str) -> NoReturn:
    """End the call with a status (``context.abort`` raises; the stubs do not say so)."""
    await context.abort(code, details)
    raise AssertionError("context.abort returned")


async def _abort(context: Context, exc: BaseException) -> NoReturn:
    code = status_of(exc)
    if code is None:
        raise exc
    await abort(context, code, clip(str(exc)))


def unary(handler: Callable[[Any, Context], Awaitable[R]]) -> Callable[[Any, Context], Awaitable[R]]:
    """Wrap a unary handler: malformed requests and domain errors become their status."""

    @functools.wraps(handler)
    async def wrapped(request: Any, context: Context) -> R:
        try:
            if isinstance(request, Malformed):
                raise InvalidArgument(request.text)
            return await handler(request, context)
        except Exception as exc:
            await _abort(context, exc)

    return wrapped


def server_stream(
    handler: Callable[[Any, Context], AsyncIterator[R]],
) -> Callable[[Any, Context], AsyncIterator[R]]:
    """Wrap a server-streaming handler the same way."""

    @functools.wraps(handler)
    async def wrapped(request: Any, context: Context) -> AsyncIterator[R]:
        try:
            if isinstance(request, Malformed):
                raise InvalidArgument(request.text)
            async for item in handler(request, context):
                yield item
        except Exception as exc:
            await _abort(context, exc)

    return wrapped


def no_referee(address: str) -> str:
    """What every client (bot, runner, spectator, register) says when nothing answers at a
    referee's address: the one line, with what to do about it."""
    return (
        f"no referee answers at {address}: is `croupier serve` running there? "
        "(start one, or give the right --server HOST:PORT)"
    )
