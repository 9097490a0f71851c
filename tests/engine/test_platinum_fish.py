"""Platinum Fish scenarios: one per rule and per variant (rules-notes section 1).

Each scenario deals from a stacked deck with scripted dice (``deal_from``), so
the test reads like the table it sets up.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from croupier.engine.cards import Card, Rank, parse_cards
from croupier.engine.core import IllegalAction, InvalidOptions, MalformedInput, options_to_dict
from croupier.engine.games import GAMES
from croupier.engine.games.platinum_fish import (
    DRAW,
    PASS,
    ROLL,
    TAKE,
    Ask,
    Asked,
    AskRule,
    Dealt,
    Discarded,
    Drew,
    GameOver,
    Gave,
    Matched,
    NoneGiven,
    NotInStock,
    Passed,
    Phase,
    PlatinumFishOptions,
    PlatinumFishState,
    Rolled,
    ShortRoll,
    StockShuffled,
    Targets,
    TookDiscard,
    TookFromStock,
    TurnedUp,
    TurnPasses,
    deal_from,
    new_game,
    parse_action,
)
from croupier.engine.rng import Rng


class Dice(Rng):
    """An Rng whose die rolls are scripted; shuffles stay seeded."""

    def __init__(self, *rolls: int) -> None:
        super().__init__(0)
        self.rolls = list(rolls)

    def die(self, sides: int = 6) -> int:
        assert self.rolls, "the scenario ran out of scripted die rolls"
        return self.rolls.pop(0)


def game(
    hands: list[str], turn_up: str, stock: str, rolls: tuple[int, ...] = (), **options: Any
) -> PlatinumFishState:
    """Seat 0 deals ``hands[seat]`` (3 to 6 cards, as rolled), turns up ``turn_up``
    and leaves ``stock`` (top card first); ``rolls`` are the dice of later rolls."""
    n = len(hands)
    order = [(1 + k) % n for k in range(n)]  # the deal starts left of the dealer
    dealt = [parse_cards(hands[seat]) for seat in order]
    deck = [card for cards in dealt for card in cards] + [*parse_cards(turn_up), *parse_cards(stock)]
    return deal_from(PlatinumFishOptions(players=n, **options), deck, Dice(*(len(c) for c in dealt), *rolls))


def cards(text: str) -> tuple[Card, ...]:
    return parse_cards(text)


def pair(text: str) -> tuple[Card, Card]:
    a, b = parse_cards(text)
    return a, b


def stock_top_first(state: PlatinumFishState) -> tuple[Card, ...]:
    full = state.full_view().stock
    assert full is not None
    return tuple(reversed(full))


def refuse(state: PlatinumFishState, seat: int, action: Any, reason: str) -> None:
    """The action is refused with a reason containing ``reason`` and changes nothing."""
    before = copy.deepcopy(state)
    with pytest.raises(IllegalAction, match=reason):
        state.apply(seat, action)
    assert state == before


# --- the deal --------------------------------------------------------------------------


def test_deal_gives_each_seat_its_die_roll_in_cards_starting_left_of_the_dealer() -> None:
    deck = parse_cards("2c 3c 4c 5c  6d 7d 8d  9h 10h Jh Qh Kh  As  2s 3s")
    state = deal_from(PlatinumFishOptions(players=3), deck, Dice(4, 3, 5))
    assert state.opening[:3] == (Dealt(1, (4,), 4), Dealt(2, (3,), 3), Dealt(0, (5,), 5))
    assert state.view(1).hands[1] == cards("2c 3c 4c 5c")
    assert state.view(2).hands[2] == cards("6d 7d 8d")
    assert state.view(0).hands[0] == cards("9h 10h Jh Qh Kh")


def test_deal_roll_under_three_is_rolled_again() -> None:
    deck = parse_cards("2c 3c 4c 5c 6c  7d 8d 9d  10h  Js Qs")
    state = deal_from(PlatinumFishOptions(players=2), deck, Dice(2, 1, 5, 3))
    assert state.opening[:2] == (Dealt(1, (2, 1, 5), 5), Dealt(0, (3,), 3))
    assert state.view(0).hand_sizes == (3, 5)


def test_take_three_variant_deals_three_cards_for_a_roll_under_three() -> None:
    deck = parse_cards("2c 3c 4c  7d 8d 9d  10h  Js Qs")
    options = PlatinumFishOptions(players=2, short_roll=ShortRoll.TAKE_THREE)
    state = deal_from(options, deck, Dice(1, 2))
    assert state.opening[:2] == (Dealt(1, (1,), 3), Dealt(0, (2,), 3))
    assert state.view(0).hand_sizes == (3, 3)


def test_deal_lays_each_pair_in_hand_as_a_match() -> None:
    state = game(["2c 3c 4c", "7h 9c 7d"], "10h", "Js Qs")
    assert Matched(1, pair("7d 7h")) in state.opening
    assert state.view(1).hands[1] == cards("9c")
    assert state.view(1).scores == (0, 1)


def test_three_of_a_rank_at_the_deal_make_one_match_and_keep_one_card() -> None:
    state = game(["2c 3c 4c", "7h 7d 7s 9c"], "10h", "Js Qs")
    view = state.view(1)
    assert view.matches[1] == (pair("7d 7h"),)
    assert view.hands[1] == cards("7s 9c")


def test_four_of_a_rank_at_the_deal_make_two_matches() -> None:
    state = game(["2c 3c 4c", "7h 7d 7s 7h 9c"], "10h", "Js Qs")
    view = state.view(1)
    assert view.scores == (0, 2)
    assert view.hands[1] == cards("9c")


def test_dealer_turns_up_the_top_stock_card_and_play_starts_left_of_the_dealer() -> None:
    state = game(["2c 3c 4c", "5c 6c 7c", "8c 9c 10c"], "Kh", "Js Qs")
    assert state.opening[-2:] == (TurnedUp(Card.parse("Kh")), TurnPasses(1))
    view = state.public_view()
    assert view.discard == cards("Kh")
    assert view.stock_size == 2
    assert state.to_act() == {1}


def test_a_later_dealer_is_followed_by_the_seat_on_its_left() -> None:
    deck = parse_cards("2c 3c 4c  5c 6c 7c  8c 9c 10c  Kh  Js Qs")
    state = deal_from(PlatinumFishOptions(players=3), deck, Dice(3, 3, 3), dealer=2)
    assert [e.seat for e in state.opening if isinstance(e, Dealt)] == [0, 1, 2]
    assert state.to_act() == {0}


# --- taking the discard ------------------------------------------------------------------


def test_take_discard_is_refused_unless_it_makes_a_match() -> None:
    state = game(["2c 3c 4c", "5c 6c 7c"], "Kh", "Js Qs")
    assert state.legal_actions(1) == [DRAW, ROLL]
    refuse(state, 1, TAKE, "the top discard Kh makes no match: you hold no K")


def test_take_discard_lays_the_match_and_the_player_moves_again() -> None:
    state = game(["2c 3c 4c", "5c 6c Kc"], "Kh", "Js Qs")
    assert state.legal_actions(1) == [TAKE, DRAW, ROLL]
    events = state.apply(1, TAKE)
    assert events == [TookDiscard(1, Card.parse("Kh")), Matched(1, pair("Kc Kh"))]
    assert state.to_act() == {1}
    assert state.view(1).discard == ()
    assert state.legal_actions(1) == [DRAW, ROLL]


# --- drawing -------------------------------------------------------------------------------


def test_draw_that_makes_a_match_lays_it_and_the_player_moves_again() -> None:
    state = game(["2c 3c 4c", "5c 6c 7c"], "Kh", "6d Qs Js")
    events = state.apply(1, DRAW)
    assert events == [Drew(1, Card.parse("6d")), Matched(1, pair("6c 6d"))]
    assert state.to_act() == {1}
    assert state.view(1).hands[1] == cards("5c 7c")


def test_draw_without_match_goes_to_the_discard_pile_and_passes_the_turn() -> None:
    state = game(["2c 3c 4c", "5c 6c 7c"], "Kh", "9d Qs Js")
    events = state.apply(1, DRAW)
    assert events == [Drew(1, Card.parse("9d")), Discarded(1, Card.parse("9d")), TurnPasses(0)]
    assert state.public_view().discard == cards("Kh 9d")
    assert state.view(1).hands[1] == cards("5c 6c 7c")


# --- rolling -------------------------------------------------------------------------------


def test_roll_takes_the_first_stock_card_of_the_sum_and_keeps_the_stock_order() -> None:
    state = game(["2c 3c 4c", "5c 6c 8c"], "Kh", "2d 7h 9d 7s 3h", rolls=(3, 4))
    events = state.apply(1, ROLL)
    assert events[:2] == [Rolled(1, (3, 4), (7,)), TookFromStock(1)]
    assert Card.parse("7h") in (state.view(1).hands[1] or ())
    assert stock_top_first(state) == cards("2d 9d 7s 3h")


def test_roll_that_makes_a_match_lays_it_and_the_player_moves_again() -> None:
    state = game(["2c 3c 4c", "5c 7c 8c"], "Kh", "2d 7h 9d", rolls=(5, 2))
    events = state.apply(1, ROLL)
    assert events == [Rolled(1, (5, 2), (7,)), TookFromStock(1), Matched(1, pair("7c 7h"))]
    assert state.to_act() == {1}
    assert state.phase is Phase.TURN


def test_roll_without_match_keeps_the_card_in_hand_and_ends_the_turn() -> None:
    state = game(["2c 3c 4c", "5c 6c 8c"], "Kh", "2d 7h 9d", rolls=(3, 4))
    events = state.apply(1, ROLL)
    assert events[-1] == TurnPasses(0)
    assert state.view(1).hands[1] == cards("5c 6c 7h 8c")
    assert state.public_view().discard == cards("Kh")


def test_the_card_a_roll_takes_stays_private_unless_it_makes_a_match() -> None:
    state = game(["2c 3c 4c", "5c 6c 8c"], "Kh", "2d 7h 9d", rolls=(3, 4))
    events = state.apply(1, ROLL)
    assert all("7h" not in str(event) for event in events)
    assert state.view(0).hands[1] is None and state.public_view().hands == (None, None)
    assert state.view(0).hand_sizes == (3, 4)


def test_a_rolled_twelve_takes_a_queen_or_a_king_whichever_is_nearer_the_top() -> None:
    state = game(["2c 3c 4c", "5c 6c 8c"], "Kh", "Jd Ks Qd 9d", rolls=(6, 6))
    state.apply(1, ROLL)
    assert state.view(1).hands[1] == cards("5c 6c 8c Ks")
    assert stock_top_first(state) == cards("Jd Qd 9d")


def test_an_ace_counts_one_so_the_sum_of_two_dice_never_finds_it() -> None:
    state = game(["2c 3c 4c", "5c 6c 8c"], "Kh", "Ad 2h 9d", rolls=(1, 1))
    state.apply(1, ROLL)
    assert stock_top_first(state) == cards("Ad 9d")


def test_roll_finding_nothing_lets_the_player_ask_for_each_rank_of_the_value_or_pass() -> None:
    state = game(["2c 3c 4c", "5c 6c 8c"], "Kh", "2d 9d", rolls=(6, 6))
    events = state.apply(1, ROLL)
    assert events == [Rolled(1, (6, 6), (12,)), NotInStock(1, (12,))]
    assert state.legal_actions(1) == [Ask(Rank.QUEEN), Ask(Rank.KING), PASS]
    view = state.view(0)
    assert (view.phase, view.to_act, view.dice, view.targets) == (Phase.ASK, 1, (6, 6), (12,))


def test_ask_and_pass_only_answer_a_roll_that_found_nothing() -> None:
    state = game(["2c 3c 4c", "5c 6c 8c"], "Kh", "2d 9d", rolls=(6, 6))
    refuse(state, 1, Ask(Rank.QUEEN), "only answers a roll that found nothing")
    refuse(state, 1, PASS, "only answers a roll that found nothing")
    state.apply(1, ROLL)
    refuse(state, 1, DRAW, "your roll found nothing in the stock: choose ask Q, ask K, pass")


def test_asking_for_a_rank_that_was_not_rolled_is_refused() -> None:
    state = game(["2c 3c 4c", "5c 6c 8c"], "Kh", "2d 9d", rolls=(3, 4))
    state.apply(1, ROLL)
    reason = "cannot ask 8: 8 is not a rank of the rolled value 7; choose ask 7, pass"
    refuse(state, 1, Ask(Rank.EIGHT), reason)


def test_ask_takes_the_card_from_the_first_holder_clockwise_from_the_askers_left() -> None:
    state = game(["7c 2c 3c", "5c 6c 8c", "9h 10h Jh", "7d 4d 10d"], "Kh", "2d 9d", rolls=(3, 4))
    state.apply(1, ROLL)
    events = state.apply(1, Ask(Rank.SEVEN))
    assert events[:2] == [Asked(1, Rank.SEVEN, None), Gave(3, 1, Rank.SEVEN)]
    assert state.view(1).hands[1] == cards("5c 6c 7d 8c")
    assert state.view(0).hands[0] == cards("2c 3c 7c")


def test_an_asked_card_that_makes_a_match_is_laid_and_the_asker_moves_again() -> None:
    state = game(["7c 2c 3c", "5c 7h 8c"], "Kh", "2d 9d", rolls=(3, 4))
    state.apply(1, ROLL)
    events = state.apply(1, Ask(Rank.SEVEN))
    assert events == [Asked(1, Rank.SEVEN, None), Gave(0, 1, Rank.SEVEN), Matched(1, pair("7h 7c"))]
    assert state.to_act() == {1}
    assert state.phase is Phase.TURN


def test_an_asked_card_without_match_is_kept_and_ends_the_turn() -> None:
    state = game(["7c 2c 3c", "5c 6c 8c"], "Kh", "2d 9d", rolls=(3, 4))
    state.apply(1, ROLL)
    events = state.apply(1, Ask(Rank.SEVEN))
    assert events[-1] == TurnPasses(0)
    assert state.view(1).hands[1] == cards("5c 6c 7c 8c")


def test_an_ask_that_nobody_can_answer_ends_the_turn() -> None:
    state = game(["2c 3c 4c", "5c 6c 8c", "9h 10h Jh"], "Kh", "2d 9d", rolls=(3, 4))
    state.apply(1, ROLL)
    events = state.apply(1, Ask(Rank.SEVEN))
    assert events == [Asked(1, Rank.SEVEN, None), NoneGiven(Rank.SEVEN), TurnPasses(2)]
    assert state.view(1).hand_sizes == (3, 3, 3)


def test_passing_after_a_roll_found_nothing_ends_the_turn() -> None:
    state = game(["7c 2c 3c", "5c 6c 8c"], "Kh", "2d 9d", rolls=(3, 4))
    state.apply(1, ROLL)
    assert state.apply(1, PASS) == [Passed(1), TurnPasses(0)]
    assert state.view(0).hands[0] == cards("2c 3c 7c")


# --- the end -------------------------------------------------------------------------------


def test_the_game_ends_when_a_draw_takes_the_last_stock_card_and_its_match_counts() -> None:
    state = game(["2c 3c 4c", "5c 6c 8c"], "Kh", "8d")
    events = state.apply(1, DRAW)
    assert events == [Drew(1, Card.parse("8d")), Matched(1, pair("8c 8d")), GameOver((0, 1), (1,))]
    assert state.is_over() and state.to_act() == frozenset()
    assert state.outcome().scores == (0, 1) and state.outcome().winners == {1}


def test_the_game_ends_when_a_draw_without_match_takes_the_last_stock_card() -> None:
    state = game(["2c 3c 4c", "5c 6c 8c"], "Kh", "9d")
    events = state.apply(1, DRAW)
    assert events[-2:] == [Discarded(1, Card.parse("9d")), GameOver((0, 0), (0, 1))]
    assert state.is_over()


def test_the_game_ends_when_a_roll_takes_the_last_stock_card_and_its_match_counts() -> None:
    state = game(["2c 3c 4c", "5c 6c 8c"], "Kh", "8d", rolls=(4, 4))
    events = state.apply(1, ROLL)
    assert events[-2:] == [Matched(1, pair("8c 8d")), GameOver((0, 1), (1,))]
    assert state.is_over()


def test_the_game_ends_at_the_turn_up_if_it_takes_the_last_stock_card() -> None:
    state = game(["2c 3c 3d", "5c 6c 8c"], "Kh", "")
    assert state.opening[-2:] == (TurnedUp(Card.parse("Kh")), GameOver((1, 0), (0,)))
    assert state.is_over() and state.legal_actions(1) == []


def test_most_matches_wins_and_players_tied_on_most_all_win() -> None:
    state = game(["2c 2d 4c", "5c 5d 8c", "9c 10c Jc"], "Kh", "Qd")
    state.apply(1, DRAW)
    outcome = state.outcome()
    assert outcome.scores == (1, 1, 0)
    assert outcome.places == (1, 1, 3)
    assert outcome.winners == {0, 1}


def test_nothing_is_accepted_once_the_game_is_over() -> None:
    state = game(["2c 3c 4c", "5c 6c 8c"], "Kh", "9d")
    state.apply(1, DRAW)
    refuse(state, 0, DRAW, "the game is over")


def test_only_the_seat_to_act_may_act() -> None:
    state = game(["2c 3c 4c", "5c 6c 8c"], "Kh", "9d Qs")
    assert state.legal_actions(0) == []
    refuse(state, 0, DRAW, "not your turn: seat 1 is to act")


# --- variants ---------------------------------------------------------------------------------


def test_faces_and_sum_variant_takes_the_first_card_of_either_face_or_the_sum() -> None:
    hands = ["2c 3c 4c", "7c 8c 9c"]
    state = game(hands, "Kh", "2d Qh 6s As 5d", rolls=(1, 5), targets=Targets.FACES_AND_SUM)
    events = state.apply(1, ROLL)
    assert events[0] == Rolled(1, (1, 5), (1, 5, 6))
    assert stock_top_first(state) == cards("2d Qh As 5d")


def test_faces_and_sum_variant_finds_an_ace_for_a_one() -> None:
    state = game(["2c 3c 4c", "7c 8c 9c"], "Kh", "2d Ah 9d", rolls=(1, 6), targets=Targets.FACES_AND_SUM)
    state.apply(1, ROLL)
    assert stock_top_first(state) == cards("2d 9d")
    assert state.view(1).hands[1] == cards("7c 8c 9c Ah")


def test_faces_and_sum_variant_asks_for_any_rank_of_any_rolled_value() -> None:
    state = game(["2c 3c 4c", "7c 8c 9c"], "Kh", "2d 9d", rolls=(1, 5), targets=Targets.FACES_AND_SUM)
    state.apply(1, ROLL)
    assert state.legal_actions(1) == [Ask(Rank.ACE), Ask(Rank.FIVE), Ask(Rank.SIX), PASS]


def test_twelve_includes_jack_variant_finds_a_jack_for_a_twelve() -> None:
    state = game(["2c 3c 4c", "7c 8c 9c"], "Kh", "2d Jd Qs", rolls=(6, 6), twelve_includes_jack=True)
    state.apply(1, ROLL)
    assert stock_top_first(state) == cards("2d Qs")


def test_twelve_includes_jack_variant_asks_for_jack_queen_or_king() -> None:
    state = game(["2c 3c 4c", "7c 8c 9c"], "Kh", "2d 9d", rolls=(6, 6), twelve_includes_jack=True)
    state.apply(1, ROLL)
    assert state.legal_actions(1) == [Ask(Rank.JACK), Ask(Rank.QUEEN), Ask(Rank.KING), PASS]


def test_without_the_variant_a_twelve_never_finds_a_jack() -> None:
    state = game(["2c 3c 4c", "7c 8c 9c"], "Kh", "Jd 9d", rolls=(6, 6))
    assert state.apply(1, ROLL)[-1] == NotInStock(1, (12,))


def test_dice_match_ends_turn_variant_ends_the_turn_after_a_rolled_match() -> None:
    state = game(["2c 3c 4c", "5c 7c 8c"], "Kh", "2d 7h 9d", rolls=(5, 2), dice_match_ends_turn=True)
    events = state.apply(1, ROLL)
    assert events[-2:] == [Matched(1, pair("7c 7h")), TurnPasses(0)]


def test_dice_match_ends_turn_variant_ends_the_turn_after_an_asked_match() -> None:
    state = game(["7c 2c 3c", "5c 7h 8c"], "Kh", "2d 9d", rolls=(3, 4), dice_match_ends_turn=True)
    state.apply(1, ROLL)
    events = state.apply(1, Ask(Rank.SEVEN))
    assert events[-2:] == [Matched(1, pair("7h 7c")), TurnPasses(0)]


def test_dice_match_ends_turn_variant_leaves_draw_and_discard_matches_moving_again() -> None:
    state = game(["2c 3c 4c", "5c 6c Kc"], "Kh", "6d Qs Js", dice_match_ends_turn=True)
    state.apply(1, TAKE)
    state.apply(1, DRAW)
    assert state.to_act() == {1}


def test_named_opponent_variant_asks_only_the_named_seat() -> None:
    hands = ["7c 2c 3c", "5c 6c 8c", "9h 10h Jh"]
    state = game(hands, "Kh", "2d 9d", rolls=(3, 4), ask=AskRule.NAMED)
    state.apply(1, ROLL)
    assert state.legal_actions(1) == [Ask(Rank.SEVEN, 2), Ask(Rank.SEVEN, 0), PASS]
    events = state.apply(1, Ask(Rank.SEVEN, 2))
    assert events == [Asked(1, Rank.SEVEN, 2), NoneGiven(Rank.SEVEN), TurnPasses(2)]
    assert state.view(0).hands[0] == cards("2c 3c 7c")


def test_named_opponent_variant_takes_the_card_from_the_named_seat() -> None:
    hands = ["7c 2c 3c", "5c 6c 8c", "7h 10h Jh"]
    state = game(hands, "Kh", "2d 9d", rolls=(3, 4), ask=AskRule.NAMED)
    state.apply(1, ROLL)
    events = state.apply(1, Ask(Rank.SEVEN, 0))
    assert events[:2] == [Asked(1, Rank.SEVEN, 0), Gave(0, 1, Rank.SEVEN)]


def test_named_opponent_variant_refuses_an_ask_without_a_seat_or_of_oneself() -> None:
    state = game(["7c 2c 3c", "5c 6c 8c"], "Kh", "2d 9d", rolls=(3, 4), ask=AskRule.NAMED)
    state.apply(1, ROLL)
    refuse(state, 1, Ask(Rank.SEVEN), "this game asks a named opponent")
    refuse(state, 1, Ask(Rank.SEVEN, 1), "seat 1 is not an opponent of seat 1")


def test_default_ask_refuses_a_named_seat() -> None:
    state = game(["7c 2c 3c", "5c 6c 8c"], "Kh", "2d 9d", rolls=(3, 4))
    state.apply(1, ROLL)
    refuse(state, 1, Ask(Rank.SEVEN, 0), "asks the first holder clockwise: name no seat")


def test_reshuffle_variant_shuffles_the_stock_after_a_search_took_a_card() -> None:
    stock = "2d 3d 4d 5d 6d 7h 9d 10d Jd Qd Kd"
    state = game(["2c 3c 4c", "5c 6c 8c"], "Kh", stock, rolls=(3, 4), reshuffle_after_search=True)
    events = state.apply(1, ROLL)
    assert events[:3] == [Rolled(1, (3, 4), (7,)), TookFromStock(1), StockShuffled()]
    rest = stock_top_first(state)
    assert sorted(rest) == sorted(cards("2d 3d 4d 5d 6d 9d 10d Jd Qd Kd"))
    assert rest != cards("2d 3d 4d 5d 6d 9d 10d Jd Qd Kd")


def test_reshuffle_variant_leaves_the_stock_alone_when_the_search_finds_nothing() -> None:
    state = game(["2c 3c 4c", "5c 6c 8c"], "Kh", "2d 3d 4d", rolls=(6, 6), reshuffle_after_search=True)
    events = state.apply(1, ROLL)
    assert StockShuffled() not in events
    assert stock_top_first(state) == cards("2d 3d 4d")


def test_reshuffle_variant_has_nothing_to_shuffle_when_the_search_took_the_last_card() -> None:
    state = game(["2c 3c 4c", "5c 6c 8c"], "Kh", "8d", rolls=(4, 4), reshuffle_after_search=True)
    events = state.apply(1, ROLL)
    assert StockShuffled() not in events
    assert events[-1] == GameOver((0, 1), (1,))


# --- what each seat sees ---------------------------------------------------------------------


def test_a_seat_sees_its_own_hand_and_only_counts_of_hidden_cards() -> None:
    state = game(["2c 3c 4c", "5c 6c 8c 9c"], "Kh", "2d 3d 4d")
    view = state.view(0)
    assert view.seat == 0
    assert view.hands == (cards("2c 3c 4c"), None)
    assert view.hand_sizes == (3, 4)
    assert (view.stock, view.stock_size) == (None, 3)


def test_the_public_view_hides_every_hand_and_the_full_view_shows_all() -> None:
    state = game(["2c 3c 4c", "5c 6c 8c 9c"], "Kh", "2d 3d 4d")
    assert state.public_view().hands == (None, None)
    assert state.public_view().seat is None
    full = state.full_view()
    assert full.hands == (cards("2c 3c 4c"), cards("5c 6c 8c 9c"))
    assert full.stock == cards("4d 3d 2d")  # top card last


def test_dice_rolls_are_public_events_in_every_view() -> None:
    state = game(["2c 3c 4c", "5c 6c 8c"], "Kh", "2d 9d", rolls=(3, 4))
    state.apply(1, ROLL)
    assert Rolled(1, (3, 4), (7,)) in state.view(0).history
    assert Rolled(1, (3, 4), (7,)) in state.public_view().history


def test_events_read_as_sentences() -> None:
    assert str(Rolled(1, (3, 4), (7,))) == "seat 1 rolls 3 and 4: looking for 7"
    assert str(Gave(3, 1, Rank.QUEEN)) == "seat 3 gives seat 1 a Q"
    assert str(Dealt(2, (1, 4), 4)) == "seat 2 rolls 1, 4 and is dealt 4 cards"


# --- action text and options ----------------------------------------------------------------


@pytest.mark.parametrize(
    "action", [TAKE, DRAW, ROLL, PASS, Ask(Rank.QUEEN), Ask(Rank.TEN, 2), Ask(Rank.ACE, 0)]
)
def test_every_action_has_one_text_form_that_reads_back(action: Any) -> None:
    assert parse_action(str(action)) == action


def test_action_text_forms() -> None:
    assert [str(a) for a in (TAKE, DRAW, ROLL, PASS)] == ["take", "draw", "roll", "pass"]
    assert str(Ask(Rank.QUEEN)) == "ask Q"
    assert str(Ask(Rank.QUEEN, 2)) == "ask Q from 2"


@pytest.mark.parametrize("text", ["", "fish", "ask", "ask Z", "ask Q of 2", "ask Q from two", "draw 2"])
def test_malformed_action_text_is_refused(text: str) -> None:
    with pytest.raises(MalformedInput):
        parse_action(text)


@pytest.mark.parametrize("players", [1, 7])
def test_two_to_six_players(players: int) -> None:
    with pytest.raises(InvalidOptions, match="2 to 6 players"):
        PlatinumFishOptions(players=players)


def test_options_from_plain_values_name_every_variant() -> None:
    spec = GAMES["platinum_fish"]
    plain = {"players": 3, "targets": "faces_and_sum", "ask": "named", "short_roll": "take_three"}
    options = spec.options(plain)
    assert options == PlatinumFishOptions(
        players=3, targets=Targets.FACES_AND_SUM, ask=AskRule.NAMED, short_roll=ShortRoll.TAKE_THREE
    )
    assert spec.options(options_to_dict(options)) == options
    with pytest.raises(InvalidOptions, match="not one of sum, faces_and_sum"):
        spec.options({"targets": "product"})


def test_a_new_game_deals_the_104_cards_of_two_decks() -> None:
    state = new_game(PlatinumFishOptions(players=6), Rng(3))
    full = state.full_view()
    hands = [c for hand in full.hands for c in hand or ()]
    laid = [c for pairs in full.matches for p in pairs for c in p]
    assert len(hands) + len(laid) + len(full.discard) + full.stock_size == 104
    assert all(3 <= e.cards <= 6 for e in state.opening if isinstance(e, Dealt))
