"""The bundled heuristics: each rule of thumb on a hand-built position, and each game's heuristic
beating random bots well above its fair share over fixed seeds, played in-process through the engine."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from croupier.clients.bots import HeuristicBot, RandomBot, chinese_ten, pair_battle, platinum_fish, spoil_five
from croupier.clients.sdk import BotFactory, play_offline
from croupier.engine.cards import Card, parse_cards
from croupier.engine.games import chinese_ten as ct
from croupier.engine.games import get_game
from croupier.engine.games import pair_battle as pb
from croupier.engine.games import platinum_fish as pf
from croupier.engine.games import spoil_five as sf
from croupier.engine.rng import Rng

# --- beating random --------------------------------------------------------------------------

MARGIN = 1.5
"""The heuristic's win share must exceed this many times the fair share (1 / players)."""

CONTESTS: dict[str, tuple[dict[str, Any], int]] = {
    # game: (options, matches); the heuristic sits in every seat in turn against random bots
    "chinese_ten": ({"players": 3, "target": 300}, 90),
    "spoil_five": ({"players": 5}, 200),
    "platinum_fish": ({"players": 4}, 80),
    "pair_battle": ({"players": 3, "timing": "lockstep"}, 480),
}


def win_share(game: str, values: dict[str, Any], matches: int) -> float:
    """The heuristic's share of the wins (a shared win counts its fraction) over seeds 0..matches-1."""
    spec = get_game(game)
    options = spec.options(values)
    players = options.players
    wins = 0.0
    for seed in range(matches):
        mine = seed % players

        def random_bot(seat: int, seed: int = seed) -> BotFactory:
            return lambda match: RandomBot(match, random.Random(seed * 100 + seat))

        bots = [HeuristicBot if seat == mine else random_bot(seat) for seat in range(players)]
        outcome = play_offline(spec, options, bots, seed)
        if mine in outcome.winners:
            wins += 1 / len(outcome.winners)
    return wins / matches


@pytest.mark.parametrize("game", sorted(CONTESTS))
def test_the_heuristic_wins_well_above_its_fair_share_against_random_bots(game: str) -> None:
    values, matches = CONTESTS[game]
    share = win_share(game, values, matches)
    fair = 1 / values["players"]
    assert share > MARGIN * fair, f"{game}: the heuristic won {share:.0%} of matches; fair share {fair:.0%}"


def test_every_game_has_a_heuristic_and_a_contest() -> None:
    from croupier.engine.games import GAMES

    assert set(CONTESTS) == set(GAMES)


# --- the rules of thumb, on hand-built positions ------------------------------------------------


def cards(text: str) -> list[Card]:
    return list(parse_cards(text))


def chinese_ten_position(hand: str, table: str, turned: str | None = None) -> ct.ChineseTenState:
    """Seat 1 to play (dealer 0, three players), the other hands and the stock filled from the rest."""
    mine, layout = cards(hand), cards(table)
    rest = [c for c in ct.STANDARD_DECK if c not in {*mine, *layout, *cards(turned or "")}]
    return ct.ChineseTenState(
        ct.Options(),
        Rng(0),
        hands=[rest[:8], mine, rest[8:16]],
        table=layout,
        stock=rest[16:],
        piles=[[], [], []],
        totals=[0, 0, 0],
        turn=1,
        turned=Card.parse(turned) if turned else None,
    )


def chosen(module: Any, state: Any, seat: int, options: Any = None) -> Any:
    legal = state.legal_actions(seat)
    return legal[module.choose(state.view(seat), legal, options)]


def test_chinese_ten_captures_the_most_points() -> None:
    state = chinese_ten_position("9h 5d Kc", "Ah 5s Qd 8c")  # 9h takes Ah (30 points); 5d takes 5s (5)
    assert str(chosen(chinese_ten, state, 1)) == "9h:Ah"


def test_chinese_ten_lays_a_worthless_card_when_nothing_captures() -> None:
    state = chinese_ten_position("Ad 2c", "Kd Qs Jh 10c")  # nothing captures: lay 2c (0 points), keep Ad (20)
    assert str(chosen(chinese_ten, state, 1)) == "2c"


def test_chinese_ten_picks_the_richer_target_for_a_turned_card() -> None:
    state = chinese_ten_position("2c", "Kd Ks 4c", turned="Kh")  # Kh takes Kd (10) or Ks (0)
    assert str(chosen(chinese_ten, state, 1)) == "pick Kd"


def test_spoil_five_announces_the_trump_ace_before_playing() -> None:
    state = sf.deal_from(sf.Options(players=2), ["As 2c 3c 4c 5c", "2d 3d 4d 5d 6d"], "7s", dealer=1)
    assert isinstance(chosen(spoil_five, state, 0), sf.Announce)


def test_spoil_five_dealer_robs_a_turned_ace_discarding_the_weakest_card() -> None:
    state = sf.deal_from(sf.Options(players=2), ["2d 3d 4d 5d 6d", "Kh Qh 2c 9c 10s"], "As", dealer=1)
    assert str(chosen(spoil_five, state, 1)) == "rob 2c"


def test_spoil_five_wins_a_trick_with_the_cheapest_winning_card() -> None:
    state = sf.deal_from(sf.Options(players=2), ["9h 2c 3c 4c 5c", "10h Kh 2d 3d 4d"], "7s", dealer=1)
    state.apply(0, sf.Play(Card.parse("9h")))
    assert str(chosen(spoil_five, state, 1)) == "10h"


def test_spoil_five_throws_its_weakest_card_on_a_trick_it_cannot_win() -> None:
    state = sf.deal_from(sf.Options(players=2), ["Ah 2c 3c 4c 5c", "3h Kh 2s 3d 4d"], "7s", dealer=1)
    state.apply(0, sf.Play(Card.parse("Ah")))
    assert str(chosen(spoil_five, state, 1)) == "3h"


def three_tricks_won(first_hand: str) -> sf.SpoilFiveState:
    """Seat 0 wins tricks 1-3 with As, Ks, Qs and must choose: take the pool or jinx."""
    state = sf.deal_from(sf.Options(players=2), [first_hand, "2s 3s 4s 2d 3d"], "7s", dealer=1)
    state.apply(0, sf.Announce())
    for mine, theirs in (("As", "2s"), ("Ks", "3s"), ("Qs", "4s")):
        state.apply(0, sf.Play(Card.parse(mine)))
        state.apply(1, sf.Play(Card.parse(theirs)))
    assert state.phase is sf.Phase.JINX_CHOICE
    return state


def test_spoil_five_takes_the_pool_unless_both_last_tricks_are_sure() -> None:
    assert isinstance(chosen(spoil_five, three_tricks_won("As Ks Qs 2c 3c"), 0), sf.TakePool)
    assert isinstance(chosen(spoil_five, three_tricks_won("As Ks Qs Js 10s"), 0), sf.Jinx)


def fish_view(hand: str, discard: str = "Kd", phase: pf.Phase = pf.Phase.TURN) -> pf.PlatinumFishView:
    mine = tuple(cards(hand))
    return pf.PlatinumFishView(
        seat=0, dealer=1, phase=phase, to_act=0, hands=(mine, None), hand_sizes=(len(mine), 5),
        matches=((), ()), scores=(0, 0), discard=tuple(cards(discard)), stock_size=80, stock=None,
        dice=None, targets=(), history=(),
    )  # fmt: skip


def fish_choice(view: pf.PlatinumFishView, legal: list[pf.FishAction]) -> pf.FishAction:
    return legal[platinum_fish.choose(view, legal, pf.PlatinumFishOptions(players=2))]


def test_platinum_fish_takes_a_discard_that_makes_a_match() -> None:
    assert fish_choice(fish_view("Kc 7h"), [pf.TAKE, pf.DRAW, pf.ROLL]) == pf.TAKE


def test_platinum_fish_rolls_for_middle_values_and_draws_for_aces() -> None:
    # 6, 7 and 8 are the likeliest sums of two dice; an Ace (value 1) is never rolled for
    assert fish_choice(fish_view("6c 7h 8d"), [pf.DRAW, pf.ROLL]) == pf.ROLL
    assert fish_choice(fish_view("Ac"), [pf.DRAW, pf.ROLL]) == pf.DRAW


def test_platinum_fish_asks_for_a_rank_it_holds() -> None:
    view = fish_view("Kc 7h", phase=pf.Phase.ASK)
    legal: list[pf.FishAction] = [pf.Ask(pf.Rank.QUEEN), pf.Ask(pf.Rank.KING), pf.PASS]
    assert fish_choice(view, legal) == pf.Ask(pf.Rank.KING)


def battle(hands: list[str], timing: pb.Timing = pb.Timing.REALTIME) -> pb.PairBattleState:
    options = pb.Options(players=len(hands), timing=timing, countdown_tick=0.0)
    return pb.deal_from(options, [cards(h) for h in hands], [[] for _ in hands])


def test_pair_battle_lays_a_triplet_rather_than_strand_a_card() -> None:
    state = battle(["7c 7d 7h 2s 3s", "4c 4d 5c 6d 8h"])
    assert str(chosen(pair_battle, state, 0)) == "7c 7d 7h"


def test_pair_battle_plans_every_set_of_the_hand_richest_first() -> None:
    state = battle(["5c 5d Ac Ad Ah As 9h", "4c 4d 6c 6d 8h"])
    assert [str(p) for p in pair_battle.plan(state.view(0))] == ["Ac Ad Ah", "As", "5c 5d"]
    assert pair_battle.follow_ups(state.view(0)) == pair_battle.plan(state.view(0))[1:]


def test_pair_battle_lockstep_passes_only_while_leading() -> None:
    state = battle(["7c 7d 2s 3s", "4c 4d 5c 9d"], pb.Timing.LOCKSTEP)
    assert str(chosen(pair_battle, state, 0)) == "7c 7d"  # level at 0: play
    state.apply(0, pb.Play(tuple(cards("7c 7d"))))
    state.apply(1, pb.Pass())  # seat 0 now leads 10 to 0
    assert isinstance(chosen(pair_battle, state, 0), pb.Pass)
    assert str(chosen(pair_battle, state, 1)) == "4c 4d"
    assert pair_battle.follow_ups(state.view(0)) == []  # lockstep: one play per tick


@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_platinum_fish_heuristics_among_themselves_always_end_the_game(players: int) -> None:
    # A stock left holding only Aces is never taken by a roll: if every seat rolled, the game
    # would go round forever (seed 1 of three players did, before the leader drew).
    options = pf.PlatinumFishOptions(players=players)
    for seed in range(40):
        state = get_game("platinum_fish").new_game(options, Rng(seed))
        for _ in range(2000):
            if state.is_over():
                break
            seat = sorted(state.to_act())[0]
            legal = state.legal_actions(seat)
            state.apply(seat, legal[platinum_fish.choose(state.view(seat), legal, options)], 0.0)
        assert state.is_over(), f"{players} players, seed {seed}: heuristics still playing after 2000 actions"


def test_platinum_fish_leader_draws_when_the_stock_may_hold_only_aces() -> None:
    stalled = dataclasses.replace(fish_view("6c 7h 8d"), stock_size=1, scores=(3, 2))
    assert fish_choice(stalled, [pf.DRAW, pf.ROLL]) == pf.DRAW  # ahead: the draw ends the game
    behind = dataclasses.replace(stalled, scores=(2, 3))
    assert fish_choice(behind, [pf.DRAW, pf.ROLL]) == pf.ROLL  # behind: hope for a match first
