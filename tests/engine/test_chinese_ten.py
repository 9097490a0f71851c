"""Chinese Ten: one scenario per rule and variant (rules-notes section 4)."""

from __future__ import annotations

import copy

import pytest

from croupier.engine.cards import STANDARD_DECK, Card, parse_cards
from croupier.engine.core import IllegalAction, InvalidOptions, MalformedInput
from croupier.engine.games.chinese_ten import (
    Captured,
    ChineseTenState,
    DealScored,
    LayoutCaptured,
    MatchOver,
    Options,
    Pick,
    Play,
    Scoring,
    Tabled,
    Turned,
    card_points,
    new_game,
    parse_action,
)
from croupier.engine.rng import Rng


def cards(text: str) -> list[Card]:
    return list(parse_cards(text))


def table_state(
    hands: list[str], table: str, stock: str, *, turn: int = 1, options: Options | None = None
) -> ChineseTenState:
    """A deal in progress, built card by card."""
    options = options or Options(players=len(hands))
    return ChineseTenState(
        options,
        Rng(0),
        deal=1,
        hands=[cards(h) for h in hands],
        table=cards(table),
        stock=cards(stock),
        piles=[[] for _ in hands],
        points=[0] * len(hands),
        totals=[0] * len(hands),
        turn=turn,
    )


def stacked_deck(first: str, players: int = 3) -> list[Card]:
    """A deck whose first cards are ``first`` (hands from the dealer's left, then layout, then stock)."""
    head = cards(first)
    return head + [c for c in STANDARD_DECK if c not in head]


# --- capturing -----------------------------------------------------------------------


def test_a_low_card_captures_the_table_card_that_sums_with_it_to_ten() -> None:
    state = table_state(["2c", "3h 9d", "4s"], "7c Kd", "8d 6h 5c")
    assert state.legal_actions(1)[0] == Play(Card.parse("3h"), (Card.parse("7c"),))
    events = state.apply(1, Play(Card.parse("3h"), (Card.parse("7c"),)))
    assert Captured(1, Card.parse("3h"), (Card.parse("7c"),)) in events
    assert set(state.piles[1]) >= {Card.parse("3h"), Card.parse("7c")}


def test_an_ace_counts_one_and_captures_a_nine() -> None:
    state = table_state(["2c", "Ah", "4s"], "9c", "Kd 5c")
    assert state.legal_actions(1) == [Play(Card.parse("Ah"), (Card.parse("9c"),))]


def test_a_five_captures_a_five() -> None:
    state = table_state(["2c", "5h", "4s"], "5c", "Kd 5d")
    assert state.legal_actions(1) == [Play(Card.parse("5h"), (Card.parse("5c"),))]


def test_tens_and_pictures_capture_only_their_own_rank() -> None:
    state = table_state(["2c", "Jh 10h", "4s"], "Js Qd 10c", "2d 3d")
    assert state.legal_actions(1) == [
        Play(Card.parse("Jh"), (Card.parse("Js"),)),
        Play(Card.parse("10h"), (Card.parse("10c"),)),
    ]


def test_suits_do_not_matter_for_capturing() -> None:
    state = table_state(["2c", "6s", "4s"], "4h", "Kd 5c")
    assert state.legal_actions(1) == [Play(Card.parse("6s"), (Card.parse("4h"),))]


def test_capture_is_compulsory_and_the_refusal_names_the_capture() -> None:
    state = table_state(["2c", "3h 9d", "4s"], "7c", "8d 6h")
    before = copy.deepcopy(state)
    with pytest.raises(IllegalAction, match="3h must capture: play 3h:7c"):
        state.apply(1, Play(Card.parse("3h")))
    assert state == before


def test_the_player_chooses_among_several_targets() -> None:
    state = table_state(["2c", "3h", "4s"], "7c 7d", "Kd 6h")
    assert state.legal_actions(1) == [
        Play(Card.parse("3h"), (Card.parse("7c"),)),
        Play(Card.parse("3h"), (Card.parse("7d"),)),
    ]
    state.apply(1, Play(Card.parse("3h"), (Card.parse("7d"),)))
    assert Card.parse("7d") in state.piles[1] and Card.parse("7c") in state.table


def test_a_card_that_captures_nothing_joins_the_table() -> None:
    state = table_state(["2c", "3h", "4s"], "Kc", "Qd 6h")
    events = state.apply(1, Play(Card.parse("3h")))
    assert Tabled(Card.parse("3h")) in events
    assert Card.parse("3h") in state.table and state.piles[1] == []


def test_claiming_a_capture_that_is_not_there_is_refused() -> None:
    state = table_state(["2c", "3h", "4s"], "Kc", "Qd 6h")
    with pytest.raises(IllegalAction, match="captures nothing here"):
        state.apply(1, Play(Card.parse("3h"), (Card.parse("Kc"),)))


# --- the turned-up stock card ------------------------------------------------------------


def test_the_turned_card_captures_its_single_target_at_once() -> None:
    state = table_state(["2c", "Kh", "4s"], "4d", "6c 9h")
    events = state.apply(1, Play(Card.parse("Kh")))
    assert events[2:] == [Turned(1, Card.parse("6c")), Captured(1, Card.parse("6c"), (Card.parse("4d"),))]
    assert state.turn == 2


def test_the_turned_card_may_capture_the_card_just_played() -> None:
    state = table_state(["2c", "3h", "4s"], "Kc", "7s 9h")
    events = state.apply(1, Play(Card.parse("3h")))
    assert Captured(1, Card.parse("7s"), (Card.parse("3h"),)) in events


def test_the_turned_card_with_two_targets_waits_for_the_player_to_pick() -> None:
    state = table_state(["2c", "Kh", "4s"], "4d 4c", "6c 9h")
    state.apply(1, Play(Card.parse("Kh")))
    assert state.turned == Card.parse("6c") and state.to_act() == {1}
    assert state.legal_actions(1) == [Pick(Card.parse("4d")), Pick(Card.parse("4c"))]
    with pytest.raises(IllegalAction, match="pick what your turned-up 6c captures first"):
        state.apply(1, Play(Card.parse("2c")))
    state.apply(1, Pick(Card.parse("4c")))
    assert state.table == cards("4d Kh") and state.turn == 2 and state.turned is None


def test_a_turned_card_that_captures_nothing_joins_the_table() -> None:
    state = table_state(["2c", "Kh", "4s"], "Qd", "6c 9h")
    state.apply(1, Play(Card.parse("Kh")))
    assert state.table == cards("Qd Kh 6c")


# --- special layouts ------------------------------------------------------------------------


def test_three_of_a_kind_in_the_layout_fall_to_the_fourth_card() -> None:
    # dealer 0: seat 1 gets the first 8 cards, seat 2 the next, seat 0 the next; then the layout
    deck = stacked_deck(
        "Kh 2c 2d 2h 2s 3c 3d 3h  4c 4d 4h 4s 6c 6d 6h 6s  7c 7d 7h 7s 8c 8d 8h 8s  Kc Kd Ks 9c  9d"
    )
    state = ChineseTenState(Options(), Rng(0), totals=[0, 0, 0])
    state.start_deal(deck)
    assert state.legal_actions(1)[0] == Play(Card.parse("Kh"), tuple(cards("Kc Kd Ks")))
    events = state.apply(1, Play(Card.parse("Kh"), tuple(cards("Kc Kd Ks"))))
    assert Captured(1, Card.parse("Kh"), tuple(cards("Kc Kd Ks"))) in events
    assert not any(c.rank == Card.parse("Kh").rank for c in state.table)


def test_four_of_a_kind_in_the_layout_go_to_the_dealer_before_play() -> None:
    deck = stacked_deck(
        "2c 2d 2h 2s 3c 3d 3h 3s  4c 4d 4h 4s 6c 6d 6h 6s  7c 7d 7h 7s 8c 8d 8h 8s  5c 5d 5h 5s"
    )
    state = ChineseTenState(Options(), Rng(0), totals=[0, 0, 0])
    events = state.start_deal(deck)
    assert LayoutCaptured(0, tuple(cards("5c 5d 5h 5s"))) in events
    assert state.table == [] and state.piles[0] == cards("5c 5d 5h 5s")


# --- scoring ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("card", "points"),
    [("2h", 2), ("8d", 8), ("9h", 10), ("Kd", 10), ("Ah", 20), ("As", 30), ("Ac", 0), ("Ks", 0)],
)
def test_chinese_ten_scores_red_cards_and_the_ace_of_spades(card: str, points: int) -> None:
    assert card_points(Card.parse(card), Scoring.CHINESE_TEN) == points


@pytest.mark.parametrize(
    ("card", "points"),
    [("2s", 2), ("9c", 9), ("10s", 10), ("Kc", 10), ("As", 50), ("Ac", 0), ("Ah", 0), ("5d", 0)],
)
def test_red_frog_scores_black_cards_and_the_ace_of_spades(card: str, points: int) -> None:
    assert card_points(Card.parse(card), Scoring.RED_FROG) == points


@pytest.mark.parametrize(("scoring", "total"), [(Scoring.CHINESE_TEN, 240), (Scoring.RED_FROG, 218)])
def test_a_whole_deck_is_worth_the_documented_total(scoring: Scoring, total: int) -> None:
    assert sum(card_points(c, scoring) for c in STANDARD_DECK) == total


# --- deals and the match ----------------------------------------------------------------------------


@pytest.mark.parametrize(("players", "hand"), [(2, 12), (3, 8), (4, 6)])
def test_each_player_count_deals_its_hand_size_four_to_the_table_and_24_to_the_stock(
    players: int, hand: int
) -> None:
    state = new_game(Options(players=players), Rng(3))
    assert [len(h) for h in state.hands] == [hand] * players
    assert len(state.stock) == 24
    assert len(state.table) + sum(map(len, state.piles)) == 4


def test_play_starts_left_of_the_dealer() -> None:
    state = new_game(Options(), Rng(3))
    assert state.dealer == 0 and state.to_act() == {1}


def last_turn(totals: list[int], options: Options) -> ChineseTenState:
    """Seat 1 plays the deal's last card, 9h taking Ah; the last stock card Kd takes Kc: 40 points."""
    state = table_state(["", "9h", ""], "Ah Kc", "Kd", options=options)
    state.totals = totals
    return state


def test_a_deal_ends_when_hands_and_stock_are_empty_and_the_deal_passes_left() -> None:
    state = last_turn([0, 0, 0], Options())
    events = state.apply(1, Play(Card.parse("9h"), (Card.parse("Ah"),)))
    assert DealScored(1, (0, 40, 0), (0, 40, 0)) in events
    assert state.dealer == 1 and state.deal == 2 and state.to_act() == {2}
    assert [len(h) for h in state.hands] == [8, 8, 8]


def test_the_match_ends_when_someone_reaches_the_target_alone_at_the_top() -> None:
    state = last_turn([100, 980, 500], Options(target=1000))
    events = state.apply(1, Play(Card.parse("9h"), (Card.parse("Ah"),)))
    assert state.is_over() and isinstance(events[-1], MatchOver)
    outcome = state.outcome()
    assert outcome.scores == (100, 1020, 500) and outcome.places == (3, 1, 2) and outcome.winners == {1}


def test_a_tie_at_the_top_past_the_target_plays_another_deal() -> None:
    state = last_turn([1010, 970, 500], Options(target=1000))
    state.apply(1, Play(Card.parse("9h"), (Card.parse("Ah"),)))
    assert not state.is_over() and state.deal == 2


# --- what a seat sees -------------------------------------------------------------------------------


def test_a_seat_sees_its_hand_and_only_counts_of_other_hands_and_the_stock() -> None:
    state = new_game(Options(), Rng(5))
    view = state.view(1)
    assert view.hands[1] == tuple(state.hands[1]) and view.hands[0] is None and view.hands[2] is None
    assert view.hand_sizes == (8, 8, 8) and view.stock_size == 24 and view.stock is None
    assert state.public_view().hands == (None, None, None)
    assert state.full_view().stock == tuple(state.stock)


# --- refusals and text forms ---------------------------------------------------------------------------


def test_acting_out_of_turn_is_refused_and_changes_nothing() -> None:
    state = new_game(Options(), Rng(5))
    before = copy.deepcopy(state)
    with pytest.raises(IllegalAction, match="not your turn: seat 1 is to act"):
        state.apply(2, state.legal_actions(1)[0])
    assert state == before


def test_playing_a_card_not_held_is_refused() -> None:
    state = table_state(["2c", "3h", "4s"], "Kc", "Qd")
    with pytest.raises(IllegalAction, match="you do not hold 2c"):
        state.apply(1, Play(Card.parse("2c")))


@pytest.mark.parametrize("text", ["7h", "7h:3c", "5h:5c,5d,5s", "pick 3c", "10d:10s"])
def test_action_text_forms_read_back(text: str) -> None:
    assert str(parse_action(text)) == text


@pytest.mark.parametrize("text", ["", "pick", "7x", "play 7h", "7h:"])
def test_malformed_actions_are_reported_as_such(text: str) -> None:
    if text == "7h:":  # an empty capture list is just the plain play
        assert parse_action(text) == Play(Card.parse("7h"))
        return
    with pytest.raises(MalformedInput):
        parse_action(text)


@pytest.mark.parametrize("players", [1, 5])
def test_chinese_ten_is_for_two_to_four_players(players: int) -> None:
    with pytest.raises(InvalidOptions, match="2 to 4 players"):
        Options(players=players)
