"""One match played through the engine for an environment: options, seeding, actions by slot, rewards.

Both environments (AEC and parallel) drive a ``Table``; it knows nothing of PettingZoo.
"""

from __future__ import annotations

import io
import random
from collections import deque
from typing import Any

import numpy as np
from rich.console import Console

from croupier.clients.pettingzoo.spaces import CODINGS, Coding
from croupier.clients.scenes import Header, Scene
from croupier.clients.terminal.render import render
from croupier.engine.core import Action, Event, GameState, InvalidOptions, Outcome
from croupier.engine.games import get_game
from croupier.engine.rng import Rng

REWARDS = ("place", "score")
RENDERED_EVENTS = 8
"""Events the ansi rendering keeps for its log."""


def table_options(game: str, options: dict[str, Any]) -> Any:
    """The game's options from plain values; Pair Battle is always played in lockstep (an
    environment has no clock: real time would reward whoever the loop happens to ask first)."""
    spec = get_game(game)
    values = dict(options)
    if spec.name == "pair_battle":
        values["timing"] = "lockstep"
    return spec.options(values)


Observation = dict[str, np.ndarray]


def rewards(outcome: Outcome, reward: str) -> list[float]:
    """The final rewards by seat: place-based (1 for first .. -1 for last, shared
    places share) or score-based (the seat's score less the table's mean score)."""
    players = len(outcome.places)
    if reward == "score":
        mean = sum(outcome.scores) / players
        return [score - mean for score in outcome.scores]
    return [1.0 - 2.0 * (place - 1) / (players - 1) for place in outcome.places]


def legal_by_slot(coding: Coding, state: GameState[Any, Any], seat: int) -> dict[int, Action]:
    """The seat's legal actions by action-space slot."""
    legal = state.legal_actions(seat)
    by_slot = {coding.slot(a, seat, state.players): a for a in legal}
    if len(by_slot) != len(legal):  # the coding would hide a legal action: a bug, never a choice
        raise RuntimeError(f"{coding.game}: two legal actions share a slot: {legal}")
    return by_slot


def mask(coding: Coding, legal: dict[int, Action]) -> np.ndarray:
    """The action mask of the legal actions by slot (``legal_by_slot``)."""
    out = np.zeros(coding.action_count, dtype=np.int8)
    out[list(legal)] = 1
    return out


def observation(coding: Coding, view: Any, legal: dict[int, Action]) -> Observation:
    """A seat's observation: its ``view`` encoded (the seat's own view: nothing else goes in) and
    the mask of its legal actions (``legal_by_slot``)."""
    return {"observation": coding.encode(view), "action_mask": mask(coding, legal)}


class Table:
    """The engine state of one episode and what an environment asks of it."""

    def __init__(self, game: str, options: dict[str, Any], reward: str = "place") -> None:
        if reward not in REWARDS:
            raise InvalidOptions(f"reward must be one of {', '.join(REWARDS)}, not {reward!r}")
        self.spec = get_game(game)
        self.options = table_options(game, options)
        self.coding: Coding = CODINGS[self.spec.name]
        self.reward = reward
        self.players: int = self.options.players
        self.seeds = random.Random()
        self.seed = 0
        self.state: GameState[Any, Any] = self.spec.new_game(self.options, Rng(0))
        self.actions: list[tuple[int, Action]] = []
        """Every action applied this episode, with its seat: what a journal would record."""
        self.events: deque[Event] = deque(maxlen=RENDERED_EVENTS)
        self._views: dict[int, Any] = {}
        """Views built since the last change: an observation and an info ask for the same one."""
        self._legal: dict[int, dict[int, Action]] = {}
        """Legal actions by slot since the last change: the mask and the step ask for the same."""
        self._observations: dict[int, Observation] = {}
        """Observations since the last change: ``observe`` may be asked any number of times."""
        self._encoded: dict[int, tuple[Any, np.ndarray]] = {}
        """Each seat's last encoded view and its vector, this episode: the next is an update of it."""

    def reset(self, seed: int | None) -> None:
        """A new match: from ``seed``, or the next seed of the last one given (random at first)."""
        if seed is not None:
            self.seeds.seed(seed)
            self.seed = seed
        else:
            self.seed = self.seeds.getrandbits(63)
        self.state = self.spec.new_game(self.options, Rng(self.seed))
        self.actions = []
        self._changed()
        self._encoded.clear()
        self.events.clear()
        self.events.extend(self.state.opening)

    def view(self, seat: int) -> Any:
        view = self._views.get(seat)
        if view is None:
            view = self._views[seat] = self.state.view(seat)
        return view

    def to_act(self) -> list[int]:
        return sorted(self.state.to_act())

    def legal_by_slot(self, seat: int) -> dict[int, Action]:
        legal = self._legal.get(seat)
        if legal is None:
            legal = self._legal[seat] = legal_by_slot(self.coding, self.state, seat)
        return legal

    def observe(self, seat: int) -> Observation:
        """The seat's observation, encoded once per change of the state (``Coding.update`` of the
        seat's last one). The arrays are shared by every call until the state changes and are
        never written after: copy one before changing it in place."""
        obs = self._observations.get(seat)
        if obs is None:
            view = self.view(seat)
            last = self._encoded.get(seat)
            vector = self.coding.encode(view) if last is None else self.coding.update(last[1], last[0], view)
            self._encoded[seat] = (view, vector)
            obs = self._observations[seat] = {
                "observation": vector,
                "action_mask": mask(self.coding, self.legal_by_slot(seat)),
            }
        return obs

    def action_in(self, seat: int, slot: Any) -> Action | None:
        """The legal action in ``slot``, None if none is (``illegal`` says why). ValueError for
        what is not an index of the action space (3.0, '3', True): a bug, not a move."""
        is_index = isinstance(slot, int | np.integer) and not isinstance(slot, bool)
        if not is_index or not 0 <= slot < self.coding.action_count:
            last = self.coding.action_count - 1
            raise ValueError(
                f"player_{seat}: action {slot!r} is not in the action space (an integer 0 to {last})"
            )
        return self.legal_by_slot(seat).get(int(slot))

    def illegal(self, seat: int, slot: int) -> str:
        """Why ``slot`` is refused, naming the legal actions."""
        choices = ", ".join(f"{s} ({a})" for s, a in sorted(self.legal_by_slot(seat).items())) or "none"
        return f"player_{seat}: action {int(slot)} is not legal now; legal: {choices}"

    def apply(self, seat: int, action: Action) -> None:
        """Apply a legal action (from ``action_in``)."""
        events = self.state.apply(seat, action)
        self._changed()
        self.actions.append((seat, action))
        self.events.extend(events)

    def _changed(self) -> None:
        """Forget what was built from the state before it changed."""
        self._views.clear()
        self._legal.clear()
        self._observations.clear()

    def rewards(self) -> list[float]:
        return rewards(self.state.outcome(), self.reward)

    def render(self, names: tuple[str, ...]) -> str:
        """The spectator's screen as plain text (no colour escapes: it is printed, logged and compared
        as text): the public view while the match runs, every hand once it is over (as the referee
        reveals them)."""
        over = self.state.is_over()
        view = self.state.full_view() if over else self.state.public_view()
        outcome = self.state.outcome() if over else None
        result = tuple(zip(outcome.places, outcome.scores, strict=True)) if outcome else None
        header = Header(
            f"seed {self.seed}",
            self.spec.name,
            self.spec.title,
            names,
            "finished" if over else "running",
            result,
        )
        step = f"{len(self.actions)} actions" if self.actions else "the deal"
        scene = Scene(len(self.actions), 0, step, tuple(str(e) for e in self.events), view)
        buffer = io.StringIO()
        Console(file=buffer, width=100, force_terminal=False, color_system=None).print(render(header, scene))
        return buffer.getvalue()
