"""The PettingZoo environments: PettingZoo's own API tests, seeding, no leaks, rendering, rewards."""

from __future__ import annotations

import dataclasses
import os
import random
import re
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test
from pettingzoo.utils.conversions import aec_to_parallel, parallel_to_aec

from croupier.clients.bots import strategy
from croupier.clients.pettingzoo import CODINGS, env, example, parallel_env
from croupier.clients.pettingzoo.encoding import Vector, card_index, put_cards
from croupier.clients.pettingzoo.spaces import ChineseTenCoding, Coding
from croupier.clients.pettingzoo.table import Observation, legal_by_slot, observation, table_options
from croupier.clients.sdk import play_offline
from croupier.engine.cards import STANDARD_DECK
from croupier.engine.core import GameState, options_to_dict
from croupier.engine.games import GAMES
from croupier.engine.games.chinese_ten import ChineseTenView
from croupier.engine.rng import Rng
from tests.engine import conformance

EXPECTED_WARNINGS = re.compile(
    "Observation is not a NumPy array"
    "|Observation space for each agent probably should be gymnasium.spaces.box"
)
"""What PettingZoo's api_test says of every masked environment, its own classic card games included:
the observation is the conventional {"observation", "action_mask"} dict. Any other warning fails."""


def variants() -> list[Any]:
    """Every game at every player count, and every variant the conformance harness plays."""
    params = []
    for name, spec in sorted(GAMES.items()):
        seen = set()
        options = [{"players": n} for n in range(spec.min_players, spec.max_players + 1)]
        options += [options_to_dict(v) for v in spec.test_variants]
        for values in options:
            chosen = options_to_dict(table_options(name, values))
            key = repr(sorted(chosen.items()))
            if key not in seen:
                seen.add(key)
                params.append(pytest.param(name, chosen, id=f"{name}-{len(seen)}-{values}"))
    return params


def quick(values: dict[str, Any], game: str) -> dict[str, Any]:
    """Shorter matches for the API tests: fewer deals, a lower target."""
    if game == "spoil_five":
        return {**values, "deals": 2}
    if game == "chinese_ten":
        return {**values, "target": 100}
    return values


def only_expected_warnings(check: Callable[[], None]) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check()
    unexpected = {str(w.message) for w in caught if not EXPECTED_WARNINGS.search(str(w.message))}
    assert not unexpected, unexpected


@pytest.mark.parametrize(("game", "values"), variants())
def test_pettingzoos_own_api_test_passes(game: str, values: dict[str, Any]) -> None:
    only_expected_warnings(lambda: api_test(env(game, **quick(values, game)), num_cycles=400))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_pettingzoos_own_parallel_api_test_passes_for_lockstep_pair_battle(players: int) -> None:
    only_expected_warnings(lambda: parallel_api_test(parallel_env(players=players), num_cycles=400))


@pytest.mark.parametrize("game", sorted(GAMES))
def test_pettingzoos_own_seed_test_passes(game: str) -> None:
    seed_test(lambda: env(game, **quick({}, game)), num_cycles=200)


def test_pettingzoos_own_parallel_seed_test_passes_though_it_plays_without_the_mask() -> None:
    # It samples every answer from the whole action space: the first tick is illegal and ends it.
    parallel_seed_test(lambda: parallel_env(players=3), num_cycles=200)


def test_pettingzoos_conversions_of_the_parallel_env_pass_its_api_tests() -> None:
    only_expected_warnings(lambda: api_test(parallel_to_aec(parallel_env(players=3)), num_cycles=200))
    round_trip = aec_to_parallel(parallel_to_aec(parallel_env(players=2)))
    only_expected_warnings(lambda: parallel_api_test(round_trip, num_cycles=200))


def play_episode(aec: Any, seed: int, chooser: random.Random) -> list[tuple[str, Observation, float]]:
    """One episode with random legal actions: each step's agent, observation and reward."""
    aec.reset(seed=seed)
    steps = []
    for agent in aec.agent_iter():
        obs, reward, terminated, truncated, _ = aec.last()
        steps.append((agent, obs, reward))
        if terminated or truncated:
            aec.step(None)
        else:
            aec.step(int(chooser.choice(np.flatnonzero(obs["action_mask"]))))
    return steps


@pytest.mark.parametrize("game", sorted(GAMES))
def test_reset_with_a_seed_replays_the_same_game(game: str) -> None:
    aec = env(game, **quick({}, game))
    first = play_episode(aec, 11, random.Random(1))
    first_actions = list(aec.table.actions)
    again = play_episode(aec, 11, random.Random(1))
    assert [a for a, _, _ in first] == [a for a, _, _ in again]
    assert all(
        np.array_equal(o1["observation"], o2["observation"])
        for (_, o1, _), (_, o2, _) in zip(first, again, strict=True)
    )
    assert aec.table.actions == first_actions
    other = play_episode(aec, 12, random.Random(1))
    assert [o["observation"].tobytes() for _, o, _ in other] != [
        o["observation"].tobytes() for _, o, _ in first
    ]


def test_reset_without_a_seed_continues_the_seeded_sequence() -> None:
    aec = env("spoil_five", players=3)
    aec.reset(seed=5)
    aec.reset()
    following = aec.table.seed
    aec.reset(seed=5)
    aec.reset()
    assert aec.table.seed == following != 5


# --- no leaks: the conformance harness's re-deal ------------------------------------------------


def observe(coding: Coding, state: GameState[Any, Any], seat: int, view: Any) -> Observation:
    return observation(coding, view, legal_by_slot(coding, state, seat))


def leaks(
    game: str, values: dict[str, Any], observe: Callable[[GameState[Any, Any], int], Observation]
) -> int:
    """Random playouts; at every step re-deal what each seat cannot see and compare its observation.
    Returns how many re-deals changed the hidden cards (so the check is not vacuous)."""
    spec = GAMES[game]
    options = table_options(game, quick(values, game))
    changed = 0
    for seed in range(2):
        playout = conformance.Playout(spec, options, seed)
        chooser, rng = random.Random(seed), Rng(seed + 1)
        while not playout.state.is_over():
            state = playout.state
            for seat in range(state.players):
                twin = state.resample_hidden(seat, rng)
                mine, theirs = observe(state, seat), observe(twin, seat)
                assert np.array_equal(mine["observation"], theirs["observation"]), (
                    f"seat {seat}'s observation changed when only cards it cannot see were re-dealt"
                )
                assert np.array_equal(mine["action_mask"], theirs["action_mask"])
                changed += twin.full_view() != state.full_view()
            playout.step(chooser)
    return changed


@pytest.mark.parametrize(("game", "values"), [(g, {}) for g in sorted(GAMES)])
def test_an_observation_does_not_change_when_unseen_cards_are_redealt(
    game: str, values: dict[str, Any]
) -> None:
    coding = CODINGS[game]
    assert leaks(game, values, lambda state, seat: observe(coding, state, seat, state.view(seat))) > 0


class ReadsEveryHand(ChineseTenCoding):
    """A careless encoder: it puts every hand it is shown into the observation."""

    def encode(self, view: ChineseTenView) -> Vector:
        out = super().encode(view)
        for seat, hand in enumerate(view.hands):
            if seat != view.seat and hand is not None:
                put_cards(out, self.theirs, hand)
        return out


def test_the_no_leak_check_fails_on_an_observation_built_from_more_than_the_seats_view() -> None:
    careless = ReadsEveryHand()

    def from_the_full_view(state: GameState[Any, Any], seat: int) -> Observation:
        return observe(careless, state, seat, dataclasses.replace(state.full_view(), seat=seat))

    with pytest.raises(AssertionError, match="cards it cannot see"):
        leaks("chinese_ten", {}, from_the_full_view)
    # Fed the seat's own view, as the environments do, even the careless encoder has nothing to leak.
    assert leaks("chinese_ten", {}, lambda state, seat: observe(careless, state, seat, state.view(seat)))


def test_a_cards_place_in_every_card_feature_is_its_place_in_the_standard_deck() -> None:
    assert [card_index(card) for card in STANDARD_DECK] == list(range(52))


# --- what a user sees ------------------------------------------------------------------------


def test_the_engine_view_is_in_info_and_the_mask_matches_the_legal_actions() -> None:
    aec = env("spoil_five", players=4)
    aec.reset(seed=3)
    obs, _, _, _, info = aec.last()
    seat = aec.possible_agents.index(aec.agent_selection)
    assert info["view"] == aec.table.state.view(seat) and info["view"].hands[seat] is not None
    legal = aec.table.state.legal_actions(seat)
    assert int(obs["action_mask"].sum()) == len(legal)
    assert obs["observation"].dtype == np.float32 and aec.observation_space(aec.agent_selection).contains(obs)


def test_what_is_not_an_action_of_the_space_is_refused_with_an_error_and_changes_nothing() -> None:
    aec = env("chinese_ten", players=3)
    aec.reset(seed=2)
    obs, *_ = aec.last()
    before = aec.table.state.copy()
    legal = int(np.flatnonzero(obs["action_mask"])[0])
    for wrong in (None, float(legal), str(legal), True, -1, 364):
        with pytest.raises(
            ValueError, match=rf"action {re.escape(repr(wrong))} is not in the action space \("
        ):
            aec.step(wrong)
    assert (
        aec.table.state == before and aec.agent_selection == "player_1" and not any(aec.terminations.values())
    )


def test_an_illegal_action_ends_the_episode_as_in_pettingzoos_classic_games() -> None:
    aec = env("chinese_ten", players=3, illegal_reward=-2.0)
    aec.reset(seed=2)
    obs, *_ = aec.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    before, actions = aec.table.state.copy(), list(aec.table.actions)
    aec.step(illegal)
    assert aec.table.state == before and aec.table.actions == actions, "nothing is applied"
    assert aec.terminations == dict.fromkeys(aec.agents, True)
    assert not any(aec.truncations.values())
    assert aec.rewards == {"player_0": 0.0, "player_1": -2.0, "player_2": 0.0}
    assert re.fullmatch(
        rf"player_1: action {illegal} is not legal now; legal: \d+ \(.*", aec.infos["player_1"]["illegal"]
    )
    assert all("illegal" not in aec.infos[a] and aec.infos[a]["view"] for a in ("player_0", "player_2"))
    rewards = {}
    for agent in aec.agent_iter():  # every agent sees the end, with its reward, then steps out
        _, rewards[agent], terminated, _, _ = aec.last()
        assert terminated
        aec.step(None)
    assert rewards == {"player_0": 0.0, "player_1": -2.0, "player_2": 0.0} and not aec.agents
    aec.reset(seed=2)
    assert aec.agents == aec.possible_agents and not any(aec.terminations.values())


@pytest.mark.parametrize(("reward", "expected"), [("place", [1.0, 0.0, -1.0]), ("score", None)])
def test_rewards_come_at_the_end_from_places_or_scores(reward: str, expected: list[float] | None) -> None:
    aec = env("spoil_five", players=3, deals=2, reward=reward)
    steps = play_episode(aec, 4, random.Random(4))
    ends = {agent: r for agent, _, r in steps[-3:]}
    assert all(r == 0 for _, _, r in steps[:-3]), "nothing is rewarded before the end"
    outcome = aec.table.state.outcome()
    if reward == "place":
        by_place = {1: 1.0, 2: 0.0, 3: -1.0}
        assert [ends[f"player_{s}"] for s in range(3)] == [by_place[p] for p in outcome.places]
    else:
        mean = sum(outcome.scores) / 3
        assert [ends[f"player_{s}"] for s in range(3)] == pytest.approx([s - mean for s in outcome.scores])
    with pytest.raises(ValueError, match="reward must be one of place, score"):
        env("spoil_five", reward="chips")


def test_a_match_is_truncated_after_max_steps_without_reward() -> None:
    aec = env("chinese_ten", players=2, max_steps=5)
    steps = play_episode(aec, 1, random.Random(1))
    assert len(aec.table.actions) == 5 and not aec.table.state.is_over()
    assert all(r == 0 for _, _, r in steps)


def test_real_time_pair_battle_is_played_in_lockstep() -> None:
    aec = env("pair_battle", players=3, timing="realtime")
    assert aec.table.options.timing.value == "lockstep"
    assert aec.agents == ["player_0", "player_1", "player_2"] and aec.agent_selection == "player_0"


def test_bad_options_are_refused_with_the_games_reason() -> None:
    with pytest.raises(ValueError, match="Spoil Five is played by 2 to 10 players, not 11"):
        env("spoil_five", players=11)
    with pytest.raises(ValueError, match="unknown game 'bridge'"):
        env("bridge")


def test_ansi_rendering_is_the_spectators_screen_as_plain_text_without_hidden_cards() -> None:
    aec = env("chinese_ten", players=3, target=1, render_mode="ansi")
    aec.reset(seed=8)
    screen = aec.render()
    assert "\x1b" not in screen  # printed, logged or compared as text: no colour escapes
    assert "Chinese Ten" in screen and "seed 8" in screen and "player_2" in screen
    hidden = [card for hand in aec.table.state.full_view().hands for card in hand]
    assert "▮" in screen and not any(f" {c.rank}{c.suit.symbol} " in screen for c in hidden[:3])
    play_episode(aec, 8, random.Random(0))
    assert "finished" in aec.render() and "\x1b" not in aec.render()
    assert env("chinese_ten").render() is None


def test_the_parallel_env_ends_the_episode_on_a_tick_with_an_illegal_answer_and_applies_none_of_it() -> None:
    par = parallel_env(players=3)
    obs, _ = par.reset(seed=1)
    before = par.table.state.copy()
    legal = int(np.flatnonzero(obs["player_0"]["action_mask"])[0])
    illegal = int(np.flatnonzero(obs["player_1"]["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="missing \\['player_1', 'player_2'\\]"):
        par.step({"player_0": legal})
    with pytest.raises(ValueError, match="action 'pass' is not in the action space"):
        par.step({"player_0": legal, "player_1": "pass", "player_2": legal})
    assert par.table.state == before and par.agents == par.possible_agents
    _, rewards, terminations, truncations, infos = par.step(
        {"player_0": legal, "player_1": illegal, "player_2": np.int64(illegal)}
    )
    assert par.table.state == before and not par.table.actions, "no answer of the tick is applied"
    assert rewards == {"player_0": 0.0, "player_1": -1.0, "player_2": -1.0}
    assert all(terminations.values()) and not any(truncations.values()) and par.agents == []
    assert "illegal" not in infos["player_0"]
    assert infos["player_2"]["illegal"].startswith(f"player_2: action {illegal} is not legal now; legal: ")


# --- observations encoded once per change ------------------------------------------------------


@pytest.mark.parametrize(("game", "values"), variants())
def test_observations_updated_from_the_last_equal_observations_encoded_afresh(
    game: str, values: dict[str, Any]
) -> None:
    """Random playouts, observed as a learner does (the agent to act) and as api_test does (every
    agent, twice): each observation equals the one encoded from zeros, and none handed out changes."""
    aec = env(game, **quick(values, game))
    coding = aec.table.coding
    for seed, everyone in ((1, False), (2, True)):
        aec.reset(seed=seed)
        chooser, handed = random.Random(seed), []
        for agent in aec.agent_iter():
            obs, _, terminated, truncated, _ = aec.last()
            for other in aec.agents if everyone else [agent]:
                seat, cached = aec.seats[other], aec.observe(other)
                state = aec.table.state
                fresh = observe(coding, state, seat, state.view(seat))
                assert np.array_equal(cached["observation"], fresh["observation"]), (
                    other,
                    len(aec.table.actions),
                )
                assert np.array_equal(cached["action_mask"], fresh["action_mask"])
                assert aec.observe(other) is cached, "observed again before a change: the same observation"
                handed.append((cached["observation"], cached["observation"].copy()))
            aec.step(
                None if terminated or truncated else int(chooser.choice(np.flatnonzero(obs["action_mask"])))
            )
        assert all(np.array_equal(vector, copy) for vector, copy in handed), "an observation changed after"


# --- the docs -------------------------------------------------------------------------------


def test_docs_show_every_games_observation_layout_and_action_space() -> None:
    text = (Path(__file__).resolve().parents[3] / "docs" / "training.md").read_text(encoding="utf-8")
    for name, coding in CODINGS.items():
        for row in coding.layout.table()[2:]:
            assert row in text, f"docs/training.md lacks {name}'s row {row}"
        for where, meaning in coding.action_rows():
            assert f"| {where} | {meaning} |" in text, f"docs/training.md lacks {name}'s actions {where}"
        assert f"{coding.layout.size} numbers" in text and f"{coding.action_count} actions" in text


# --- the example: train, then play through the SDK -----------------------------------------------


def test_the_example_trains_then_plays_through_the_sdk_and_in_croupier_match(
    capfd: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    weights, data = tmp_path / "policy.npz", tmp_path / "data"
    argv = ["--episodes", "30", "--matches", "2", "--save", str(weights), "--games", "1", "--target", "1"]
    assert example.main([*argv, "--data", str(data)]) == 0
    lines = capfd.readouterr().out.splitlines()
    assert re.fullmatch(
        r"trained on 30 deals: points above the table's mean [-+]\d+\.\d at first, .*", lines[0]
    )
    assert lines[1] == f"weights saved to {weights}"
    for line, opponent in zip(lines[2:4], ("random", "heuristic"), strict=True):
        assert re.fullmatch(rf"vs {opponent} x2 over 2 matches: mean place [1-3]\.\d\d \(untrained .*", line)
    # croupier match: the policy in a bot process of its own; one deal in each of 6 rotations (Williams)
    results = "\n".join(lines[4:])
    for bot in ("PolicyBot", "heuristic", "random"):  # the strategy's class names it
        assert re.search(rf"│ {bot}\s+│\s+6 │", results), results
    # The saved policy is a Bot any SDK runner loads by name, as `croupier bot --strategy` does.
    monkeypatch.setenv(example.POLICY_FILE, str(weights))
    spec = GAMES["chinese_ten"]
    bots = [
        strategy("croupier.clients.pettingzoo.example:PolicyBot"),
        strategy("heuristic"),
        strategy("random"),
    ]
    outcome = play_offline(spec, spec.options({"players": 3, "target": 1}), bots, seed=3)
    assert sorted(outcome.places) in ([1, 2, 3], [1, 1, 3], [1, 2, 2], [1, 1, 1])


def test_the_policy_bot_without_its_weights_stops_at_once_saying_so(tmp_path: Path) -> None:
    missing = tmp_path / "policy.npz"
    started = subprocess.run(
        [sys.executable, "-m", "croupier.clients.cli", "bot", "--strategy",
         "croupier.clients.pettingzoo.example:PolicyBot", "--server", "127.0.0.1:1", "--token", "bot_x"],
        env={**os.environ, example.POLICY_FILE: str(missing)}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert started.returncode == 2  # before connecting: no referee needed to learn it
    assert started.stderr.splitlines() == [
        f"the bot cannot start: cannot read the weights $CROUPIER_POLICY names, {missing}: "
        "No such file or directory"
    ]
