"""The duplicate round robin: every group, its own secret deals, every bot in every seat, and
seatings without adjacency bias."""

from __future__ import annotations

import hashlib
import itertools
import secrets
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from croupier.clients.results.schedule import (
    Deals,
    DuplicateSet,
    Rotations,
    deal_seed,
    design,
    game_schedule,
    interleave,
    rotation_count,
    seatings,
)

BOTS = ["ann", "bob", "cat", "dan", "eve"]
SECRET = bytes(range(32))


def schedule(
    seats: int,
    rounds: int = 2,
    deals: int = 2,
    seed: int = 1,
    secret: bytes = SECRET,
    rotations: Rotations = Rotations.WILLIAMS,
    dealing: Deals = Deals.DUPLICATE,
) -> list[DuplicateSet]:
    return game_schedule(
        "g", BOTS, seats, rounds, deals, seed=seed, secret=secret, rotations=rotations, dealing=dealing
    )


@pytest.mark.parametrize("rotations", list(Rotations))
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_every_bot_sits_in_every_seat_of_every_deal_of_every_group(seats: int, rotations: Rotations) -> None:
    sets = schedule(seats, rotations=rotations)
    groups = list(itertools.combinations(BOTS, seats))
    assert len(sets) == 2 * 2 * len(groups)
    for duplicate in sets:
        assert {len({m.seed for m in duplicate.matches})} == {1}  # one deal per set
        assert duplicate.bots in {frozenset(g) for g in groups}
        seat_of = Counter((bot, seat) for m in duplicate.matches for seat, bot in enumerate(m.seats))
        per_seat = len(duplicate.matches) // seats
        assert seat_of == {(bot, seat): per_seat for bot in duplicate.bots for seat in range(seats)}
    assert Counter(d.bots for d in sets) == {frozenset(g): 4 for g in groups}


@settings(deadline=None)  # a loaded machine is no failure
@given(seats=st.integers(2, 10), names=st.permutations([f"bot{i}" for i in range(10)]))
def test_a_williams_set_seats_every_bot_everywhere_and_after_every_other_bot_equally_often(
    seats: int, names: list[str]
) -> None:
    rows = seatings(names[:seats], Rotations.WILLIAMS)
    assert len(rows) == (seats if seats % 2 == 0 else 2 * seats) == rotation_count(seats, Rotations.WILLIAMS)
    in_seat = Counter((bot, seat) for row in rows for seat, bot in enumerate(row))
    assert set(in_seat.values()) == {len(rows) // seats} and len(in_seat) == seats * seats
    follows = Counter((row[seat], row[seat + 1]) for row in rows for seat in range(seats - 1))
    assert len(follows) == seats * (seats - 1)  # every ordered pair of bots side by side ...
    assert len(set(follows.values())) == 1  # ... equally often


def test_cyclic_rotations_keep_the_order_round_the_table_which_williams_breaks() -> None:
    cyclic = seatings(["a", "b", "c"], Rotations.CYCLIC)
    assert cyclic == [("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")]
    after_a = Counter(row[(row.index("a") + 1) % 3] for row in cyclic)
    assert after_a == {"b": 3}  # b always plays right after a
    williams = seatings(["a", "b", "c"], Rotations.WILLIAMS)
    assert Counter(row[(row.index("a") + 1) % 3] for row in williams) == {"b": 3, "c": 3}
    assert len(seatings(["a", "b", "c", "d"], Rotations.ALL)) == 24 == rotation_count(4, Rotations.ALL)
    assert rotation_count(4, Rotations.CYCLIC) == 4


def test_the_matches_per_set_of_each_design_for_2_to_10_seats() -> None:
    table = {n: tuple(rotation_count(n, r) for r in Rotations) for n in range(2, 11)}
    assert [table[n][0] for n in range(2, 11)] == [2, 6, 4, 10, 6, 14, 8, 18, 10]  # Williams
    assert [table[n][1] for n in range(2, 11)] == list(range(2, 11))  # cyclic
    assert table[10][2] == 3628800  # all: 10!
    assert design(2, Rotations.WILLIAMS) == design(2, Rotations.CYCLIC) == [(0, 1), (1, 0)]


def test_every_group_and_set_has_its_own_deal() -> None:
    sets = schedule(2, rounds=3, deals=2)
    seeds = [d.matches[0].seed for d in sets]
    assert len(set(seeds)) == len(seeds) == 3 * 2 * 10


def test_fresh_deals_give_every_match_its_own_deal() -> None:
    sets = schedule(3, dealing=Deals.FRESH)
    seeds = [m.seed for d in sets for m in d.matches]
    assert len(set(seeds)) == len(seeds)


def test_the_file_seed_decides_the_seating_and_only_the_secret_the_cards() -> None:
    same = schedule(3)
    assert same == schedule(3)  # reproducible
    other_secret = schedule(3, secret=secrets.token_bytes(32))
    assert [m.seats for d in other_secret for m in d.matches] == [m.seats for d in same for m in d.matches]
    assert not {m.seed for d in other_secret for m in d.matches} & {m.seed for d in same for m in d.matches}
    other_seed = schedule(3, seed=2)
    assert [m.seed for d in other_seed for m in d.matches] == [m.seed for d in same for m in d.matches]
    assert [m.seats for d in other_seed for m in d.matches] != [m.seats for d in same for m in d.matches]


def test_match_keys_are_unique() -> None:
    keys = [m.key for d in schedule(3) for m in d.matches]
    assert len(set(keys)) == len(keys)


def test_deal_seeds_are_an_hmac_of_the_secret_and_fit_63_bits() -> None:
    seeds = {
        deal_seed(secret, g, r, grp, d, rot, again)
        for secret in (SECRET, bytes(32))
        for g in ("x", "y")
        for r in (0, 1)
        for grp in (0, 1)
        for d in (0, 1)
        for rot in (None, 0)
        for again in (0, 1)
    }
    assert len(seeds) == 2**7
    assert all(0 <= seed < 2**63 for seed in seeds)


def test_the_file_seed_alone_never_gives_a_deal() -> None:
    """What an attacker who knows the file (its seed) computes, for every seed up to 10^4, the way
    deals used to be made and with the seed as the key: no commitment of the schedule among them."""
    commitments = {hashlib.sha256(str(m.seed).encode()).hexdigest() for d in schedule(3) for m in d.matches}
    for guess in range(10_000):
        for round_number, deal in itertools.product(range(2), range(2)):
            old = hashlib.sha256(f"{guess}:g:{round_number}:{deal}".encode()).digest()
            keyed = deal_seed(str(guess).encode(), "g", round_number, 0, deal, None)
            for seed in (int.from_bytes(old[:8], "big") >> 1, keyed):
                assert hashlib.sha256(str(seed).encode()).hexdigest() not in commitments


def test_a_short_secret_is_refused() -> None:
    with pytest.raises(ValueError, match="128 bits"):
        schedule(2, secret=b"short")


def test_too_few_bots_for_a_table_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="played 4 to a table but only 3 bot"):
        game_schedule("spoil_five", BOTS[:3], 4, rounds=1, deals=1, seed=0, secret=SECRET)


def test_interleave_takes_the_games_in_turn() -> None:
    a = game_schedule("a", BOTS[:2], 2, rounds=3, deals=1, seed=0, secret=SECRET)
    b = game_schedule("b", BOTS[:2], 2, rounds=1, deals=1, seed=0, secret=SECRET)
    assert [d.key[0] for d in interleave([a, b])] == ["a", "b", "a", "a"]
