"""The one engine <-> proto codec: every game's views, actions, events and options survive the
round trip, and a proto that disagrees with its engine is refused when the codec is built."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import pytest
from croupier.v1 import cards_pb2, chinese_ten_pb2

from engine.cards import STANDARD_DECK, Card
from engine.core import MalformedInput
from engine.games import GAMES
from engine.rng import Rng
from server import convert

VARIANTS = [(name, options) for name, spec in GAMES.items() for options in spec.test_variants]


@pytest.mark.parametrize(("game", "options"), VARIANTS, ids=[f"{g}-{i}" for i, (g, _) in enumerate(VARIANTS)])
def test_everything_a_match_sends_survives_the_round_trip(game: str, options: Any) -> None:
    codec = convert.codec(game)
    assert codec.options_from_proto(codec.options(options)) == options
    state = codec.spec.new_game(options, Rng(3))
    rng = random.Random(3)
    now = 0.0
    for _ in range(300):
        for view in [state.public_view(), state.full_view(), *(state.view(s) for s in range(state.players))]:
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
