"""The one engine <-> proto codec: every game's views, actions, events and options survive the
round trip, and a proto that disagrees with its engine is refused when the codec is built."""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from typing import Any

import pytest

from croupier.engine.cards import STANDARD_DECK, Card
from croupier.engine.core import MalformedInput
from croupier.engine.games import GAMES, chinese_ten
from croupier.engine.rng import Rng
from croupier.v1 import cards_pb2, chinese_ten_pb2, games_pb2, spoil_five_pb2
from croupier.wire import convert

VARIANTS = [(name, options) for name, spec in GAMES.items() for options in spec.test_variants]


def every_view(state: Any) -> list[Any]:
    """What a spectator, the record and each seat are shown of a state."""
    return [state.public_view(), state.full_view(), *(state.view(s) for s in range(state.players))]


@pytest.mark.parametrize(("game", "options"), VARIANTS, ids=[f"{g}-{i}" for i, (g, _) in enumerate(VARIANTS)])
def test_everything_a_match_sends_survives_the_round_trip(game: str, options: Any) -> None:
    codec = convert.codec(game)
    assert codec.options_from_proto(codec.options(options)) == options
    state = codec.spec.new_game(options, Rng(3))
    rng = random.Random(3)
    now = 0.0
    for _ in range(300):
        for view in every_view(state):
            assert codec.view_from_proto(codec.view(view)) == view
        if state.is_over():
            break
        if not state.to_act():  # a game waiting for time (a countdown)
            now, events = state.wait_for_clock(now)
        else:
            seat = rng.choice(sorted(state.to_act()))
            legal = state.legal_actions(seat)
            for action in legal:
                assert codec.action_from_proto(codec.action(action)) == action
            now += 0.01
            events = state.apply(seat, rng.choice(legal), now)
        for event in events:
            pb = codec.event(event)
            assert codec.event_from_proto(pb) == event
            assert pb.text == str(event)


@pytest.mark.parametrize(("game", "options"), VARIANTS, ids=[f"{g}-{i}" for i, (g, _) in enumerate(VARIANTS)])
def test_convert_writes_every_view_byte_for_byte_as_protobuf_serializes_it(game: str, options: Any) -> None:
    """convert.py writes protobuf's wire format by hand, for speed (its "wire rules"). Every view of
    random playouts, for every seat and spectator, must come out exactly as protobuf's own
    SerializeToString writes the same message: if this fails, convert.py's encoder has drifted
    from protobuf (field order, packing, defaults, varints), not the game."""
    codec = convert.codec(game)
    for seed in range(2):
        state = codec.spec.new_game(options, Rng(seed))
        rng = random.Random(seed)
        now = 0.0
        for _ in range(300):
            for view in every_view(state):
                written = codec.view_bytes(view)
                assert written == games_pb2.View.FromString(written).SerializeToString(), view
            if state.is_over():
                break
            if not state.to_act():
                now, _ = state.wait_for_clock(now)
            else:
                seat = rng.choice(sorted(state.to_act()))
                now += 0.01
                state.apply(seat, rng.choice(state.legal_actions(seat)), now)


def test_cards_are_numbered_rank_times_ten_plus_suit() -> None:
    for card in STANDARD_DECK:
        number = convert.card_to_proto(card)
        assert cards_pb2.Card.Name(number) == f"CARD_{card}".upper()
        assert (number // 10, number % 10) == (
            card.rank.value,
            cards_pb2.Suit.Value(f"SUIT_{card.suit.name}"),
        )
        assert convert.card_from_proto(number) == card
    with pytest.raises(MalformedInput, match="0 is not a card"):
        convert.card_from_proto(0)


def test_a_view_and_message_that_disagree_are_refused_when_compiled() -> None:
    @dataclass(frozen=True)
    class Extra:
        seat: int | None
        secret: tuple[Card, ...]

    compiler = convert.Compiler({})
    with pytest.raises(TypeError, match="fields missing in proto \\['secret'\\]"):
        compiler.message(Extra, chinese_ten_pb2.ChineseTenView.DESCRIPTOR, "test view")

    @dataclass(frozen=True)
    class Pick:
        target: int

    with pytest.raises(TypeError, match="does not fit the proto field's scalar type"):
        compiler.message(Pick, chinese_ten_pb2.ChineseTenAction.Pick.DESCRIPTOR, "test pick")


def _message_bytes(delimited: bytes) -> bytes:
    """A message encoder's output without its length prefix (a varint), checked against it."""
    size = shift = at = 0
    while True:
        byte = delimited[at]
        size |= (byte & 0x7F) << shift
        shift += 7
        at += 1
        if byte < 0x80:
            break
    assert len(delimited) - at == size
    return delimited[at:]


def test_numbers_and_text_are_written_as_protobuf_itself_writes_them() -> None:
    @dataclass(frozen=True)
    class MatchOver:
        reason: str
        banks: tuple[int, ...]

    @dataclass(frozen=True)
    class Numbers:
        values: tuple[int, ...]

    message = spoil_five_pb2.SpoilFiveEvent.MatchOver
    compiler = convert.Compiler({})
    encode, decode = compiler.message(MatchOver, message.DESCRIPTOR, "test match over")
    for value in (
        MatchOver("trop tôt: 7♥", (0, -3)),
        MatchOver("", (2**31 - 1,)),
        MatchOver("x", (-(2**31),)),
    ):
        written = _message_bytes(encode(value))
        assert written == message(**dataclasses.asdict(value)).SerializeToString()
        assert decode(message.FromString(written)) == value
    encode, _ = compiler.message(Numbers, cards_pb2.Numbers.DESCRIPTOR, "test numbers")
    values = (0, 1, 127, 128, 300, 16383, 16384, -1, -(2**31), 2**31 - 1)
    assert _message_bytes(encode(Numbers(values))) == cards_pb2.Numbers(values=values).SerializeToString()


def test_a_memo_that_starts_afresh_mid_match_changes_no_view(monkeypatch: pytest.MonkeyPatch) -> None:
    """Views repeat the state's events and melds: their bytes are memoized by identity. A memo of
    three entries starts afresh all the time; every view must come out as with the usual one."""
    monkeypatch.setattr(convert, "IDENTITY_LIMIT", 3)
    spec = GAMES["platinum_fish"]
    small, usual = convert.GameCodec(spec), convert.codec("platinum_fish")
    state = spec.new_game(spec.options({"players": 3}), Rng(5))
    while not state.is_over():
        seat = min(state.to_act())
        for event in state.apply(seat, state.legal_actions(seat)[0]):
            assert small.event(event) == usual.event(event)
        view = state.view(seat)
        assert small.view(view) == usual.view(view)
        assert small.view_from_proto(small.view(view)) == view


def test_an_event_or_action_converted_twice_is_encoded_once_and_kept_apart_from_its_lookalikes() -> None:
    codec = convert.codec("chinese_ten")
    state = codec.spec.new_game(codec.spec.options({"players": 2}), Rng(1))
    seat = min(state.to_act())
    action = state.legal_actions(seat)[0]
    event = state.apply(seat, action)[0]
    twin = codec.event_from_proto(codec.event(event))
    assert twin == event and twin is not event
    assert codec.event_bytes(twin) is codec.event_bytes(event)
    assert codec.event(twin) == codec.event(event) and codec.event(twin) is not codec.event(event)
    copy = codec.action_from_proto(codec.action(action))
    assert copy is not action and codec.action_bytes(copy) is codec.action_bytes(action)
    # the same fields in another class (a card played, a card turned up) are another event
    assert isinstance(event, chinese_ten.Played)
    turned = chinese_ten.Turned(event.seat, event.card)
    assert codec.event(turned).chinese_ten.WhichOneof("event") == "turned"
    assert codec.event_bytes(turned) != codec.event_bytes(event)
