"""framing.py writes a bot stream's commonest messages as wire bytes, for speed: each must come out
exactly as protobuf serializes the same message built as objects, for every game and variant."""

from __future__ import annotations

import random
from typing import Any

import pytest

from croupier.engine.rng import Rng
from croupier.v1 import bots_pb2, games_pb2
from croupier.wire import convert, framing
from tests.server.test_convert import VARIANTS

Result = bots_pb2.ActionResult
REASONS = ("", "index 9 is out of range", "«7♥» n'est pas jouable: " + "x" * 300)
"""Refusal texts: none, plain, and one of non-ASCII characters whose UTF-8 length needs two bytes."""


def number(rng: random.Random, bits: int) -> int:
    """0 (the default, not written), small, or as large as the field holds."""
    return rng.choice((0, 1, rng.randrange(1 << 7, 1 << 14), (1 << bits) - 1, rng.randrange(1 << bits)))


def messages_of_a_playout(game: str, options: Any, seed: int) -> list[tuple[bytes, bots_pb2.ServerMessage]]:
    """(framing's bytes, protobuf's message) for every message a referee could send at each step of
    a random playout: the next seat's DecisionRequest, each seat's ViewUpdate, the mover's
    ActionResult of every status, with random ids, clocks and counts."""
    codec = convert.codec(game)
    state = codec.spec.new_game(options, Rng(seed))
    rng = random.Random(seed)
    pairs: list[tuple[bytes, bots_pb2.ServerMessage]] = []
    events: list[bytes] = [codec.event_bytes(e) for e in state.opening]
    now = 0.0
    for _ in range(200):
        match_id = rng.choice(("", "20261201-151800-a1b2c3", "m-é" * 40))
        if state.is_over():
            break
        if not state.to_act():
            now, happened = state.wait_for_clock(now)
            events += codec.events_bytes(happened)
            continue
        for seat in range(state.players):
            view = codec.view_bytes(state.view(seat))
            accepted = number(rng, 32)
            pairs.append(
                (
                    framing.view_update(match_id, seat, view, events, accepted),
                    bots_pb2.ServerMessage(
                        view_update=bots_pb2.ViewUpdate(
                            match_id=match_id,
                            seat=seat,
                            view=games_pb2.View.FromString(view),
                            events=[games_pb2.Event.FromString(e) for e in events],
                            accepted=accepted,
                        )
                    ),
                )
            )
        seat = rng.choice(sorted(state.to_act()))
        legal = state.legal_actions(seat)
        view = codec.view_bytes(state.view(seat))
        clocks = {name: number(rng, 32) for name in ("deadline_ms", "time_bank_ms", "last_think_ms")}
        decision_id, accepted = number(rng, 64), number(rng, 32)
        pairs.append(
            (
                framing.decision_request(
                    match_id,
                    seat,
                    decision_id,
                    view,
                    codec.actions_bytes(legal),
                    **clocks,
                    events=events,
                    accepted=accepted,
                ),
                bots_pb2.ServerMessage(
                    decision=bots_pb2.DecisionRequest(
                        match_id=match_id,
                        seat=seat,
                        decision_id=decision_id,
                        view=games_pb2.View.FromString(view),
                        legal_actions=[codec.action(a) for a in legal],
                        **clocks,
                        events=[games_pb2.Event.FromString(e) for e in events],
                        accepted=accepted,
                    )
                ),
            )
        )
        action = rng.choice(legal)
        for status in Result.Status.values():
            told = rng.choice((None, action))
            reason, why = rng.choice(REASONS), rng.choice(Result.RefusalReason.values())
            counts = {name: number(rng, 32) for name in ("think_ms", "refusals", "timeouts")}
            pairs.append(
                (
                    framing.action_result(
                        match_id,
                        seat,
                        decision_id,
                        status,
                        None if told is None else codec.action_bytes(told),
                        reason=reason,
                        refusal_reason=why,
                        **counts,
                    ),
                    bots_pb2.ServerMessage(
                        action_result=Result(
                            match_id=match_id,
                            seat=seat,
                            decision_id=decision_id,
                            status=status,
                            action=None if told is None else codec.action(told),
                            reason=reason,
                            refusal_reason=why,
                            **counts,
                        )
                    ),
                )
            )
        now += 0.01
        events = codec.events_bytes(state.apply(seat, action, now))
    return pairs


@pytest.mark.parametrize(("game", "options"), VARIANTS, ids=[f"{g}-{i}" for i, (g, _) in enumerate(VARIANTS)])
def test_framing_writes_every_message_as_protobuf_serializes_it(game: str, options: Any) -> None:
    """If this fails, framing.py has drifted from protobuf (field order, defaults, lengths), or
    convert's parts are not written as protobuf would write them."""
    for seed in range(2):
        pairs = messages_of_a_playout(game, options, seed)
        assert pairs
        for written, message in pairs:
            assert written == message.SerializeToString(), message
        # Batches of them, small and past two bytes of length
        for size in (2, 7, 300):
            for at in range(0, len(pairs), size):
                part = pairs[at : at + size]
                batch = bots_pb2.ServerMessage(batch=bots_pb2.Batch(messages=[m for _, m in part]))
                assert framing.batch([w for w, _ in part]) == batch.SerializeToString()


def test_every_action_and_event_is_written_as_protobuf_writes_it() -> None:
    """The parts framing copies in as they are: each exactly protobuf's bytes for itself."""
    for game, options in VARIANTS:
        codec = convert.codec(game)
        state = codec.spec.new_game(options, Rng(5))
        rng = random.Random(5)
        now = 0.0
        for _ in range(300):
            if state.is_over():
                break
            if not state.to_act():
                now, events = state.wait_for_clock(now)
            else:
                seat = rng.choice(sorted(state.to_act()))
                legal = state.legal_actions(seat)
                for data in codec.actions_bytes(legal):
                    assert data == games_pb2.Action.FromString(data).SerializeToString()
                now += 0.01
                events = state.apply(seat, rng.choice(legal), now)
            for data in codec.events_bytes(events):
                assert data == games_pb2.Event.FromString(data).SerializeToString()


def test_what_a_session_queues_reads_back_as_the_message_either_way() -> None:
    message = bots_pb2.ServerMessage(error=bots_pb2.Error(message="no"))
    assert framing.parsed(message) is message
    assert framing.parsed(framing.serialized(message)) == message
    written = framing.view_update("m", 1, b"", [])
    assert framing.serialized(written) is written
    assert framing.parsed(written).view_update.seat == 1


def test_a_writer_whose_parameters_are_not_its_messages_fields_in_number_order_is_refused() -> None:
    def view_update(match_id: str, view: bytes, seat: int, events: list[bytes], accepted: int) -> bytes:
        return b""

    with pytest.raises(TypeError, match="ViewUpdate's fields in order"):
        framing._check_fields_in_order(view_update, bots_pb2.ViewUpdate.DESCRIPTOR)
