"""The duplicate round robin: every group, every deal, every bot in every seat."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from croupier.server.tournament.schedule import (
    Rotations,
    deal_seed,
    game_schedule,
    interleave,
    rotation_count,
    seatings,
)

BOTS = ["ann", "bob", "cat", "dan", "eve"]


@pytest.mark.parametrize("rotations", list(Rotations))
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_every_bot_sits_in_every_seat_of_every_deal_of_every_group(seats: int, rotations: Rotations) -> None:
    schedule = game_schedule("g", BOTS, seats, rounds=2, deals=2, seed=1, rotations=rotations)
    groups = list(itertools.combinations(BOTS, seats))
    assert len(schedule) == 2 * 2 * len(groups)
    for duplicate in schedule:
        assert {len({m.seed for m in duplicate.matches})} == {1}  # one deal per set
        assert duplicate.bots in {frozenset(g) for g in groups}
        seat_of = Counter((bot, seat) for m in duplicate.matches for seat, bot in enumerate(m.seats))
        per_seat = 1 if rotations is Rotations.CYCLIC else len(duplicate.matches) // seats
        assert seat_of == {(bot, seat): per_seat for bot in duplicate.bots for seat in range(seats)}
    assert Counter(d.bots for d in schedule) == {frozenset(g): 4 for g in groups}


def test_cyclic_rotations_are_n_matches_and_all_are_n_factorial() -> None:
    assert seatings(["a", "b", "c"], Rotations.CYCLIC) == [("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")]
    assert len(seatings(["a", "b", "c", "d"], Rotations.ALL)) == 24 == rotation_count(4, Rotations.ALL)
    assert rotation_count(4, Rotations.CYCLIC) == 4
    assert len(set(seatings(["a", "b", "c", "d"], Rotations.ALL))) == 24


def test_every_group_plays_the_same_deals_and_deals_differ() -> None:
    schedule = game_schedule("g", BOTS, 2, rounds=2, deals=3, seed=9)
    seeds_by_group: dict[int, list[int]] = {}
    for duplicate in schedule:
        key = duplicate.matches[0].key
        seeds_by_group.setdefault(key.group, []).append(duplicate.matches[0].seed)
    assert len({tuple(seeds) for seeds in seeds_by_group.values()}) == 1
    assert len(set(next(iter(seeds_by_group.values())))) == 6


def test_match_keys_are_unique_and_stable() -> None:
    first = game_schedule("g", BOTS, 3, rounds=2, deals=1, seed=5)
    again = game_schedule("g", BOTS, 3, rounds=2, deals=1, seed=5)
    keys = [m.key for d in first for m in d.matches]
    assert len(set(keys)) == len(keys)
    assert first == again


def test_seeds_depend_on_tournament_seed_game_round_and_deal() -> None:
    seeds = {deal_seed(s, g, r, d) for s in (1, 2) for g in ("x", "y") for r in (0, 1) for d in (0, 1)}
    assert len(seeds) == 16
    assert all(0 <= seed < 2**63 for seed in seeds)


def test_too_few_bots_for_a_table_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="played 4 to a table but only 3 bot"):
        game_schedule("spoil_five", BOTS[:3], 4, rounds=1, deals=1, seed=0)


def test_interleave_takes_the_games_in_turn() -> None:
    a = game_schedule("a", BOTS[:2], 2, rounds=3, deals=1, seed=0)
    b = game_schedule("b", BOTS[:2], 2, rounds=1, deals=1, seed=0)
    assert [d.key[0] for d in interleave([a, b])] == ["a", "b", "a", "a"]
