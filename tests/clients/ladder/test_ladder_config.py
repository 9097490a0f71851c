"""A ladder file: its limits read and checked, every problem named in one go."""

from __future__ import annotations

import pytest

from croupier.clients.ladder.settings import parse
from croupier.clients.tournament.config import ConfigError
from croupier.server.registration import DEFAULT_PER_HOUR, OpenRegistration

GAME = {"game": "platinum_fish", "seats": 2}


def test_a_ladder_file_gives_games_limits_and_epochs_and_its_settings_leave_the_limits_out() -> None:
    config = parse(
        {"name": "open", "epoch_sets": 50, "sets_per_hour": 30, "concurrent_sets": 2, "games": [GAME]}
    )
    assert (config.epoch_sets, config.sets_per_hour, config.concurrent_sets) == (50, 30, 2)
    assert config.rotation_count("platinum_fish") == 2
    looser = parse({"name": "open", "sets_per_hour": 90, "games": [GAME]})
    assert looser.fingerprint() == config.fingerprint()  # limits may change; the deals' settings not
    assert parse({"name": "open", "games": [{**GAME, "seats": 3}]}).fingerprint() != config.fingerprint()


def test_every_problem_of_a_ladder_file_is_named_at_once() -> None:
    with pytest.raises(ConfigError) as caught:
        parse({"name": "a b", "floor": 2, "epoch_sets": 0, "bots": [], "games": [{"game": "platinum_fsh"}]})
    problems = "\n".join(caught.value.problems)
    for expected in ("name:", "floor: a number from 0 to 1", "epoch_sets:", "unknown setting 'bots'",
                     "did you mean platinum_fish"):  # fmt: skip
        assert expected in problems, problems


def test_a_ladder_file_opens_registration_within_its_limits() -> None:
    assert parse({"name": "open", "games": [GAME]}).registration is None
    assert parse({"name": "open", "games": [GAME], "registration": {"open": False}}).registration is None
    opened = parse({"name": "open", "games": [GAME], "registration": {"open": True, "per_address": 2}})
    assert opened.registration == OpenRegistration(per_address=2, per_hour=DEFAULT_PER_HOUR)
    with pytest.raises(ConfigError) as caught:
        parse({"name": "open", "games": [GAME], "registration": {"open": "yes", "per_hour": 0, "per_ip": 1}})
    assert caught.value.problems == [
        "registration.open: true or false is required, not 'yes'",
        "registration.per_hour: a whole number of at least 1 is required, not 0",
        "registration: unknown setting 'per_ip'",
    ]
