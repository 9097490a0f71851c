"""Croupier's games as OpenSpiel games, over the engine itself: no second copy of any rule.

- Actions are the PettingZoo environments' fixed slots (clients/pettingzoo/spaces.py): an action id
  always means the same kind of move, and the legal ones are listed sorted.
- Chance is explicit: every draw the engine makes (the deal's shuffle, a cut, dice, a reshuffled
  stock) is a run of chance nodes of equally likely outcomes (``chance.py`` says how), so a
  tree-walking algorithm reads the probabilities the engine plays by.
- What a player observes is built from its seat's engine view alone, the view the referee sends
  its bot: the observation string is that view, the tensor is the PettingZoo encoding of it,
  and the information state adds a digest of every view the seat had at its own earlier decisions
  (perfect recall: what it saw and has since lost, a robbed card say, still tells states apart).
  The information-state tensor, which must have one size, is the observation tensor followed by
  how many times the seat took each action slot: what it did, not the order (the string has that).
- ``resample_from_infostate`` re-deals what the seat cannot see (the engine's ``resample_hidden``,
  the same re-dealing that proves the views leak nothing), so OpenSpiel's ISMCTS runs on our games.
- Pair Battle is played in lockstep: real time has no place in OpenSpiel's model of turns (the
  seats answering one tick act one after the other, none seeing another's answer).
"""

from __future__ import annotations

import functools
import hashlib
import random
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pyspiel

from croupier.clients.openspiel.chance import ChanceNeeded, ScriptedRng
from croupier.clients.pettingzoo.spaces import CODINGS, Coding
from croupier.clients.pettingzoo.table import legal_by_slot, rewards, table_options
from croupier.engine.cards import DOUBLE_DECK, STANDARD_DECK
from croupier.engine.core import Action, GameSpec, GameState, options_to_dict
from croupier.engine.games import GAMES, get_game
from croupier.engine.rng import Rng

PREFIX = "croupier_"
REWARD = "place"
"""Returns as the PettingZoo environments give them: 1 for first .. -1 for last, shared places share."""

MAX_GAME_LENGTH = {"chinese_ten": 5_000, "pair_battle": 5_000, "platinum_fish": 20_000, "spoil_five": 10_000}
"""Upper bounds on a match's decisions for OpenSpiel's ``max_game_length`` (it sizes buffers by it):
generous over the longest of the random playouts the tests make, at the games' largest tables."""

UNSET = 0
"""An option that may be unset (None: Spoil Five's ``deals``) is 0 as a game parameter."""


def parameters(spec: GameSpec[Any]) -> dict[str, Any]:
    """Every option of the game as an OpenSpiel parameter, with its default."""
    values = options_to_dict(spec.options())
    if spec.name == "pair_battle":
        del values["timing"]  # always lockstep here
    return {name: UNSET if value is None else value for name, value in values.items()}


def options_from_parameters(spec: GameSpec[Any], params: Mapping[str, Any]) -> Any:
    values = {**parameters(spec), **params}
    for name, default in options_to_dict(spec.options()).items():
        if default is None and values.get(name) == UNSET:
            values[name] = None
    return table_options(spec.name, values)


def deck_size(spec: GameSpec[Any]) -> int:
    """The most outcomes one chance pick can have: the first pick of a shuffle of the whole deck."""
    return len(DOUBLE_DECK) if spec.name == "platinum_fish" else len(STANDARD_DECK)


def game_type(spec: GameSpec[Any]) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=PREFIX + spec.name,
        long_name=f"Croupier {spec.title}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=spec.max_players,
        min_num_players=spec.min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=parameters(spec),
    )


class CroupierGame(pyspiel.Game):  # type: ignore[misc]
    """One of Croupier's games, with its options as the game's parameters."""

    spec: GameSpec[Any]

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        self._key = (self.spec.name, tuple(sorted((params or {}).items())))
        self.coding: Coding = CODINGS[self.spec.name]
        self.players: int = self.options.players
        info = pyspiel.GameInfo(
            num_distinct_actions=self.coding.action_count,
            max_chance_outcomes=MAX_CHANCE_OUTCOMES[self.spec.name],
            num_players=self.players,
            min_utility=-1.0,
            max_utility=1.0,
            max_game_length=MAX_GAME_LENGTH[self.spec.name],
        )
        super().__init__(TYPES[self.spec.name], info, dict(params or {}))

    @property
    def options(self) -> Any:
        """The engine's options of this game (not kept on the object: OpenSpiel copies games and
        states, and a compiled options object cannot be rebuilt by a copy)."""
        return _options(self._key)

    def new_initial_state(self) -> CroupierState:
        return CroupierState(self)

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: Mapping[str, Any] | None = None
    ) -> SeatObserver:
        if params:
            raise ValueError(f"observation parameters are not supported; given {dict(params)}")
        recall = iig_obs_type is not None and bool(iig_obs_type.perfect_recall)
        return SeatObserver(self.coding, self.num_distinct_actions(), perfect_recall=recall)


class CroupierState(pyspiel.State):  # type: ignore[misc]
    """A match: the engine's state once dealt, and the chance picks of the step under way."""

    def __init__(self, game: CroupierGame, engine: GameState[Any, Any] | None = None) -> None:
        """A new match, dealt by chance nodes; or, given an ``engine`` state, that state as it is
        (a world a bot built from its view: clients/openspiel/searchers.py)."""
        super().__init__(game)
        self._game_name = game.spec.name  # by name: a state pickles (OpenSpiel serialises it)
        self._key = game._key
        self._engine: GameState[Any, Any] | None = None
        self._step: tuple[int, Action] | None = None
        """The action being applied while chance picks its draws (None: the deal)."""
        self._picks: list[int] = []
        self._needed: list[int] = []
        """The outcomes of each chance pick the step still needs; empty at a player's turn."""
        self._recall = [""] * game.players
        """Per seat, a digest of its views at its earlier decisions (the information state's past)."""
        self._taken = np.zeros((game.players, game.num_distinct_actions()), np.float32)
        """Per seat, how many times it took each action slot (the information-state tensor's past)."""
        if engine is None:
            self._run_step()
        else:
            self._engine = engine

    @property
    def _options(self) -> Any:
        return _options(self._key)

    @property
    def _spec(self) -> GameSpec[Any]:
        return GAMES[self._game_name]

    @property
    def _coding(self) -> Coding:
        return CODINGS[self._game_name]

    # --- chance: a step replayed with the picks made so far -----------------------------

    def _run_step(self) -> None:
        rng = ScriptedRng(self._picks)
        try:
            if self._step is None:
                engine = self._spec.new_game(self._options, rng)
            else:
                assert self._engine is not None
                engine = self._engine.copy()
                engine.rng = rng  # type: ignore[attr-defined]
                engine.apply(*self._step)
        except ChanceNeeded as needed:
            self._needed = needed.outcomes
            return
        self._engine, self._step, self._picks = engine, None, []

    @property
    def engine(self) -> GameState[Any, Any]:
        """The engine's state (every hand: the referee's side); only once dealt."""
        if self._engine is None:
            raise ValueError("the cards are still being dealt: no engine state yet")
        return self._engine

    # --- the OpenSpiel API ----------------------------------------------------------------

    def current_player(self) -> int:
        if self._needed:
            return int(pyspiel.PlayerId.CHANCE)
        if self.engine.is_over():
            return int(pyspiel.PlayerId.TERMINAL)
        return min(self.engine.to_act())

    def _legal_actions(self, player: int) -> list[int]:
        return sorted(legal_by_slot(self._coding, self.engine, player))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        assert self._needed, "not a chance node"
        outcomes = self._needed[0]
        return [(outcome, 1.0 / outcomes) for outcome in range(outcomes)]

    def _apply_action(self, action: int) -> None:
        if self._needed:
            outcomes = self._needed.pop(0)
            if not 0 <= action < outcomes:
                self._needed.insert(0, outcomes)
                raise ValueError(f"chance outcome {action} is not among 0..{outcomes - 1}")
            self._picks.append(action)
            if self._needed:
                return  # more picks for the same draw: the step runs once they are all made
        else:
            seat = self.current_player()
            legal = legal_by_slot(self._coding, self.engine, seat)
            if action not in legal:
                raise ValueError(f"action {action} is not legal for player {seat}; legal: {sorted(legal)}")
            self._recall[seat] = _digest(self._recall[seat], self.engine.view(seat))
            self._taken[seat, action] += 1
            self._step = (seat, legal[action])
        self._run_step()

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"chance {action}"
        if self._engine is not None and player >= 0:
            legal = legal_by_slot(self._coding, self._engine, player)
            if action in legal:
                return str(legal[action])
        return f"action {action}"

    def is_terminal(self) -> bool:
        return self._engine is not None and not self._needed and self._engine.is_over()

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0] * self._options.players
        return rewards(self.engine.outcome(), REWARD)

    def resample_from_infostate(
        self, player_id: int, probability_sampler: Callable[[], float]
    ) -> CroupierState:
        """A state ``player_id`` cannot tell from this one: every card it cannot see re-dealt."""
        seed = random.Random(probability_sampler()).getrandbits(63)
        twin: CroupierState = self.clone()
        twin._engine = self.engine.resample_hidden(player_id, Rng(seed))
        return twin

    def __reduce__(self) -> tuple[Any, tuple[str, dict[str, Any], list[int]]]:
        """Pickled as OpenSpiel serialises a state: its game and the actions that led to it (the
        engine's compiled states do not pickle). A re-dealt state (``resample_from_infostate``)
        is not the state its history makes: clone it, never serialise it."""
        game = self.get_game()
        return _replayed, (game.get_type().short_name, game.get_parameters(), list(self.history()))

    def __getstate__(self) -> dict[str, Any]:
        """What OpenSpiel's ``serialize_game_and_state`` keeps of a state: the actions that led to it."""
        return {"history": list(self.history())}

    def __setstate__(self, kept: dict[str, Any]) -> None:
        """The state its actions make, replayed from the deal (called on a new initial state)."""
        replayed = _replayed(self.get_game().get_type().short_name, self.get_game().get_parameters(), [])
        for action in kept["history"]:
            replayed.apply_action(action)
        self.__dict__.update(replayed.__dict__)

    def __str__(self) -> str:
        if self._engine is None:
            return f"dealing ({len(self._picks)} cards placed)"
        return repr(self._engine.full_view())


@functools.cache
def _options(key: tuple[str, tuple[tuple[str, Any], ...]]) -> Any:
    """A game's engine options from its name and parameters, built once."""
    name, params = key
    return options_from_parameters(GAMES[name], dict(params))


def _replayed(short_name: str, params: dict[str, Any], history: list[int]) -> CroupierState:
    state: CroupierState = pyspiel.load_game(short_name, params).new_initial_state()
    for action in history:
        state.apply_action(action)
    return state


def _digest(past: str, view: Any) -> str:
    return hashlib.sha256(f"{past}\n{view!r}".encode()).hexdigest()[:32]


class SeatObserver:
    """OpenSpiel's observer of a seat: its engine view as a string and as the PettingZoo tensor;
    with perfect recall, the string adds its earlier views' digest and the tensor the counts of
    the action slots it took."""

    def __init__(self, coding: Coding, actions: int, perfect_recall: bool) -> None:
        self.coding = coding
        self.perfect_recall = perfect_recall
        size = coding.layout.size
        self.tensor = np.zeros(size + actions if perfect_recall else size, np.float32)
        self.dict = {"observation": self.tensor[:size]}
        if perfect_recall:
            self.dict["actions_taken"] = self.tensor[size:]

    def set_from(self, state: CroupierState, player: int) -> None:
        if state._engine is None:
            self.tensor.fill(0)
        else:
            self.dict["observation"][:] = self.coding.encode(state._engine.view(player))
        if self.perfect_recall:
            self.dict["actions_taken"][:] = state._taken[player]

    def string_from(self, state: CroupierState, player: int) -> str:
        if state._engine is None:
            return f"seat {player}: the cards are being dealt"
        view = repr(state._engine.view(player))
        if self.perfect_recall:
            return f"seat {player}, earlier decisions {state._recall[player] or 'none'}: {view}"
        return view


TYPES = {name: game_type(spec) for name, spec in GAMES.items()}
MAX_CHANCE_OUTCOMES = {name: deck_size(spec) for name, spec in GAMES.items()}


def register() -> None:
    """Register every game with OpenSpiel as ``croupier_<game>`` (once; importing the package does it)."""
    registered = set(pyspiel.registered_names())
    for name in GAMES:
        if PREFIX + name in registered:
            continue
        game_class = type(f"Croupier_{name}", (CroupierGame,), {"spec": get_game(name)})
        pyspiel.register_game(TYPES[name], game_class)
