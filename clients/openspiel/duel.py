"""Matches inside OpenSpiel between OpenSpiel's bots and Croupier's bundled ones, on duplicate
deals: what docs/training.md's ISMCTS figures are measured with (bench/openspiel_bridge.py).

A player is a function of the state and its seat returning an action id. A Croupier policy
(``choose(view, legal, options)``, as the bundled heuristics are) plays from its seat's engine
view alone, as it would through the referee. Chance draws from a generator seeded by the deal:
both rotations of a set see the same deal (the first draws), and whatever chance does later
draws from the same stream, as duplicate dealing gives it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from croupier.clients.openspiel.games import CroupierState
from croupier.clients.pettingzoo.table import legal_by_slot

Player = Callable[[CroupierState, int], int]


def croupier_player(policy: Callable[[Any, list[Any], Any], int]) -> Player:
    """A bundled bot's ``choose(view, legal, options)`` as a player: it sees its view, nothing more."""

    def play(state: CroupierState, seat: int) -> int:
        engine = state.engine
        by_slot = legal_by_slot(state._coding, engine, seat)
        legal = engine.legal_actions(seat)
        action = legal[policy(engine.view(seat), legal, state._options)]
        return next(slot for slot, listed in by_slot.items() if listed == action)

    return play


def random_player(seed: int) -> Player:
    rng = random.Random(seed)
    return lambda state, seat: rng.choice(state.legal_actions())


def openspiel_player(bot: Any) -> Player:
    """An OpenSpiel ``pyspiel.Bot`` (ISMCTS, MCTS, a policy): its ``step`` on the state."""
    return lambda state, seat: int(bot.step(state))


def play(game: Any, players: Sequence[Player], deal: int) -> list[float]:
    """One match: ``players[seat]`` plays seat ``seat``; chance drawn from the deal's seed. The
    returns by seat."""
    chance = np.random.RandomState(deal)
    state: CroupierState = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(chance.choice(outcomes, p=probabilities)))
        else:
            seat = state.current_player()
            state.apply_action(players[seat](state, seat))
    return list(state.returns())


def duplicate_set(game: Any, first: Player, second: Player, deal: int) -> float:
    """A two-seat duplicate set: each player in each seat on one deal; ``first``'s mean return."""
    forward = play(game, [first, second], deal)[0]
    backward = play(game, [second, first], deal)[1]
    return (forward + backward) / 2
