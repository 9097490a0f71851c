"""The ladder's choice of the next group: the widest interval first, and no bot starved."""

from __future__ import annotations

import itertools

from croupier.clients.ladder.matchmaking import Matchmaker
from croupier.clients.results.ratings import RatedSet


def duel(a: str, b: str, winner: str | None = None) -> RatedSet:
    """A two-rotation set of a and b: ``winner`` wins both, or each wins one."""
    first, second = (a, b) if winner in (a, None) else (b, a)
    rotations = ({first: 1, second: 2}, {first: 1, second: 2} if winner else {second: 1, first: 2})
    return RatedSet("ladder", tuple(sorted((a, b))), rotations)


def settled(bots: list[str], sets_per_pair: int) -> list[RatedSet]:
    """Many sets between every pair, the earlier bot of the list winning: a well-known order."""
    return [duel(a, b, a) for a, b in itertools.combinations(bots, 2) for _ in range(sets_per_pair)] + [
        duel(a, b) for a, b in itertools.combinations(bots, 2) for _ in range(sets_per_pair)
    ]


def test_a_bot_with_a_wide_interval_is_chosen_first_by_the_information_alone() -> None:
    maker = Matchmaker(seats=2, rotations=2, provisional_width=1e9)  # no provisional rule: the criterion
    maker.sets = settled(["ann", "bob", "cat"], 6)
    widths = maker.spread(["ann", "bob", "cat", "dan"])
    assert widths["dan"] > 3 * max(widths[bot] for bot in ("ann", "bob", "cat"))
    assert "dan" in (maker.choose(["ann", "bob", "cat", "dan"]) or ())


def test_the_criterion_prefers_neighbours_in_doubt_to_a_pair_whose_order_is_known() -> None:
    maker = Matchmaker(seats=2, rotations=2, provisional_width=1e9)
    # ann far above bob, which is known; bob and cat close and little played
    maker.sets = [duel("ann", "bob", "ann") for _ in range(12)]
    maker.sets += [duel("bob", "cat"), duel("ann", "cat", "ann")]
    assert maker.choose(["ann", "bob", "cat"]) == ("bob", "cat")


def test_a_provisional_version_is_seated_until_its_interval_narrows() -> None:
    maker = Matchmaker(seats=2, rotations=2, provisional_width=300)
    maker.sets = settled(["ann@1", "bob@1", "cat@1"], 8)
    bots = ["ann@1", "ann@2", "bob@1", "cat@1"]
    assert maker.provisional(bots) == {"ann@2"}
    seated = 0
    while "ann@2" in maker.provisional(bots):
        group = maker.choose(bots)
        assert group is not None and "ann@2" in group
        maker.seated(group, bots)
        maker.add(duel(*group))
        seated += 1
        assert seated < 100
    assert "ann@1" in maker.elo()  # the old version's history stays, rated apart
    assert maker.choose(bots) is not None


def starve_test(floor: float) -> dict[str, int]:
    """Sets per bot over 60 choices with no new results: ``slow`` is known so well, and so far
    below the rest, that the information never asks for it."""
    maker = Matchmaker(seats=2, rotations=2, floor=floor, provisional_width=1e9)
    bots = ["ann", "bob", "cat", "dan", "slow"]
    maker.sets = settled(bots[:4], 1) + [duel(b, "slow", b) for b in bots[:4] for _ in range(40)]
    counts = dict.fromkeys(bots, 0)
    for _ in range(60):
        group = maker.choose(bots)
        assert group is not None
        maker.seated(group, bots)
        for bot in group:
            counts[bot] += 1
    return counts


def test_no_connected_bot_starves_the_floor_seats_it_its_share() -> None:
    counts = starve_test(floor=0.5)
    fair = 60 * 2 / 5
    assert counts["slow"] >= 0.5 * fair - 1, counts
    assert starve_test(floor=0.0)["slow"] == 0  # the floor is what seats it: without it, never


def test_a_busy_bot_is_owed_nothing_and_one_that_left_is_forgotten() -> None:
    maker = Matchmaker(seats=2, rotations=2)
    maker.seated(("ann", "bob"), ["ann", "bob", "cat"], present=["ann", "bob", "cat", "dan"])
    assert maker.credit["dan"] == 0 and maker.credit["cat"] == 2 / 3  # dan was busy: owed nothing
    maker.choose(["ann", "bob"], present=["ann", "bob", "dan"])
    assert "cat" not in maker.credit  # left: its count starts afresh when it is back


def test_too_few_free_bots_make_no_group() -> None:
    assert Matchmaker(seats=3, rotations=6).choose(["ann", "bob"]) is None
