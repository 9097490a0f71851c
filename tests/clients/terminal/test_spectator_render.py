"""The spectator's drawing of each game, checked on a recording console: what is shown and what is not."""

from __future__ import annotations

import io
import random
from typing import Any

import pytest
from rich.console import Console

from croupier.clients.scenes import Header, Scene
from croupier.clients.terminal.render import card_text, render, words_text
from croupier.engine.cards import Card
from croupier.engine.games import get_game
from croupier.engine.rng import Rng

OPTIONS: dict[str, dict[str, Any]] = {
    "chinese_ten": {"players": 3},
    "spoil_five": {"players": 4},
    "platinum_fish": {"players": 3},
    "pair_battle": {"players": 3, "timing": "lockstep"},
}
SINGLE_DECK = ("chinese_ten", "spoil_five", "pair_battle")
"""Games where a card on the table can never be the same card as one in a hand."""


def played(game: str, moves: int = 12, seed: int = 4) -> tuple[Any, list[str]]:
    """A match some random moves in, and the events those moves caused, in words."""
    spec = get_game(game)
    state = spec.new_game(spec.options(OPTIONS[game]), Rng(seed))
    rng = random.Random(seed)
    events: list[str] = []
    for _ in range(moves):
        seats = sorted(state.to_act())
        if state.is_over() or not seats:
            break
        seat = rng.choice(seats)
        events += [str(e) for e in state.apply(seat, rng.choice(state.legal_actions(seat)))]
    return state, events


def screen(game: str, view: Any, events: list[str], status: str = "running") -> str:
    players = tuple(f"bot{i}" for i in range(len(view.hand_sizes)))
    header = Header("m-1", game, get_game(game).title, players, status)
    console = Console(file=io.StringIO(), width=120, record=True, color_system=None)
    console.print(
        render(header, Scene(7, 83_400, "seat 1 plays", tuple(events[-3:]), view, tuple(events[:-3])))
    )
    return console.export_text()


def hand_cards(state: Any) -> list[Card]:
    return [card for hand in state.full_view().hands for card in hand]


@pytest.mark.parametrize("game", sorted(OPTIONS))
def test_a_spectator_sees_card_backs_and_counts_but_no_hidden_card(game: str) -> None:
    state, events = played(game)
    view = state.public_view()
    text = screen(game, view, events)
    for seat, size in enumerate(view.hand_sizes):
        row = next(line for line in text.splitlines() if f"{seat} bot{seat}" in line)
        assert "▮" * size + f" {size}" in row, row
    if game in SINGLE_DECK:
        shown = {f"{c.rank}{c.suit.symbol}" for c in hand_cards(state)}
        if game == "spoil_five" and view.robbed_by is not None:
            shown.discard(
                f"{view.turn_up.rank}{view.turn_up.suit.symbol}"
            )  # robbed: known to be in that hand
        leaked = [card for card in shown if card in text]
        assert not leaked, f"hidden cards on screen: {leaked}\n{text}"


@pytest.mark.parametrize("game", sorted(OPTIONS))
def test_the_full_view_shows_every_hand_with_suit_symbols(game: str) -> None:
    state, events = played(game)
    text = screen(game, state.full_view(), events, status="finished")
    for seat, hand in enumerate(state.full_view().hands):
        row = next(line for line in text.splitlines() if f"{seat} bot{seat}" in line)
        for card in hand:
            assert f"{card.rank}{card.suit.symbol}" in row, row
        assert "▮" not in row


@pytest.mark.parametrize("game", sorted(OPTIONS))
def test_the_screen_shows_the_clock_the_scores_and_the_last_events(game: str) -> None:
    state, events = played(game)
    text = screen(game, state.public_view(), events)
    assert "clock 01:23.4" in text and get_game(game).title in text and "running" in text
    for line in events[-8:]:
        assert words_text(line).plain in text  # cards in the events' words drawn with their suit symbols
    scores = {
        "chinese_ten": lambda v: v.totals,
        "spoil_five": lambda v: v.banks,
        "platinum_fish": lambda v: v.scores,
        "pair_battle": lambda v: v.scores,
    }[game](state.public_view())
    for seat, score in enumerate(scores):
        row = next(line for line in text.splitlines() if f"{seat} bot{seat}" in line)
        assert f" {score} " in f"{row} ", row


def test_game_specific_facts_are_on_screen() -> None:
    state, events = played("chinese_ten")
    text = screen("chinese_ten", state.public_view(), events)
    view = state.public_view()
    assert f"stock {view.stock_size}" in text and "table " in text
    assert all(f"{c.rank}{c.suit.symbol}" in text for c in view.table)
    state, events = played("spoil_five", moves=6)
    view = state.public_view()
    text = screen("spoil_five", view, events)
    assert f"trumps {view.trumps.symbol}" in text and f"pool {view.pool}" in text
    assert f"deal {view.deal} of {view.deals}" in text
    state, events = played("platinum_fish")
    view = state.public_view()
    text = screen("platinum_fish", view, events)
    top = view.discard[-1]
    assert f"discard {top.rank}{top.suit.symbol}" in text and f"stock {view.stock_size}" in text


def test_the_seat_to_act_is_marked() -> None:
    state, events = played("chinese_ten")
    text = screen("chinese_ten", state.public_view(), events)
    to_act = state.public_view().to_act
    [marked] = [line for line in text.splitlines() if line.lstrip("│ ").startswith("▶")]
    assert f"{to_act} bot{to_act}" in marked


def test_red_suits_are_red_and_black_suits_plain() -> None:
    console = Console(file=io.StringIO(), record=True, force_terminal=True, color_system="standard", width=40)
    console.print(card_text(Card.parse("10h")), card_text(Card.parse("Qs")))
    ansi = console.export_text(styles=True)
    assert "\x1b[1;31m10♥" in ansi and "\x1b[1mQ♠" in ansi
    assert words_text("seat 2's 7d captures 3c and As").plain == "seat 2's 7♦ captures 3♣ and A♠"


def test_the_end_screen_says_which_seat_forfeited_and_why() -> None:
    from rich.console import Console

    from croupier.clients.scenes import Header
    from croupier.clients.terminal.render import result_panel

    header = Header(
        "m-1", "platinum_fish", "Platinum Fish", ("random", "mybot"), "finished", ((1, 104), (2, 163)),
        forfeited=("", "disconnected"),
    )  # fmt: skip
    console = Console(width=100, record=True)
    console.print(result_panel(header))
    lines = console.export_text().splitlines()
    assert any("2. seat 1 mybot: 163 (forfeited: disconnected)" in line for line in lines)
    assert not any("seat 0 random: 104 (" in line for line in lines)
