"""A bot stream's commonest messages written as the ServerMessage's wire bytes: DecisionRequest,
ViewUpdate and ActionResult, from the parts convert.py already wrote (a View, Events, Actions),
and Batches of messages already written.

Building a protobuf message instead parses the view into it, copies every event and action in,
and serializes it all again: a third of a decision's messages' cost (docs/benchmarks.md). Each
writer is generated from the message's descriptor by convert.py's encoder compiler, by its wire
rules, and gives exactly what protobuf's own ``SerializeToString`` gives for the same message;
``tests/server/test_framing.py`` checks every kind on random playouts of every game.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from google.protobuf.descriptor import Descriptor

from croupier.v1 import bots_pb2
from croupier.wire.convert import field_tag, message_writer

Outgoing = bots_pb2.ServerMessage | bytes
"""What a session queues: a message, or one already serialized (the hot ones, and Batches)."""

_SERVER = bots_pb2.ServerMessage.DESCRIPTOR.fields_by_name


def _framed(name: str, message: Descriptor) -> Callable[[tuple[Any, ...]], bytes]:
    """A writer of a ServerMessage holding its field ``name``, a ``message``, from its fields'
    values (``convert.message_writer``)."""
    tag, write = field_tag(_SERVER[name]), message_writer(message)

    def framed(values: tuple[Any, ...]) -> bytes:
        return tag + write(values)

    return framed


_DECISION = _framed("decision", bots_pb2.DecisionRequest.DESCRIPTOR)
_VIEW = _framed("view_update", bots_pb2.ViewUpdate.DESCRIPTOR)
_RESULT = _framed("action_result", bots_pb2.ActionResult.DESCRIPTOR)
_BATCH = _framed("batch", bots_pb2.Batch.DESCRIPTOR)


def decision_request(
    match_id: str,
    seat: int,
    decision_id: int,
    view: bytes,
    legal_actions: Sequence[bytes],
    *,
    deadline_ms: int,
    time_bank_ms: int,
    last_think_ms: int,
    events: Sequence[bytes],
    accepted: int = 0,
) -> bytes:
    """A ServerMessage holding a DecisionRequest: ``view``, ``legal_actions`` and ``events`` given
    serialized (``GameCodec.view_bytes``, ``action_bytes``, ``event_bytes``)."""
    return _DECISION(
        (
            match_id,
            seat,
            decision_id,
            view,
            legal_actions,
            deadline_ms,
            time_bank_ms,
            last_think_ms,
            events,
            accepted,
        )
    )


def view_update(match_id: str, seat: int, view: bytes, events: Sequence[bytes], accepted: int = 0) -> bytes:
    """A ServerMessage holding a ViewUpdate (parts serialized, as for ``decision_request``)."""
    return _VIEW((match_id, seat, view, events, accepted))


def action_result(
    match_id: str,
    seat: int,
    decision_id: int,
    status: bots_pb2.ActionResult.Status.ValueType,
    action: bytes | None,
    *,
    reason: str = "",
    think_ms: int = 0,
    refusals: int = 0,
    timeouts: int = 0,
    refusal_reason: bots_pb2.ActionResult.RefusalReason.ValueType = bots_pb2.ActionResult.REFUSAL_UNSPECIFIED,
) -> bytes:
    """A ServerMessage holding an ActionResult, ``action`` serialized (``GameCodec.action_bytes``)."""
    return _RESULT(
        (match_id, seat, decision_id, status, action, reason, think_ms, refusals, timeouts, refusal_reason)
    )


def batch(messages: Sequence[bytes]) -> bytes:
    """A ServerMessage holding a Batch of serialized ``messages`` (never a Batch among them)."""
    return _BATCH((messages,))


def serialized(message: Outgoing) -> bytes:
    return message if isinstance(message, bytes) else message.SerializeToString()


def parsed(message: Outgoing) -> bots_pb2.ServerMessage:
    """The message itself (for reading it: tests, tools), whichever way it was queued."""
    return bots_pb2.ServerMessage.FromString(message) if isinstance(message, bytes) else message


def _check_fields_in_order(writer: Callable[..., bytes], message: Descriptor) -> None:
    """Each writer passes its parameters on as the message's fields in number order: they must be
    those fields, in that order (a field added to the proto must be added here)."""
    fields = [f.name for f in sorted(message.fields, key=lambda f: f.number)]
    if list(inspect.signature(writer).parameters) != fields:
        raise TypeError(
            f"framing.{writer.__name__} must take {message.full_name}'s fields in order: {fields}"
        )


for _writer, _message in (
    (decision_request, bots_pb2.DecisionRequest),
    (view_update, bots_pb2.ViewUpdate),
    (action_result, bots_pb2.ActionResult),
    (batch, bots_pb2.Batch),
):
    _check_fields_in_order(_writer, _message.DESCRIPTOR)
