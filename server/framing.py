"""A bot stream's commonest messages written as the ServerMessage's wire bytes: DecisionRequest,
ViewUpdate and ActionResult, from the parts convert.py already wrote (a View, Events, Actions),
and Batches of messages already written.

Building a protobuf message instead parses the view into it, copies every event and action in,
and serializes it all again: the better part of a decision's messages (docs/benchmarks.md). Each
writer gives exactly what protobuf's own ``SerializeToString`` gives for the same message
(convert.py's wire rules: fields in number order, a 0 or "" not written, a set message written
even if empty); ``tests/server/test_framing.py`` checks every kind on random playouts of every
game. The tags come from the descriptors, never typed in.
"""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf.descriptor import Descriptor

from croupier.server.convert import VARINTS, field_tag
from croupier.v1 import bots_pb2

Outgoing = bots_pb2.ServerMessage | bytes
"""What a session queues: a message, or one already serialized (the hot ones, and Batches)."""


def _tags(message: Descriptor) -> dict[str, bytes]:
    return {field.name: field_tag(field) for field in message.fields}


_SERVER = _tags(bots_pb2.ServerMessage.DESCRIPTOR)
_DECISION = _tags(bots_pb2.DecisionRequest.DESCRIPTOR)
_VIEW = _tags(bots_pb2.ViewUpdate.DESCRIPTOR)
_RESULT = _tags(bots_pb2.ActionResult.DESCRIPTOR)
_BATCH = _tags(bots_pb2.Batch.DESCRIPTOR)


def _repeated(tag: bytes, serialized: Sequence[bytes]) -> bytes:
    """A repeated message field holding messages already serialized, one tagged value each."""
    if not serialized:
        return b""
    return tag + tag.join([VARINTS[len(data)] + data for data in serialized])


def _server_message(tag: bytes, body: bytes) -> bytes:
    return tag + VARINTS[len(body)] + body


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
    t = _DECISION
    name = match_id.encode()
    out = [t["match_id"] + VARINTS[len(name)] + name if name else b""]
    if seat:
        out.append(t["seat"] + VARINTS[seat])
    if decision_id:
        out.append(t["decision_id"] + VARINTS[decision_id])
    out.append(t["view"] + VARINTS[len(view)] + view)
    out.append(_repeated(t["legal_actions"], legal_actions))
    if deadline_ms:
        out.append(t["deadline_ms"] + VARINTS[deadline_ms])
    if time_bank_ms:
        out.append(t["time_bank_ms"] + VARINTS[time_bank_ms])
    if last_think_ms:
        out.append(t["last_think_ms"] + VARINTS[last_think_ms])
    out.append(_repeated(t["events"], events))
    if accepted:
        out.append(t["accepted"] + VARINTS[accepted])
    return _server_message(_SERVER["decision"], b"".join(out))


def view_update(match_id: str, seat: int, view: bytes, events: Sequence[bytes], accepted: int = 0) -> bytes:
    """A ServerMessage holding a ViewUpdate (parts serialized, as for ``decision_request``)."""
    t = _VIEW
    name = match_id.encode()
    out = [t["match_id"] + VARINTS[len(name)] + name if name else b""]
    if seat:
        out.append(t["seat"] + VARINTS[seat])
    out.append(t["view"] + VARINTS[len(view)] + view)
    out.append(_repeated(t["events"], events))
    if accepted:
        out.append(t["accepted"] + VARINTS[accepted])
    return _server_message(_SERVER["view_update"], b"".join(out))


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
    t = _RESULT
    name = match_id.encode()
    out = [t["match_id"] + VARINTS[len(name)] + name if name else b""]
    if seat:
        out.append(t["seat"] + VARINTS[seat])
    if decision_id:
        out.append(t["decision_id"] + VARINTS[decision_id])
    if status:
        out.append(t["status"] + VARINTS[status])
    if action is not None:
        out.append(t["action"] + VARINTS[len(action)] + action)
    if reason:
        text = reason.encode()
        out.append(t["reason"] + VARINTS[len(text)] + text)
    if think_ms:
        out.append(t["think_ms"] + VARINTS[think_ms])
    if refusals:
        out.append(t["refusals"] + VARINTS[refusals])
    if timeouts:
        out.append(t["timeouts"] + VARINTS[timeouts])
    if refusal_reason:
        out.append(t["refusal_reason"] + VARINTS[refusal_reason])
    return _server_message(_SERVER["action_result"], b"".join(out))


def batch(messages: Sequence[bytes]) -> bytes:
    """A ServerMessage holding a Batch of serialized ``messages`` (never a Batch among them)."""
    return _server_message(_SERVER["batch"], _repeated(_BATCH["messages"], messages))


def serialized(message: Outgoing) -> bytes:
    return message if isinstance(message, bytes) else message.SerializeToString()


def parsed(message: Outgoing) -> bots_pb2.ServerMessage:
    """The message itself (for reading it: tests, tools), whichever way it was queued."""
    return bots_pb2.ServerMessage.FromString(message) if isinstance(message, bytes) else message
