"""Why the referee turns a bot's message down, in machine-readable form: the ``Error.Reason`` each
problem is sent with (and the one gRPC code that goes with it), and a refused move's
``ActionResult.RefusalReason``. bots.proto documents each value; docs/protocol.md's table is
generated from those comments (``croupier.clients.docgen.reasons_table``), and a test holds the codes they
name to the ones here."""

from __future__ import annotations

import grpc

from croupier.engine.core import IllegalAction, MalformedInput, NotYourTurn
from croupier.v1 import bots_pb2
from croupier.wire.errors import ServiceError

Reason = bots_pb2.Error.Reason
Refusal = bots_pb2.ActionResult.RefusalReason
Code = grpc.StatusCode

CODES: dict[Reason.ValueType, grpc.StatusCode] = {
    Reason.REASON_MALFORMED_MESSAGE: Code.INVALID_ARGUMENT,
    Reason.REASON_EMPTY_MESSAGE: Code.INVALID_ARGUMENT,
    Reason.REASON_HELLO_REPEATED: Code.INVALID_ARGUMENT,
    Reason.REASON_UNKNOWN_MATCH: Code.NOT_FOUND,
    Reason.REASON_MATCH_OVER: Code.FAILED_PRECONDITION,
    Reason.REASON_MATCH_NOT_STARTED: Code.FAILED_PRECONDITION,
    Reason.REASON_MATCH_REGATHERING: Code.FAILED_PRECONDITION,
    Reason.REASON_NO_SUCH_SEAT: Code.INVALID_ARGUMENT,
    Reason.REASON_SEAT_NOT_HELD: Code.PERMISSION_DENIED,
    Reason.REASON_SEAT_AMBIGUOUS: Code.INVALID_ARGUMENT,
    Reason.REASON_SEAT_TAKEN_OVER: Code.FAILED_PRECONDITION,
    Reason.REASON_DECISION_TIMED_OUT: Code.FAILED_PRECONDITION,
    Reason.REASON_DECISION_NOT_OPEN: Code.FAILED_PRECONDITION,
    Reason.REASON_JOURNAL_FULL: Code.RESOURCE_EXHAUSTED,
}
"""The status code each reason travels with (Error.code): a client that knows only codes keeps working."""


class BotError(ServiceError):
    """A bot's message the referee cannot act on: answered with an Error of this reason; the stream
    and every match go on."""

    def __init__(self, reason: Reason.ValueType, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.code = CODES[reason]


def refusal_reason(exc: MalformedInput | IllegalAction) -> Refusal.ValueType:
    """The reason a move the engine turned down is refused with."""
    if isinstance(exc, MalformedInput):
        return Refusal.REFUSAL_UNREADABLE
    if isinstance(exc, NotYourTurn):
        return Refusal.REFUSAL_NOT_YOUR_TURN
    return Refusal.REFUSAL_ILLEGAL
