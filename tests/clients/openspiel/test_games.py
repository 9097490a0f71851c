"""Croupier's games as OpenSpiel games: OpenSpiel's own checks on every variant, chance as the
engine draws it, observations from the seat's view alone, and OpenSpiel's ISMCTS playing them."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel is the openspiel extra (in the dev extras)")

from croupier.clients.openspiel import games as bridge  # noqa: E402  (after the skip)
from croupier.clients.pettingzoo.table import rewards  # noqa: E402
from croupier.engine.core import options_to_dict  # noqa: E402
from croupier.engine.games import GAMES  # noqa: E402
from croupier.engine.rng import Rng  # noqa: E402

NAMES = sorted(GAMES)


def variant_parameters(name: str, options: Any) -> dict[str, Any]:
    values = options_to_dict(options)
    values.pop("timing", None) if name == "pair_battle" else None
    return {key: bridge.UNSET if value is None else value for key, value in values.items()}


def variants() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for name in NAMES:
        for options in GAMES[name].test_variants:
            if name == "pair_battle" and options.timing.value != "lockstep":
                continue  # real time is played in lockstep here; the lockstep variants cover it
            found.append((name, variant_parameters(name, options)))
    return found


def play_randomly(game: Any, seed: int) -> Any:
    rnd = random.Random(seed)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(rnd.choices(outcomes, probabilities)[0])
        else:
            state.apply_action(rnd.choice(state.legal_actions()))
    return state


def test_every_game_is_registered_with_every_option_as_a_parameter() -> None:
    for name in NAMES:
        game = pyspiel.load_game(f"croupier_{name}")
        expected = set(options_to_dict(GAMES[name].options())) - (
            {"timing"} if name == "pair_battle" else set()
        )
        assert set(game.get_type().parameter_specification) == expected, name


@pytest.mark.parametrize(("name", "params"), variants(), ids=lambda v: str(v))
def test_openspiels_random_simulation_test_passes(name: str, params: dict[str, Any]) -> None:
    """OpenSpiel's own checks of a game (legal actions, chance, returns, clones, observations).
    Without its ``serialize`` round trip: on the compiled engine, pyspiel's
    ``deserialize_game_and_state`` fails building the game's options (it passes on pure Python);
    a state pickles and replays from its history instead (the next test)."""
    pyspiel.random_sim_test(
        pyspiel.load_game(f"croupier_{name}", params), num_sims=1, serialize=False, verbose=False
    )


@pytest.mark.parametrize("name", NAMES)
def test_a_state_pickles_and_copies_as_the_actions_that_led_to_it(name: str) -> None:
    import copy
    import pickle

    game = pyspiel.load_game(f"croupier_{name}")
    rnd = random.Random(9)
    state = game.new_initial_state()
    for _ in range(300):
        if state.is_terminal():
            break
        if state.is_chance_node():
            state.apply_action(rnd.randrange(len(state.chance_outcomes())))
        else:
            state.apply_action(rnd.choice(state.legal_actions()))
    for twin in (pickle.loads(pickle.dumps(state)), copy.deepcopy(state), state.clone()):
        assert twin.history() == state.history() and str(twin) == str(state)
        assert twin.is_terminal() or twin.legal_actions() == state.legal_actions()


@pytest.mark.parametrize("name", NAMES)
def test_chance_is_the_engines_legal_actions_sorted_and_returns_its_places(name: str) -> None:
    game = pyspiel.load_game(f"croupier_{name}")
    rnd = random.Random(7)
    state = game.new_initial_state()
    picks = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            assert abs(sum(p for _, p in outcomes) - 1.0) < 1e-9
            assert len(outcomes) <= game.max_chance_outcomes()
            state.apply_action(rnd.randrange(len(outcomes)))
            picks += 1
        else:
            legal = state.legal_actions()
            assert legal == sorted(legal) and len(legal) == len(
                state.engine.legal_actions(state.current_player())
            )
            state.apply_action(rnd.choice(legal))
    assert picks >= 10, "the deal is made of chance nodes"
    assert state.returns() == rewards(state.engine.outcome(), bridge.REWARD)


def test_a_die_is_one_chance_node_of_six_equal_outcomes() -> None:
    """Platinum Fish rolls in play: every roll the engine makes is a node of 6 outcomes, 1/6 each."""
    game = pyspiel.load_game("croupier_platinum_fish", {"players": 2})
    rnd = random.Random(3)
    state = game.new_initial_state()
    dealt = False
    sixes = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            if dealt and len(outcomes) == 6:
                assert all(p == pytest.approx(1 / 6) for _, p in outcomes)
                sixes += 1
            state.apply_action(rnd.randrange(len(outcomes)))
        else:
            dealt = True
            state.apply_action(rnd.choice(state.legal_actions()))
    assert sixes > 0


@pytest.mark.parametrize("name", NAMES)
def test_the_same_chance_outcomes_make_the_same_match(name: str) -> None:
    game = pyspiel.load_game(f"croupier_{name}")
    first = play_randomly(game, seed=11)
    again = game.new_initial_state()
    for action in first.history():
        again.apply_action(action)
    assert again.is_terminal() and again.returns() == first.returns()
    assert repr(again.engine.full_view()) == repr(first.engine.full_view())


def observed(state: Any, seat: int) -> tuple[str, str, str, bytes, bytes]:
    return (
        state.information_state_string(seat),
        state.observation_string(seat),
        str(state.resample_from_infostate(seat, lambda: 0.5).information_state_string(seat)),
        np.asarray(state.observation_tensor(seat), np.float32).tobytes(),
        np.asarray(state.information_state_tensor(seat), np.float32).tobytes(),
    )


@pytest.mark.parametrize("name", NAMES)
def test_the_information_state_tensor_is_the_observation_and_the_seat_s_own_actions(name: str) -> None:
    """What a seat did is part of its information state: the tensor (one size for every state, as
    OpenSpiel's learners need) is the observation tensor followed by how many times the seat took
    each action slot, so two histories its view alone cannot tell apart are told apart."""
    game = pyspiel.load_game(f"croupier_{name}")
    rnd = random.Random(3)
    state = game.new_initial_state()
    taken = np.zeros((game.num_players(), game.num_distinct_actions()))
    while not state.is_terminal() and taken.sum() < 40:
        if state.is_chance_node():
            state.apply_action(rnd.randrange(len(state.chance_outcomes())))
            continue
        seat, action = state.current_player(), rnd.choice(state.legal_actions())
        taken[seat, action] += 1
        state.apply_action(action)
    (observation,) = game.observation_tensor_shape()
    assert game.information_state_tensor_shape() == [observation + game.num_distinct_actions()]
    for seat in range(game.num_players()):
        tensor = np.asarray(state.information_state_tensor(seat))
        assert list(tensor[:observation]) == list(state.observation_tensor(seat))
        assert list(tensor[observation:]) == list(taken[seat])
    assert taken.sum() > 0


def test_what_a_seat_observes_is_unchanged_when_what_it_cannot_see_is_dealt_again() -> None:
    """10,000 re-deals of the cards a seat cannot see, at random points of random matches of
    every game: its information state (string and tensor), observation string and tensor never change."""
    rnd = random.Random(5)
    resamples = 0
    while resamples < 10_000:
        name = rnd.choice(NAMES)
        game = pyspiel.load_game(f"croupier_{name}")
        state = play_randomly_to(game, rnd, stop=rnd.random())
        if state is None:
            continue
        for seat in range(game.num_players()):
            before = observed(state, seat)
            for _ in range(50):
                twin = state.clone()
                twin._engine = state.engine.resample_hidden(seat, Rng(rnd.getrandbits(32)))
                assert observed(twin, seat) == before, (name, seat)
                resamples += 1


def play_randomly_to(game: Any, rnd: random.Random, stop: float) -> Any:
    """A state at a player's turn some way into a random match, or None if it ended first."""
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(rnd.randrange(len(state.chance_outcomes())))
        elif rnd.random() < stop / 20:
            return state
        else:
            state.apply_action(rnd.choice(state.legal_actions()))
    return None


@pytest.mark.parametrize("name", NAMES)
def test_openspiels_ismcts_plays_a_match_of_every_game(name: str) -> None:
    from open_spiel.python.algorithms import ismcts, mcts

    short = {"chinese_ten": {"target": 100}, "spoil_five": {"deals": 2}}.get(name, {})
    game = pyspiel.load_game(f"croupier_{name}", {"players": 2, **short})
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(1))
    bot = ismcts.ISMCTSBot(
        game, evaluator, uct_c=2.0, max_simulations=5, random_state=np.random.RandomState(2)
    )
    rnd = random.Random(2)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(rnd.randrange(len(state.chance_outcomes())))
        elif state.current_player() == 0:
            action = bot.step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
        else:
            state.apply_action(rnd.choice(state.legal_actions()))
    assert len(state.returns()) == 2
