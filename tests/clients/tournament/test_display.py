"""The live standings: the final table's fit, refitted at most every few seconds, off the loop once slow."""

from __future__ import annotations

import random

import pytest

from croupier.clients.results.ratings import Places, rate
from croupier.clients.tournament import display
from croupier.clients.tournament.display import Standings

BOTS = ("ann", "bob", "cat", "dan")


def played(count: int, seed: int = 1) -> list[Places]:
    """Three-seat matches: ann wins the first quarter, then each bot places by its strength and
    luck (the running Elo the standings were, order-dependent, read that otherwise than the fit)."""
    rng = random.Random(seed)
    matches = []
    for number in range(count):
        early, seats = number < count // 4, rng.sample(BOTS, 3)
        luck = {bot: 9.0 if early and bot == "ann" else BOTS.index(bot) + 2 * rng.random() for bot in seats}
        order = sorted(seats, key=luck.__getitem__, reverse=True)
        matches.append({bot: place for place, bot in enumerate(order, 1)})
    return matches


def test_the_standings_are_the_final_tables_ratings() -> None:
    matches = played(60)
    standings = Standings()
    for places in matches:
        standings.add("g", places)
    standings.refresh(final=True)
    table = rate([[places] for places in matches], samples=20)
    assert [(bot, round(elo, 6)) for bot, elo, _, _ in standings.ranked("g")] == [
        (rating.bot, round(rating.elo, 6)) for rating in table
    ]


def test_a_fit_starts_at_most_every_few_seconds_and_the_last_one_counts_everything(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(display, "INLINE_SECONDS", float("inf"))  # every fit here, however loaded
    now = [100.0]
    standings = Standings(every=3.0, clock=lambda: now[0])
    matches = played(20)
    standings.add("g", matches[0])
    standings.refresh()
    assert standings.fitted == {"g": 1}
    for places in matches[1:10]:
        standings.add("g", places)
        standings.refresh()
    assert standings.fitted == {"g": 1}  # within 3 s of the last fit: the shown one stays
    now[0] += 3.0
    standings.refresh()
    assert standings.fitted == {"g": 10}
    for places in matches[10:]:
        standings.add("g", places)
    standings.refresh(final=True)
    assert standings.fitted == {"g": 20}


def test_once_a_fit_is_slow_the_next_ones_run_in_a_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(display, "INLINE_SECONDS", 0.0)
    standings = Standings(every=0.0)
    matches = played(30)
    for places in matches[:10]:
        standings.add("g", places)
    standings.refresh()  # on this thread, and slower than 0 s
    assert standings.fitted == {"g": 10}
    for places in matches[10:]:
        standings.add("g", places)
    standings.refresh()
    assert "g" in standings._running and standings.fitted == {"g": 10}  # the worker's, not shown yet
    standings.refresh(final=True)
    assert standings.fitted == {"g": 30}
    assert standings.elo["g"] == display.standings_fit(matches, standings.model)
