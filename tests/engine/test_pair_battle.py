"""Pair Battle: one hand-built scenario per rule and variant (rules-notes section 2)."""

from __future__ import annotations

import copy
import re
from collections import Counter
from typing import Any

import pytest

from croupier.engine.cards import STANDARD_DECK, Card, Rank, Suit, parse_cards
from croupier.engine.core import IllegalAction, InvalidOptions, MalformedInput, options_from_dict
from croupier.engine.games.pair_battle import (
    Countdown,
    Ended,
    EndReason,
    Finished,
    Laid,
    Options,
    PairBattleState,
    Pass,
    Passed,
    Penalized,
    Phase,
    Play,
    Submitted,
    Timing,
    card_points,
    deal_from,
    new_game,
    parse_action,
)
from croupier.engine.rng import Rng


def cards(text: str) -> list[Card]:
    return list(parse_cards(text))


def play(text: str) -> Play:
    return Play(parse_cards(text))


def deal(*hands: str, reserves: tuple[str, ...] = (), seed: int = 0, **options: Any) -> PairBattleState:
    """A stacked deal; the countdown is zero unless a test asks for one."""
    options.setdefault("countdown_tick", 0.0)
    chosen = Options(players=len(hands), **options)
    stacks = reserves or ("",) * len(hands)
    return deal_from(chosen, [cards(h) for h in hands], [cards(r) for r in stacks], rng=Rng(seed))


# --- the deal ------------------------------------------------------------------------


@pytest.mark.parametrize(("players", "hand", "reserve", "out"), [(2, 9, 17, 0), (3, 8, 9, 1), (4, 7, 6, 0)])
def test_deal_gives_9_8_7_cards_and_equal_reserves_with_the_odd_card_out(
    players: int, hand: int, reserve: int, out: int
) -> None:
    full = new_game(Options(players=players), Rng(3)).full_view()
    assert full.hand_sizes == (hand,) * players
    assert full.reserve_sizes == (reserve,) * players
    assert full.out_of_play is not None and len(full.out_of_play) == out
    assert full.reserves is not None
    dealt = [c for zone in (*full.hands, *full.reserves, full.out_of_play) if zone for c in zone]
    assert Counter(dealt) == Counter(STANDARD_DECK)


# --- the countdown -------------------------------------------------------------------


def test_countdown_calls_three_two_one_go_one_tick_apart() -> None:
    state = deal("7h 7d", "8h 8d", countdown_tick=1.0)
    assert state.view(0).phase is Phase.COUNTDOWN and state.view(0).go_at == 4.0
    assert state.to_act() == frozenset() and state.legal_actions(0) == []
    timeline = [  # (now, wake_at before advancing, events)
        (0.5, 1.0, []),
        (1.0, 1.0, [Countdown("3")]),
        (1.5, 2.0, []),
        (2.0, 2.0, [Countdown("2")]),
        (3.0, 3.0, [Countdown("1")]),
        (4.0, 4.0, [Countdown("go")]),
    ]
    for now, wake, events in timeline:
        assert state.wake_at() == wake
        assert state.advance(now) == events
    assert state.view(0).phase is Phase.PLAY and state.to_act() == {0, 1}
    assert state.wake_at() is None


def test_late_advance_makes_every_countdown_call_it_missed() -> None:
    state = deal("7h 7d", "8h 8d", countdown_tick=1.0)
    assert state.advance(9.0) == [Countdown("3"), Countdown("2"), Countdown("1"), Countdown("go")]


def test_recount_after_a_restart_calls_the_countdown_again_before_anyone_plays() -> None:
    state = deal("7h 7d 2c", "8h 8d 3c", countdown_tick=1.0)
    state.advance(4.0)
    assert state.apply(0, play("7h 7d"), 6.0)
    assert state.recount(10.0) == []
    assert state.view(0).phase is Phase.COUNTDOWN and state.view(0).go_at == 14.0
    assert state.to_act() == frozenset() and state.legal_actions(1) == []
    with pytest.raises(IllegalAction, match="too early"):
        state.apply(1, play("8h 8d"), 12.0)
    assert state.wake_at() == 11.0
    assert state.advance(14.0) == [Countdown("3"), Countdown("2"), Countdown("1"), Countdown("go")]
    assert state.to_act() == {1}  # seat 0's single 2c waits for two more 2s; seat 1 has a doublet


def test_recount_gives_an_open_finish_window_back_after_the_new_go() -> None:
    state = deal("7h 7d", "8h 8d 3c", countdown_tick=1.0, window=0.5)
    state.advance(4.0)
    state.apply(0, play("7h 7d"), 5.0)  # seat 0 has finished: the window closes at 5.5
    state.recount(5.2)
    assert state.wake_at() == 6.2  # the first call of the new countdown
    state.advance(9.2)  # go
    assert state.wake_at() == pytest.approx(9.5) and not state.is_over()


def test_a_lockstep_game_is_not_real_time_and_recount_changes_nothing() -> None:
    state = deal("7h 7d", "8h 8d", timing=Timing.LOCKSTEP)
    assert not state.realtime and deal("7h 7d", "8h 8d").realtime
    assert state.recount(3.0) == [] and state.to_act() == {0, 1}


def test_zero_countdown_tick_starts_play_at_once() -> None:
    state = deal("7h 7d 2c", "8h 8d")
    assert state.view(0).phase is Phase.PLAY and state.to_act() == {0, 1} and state.wake_at() is None
    assert state.apply(0, play("7h 7d"), 0.0) == [Laid(0, parse_cards("7d 7h"), 0)]


def test_play_before_go_is_refused_and_costs_10_points() -> None:
    state = deal("7h 7d", "8h 8d", countdown_tick=1.0)
    before = copy.deepcopy(state)
    too_early = re.escape("too early: play starts at go, 4.000 s; it is 3.900 s")
    with pytest.raises(IllegalAction, match=too_early) as refusal:
        state.apply(0, play("7h 7d"), 3.9)
    assert state == before
    assert state.penalize(0, str(refusal.value), 3.9) == [
        Countdown("3"),
        Countdown("2"),
        Countdown("1"),
        Penalized(0, 10),
    ]
    assert state.view(1).scores == (-10, 0) and state.view(1).penalties == (1, 0)


def test_play_at_go_is_accepted_even_before_the_referee_advanced_time() -> None:
    state = deal("7h 7d", "8h 8d", countdown_tick=1.0)
    events = state.apply(0, play("7h 7d"), 4.0)
    assert events[:4] == [Countdown("3"), Countdown("2"), Countdown("1"), Countdown("go")]
    assert events[4:] == [Laid(0, parse_cards("7d 7h"), 0), Finished(0)]


# --- plays -----------------------------------------------------------------------------


def test_doublet_is_laid_face_up_and_refilled_from_the_reserve() -> None:
    state = deal("7h 7d 2c", "8h 8d", reserves=("Kh Ks 3c", "9c"))
    assert state.apply(0, play("7h 7d")) == [Laid(0, parse_cards("7d 7h"), 2)]
    view = state.view(0)
    assert view.hands[0] == tuple(cards("2c Kh Ks"))
    assert view.laid == (tuple(cards("7d 7h")), ())
    assert view.reserve_sizes == (1, 1) and view.scores == (10, 0)


def test_triplet_is_laid_and_refilled_with_three_cards() -> None:
    state = deal("9h 9d 9s 2c", "8h 8d", reserves=("Ah Ad As 3c", "9c"))
    assert state.apply(0, play("9s 9h 9d")) == [Laid(0, parse_cards("9d 9h 9s"), 3)]
    assert state.view(0).hands[0] == tuple(cards("2c Ad Ah As"))
    assert state.view(0).scores == (15, 0)


def test_refill_draws_only_what_is_left_when_the_reserve_runs_short() -> None:
    state = deal("7h 7d 2c", "8h 8d", reserves=("Kh", ""))
    assert state.apply(0, play("7h 7d")) == [Laid(0, parse_cards("7d 7h"), 1)]
    assert state.view(0).hands[0] == tuple(cards("2c Kh")) and state.view(0).reserve_sizes == (0, 0)


def test_single_is_legal_only_once_three_of_its_rank_are_laid_by_anyone() -> None:
    state = deal("7h 7d 7c 2c 2d", "7s 9h 9d")
    assert state.legal_actions(1) == [play("9h 9d")]
    with pytest.raises(IllegalAction, match="a single 7s needs three 7s laid first; 0 are laid"):
        state.apply(1, play("7s"))
    state.apply(0, play("7h 7d 7c"))
    assert state.legal_actions(1) == [play("7s"), play("9h 9d")]
    assert state.apply(1, play("7s")) == [Laid(1, (Card(Rank.SEVEN, Suit.SPADES),), 0)]
    assert state.view(1).scores == (15, 5)


def test_last_two_of_a_rank_go_down_as_a_doublet_not_as_singles() -> None:
    state = deal("7h 7d 2c", "7c 7s 3d")
    state.apply(0, play("7h 7d"))
    assert state.legal_actions(1) == [play("7c 7s")]
    with pytest.raises(IllegalAction, match="a single 7c needs three 7s laid first; 2 are laid"):
        state.apply(1, play("7c"))


def test_every_doublet_and_triplet_of_a_four_is_offered() -> None:
    state = deal("7h 7d 7c 7s", "8h 8d")
    offered = state.legal_actions(0)
    assert len(offered) == 6 + 4 and all(isinstance(a, Play) and len(a.cards) in (2, 3) for a in offered)


def test_no_turns_a_player_plays_again_at_once_while_others_wait() -> None:
    state = deal("7h 7d 5c 5d", "8h 8d")
    state.apply(0, play("7h 7d"), 0.1)
    state.apply(0, play("5c 5d"), 0.2)
    assert state.view(1).laid[0] == tuple(cards("7d 7h 5c 5d"))


def test_to_act_lists_every_player_with_a_legal_play_and_no_one_else() -> None:
    state = deal("7h 2c", "Kh Kd 3c", "Qs Qh", reserves=("7d", "", ""))
    assert state.to_act() == {1, 2}
    assert state.legal_actions(0) == []


def test_reserve_cards_come_only_by_playing_so_a_stuck_player_waits() -> None:
    state = deal("7h 2c", "Kh Kd 3c", reserves=("7d", ""))  # the 7d pairs the 7h, but stays in the reserve
    assert state.to_act() == {1}
    with pytest.raises(IllegalAction, match="you do not hold 7d"):
        state.apply(0, play("7h 7d"))


# --- refused plays -------------------------------------------------------------------------

REFUSALS = [
    pytest.param(play("7h 7c"), "you do not hold 7c", id="cards-not-held"),
    pytest.param(play("7h 5c"), "5c 7h is not a set: a doublet or triplet is of one rank", id="mixed-ranks"),
    pytest.param(play("7h 7d 5c 5d"), "4 cards is not one set", id="two-sets-at-once"),
    pytest.param(play("5c"), "a single 5c needs three 5s laid first; 0 are laid", id="lone-single"),
    pytest.param(Play((Card(Rank.FIVE, Suit.CLUBS),) * 2), "5c 5c names a card twice", id="same-card-twice"),
    pytest.param(Play(()), "0 cards is not one set", id="empty-play"),
    pytest.param(Pass(), "pass is only for timing=lockstep", id="pass-in-real-time"),
]


@pytest.mark.parametrize(("action", "reason"), REFUSALS)
def test_refused_play_changes_nothing_and_the_penalty_costs_10_points(
    action: Play | Pass, reason: str
) -> None:
    state = deal("7h 7d 5c 5d", "8h 8d")
    before = copy.deepcopy(state)
    with pytest.raises(IllegalAction, match=reason):
        state.apply(0, action, 1.0)
    assert state == before
    assert state.penalize(0, reason, 1.0) == [Penalized(0, 10)]
    assert state.view(0).scores == (-10, 0) and state.view(0).hands[0] == tuple(cards("5c 5d 7d 7h"))


def test_no_penalty_variant_refuses_without_costing_points() -> None:
    state = deal("7h 7d 5c 5d", "8h 8d", penalty=False)
    with pytest.raises(IllegalAction, match="you do not hold 7c"):
        state.apply(0, play("7h 7c"))
    assert state.penalize(0, "you do not hold 7c") == []
    assert state.view(0).scores == (0, 0) and state.view(0).penalties == (0, 0)


def test_undecodable_play_is_malformed_and_the_referee_penalizes_it() -> None:
    state = deal("7h 7d 5c 5d", "8h 8d")
    with pytest.raises(MalformedInput, match="unknown suit"):
        parse_action("7x 7d")
    assert state.penalize(1, "unknown suit in '7x'", 0.5) == [Penalized(1, 10)]


def test_penalty_after_the_end_costs_nothing() -> None:
    state = deal("5h 5d", "2c 3d", window=0.0)
    state.apply(0, play("5h 5d"))
    assert state.is_over()
    with pytest.raises(IllegalAction, match="the game is over"):
        state.apply(1, play("2c 3d"))
    assert state.penalize(1, "the game is over") == [] and state.view(1).scores == (20, 0)


# --- the end ---------------------------------------------------------------------------------


def test_first_finisher_ends_the_game_when_the_window_closes_and_ranks_first() -> None:
    state = deal("5h 5d", "As Ah Kc Kd 3c")
    state.apply(1, play("As Ah"), 0.1)
    assert state.apply(0, play("5h 5d"), 0.5) == [Laid(0, parse_cards("5d 5h"), 0), Finished(0)]
    assert not state.is_over() and state.wake_at() == pytest.approx(0.55)
    assert state.to_act() == {1}
    assert state.advance(0.54) == [] and state.advance(0.55) == [], "still open at its last instant"
    assert state.advance(0.56) == [Ended(EndReason.FINISHED, (0,), (20, 30))]
    outcome = state.outcome()
    assert outcome.scores == (20, 30) and outcome.places == (1, 2) and outcome.winners == {0}


def test_player_still_playing_inside_the_window_scores_the_cards_laid() -> None:
    state = deal("5h 5d", "As Ah Kc Kd 3c")
    state.apply(0, play("5h 5d"), 0.5)
    state.apply(1, play("Kc Kd"), 0.52)
    state.advance(0.6)
    assert state.outcome().scores == (20, 20) and state.outcome().places == (1, 2)


def test_second_finisher_inside_the_window_also_finishes_and_points_decide() -> None:
    state = deal("5h 5d", "As Ah Kc Kd")
    state.apply(1, play("As Ah"), 0.1)
    state.apply(0, play("5h 5d"), 0.5)
    events = state.apply(1, play("Kc Kd"), 0.54)
    assert events == [
        Laid(1, parse_cards("Kc Kd"), 0),
        Finished(1),
        Ended(EndReason.FINISHED, (0, 1), (20, 60)),
    ]
    assert state.outcome().places == (2, 1) and state.outcome().winners == {1}


def test_play_after_the_window_closed_is_refused_even_before_advance() -> None:
    state = deal("5h 5d", "As Ah Kc Kd 3c")
    state.apply(0, play("5h 5d"), 0.5)
    before = copy.deepcopy(state)
    closed = re.escape("the game is over: the finish window closed at 0.550 s")
    with pytest.raises(IllegalAction, match=closed):
        state.apply(1, play("As Ah"), 0.56)
    assert state == before


def test_finished_player_cannot_play_again() -> None:
    state = deal("5h 5d", "As Ah Kc Kd 3c")
    state.apply(0, play("5h 5d"), 0.5)
    with pytest.raises(IllegalAction, match="you have finished"):
        state.apply(0, play("5h 5d"), 0.51)


@pytest.mark.parametrize(("window", "second_finish"), [(0.05, 5.05), (0.0, 5.0)])
def test_window_is_closed_at_both_ends_so_a_finish_at_its_last_instant_counts(
    window: float, second_finish: float
) -> None:
    state = deal("2c 2d", "Ah As", window=window)
    assert state.apply(0, play("2c 2d"), 5.0) == [Laid(0, parse_cards("2c 2d"), 0), Finished(0)]
    assert not state.is_over() and state.to_act() == {1}
    assert state.view(1).window_closes_at == second_finish
    events = state.apply(1, play("Ah As"), second_finish)
    assert events[-1] == Ended(EndReason.FINISHED, (0, 1), (20, 40))
    assert state.outcome().places == (2, 1) and state.outcome().winners == {1}


def test_zero_window_ends_the_game_as_soon_as_time_passes_the_first_finish() -> None:
    state = deal("5h 5d", "As Ah Kc Kd 3c", window=0.0)
    assert state.apply(0, play("5h 5d"), 0.5)[-1] == Finished(0)
    wake = state.wake_at()
    assert wake is not None and 0.5 < wake < 0.5 + 1e-9, "the first instant past the finish"
    with pytest.raises(IllegalAction, match=re.escape("the finish window closed at 0.500 s")):
        state.apply(1, play("As Ah"), 0.501)
    assert state.advance(0.5) == []
    assert state.advance(wake) == [Ended(EndReason.FINISHED, (0,), (20, 0))]
    assert state.is_over() and state.to_act() == frozenset() and state.wake_at() is None


def test_game_ends_in_deadlock_when_nobody_has_a_legal_play() -> None:
    state = deal("5h 5d 9c", "2c 3d")
    events = state.apply(0, play("5h 5d"))
    assert events == [Laid(0, parse_cards("5d 5h"), 0), Ended(EndReason.DEADLOCK, (), (10, 0))]
    assert state.view(1).phase is Phase.OVER and state.view(1).end is EndReason.DEADLOCK
    assert state.outcome().places == (1, 2)


def test_deal_nobody_can_play_still_counts_down_penalizes_early_plays_and_ends_at_go() -> None:
    state = deal("2c 3d", "4h 5s", countdown_tick=1.0)
    assert state.view(0).phase is Phase.COUNTDOWN and state.wake_at() == 1.0
    with pytest.raises(IllegalAction, match="too early") as refusal:
        state.apply(1, play("4h"), 2.5)
    assert state.penalize(1, str(refusal.value), 2.5)[-1] == Penalized(1, 10)
    assert state.advance(3.9) == [Countdown("1")] and not state.is_over()
    assert state.advance(4.0) == [Countdown("go"), Ended(EndReason.DEADLOCK, (), (0, -10))]
    assert state.outcome().places == (1, 2)


# --- scoring and ranking ----------------------------------------------------------------------


def test_cards_score_ace_15_ten_to_king_10_two_to_nine_5() -> None:
    points = {rank: card_points(Card(rank, Suit.HEARTS)) for rank in Rank}
    assert points == {rank: 15 if rank is Rank.ACE else 10 if rank >= Rank.TEN else 5 for rank in Rank}
    assert points[Rank.FOUR] == 5  # the seed's list omits the 4: a typo


def test_laying_all_four_of_a_rank_scores_5_more() -> None:
    state = deal("7h 7d 7c 7s 2c 2d", "8h 8d")
    state.apply(0, play("7h 7d"))
    assert state.view(0).scores == (10, 0)
    state.apply(0, play("7c 7s"))
    assert state.view(0).scores == (25, 0)


def test_four_of_a_rank_split_between_players_earns_no_bonus() -> None:
    state = deal("7h 7d 7c 2c 2d", "7s 9h 9d")
    state.apply(0, play("7h 7d 7c"))
    state.apply(1, play("7s"))
    assert state.view(0).scores == (15, 5)


def test_equal_points_share_a_place() -> None:
    state = deal("5h 5d 9c", "6h 6d 2c", "Ah Ad Ac Ks Kh 3s")
    state.apply(2, play("Ah Ad Ac"))
    state.apply(0, play("5h 5d"))
    state.apply(1, play("6h 6d"))
    state.apply(2, play("Ks Kh"))
    assert state.is_over() and state.view(0).end is EndReason.DEADLOCK
    assert state.outcome().scores == (10, 10, 65)
    assert state.outcome().places == (2, 2, 1)


# --- lockstep ----------------------------------------------------------------------------------


def test_lockstep_starts_at_once_and_asks_every_player_each_tick() -> None:
    state = deal("7h 7d 2c", "8h 8d 3c", timing=Timing.LOCKSTEP, countdown_tick=1.0)
    assert state.to_act() == {0, 1} and state.wake_at() is None
    assert state.legal_actions(0) == [play("7h 7d"), Pass()]
    view = state.view(0)
    assert view.phase is Phase.PLAY and view.tick == 1 and view.go_at is None


def test_lockstep_answers_stay_hidden_until_the_tick_resolves() -> None:
    state = deal("7h 7d 2c", "8h 8d 3c", timing=Timing.LOCKSTEP)
    assert state.apply(0, play("7h 7d")) == [Submitted(0, 1)]
    assert state.to_act() == {1} and state.legal_actions(0) == []
    theirs, mine, public = state.view(1), state.view(0), state.public_view()
    assert theirs.submitted == (True, False) and theirs.submissions == (None, None)
    assert public.submissions == (None, None) and theirs.laid == ((), ())
    assert mine.submissions == (play("7h 7d"), None) and mine.hands[0] == tuple(cards("2c 7d 7h"))
    events = state.apply(1, Pass())
    assert events[0] == Submitted(1, 1) and Laid(0, parse_cards("7d 7h"), 0) in events and Passed(1) in events
    assert state.view(1).tick == 2 and state.to_act() == {0, 1}


def test_lockstep_applies_a_ticks_answers_in_a_seeded_random_order() -> None:
    def order(seed: int) -> tuple[int, ...]:
        state = deal("7h 7d 2c", "8h 8d 3c", "9h 9d 4c", timing=Timing.LOCKSTEP, seed=seed)
        state.apply(0, play("7h 7d"))
        state.apply(1, play("8h 8d"))
        return tuple(e.seat for e in state.apply(2, play("9h 9d")) if isinstance(e, Laid))

    orders = [order(seed) for seed in range(30)]
    assert len(set(orders)) > 1 and all(sorted(o) == [0, 1, 2] for o in orders)
    assert orders == [order(seed) for seed in range(30)]


def test_lockstep_second_answer_in_a_tick_is_refused() -> None:
    state = deal("7h 7d 5c 5d", "8h 8d 3c", timing=Timing.LOCKSTEP)
    state.apply(0, play("7h 7d"))
    before = copy.deepcopy(state)
    with pytest.raises(IllegalAction, match="you have already answered tick 1"):
        state.apply(0, play("5c 5d"))
    assert state == before


def test_lockstep_refused_answer_is_penalized_and_the_seat_still_answers() -> None:
    state = deal("7h 7d 9c", "8h 8d 3c", timing=Timing.LOCKSTEP)
    with pytest.raises(IllegalAction, match="a single 9c needs three 9s"):
        state.apply(0, play("9c"))
    assert state.penalize(0, "a single 9c needs three 9s") == [Penalized(0, 10)]
    assert state.to_act() == {0, 1}


def test_lockstep_players_finishing_in_the_same_tick_all_finish() -> None:
    state = deal("5h 5d", "Ah Ad", timing=Timing.LOCKSTEP)
    state.apply(1, play("Ah Ad"))
    events = state.apply(0, play("5h 5d"))
    assert isinstance(events[-1], Ended) and events[-1].reason is EndReason.FINISHED
    assert sorted(state.view(0).finishers) == [0, 1]
    assert state.outcome().scores == (20, 40) and state.outcome().places == (2, 1)


def test_lockstep_tick_in_which_everyone_passes_ends_the_game() -> None:
    state = deal("5h 5d 9c", "6h 6d 2c", timing=Timing.LOCKSTEP)
    assert state.legal_actions(0) == [play("5h 5d"), Pass()], "both could play, and both pass"
    state.apply(0, Pass())
    assert state.apply(1, Pass())[-1] == Ended(EndReason.STANDOFF, (), (0, 0))
    assert state.outcome().winners == {0, 1}


def test_lockstep_ends_in_deadlock_when_nobody_can_play() -> None:
    state = deal("5h 5d 9c", "6h 2c", timing=Timing.LOCKSTEP)
    assert state.legal_actions(1) == [Pass()]
    state.apply(1, Pass())
    assert state.apply(0, play("5h 5d"))[-1] == Ended(EndReason.DEADLOCK, (), (10, 0))


# --- views and hidden cards --------------------------------------------------------------------


def test_a_seat_sees_its_own_hand_and_nobody_sees_a_reserve() -> None:
    state = new_game(Options(players=3), Rng(11))
    mine = state.view(0)
    assert mine.hands[0] is not None and mine.hands[1] is None and mine.hands[2] is None
    assert mine.reserves is None and mine.out_of_play is None and mine.reserve_sizes == (9, 9, 9)
    public = state.public_view()
    assert public.hands == (None, None, None) and public.reserves is None and public.out_of_play is None
    full = state.full_view()
    assert all(h is not None for h in full.hands) and full.reserves is not None
    assert full.out_of_play is not None and len(full.out_of_play) == 1


def test_resample_hidden_redeals_other_hands_all_reserves_and_the_odd_card() -> None:
    state = new_game(Options(players=3), Rng(11))
    twin = state.resample_hidden(0, Rng(2))
    assert twin.hands[0] == state.hands[0] and twin.view(0) == state.view(0)
    hidden = [*state.hands[1], *state.hands[2], *(c for r in state.reserves for c in r), *state.out_of_play]
    again = [*twin.hands[1], *twin.hands[2], *(c for r in twin.reserves for c in r), *twin.out_of_play]
    assert Counter(hidden) == Counter(again) and twin.full_view() != state.full_view()
    assert twin.reserves[0] != state.reserves[0]  # a player does not know its own reserve


def test_resample_hidden_gives_others_answers_their_new_hands_allow() -> None:
    state = new_game(Options(players=2, timing=Timing.LOCKSTEP), Rng(5))
    answer = state.legal_actions(1)[0]
    assert isinstance(answer, Play)
    state.apply(1, answer)
    for seed in range(10):
        twin = state.resample_hidden(0, Rng(seed))
        theirs = twin.submissions[1]
        assert theirs == Pass() or (isinstance(theirs, Play) and set(theirs.cards) <= set(twin.hands[1]))


# --- text forms and options ------------------------------------------------------------------


def test_action_text_forms_read_back() -> None:
    for action in (play("7h 7d"), play("Qs Qh Qc"), play("10d"), Pass()):
        assert parse_action(str(action)) == action
    assert str(play("7h 7d")) == "7d 7h" and play("7h 7d") == play("7d 7h")
    assert parse_action("PASS") == Pass()
    with pytest.raises(MalformedInput, match="not a Pair Battle action"):
        parse_action("  ")


def test_events_read_as_a_spectator_would_say_them() -> None:
    assert str(Countdown("2")) == "2..." and str(Countdown("go")) == "go!"
    assert str(Laid(1, parse_cards("7d 7h"), 2)) == "seat 1 lays a doublet 7d 7h and draws 2"
    assert str(Laid(0, parse_cards("7s"), 0)) == "seat 0 lays a single 7s and draws 0"
    assert str(Finished(2)) == "seat 2 has laid every card"
    assert str(Penalized(0, 10)) == "seat 0 loses 10 points for a refused play"
    finished = Ended(EndReason.FINISHED, (0, 2), (30, 5, 25))
    assert str(finished) == "game over (seat(s) 0, 2 finished): scores [30, 5, 25]"
    assert str(Ended(EndReason.DEADLOCK, (), (5, 5))) == "game over (nobody can play): scores [5, 5]"


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        ({"players": 5}, "played by 2 to 4 players"),
        ({"countdown_tick": -1}, "countdown_tick must be 0.0 to 60.0 seconds, not -1"),
        ({"countdown_tick": 1e300}, r"countdown_tick must be 0.0 to 60.0 seconds, not 1e\+300"),
        ({"window": float("nan")}, "window must be 0.0 to 10.0 seconds, not nan"),
        ({"timing": "turns"}, "is not one of realtime, lockstep"),
    ],
)
def test_bad_options_are_refused_with_a_reason(values: dict[str, Any], reason: str) -> None:
    with pytest.raises(InvalidOptions, match=reason):
        options_from_dict(Options, values)


def test_stacked_deal_refuses_a_card_dealt_twice_or_an_oversized_hand() -> None:
    with pytest.raises(InvalidOptions, match="dealt twice"):
        deal("7h 7d", "7h 8d")
    with pytest.raises(InvalidOptions, match="at most 9 cards"):
        deal("2c 3c 4c 5c 6c 7c 8c 9c 10c Jc", "8h 8d")
