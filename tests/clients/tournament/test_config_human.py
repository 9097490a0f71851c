"""A person's seat in a tournament file (``human = true``): played in the runner's web viewer,
one match at a time, on fresh deals only (a person remembers a duplicate set's hands)."""

from __future__ import annotations

from typing import Any

import pytest

from croupier.clients.author.match_run import settings
from croupier.clients.tournament.config import ConfigError, parse
from croupier.clients.web.seat import BANK_MS, DECISION_MS


def tournament(**human: Any) -> dict[str, Any]:
    return {
        "name": "evening",
        "deals": "fresh",
        "games": [{"game": "spoil_five", "seats": 2}],
        "bots": [{"name": "ann", "human": True, **human}, {"name": "bot", "command": "croupier bot"}],
    }


def test_a_human_seat_is_played_by_no_process_one_match_at_a_time() -> None:
    config = parse(tournament())
    ann = config.bot("ann")
    assert ann.human and ann.command is None and ann.image is None and not ann.registered


@pytest.mark.parametrize(
    "change, problem",
    [
        (
            {"deals": "duplicate"},
            "ann (human = true) would be dealt each hand again in another seat and remember it",
        ),
        ({"processes": "per_rotation"}, 'use deals = "fresh" and processes = "shared"'),
        ({"bots": [{"name": "ann", "human": True}, {"name": "bea", "human": True}]}, "ann, bea: one person"),
        (
            {"bots": [{"name": "ann", "human": True, "command": "x"}]},
            "either a command (the runner launches it) or human = true",
        ),
        (
            {"bots": [{"name": "ann", "human": True, "capacity": 2}, {"name": "b", "external": True}]},
            "a person plays one match at a time",
        ),
    ],
)
def test_a_human_seat_that_could_not_be_played_fairly_is_refused(
    change: dict[str, Any], problem: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        parse({**tournament(), **change})
    assert problem in str(refused.value)


def test_croupier_match_human_takes_the_first_seat_on_fresh_deals_and_a_person_s_clocks() -> None:
    config = parse(settings("pair_battle", ["heuristic"], 1, {}, seed=3, human=True))
    assert [bot.name for bot in config.bots] == ["you", "heuristic"] and config.bots[0].human
    assert config.deals.value == "fresh" and config.games[0].seats == 2
    clock = config.games[0].clock
    assert (clock.decision_ms, clock.bank_ms) == (DECISION_MS, BANK_MS) == (60_000, 300_000)
    bots_only = parse(settings("pair_battle", ["heuristic", "random"], 1, {}, seed=3))
    assert bots_only.games[0].clock.decision_ms is None and bots_only.deals.value == "duplicate"
