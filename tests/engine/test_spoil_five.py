"""Spoil Five, one hand-built scenario per rule and variant (rules-notes section 3).

Deals are stacked with ``deal_from``: hands by seat, the turn-up, the dealer.
Unless a test says otherwise: 3 players, seat 0 deals, seat 1 leads, banks of
20 with the first ante (1) paid, so banks are 19 each and the pool is 3.
"""

from __future__ import annotations

import pytest

from croupier.engine.cards import STANDARD_DECK, Card, Suit, parse_cards
from croupier.engine.core import Event, IllegalAction, InvalidOptions, MalformedInput, options_from_dict
from croupier.engine.games.spoil_five import (
    SPEC,
    Announce,
    Announced,
    AntesPaid,
    Cut,
    DealerChosen,
    DealSpoiled,
    DealStarted,
    Decline,
    Declined,
    Jinx,
    Jinxed,
    MatchOver,
    Options,
    Phase,
    Play,
    Played,
    PoolShared,
    PoolWon,
    Ranking,
    Result,
    Rob,
    Robbed,
    SpoilFiveState,
    TakePool,
    TrickWon,
    deal_from,
    new_game,
    parse_action,
    power,
    suit_of,
)
from croupier.engine.rng import Rng

C = Card.parse
THREE = Options(players=3)


def act(state: SpoilFiveState, *texts: str) -> list[Event]:
    """Apply actions in their text form, each by the seat to act."""
    events: list[Event] = []
    for text in texts:
        (seat,) = state.to_act()
        events += state.apply(seat, parse_action(text))
    return events


def refused(state: SpoilFiveState, seat: int, text: str) -> str:
    """Apply an action that must be refused; check nothing changed; return the reason."""
    before = state.copy()
    with pytest.raises(IllegalAction) as refusal:
        state.apply(seat, parse_action(text))
    assert state == before
    return str(refusal.value)


def plays(state: SpoilFiveState, seat: int) -> list[str]:
    return [str(a) for a in state.legal_actions(seat) if isinstance(a, Play)]


# --- options ---------------------------------------------------------------------------


def test_options_default_to_bank_20_ante_1_plain_ranking_and_each_player_dealing_twice() -> None:
    options = SPEC.options()
    assert (options.bank, options.ante, options.ranking) == (20, 1, Ranking.PLAIN)
    assert options.total_deals == 2 * options.players
    assert Options(players=7).total_deals == 14
    assert Options(players=7, deals=3).total_deals == 3


@pytest.mark.parametrize(
    "values",
    [{"players": 1}, {"players": 11}, {"ante": 0}, {"bank": 2, "ante": 3}, {"deals": 0}, {"ranking": "odd"}],
)
def test_options_out_of_range_are_refused(values: dict[str, object]) -> None:
    with pytest.raises(InvalidOptions):
        options_from_dict(Options, values)


# --- the cut, the antes, the deal -------------------------------------------------------


def test_lowest_cut_card_deals_first_and_ties_cut_again() -> None:
    ties = 0
    for seed in range(60):
        state = new_game(Options(players=10), Rng(seed))
        cuts = [e for e in state.opening if isinstance(e, Cut)]
        chosen = [e for e in state.opening if isinstance(e, DealerChosen)]
        assert chosen == [DealerChosen(state.dealer)]
        contenders, start = list(range(10)), 0
        while True:
            round_ = cuts[start : start + len(contenders)]
            assert [c.seat for c in round_] == contenders, "every contender cuts, in seat order"
            lowest = min(c.card.rank for c in round_)
            contenders = [c.seat for c in round_ if c.card.rank is lowest]
            start += len(round_)
            if len(contenders) == 1:
                break
            ties += 1
        assert start == len(cuts) and contenders == [state.dealer]
    assert ties, "no seed produced a tie: the recut was not exercised"


def test_every_player_antes_before_the_first_deal() -> None:
    state = new_game(Options(players=4, bank=10, ante=2), Rng(3))
    assert AntesPaid((0, 1, 2, 3), 2, 8) in state.opening
    assert state.banks == [8, 8, 8, 8] and state.pool == 8


def test_deal_gives_two_cards_then_three_from_the_dealers_left_and_turns_up_the_next() -> None:
    state = SpoilFiveState(THREE, Rng(0), banks=[20, 20, 20], dealer=1)
    events = state.start_deal(STANDARD_DECK)
    deck = STANDARD_DECK
    assert state.hands[2] == [*deck[0:2], *deck[6:9]]  # the dealer's left is served first
    assert state.hands[0] == [*deck[2:4], *deck[9:12]]
    assert state.hands[1] == [*deck[4:6], *deck[12:15]]
    assert state.turn_up == deck[15] and state.stock == list(deck[16:])
    assert events == [DealStarted(1, 1, deck[15])]


def test_ten_players_are_dealt_five_each_with_one_card_left_under_the_turn_up() -> None:
    state = new_game(Options(players=10), Rng(5))
    assert [len(h) for h in state.hands] == [5] * 10
    assert len(state.stock) == 1 and state.view(0).stock_size == 1


def test_the_turn_up_names_trumps_and_the_dealers_left_leads() -> None:
    state = deal_from(THREE, ["2s 3s 4s 5s 6s", "7d 8d 9d 10d Jd", "2c 3c 4c 5c 6c"], "9h", dealer=2)
    view = state.view(0)
    assert view.trumps is Suit.HEARTS and view.turn_up == C("9h")
    assert state.to_act() == {0} and view.phase is Phase.PLAY


# --- robbing ----------------------------------------------------------------------------

ACE_TURNED = ["2s 3s 4s 5s 6s", "7d 8d 9d 10d Jd", "2c 3c 4c 5c 6c"]


def test_a_turned_up_ace_lets_the_dealer_rob_or_decline_before_the_first_lead() -> None:
    state = deal_from(THREE, ACE_TURNED, "Ah")
    assert state.to_act() == {0} and state.view(1).phase is Phase.ROB_TURN_UP
    legal = [str(a) for a in state.legal_actions(0)]
    assert legal == ["decline", "rob 2s", "rob 3s", "rob 4s", "rob 5s", "rob 6s"]
    assert "not your turn" in refused(state, 1, "7d")
    assert "first decide" in refused(state, 0, "2s")


def test_the_dealer_robs_a_turned_up_ace_by_discarding_face_down() -> None:
    state = deal_from(THREE, ACE_TURNED, "Ah")
    events = act(state, "rob 2s")
    assert events == [Robbed(0, C("Ah"))] and "2s" not in str(events[0])
    assert state.hands[0] == list(parse_cards("Ah 3s 4s 5s 6s")), "hands are kept in deck order: c, d, h, s"
    assert state.to_act() == {1}
    assert state.view(0).discard == C("2s")
    assert state.view(1).discard is None and state.public_view().discard is None
    assert state.view(2).robbed_by == 0 and state.view(2).ace_announced_by == 0


def test_the_dealer_may_decline_a_turned_up_ace_and_nobody_robs_it_later() -> None:
    state = deal_from(THREE, ACE_TURNED, "Ah")
    assert act(state, "decline") == [Declined(0, C("Ah"))]
    assert state.to_act() == {1} and state.view(1).robbed_by is None
    assert "only the holder of the trump Ace" in refused(state, 1, "rob 7d")
    assert "nothing to decline" in refused(state, 1, "decline")


HOLDER_LEADS = ["2s 3s 4s 5s 6s", "Ah 2c 3c 4c 5c", "2d 3d 4d 5d 6d"]


def test_the_trump_ace_holder_may_rob_the_turn_up_at_their_first_turn_before_playing() -> None:
    state = deal_from(THREE, HOLDER_LEADS, "7h")
    assert [str(a) for a in state.legal_actions(1)] == [
        *("2c", "3c", "4c", "5c", "Ah"),
        *("announce", "rob 2c", "rob 3c", "rob 4c", "rob 5c", "rob Ah"),
    ]
    assert act(state, "rob 2c") == [Robbed(1, C("7h"))]
    assert state.to_act() == {1}, "robbing comes before the play"
    assert state.hands[1] == list(parse_cards("3c 4c 5c 7h Ah"))
    assert [str(a) for a in state.legal_actions(1)] == ["3c", "4c", "5c", "7h", "Ah"]
    assert all(state.view(s).ace_announced_by == 1 for s in range(3)), "robbing announces the Ace"


def test_the_robber_may_discard_any_card_the_trump_ace_itself_included() -> None:
    state = deal_from(Options(players=2), ["Ah 2c 3c 4c 5c", "6d 7d 8d 9d 10d"], "7h", dealer=1)
    assert Rob(C("Ah")) in state.legal_actions(0), "the seed: any of their cards"
    assert act(state, "rob Ah") == [Robbed(0, C("7h"))]
    assert state.hands[0] == list(parse_cards("2c 3c 4c 5c 7h")) and state.view(0).discard == C("Ah")
    assert state.view(1).ace_announced_by == 0 and state.view(1).discard is None, "robbing announces"
    assert [str(a) for a in state.legal_actions(0)] == ["2c", "3c", "4c", "5c", "7h"], "no announce, no rob"
    assert "already robbed" in refused(state, 0, "rob 2c")
    assert "only the holder of the trump Ace (Ah) may announce" in refused(state, 0, "announce")
    assert "you do not hold 9c" in refused(deal_from(THREE, HOLDER_LEADS, "7h"), 1, "rob 9c")


def test_only_the_trump_ace_holder_robs_and_only_at_their_first_turn() -> None:
    hands = ["2s 3s 4s 5s 6s", "2d 3d 4d 5d 6d", "Ah 8h 2c 3c 4c"]
    state = deal_from(THREE, hands, "7h")
    assert "only the holder of the trump Ace (Ah)" in refused(state, 1, "rob 2d")
    act(state, "2d", "8h", "2s")  # seat 2 must trump; it plays 8h and does not rob
    assert state.view(2).tricks_won == (0, 0, 1) and state.to_act() == {2}
    assert "too late" in refused(state, 2, "rob 2c")
    assert "too late" in refused(state, 2, "announce")
    assert state.legal_actions(2) == [Play(c) for c in parse_cards("2c 3c 4c Ah")]


def test_declining_to_rob_is_just_playing() -> None:
    state = deal_from(THREE, HOLDER_LEADS, "7h")
    assert act(state, "2c") == [Played(1, C("2c"))]
    assert state.robber is None and state.view(2).turn_up == C("7h")


def test_the_discarded_card_is_seen_by_its_owner_only() -> None:
    state = deal_from(THREE, HOLDER_LEADS, "7h")
    events = act(state, "rob 5c")
    assert all("5c" not in str(e) for e in events)
    assert state.view(1).discard == C("5c")
    assert state.view(0).discard is None and state.view(2).discard is None
    assert state.public_view().discard is None and state.full_view().discard == C("5c")


def test_a_redeal_of_hidden_cards_keeps_the_robbed_turn_up_with_the_robber_and_moves_the_discard() -> None:
    state = deal_from(THREE, HOLDER_LEADS, "7h")
    act(state, "rob 5c")
    discards = set()
    for seed in range(30):
        twin = state.resample_hidden(0, Rng(seed))
        assert C("7h") in twin.hands[1], "the robbed turn-up is public"
        assert C("Ah") in [*twin.hands[1], twin.discard], "the robber holds or discarded the announced Ace"
        assert twin.view(0) == state.view(0)
        discards.add(twin.discard)
    assert len(discards) > 2 and C("Ah") in discards, "the discard (maybe the Ace) is hidden from seat 0"
    assert all(state.resample_hidden(1, Rng(s)).discard == C("5c") for s in range(5)), "the robber knows it"


def test_a_redeal_puts_a_discarded_trump_ace_in_the_robbers_hand_or_discard_as_the_others_see_it() -> None:
    state = deal_from(THREE, HOLDER_LEADS, "7h")
    act(state, "rob Ah")
    where = set()
    for seed in range(30):
        twin = state.resample_hidden(2, Rng(seed))
        assert twin.view(2) == state.view(2) and twin.public_view() == state.public_view()
        assert C("7h") in twin.hands[1]
        where.add("discard" if twin.discard == C("Ah") else "hand" if C("Ah") in twin.hands[1] else "lost")
    assert where == {"discard", "hand"}, "seat 2 cannot tell a kept Ace from a discarded one"
    assert all(state.resample_hidden(1, Rng(s)).discard == C("Ah") for s in range(5)), "the robber knows it"


# --- announcing ---------------------------------------------------------------------------


def test_the_announcement_is_public_in_every_view_and_robbing_may_follow_it() -> None:
    state = deal_from(THREE, HOLDER_LEADS, "7h")
    assert act(state, "announce") == [Announced(1, C("Ah"))]
    assert all(state.view(s).ace_announced_by == 1 for s in range(3))
    assert state.public_view().ace_announced_by == 1
    assert state.to_act() == {1} and "announce" not in [str(a) for a in state.legal_actions(1)]
    assert "already announced" in refused(state, 1, "announce")
    assert act(state, "rob 2c") == [Robbed(1, C("7h"))]


def test_an_announced_ace_stays_with_its_holder_when_hidden_cards_are_redealt() -> None:
    state = deal_from(THREE, HOLDER_LEADS, "7h")
    act(state, "announce")
    assert all(C("Ah") in state.resample_hidden(2, Rng(s)).hands[1] for s in range(20))


LOW_ACE = ["9c 10c Jc 9s 10s", "Ah 2c 3d 4d 5d", "2h Kc 6s 7s 8s"]
"""Seat 1 holds the trump Ace and leads 2c; seat 2 wins with Kc and leads 2h; seat 1 must play Ah."""


@pytest.mark.parametrize("ranking", list(Ranking))
def test_an_unannounced_trump_ace_ranks_as_the_lowest_trump(ranking: Ranking) -> None:
    state = deal_from(Options(players=3, ranking=ranking), LOW_ACE, "7h")
    act(state, "2c", "Kc", "9c")
    assert state.view(1).trump_ace_low, "its holder knows"
    assert not state.view(2).trump_ace_low and not state.public_view().trump_ace_low, "nobody else does yet"
    events = act(state, "2h", "9s", "Ah")
    assert Played(1, C("Ah"), lowest_trump=True) in events
    assert TrickWon(2, 2, 2) in events, "2h beats the demoted Ah"
    assert state.view(0).trump_ace_low and state.public_view().trump_ace_low


@pytest.mark.parametrize("ranking", list(Ranking))
def test_an_announced_trump_ace_keeps_its_rank(ranking: Ranking) -> None:
    state = deal_from(Options(players=3, ranking=ranking), LOW_ACE, "7h")
    act(state, "announce", "2c", "Kc", "9c")
    events = act(state, "2h", "9s", "Ah")
    assert Played(1, C("Ah")) in events and TrickWon(1, 2, 1) in events


def test_playing_the_trump_ace_as_the_first_card_announces_it() -> None:
    state = deal_from(THREE, ["9c 10c Jc 9s 10s", "Ah 2c 3d 4d 5d", "2h Kc 6s 7s 8s"], "7h")
    events = act(state, "Ah", "2h", "9s")
    assert state.view(0).ace_announced_by == 1
    assert TrickWon(1, 1, 1) in events and not state.ace_low


def test_only_the_holder_announces() -> None:
    state = deal_from(THREE, HOLDER_LEADS, "7h")
    act(state, "2c")
    assert "only the holder of the trump Ace (Ah) may announce" in refused(state, 2, "announce")


# --- play -------------------------------------------------------------------------------------

PLAY = "2h"
"""Turn-up for the play scenarios: hearts are trumps, the Ah is in the stock."""


def test_a_player_must_follow_the_suit_led_when_able() -> None:
    state = deal_from(THREE, ["2s 3s 4s 5s 6s", "5c 2d 3d 4d 6d", "7c 9c Kh 7d 8d"], PLAY)
    act(state, "5c")
    assert plays(state, 2) == ["7c", "9c"]
    assert refused(state, 2, "Kh") == "must follow clubs: you hold 7c 9c"


def test_a_player_who_cannot_follow_must_trump_when_able() -> None:
    state = deal_from(THREE, ["2s 3s 4s 5s 6s", "5c 2d 3d 4d 6d", "Kh Qh 7d 8d 9d"], PLAY)
    act(state, "5c")
    assert plays(state, 2) == ["Qh", "Kh"]
    assert refused(state, 2, "7d") == "no clubs to follow, so you must trump: you hold Qh Kh"


def test_a_player_who_can_neither_follow_nor_trump_plays_any_card() -> None:
    state = deal_from(THREE, ["2s 3s 4s 5s 6s", "5c 2d 3d 4d 6d", "7s 8s 7d 8d 9d"], PLAY)
    act(state, "5c")
    assert plays(state, 2) == ["7d", "8d", "9d", "7s", "8s"]


def test_the_leader_may_lead_any_card() -> None:
    state = deal_from(THREE, ["2s 3s 4s 5s 6s", "5c 3h 3d 4d 6d", "7s 8s 7d 8d 9d"], PLAY)
    assert plays(state, 1) == ["5c", "3d", "4d", "6d", "3h"]


def test_the_highest_trump_wins_the_trick() -> None:
    state = deal_from(THREE, ["4h 3s 4s 5s 6s", "Ac 2d 3d 4d 6d", "3h 7s 7d 8d 9d"], PLAY)
    events = act(state, "Ac", "3h", "4h")
    assert events[-1] == TrickWon(0, 1, 1)


def test_without_trumps_the_highest_card_of_the_suit_led_wins_and_its_winner_leads() -> None:
    state = deal_from(THREE, ["As 3s 4s 5s 6s", "5c 2d 3d 4d 6d", "9c 7s 7d 8d 9d"], PLAY)
    events = act(state, "5c", "9c", "As")
    assert events[-1] == TrickWon(2, 1, 1), "the off-suit As wins nothing"
    assert state.to_act() == {2}
    assert state.view(0).tricks[0].plays == ((1, C("5c")), (2, C("9c")), (0, C("As")))


# --- three tricks, the jinx, the spoil ----------------------------------------------------------

JINX = ["8s 9s 10s Js Qs", "Kh Qh Jh 2c 3c", "Kc 4d 5d 6d 7d"]
"""Seat 1 wins tricks 1-3 with Kh Qh Jh; then leads 2c, which seat 2's Kc beats."""


def win_first_three(state: SpoilFiveState) -> list[Event]:
    return act(state, "Kh", "4d", "8s", "Qh", "5d", "9s", "Jh", "6d", "10s")


def test_the_winner_of_the_first_three_tricks_chooses_to_take_the_pool_or_jinx() -> None:
    state = deal_from(THREE, JINX, PLAY)
    events = win_first_three(state)
    assert events[-1] == TrickWon(1, 3, 3)
    assert state.view(0).phase is Phase.JINX_CHOICE and state.to_act() == {1}
    assert state.legal_actions(1) == [TakePool(), Jinx()]
    assert "'take' the pool or 'jinx'" in refused(state, 1, "2c")


def test_taking_the_pool_ends_the_deal_and_every_player_antes_for_the_next() -> None:
    state = deal_from(THREE, JINX, PLAY)
    win_first_three(state)
    events = act(state, "take")
    assert events[:2] == [PoolWon(1, 3), AntesPaid((0, 1, 2), 1, 3)]
    assert isinstance(events[2], DealStarted) and events[2].deal == 2
    assert state.banks == [18, 21, 18] and state.pool == 3
    last = state.view(0).last_deal
    assert last is not None
    assert (last.result, last.seat, last.chips, len(last.tricks)) == (Result.TAKEN, 1, 3, 3)


def test_the_deal_passes_clockwise() -> None:
    state = deal_from(THREE, [JINX[1], JINX[2], JINX[0]], PLAY, dealer=2)  # seat 0 leads and wins
    act(state, "Kh", "4d", "8s", "Qh", "5d", "9s", "Jh", "6d", "10s", "take")
    assert state.dealer == 0 and state.view(1).dealer == 0


def test_a_jinx_won_pays_the_pool_plus_the_ante_from_every_other_player() -> None:
    state = deal_from(THREE, ["8s 9s 10s Js Qs", "Kh Qh Jh 10h 9h", "4d 5d 6d 7d 8d"], PLAY)
    act(state, "Kh", "4d", "8s", "Qh", "5d", "9s", "Jh", "6d", "10s")
    assert act(state, "jinx") == [Jinxed(1)]
    assert state.to_act() == {1} and state.view(2).jinxer == 1
    events = act(state, "10h", "7d", "Js", "9h", "8d", "Qs")
    assert PoolWon(1, 3, 2) in events
    assert state.banks == [17, 23, 17] and state.pool == 3  # 18/24/18 after the jinx, then the antes
    assert state.last_deal is not None and state.last_deal.result is Result.JINX_WON


def test_a_jinx_lost_spoils_the_deal_at_once_and_the_pool_stays() -> None:
    state = deal_from(THREE, JINX, PLAY)
    win_first_three(state)
    events = act(state, "jinx", "2c", "Kc", "Js")
    assert events[-4:-1] == [TrickWon(2, 4, 1), DealSpoiled(1, jinx_lost_by=1), AntesPaid((1,), 1, 4)]
    assert isinstance(events[-1], DealStarted) and events[-1].deal == 2, "trick 5 is not played"
    assert state.banks == [19, 18, 19] and state.pool == 4
    assert state.last_deal is not None and state.last_deal.result is Result.JINX_LOST


def test_a_jinx_bonus_is_paid_as_far_as_a_short_player_can() -> None:
    options = Options(players=2, ante=2)
    state = deal_from(options, ["4d 5d 6d 7d 8d", "Kh Qh Jh 10h 9h"], PLAY, banks=[1, 35], pool=4)
    act(state, "Kh", "4d", "Qh", "5d", "Jh", "6d", "jinx", "10h", "7d")
    events = act(state, "9h", "8d")
    assert PoolWon(1, 4, 1) in events
    assert events[-1] == MatchOver("seat 0 cannot pay the ante of 2", (0, 40))


THIRD_LATER = ["2s 3s 4s 5s 6s", "Kh Qh Jh 3c 4d", "As 5c 6c 7c 8c"]


def test_a_third_trick_won_after_trick_three_takes_the_pool_and_ends_the_deal() -> None:
    state = deal_from(THREE, THIRD_LATER, PLAY)
    act(state, "Kh", "5c", "2s", "3c", "6c", "3s", "As", "4s", "Qh")
    assert state.view(0).tricks_won == (0, 2, 1)
    events = act(state, "Jh", "7c", "5s")
    assert events[3:5] == [TrickWon(1, 4, 3), PoolWon(1, 3)]
    assert state.deal == 2 and state.banks == [18, 21, 18]


SPOIL = [
    "6d 5s 4h 8h 9h",
    "Ad 2s 5h 8d 9d",
    "3d As 2h 10d Jd",
    "4d 3s Ah 7s 8s",
    "5d 4s 3h 6h Kc",
]
"""Five players, clubs trumps: seats 1, 2, 3 and 4 win one trick each in turn."""


def spoil(state: SpoilFiveState) -> list[Event]:
    act(state, "Ad", "3d", "4d", "5d", "6d")
    act(state, "2s", "As", "3s", "4s", "5s")
    return act(state, "2h", "Ah", "3h", "4h", "5h")


def test_a_deal_nobody_can_win_three_tricks_of_is_spoiled_as_soon_as_that_is_settled() -> None:
    state = deal_from(Options(players=5), SPOIL, "2c")
    spoil(state)
    events = act(state, "7s", "Kc", "8h", "8d", "10d")
    assert events[5:7] == [TrickWon(4, 4, 1), DealSpoiled(1)], "1-1-1-1 after trick 4: trick 5 is not played"
    assert state.deal == 2


def test_after_a_spoiled_deal_only_the_next_dealer_antes() -> None:
    state = deal_from(Options(players=5), SPOIL, "2c")
    spoil(state)
    events = act(state, "7s", "Kc", "8h", "8d", "10d")
    assert AntesPaid((1,), 1, 6) in events
    assert state.dealer == 1 and state.banks == [19, 18, 19, 19, 19] and state.pool == 6


# --- the match ----------------------------------------------------------------------------------


def test_the_match_ends_after_its_number_of_deals() -> None:
    state = deal_from(Options(players=3, deals=1), JINX, PLAY)
    win_first_three(state)
    events = act(state, "take")
    assert events == [PoolWon(1, 3), MatchOver("deal 1 of 1 played", (19, 22, 19))]
    assert state.is_over() and state.to_act() == frozenset()
    assert all(state.legal_actions(s) == [] for s in range(3))
    assert "the match is over" in refused(state, 1, "2c")


def test_a_pool_left_at_the_end_is_shared_equally_and_the_remainder_stays_unassigned() -> None:
    options = Options(players=5, deals=2)
    state = deal_from(options, SPOIL, "2c", banks=[19, 18, 19, 19, 19], pool=6, deal=2)
    spoil(state)
    events = act(state, "7s", "Kc", "8h", "8d", "10d")
    assert events[-2:] == [PoolShared(1, 1), MatchOver("deal 2 of 2 played", (20, 19, 20, 20, 20))]
    assert state.unassigned == 1 and sum(state.banks) + state.pool + state.unassigned == 100


def test_the_match_ends_when_a_player_cannot_pay_an_ante_that_falls_due() -> None:
    state = deal_from(Options(players=5), SPOIL, "2c", banks=[19, 0, 19, 19, 19], pool=24)
    spoil(state)
    events = act(state, "7s", "Kc", "8h", "8d", "10d")
    assert events[-2] == PoolShared(4, 4)
    assert events[-1] == MatchOver("seat 1 cannot pay the ante of 1", (23, 4, 23, 23, 23))
    assert state.is_over() and state.deal == 1


def test_players_are_ranked_by_chips() -> None:
    state = deal_from(Options(players=5), SPOIL, "2c", banks=[19, 0, 19, 19, 19], pool=24)
    spoil(state)
    act(state, "7s", "Kc", "8h", "8d", "10d")
    outcome = state.outcome()
    assert outcome.scores == (23, 4, 23, 23, 23)
    assert outcome.places == (1, 5, 1, 1, 1) and outcome.winners == {0, 2, 3, 4}


# --- the classic ranking ---------------------------------------------------------------------------


def order(text: str, trump: Suit) -> list[str]:
    """The cards of ``text`` from strongest to weakest in the classic ranking (no two equal)."""
    cards = parse_cards(text)
    powers = [power(c, trump, Ranking.CLASSIC) for c in cards]
    assert len(set(powers)) == len(cards), "two cards rank equal"
    return [str(c) for _, c in sorted(zip(powers, cards, strict=True), key=lambda pc: pc[0], reverse=True)]


@pytest.mark.parametrize("ranking", list(Ranking))
def test_every_trump_beats_every_plain_card(ranking: Ranking) -> None:
    for trump in Suit:
        trumps = [power(c, trump, ranking) for c in STANDARD_DECK if suit_of(c, trump, ranking) is trump]
        plain = [power(c, trump, ranking) for c in STANDARD_DECK if suit_of(c, trump, ranking) is not trump]
        assert min(trumps) > max(plain)


@pytest.mark.parametrize(
    ("trump", "expected"),
    [
        (Suit.DIAMONDS, "5d Jd Ah Ad Kd Qd 10d 9d 8d 7d 6d 4d 3d 2d"),
        (Suit.HEARTS, "5h Jh Ah Kh Qh 10h 9h 8h 7h 6h 4h 3h 2h"),
        (Suit.CLUBS, "5c Jc Ah Ac Kc Qc 2c 3c 4c 6c 7c 8c 9c 10c"),
        (Suit.SPADES, "5s Js Ah As Ks Qs 2s 3s 4s 6s 7s 8s 9s 10s"),
    ],
)
def test_classic_trumps_rank_five_jack_ace_of_hearts_ace_then_the_rest(trump: Suit, expected: str) -> None:
    trumps = [c for c in STANDARD_DECK if suit_of(c, trump, Ranking.CLASSIC) is trump]
    assert sorted(map(str, trumps)) == sorted(expected.split()), "A♥ is always a trump"
    assert order(expected, trump) == expected.split()


@pytest.mark.parametrize(
    "expected",
    [
        "Kd Qd Jd 10d 9d 8d 7d 6d 5d 4d 3d 2d Ad",
        "Kh Qh Jh 10h 9h 8h 7h 6h 5h 4h 3h 2h",
        "Ks Qs Js As 2s 3s 4s 5s 6s 7s 8s 9s 10s",
    ],
)
def test_classic_plain_suits_rank_highest_in_red_lowest_in_black(expected: str) -> None:
    assert order(expected, Suit.CLUBS) == expected.split()


def test_plain_ranking_is_two_low_ace_high_with_trumps_above_all() -> None:
    ranked = sorted(parse_cards("Ac 2h Kc 3h Ah 10c"), key=lambda c: power(c, Suit.HEARTS, Ranking.PLAIN))
    assert [str(c) for c in ranked] == ["10c", "Kc", "Ac", "2h", "3h", "Ah"]


CLASSIC = Options(players=3, ranking=Ranking.CLASSIC)


@pytest.mark.parametrize(("ranking", "winner"), [(Ranking.CLASSIC, 2), (Ranking.PLAIN, 0)])
def test_classic_ace_of_hearts_is_a_trump_that_beats_a_lower_trump(ranking: Ranking, winner: int) -> None:
    hands = ["4s 2c 3c 5c 6c", "Kh 2d 3d 4d 6d", "Ah 7c 8c 9c 10c"]
    state = deal_from(Options(players=3, ranking=ranking), hands, "3s")
    events = act(state, "Kh", "Ah", "4s")  # plain: Ah follows hearts and 4s trumps it
    assert events[-1] == TrickWon(winner, 1, 1)


def test_classic_ace_of_hearts_cannot_follow_hearts() -> None:
    hands = ["2c 3c 4c 5c 6c", "Kh 2d 3d 4d 6d", "Ah 2h 8c 9c 10c"]
    state = deal_from(CLASSIC, hands, "3s")
    act(state, "Kh")
    assert plays(state, 2) == ["2h"], "A♥ is not a heart: the 2h is the only card that follows"
    state = deal_from(Options(players=3), hands, "3s")
    act(state, "Kh")
    assert plays(state, 2) == ["2h", "Ah"]


def test_classic_top_trump_may_renege_when_a_lower_trump_is_led() -> None:
    state = deal_from(CLASSIC, ["2c 3c 4c 5c 6c", "7s 2d 3d 4d 6d", "5s 2h 8c 9c 10c"], "3s")
    act(state, "7s")
    assert plays(state, 2) == ["8c", "9c", "10c", "2h", "5s"]
    act(state, "2h")  # reneges: keeps the 5s


def test_classic_top_trump_must_follow_when_a_higher_trump_is_led() -> None:
    state = deal_from(CLASSIC, ["2c 3c 4c 5c 6c", "Js 2d 3d 4d 6d", "Ah 2h 8c 9c 10c"], "3s")
    act(state, "Js")
    assert plays(state, 2) == ["Ah"], "Js outranks A♥: no renege"
    assert refused(state, 2, "2h") == "must follow trumps (spades): you hold Ah"


def test_classic_renege_does_not_excuse_a_player_holding_another_trump() -> None:
    state = deal_from(CLASSIC, ["2c 3c 4c 5c 6c", "7s 2d 3d 4d 6d", "5s 9s 8c 9c 10c"], "3s")
    act(state, "7s")
    assert plays(state, 2) == ["5s", "9s"]


def test_plain_ranking_has_no_renege() -> None:
    state = deal_from(THREE, ["2c 3c 4c 5c 6c", "7s 2d 3d 4d 6d", "5s 2h 8c 9c 10c"], "3s")
    act(state, "7s")
    assert plays(state, 2) == ["5s"]


# --- actions and views -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("7h", Play(C("7h"))),
        ("10c", Play(C("10c"))),
        ("rob 7c", Rob(C("7c"))),
        ("decline", Decline()),
        ("announce", Announce()),
        ("take", TakePool()),
        ("jinx", Jinx()),
    ],
)
def test_each_action_has_one_text_form_that_reads_back(text: str, action: object) -> None:
    assert parse_action(text) == action and str(action) == text
    assert parse_action(text.upper()) == action


@pytest.mark.parametrize("text", ["", "rob", "rob 7x", "7h 8h", "pass", "11h", "take pool"])
def test_malformed_action_text_is_refused_with_the_forms_to_use(text: str) -> None:
    with pytest.raises(MalformedInput, match="not a Spoil Five action"):
        parse_action(text)


def test_a_view_shows_the_own_hand_the_table_chips_and_pool_but_no_other_hand() -> None:
    state = deal_from(THREE, ["As 3s 4s 5s 6s", "5c 2d 3d 4d 6d", "9c 7s 7d 8d 9d"], PLAY)
    act(state, "5c", "9c", "As", "7d")
    view = state.view(0)
    assert view.seat == 0 and view.hands == (tuple(parse_cards("3s 4s 5s 6s")), None, None)
    assert view.hand_sizes == (4, 4, 3) and view.stock_size == 52 - 16
    assert view.trick == ((2, C("7d")),) and len(view.tricks) == 1 and view.tricks_won == (0, 0, 1)
    assert (view.banks, view.pool, view.to_act, view.deal, view.deals) == ((19, 19, 19), 3, 0, 1, 6)
    assert state.public_view().hands == (None, None, None) and state.public_view().stock is None
    full = state.full_view()
    assert full.hands[1] == tuple(parse_cards("2d 3d 4d 6d")) and full.stock == tuple(state.stock)


def test_a_refused_action_says_why_and_changes_nothing() -> None:
    state = deal_from(THREE, ["As 3s 4s 5s 6s", "5c 2d 3d 4d 6d", "9c 7s 7d 8d 9d"], PLAY)
    assert refused(state, 2, "9c") == "not your turn: seat 1 is to act"
    assert refused(state, 1, "Kd") == "you do not hold Kd"
    assert "only for the winner of the first three tricks" in refused(state, 1, "take")


def test_deal_from_refuses_chips_that_do_not_add_up() -> None:
    with pytest.raises(ValueError, match="chips must add up"):
        deal_from(THREE, JINX, PLAY, banks=[20, 20, 20], pool=3)
