"""OpenSpiel's algorithms as Croupier bots, so they meet Croupier's bots through the referee, in
matches, tournaments and ladders: ``croupier bot --openspiel ismcts`` (or ``mcts``), and as a
strategy anywhere a bot is named, ``croupier.clients.openspiel.searchers:Ismcts``.

A bot has only its view. At each decision it builds a world its view cannot tell from the real one
(``clients/bots/worlds.py``, the bosses' own), takes it as the OpenSpiel state of that world and
asks the algorithm: ISMCTS re-deals what the seat cannot see at every simulation
(``resample_from_infostate``), so the world is only where its search starts; MCTS searches that one
world, as a determinized player does. Budgets are simulations, not time, so a seed replays a
match. Pair Battle in real time is a race, not a turn (OpenSpiel has no clock): there the bot plays
the bundled heuristic at once, as the bosses do.
"""

from __future__ import annotations

import importlib
import random
from typing import Any, ClassVar

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

from croupier.clients.bots.worlds import searchable, world
from croupier.clients.openspiel.games import PREFIX, UNSET, CroupierState
from croupier.clients.pettingzoo.spaces import CODINGS
from croupier.clients.pettingzoo.table import legal_by_slot
from croupier.clients.sdk import Bot, Match
from croupier.engine.core import options_to_dict
from croupier.engine.rng import Rng

ALGORITHMS = ("ismcts", "mcts")
"""What ``croupier bot --openspiel`` plays: OpenSpiel's information-set MCTS, or MCTS on one world."""

SIMULATIONS = 100
"""Simulations a decision, each a random rollout to the end of the match."""


def game_of(match: Match) -> Any:
    """The OpenSpiel game of the match's game and options (Pair Battle in lockstep)."""
    values = options_to_dict(match.options)
    values.pop("timing", None)
    params = {name: UNSET if value is None else value for name, value in values.items()}
    return pyspiel.load_game(PREFIX + match.game, params)


class OpenSpielBot(Bot):
    """One of OpenSpiel's search bots, playing from a world built from its view."""

    algorithm: ClassVar[str] = "ismcts"

    def __init__(self, match: Match, seed: int = 0, simulations: int = SIMULATIONS) -> None:
        super().__init__(match)
        self.seed = random.Random(f"{seed}/{match.id}/{match.seat}").getrandbits(31)
        self.worlds = Rng(self.seed)
        self.game = game_of(match)
        self.coding = CODINGS[match.game]
        self.heuristic = importlib.import_module(f"croupier.clients.bots.{match.game}").choose
        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(self.seed))
        searcher: Any
        if self.algorithm == "ismcts":
            searcher = ismcts.ISMCTSBot(
                self.game, evaluator, uct_c=2.0, max_simulations=simulations,
                random_state=np.random.RandomState(self.seed),
            )  # fmt: skip
            # its worlds re-dealt from this bot's own generator (OpenSpiel's default sampler is
            # seeded afresh), so that a seed replays the match
            draws = np.random.RandomState(self.seed + 1)
            searcher.set_resampler(
                lambda state, player: state.resample_from_infostate(player, draws.random_sample)
            )
        else:
            searcher = mcts.MCTSBot(
                self.game, uct_c=2.0, max_simulations=simulations, evaluator=evaluator,
                random_state=np.random.RandomState(self.seed), solve=False,
            )  # fmt: skip
        self.searcher = searcher

    def choose(self, view: Any, legal: list[Any]) -> int:
        if len(legal) == 1:
            return 0
        if not searchable(self.match.game, view):
            return int(self.heuristic(view, legal, self.match.options))
        state = world(self.match.game, view, self.match.options, legal, self.worlds)
        slot = int(self.searcher.step(CroupierState(self.game, state)))
        action = legal_by_slot(self.coding, state, view.seat)[slot]
        return legal.index(action)


class Ismcts(OpenSpielBot):
    """OpenSpiel's information-set MCTS (Cowling, Powley and Whitehouse)."""

    algorithm = "ismcts"


class Mcts(OpenSpielBot):
    """OpenSpiel's MCTS on one world drawn from the view (a determinized player)."""

    algorithm = "mcts"
