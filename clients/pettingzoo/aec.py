"""The AEC environment: one agent acts at a time, as PettingZoo's classic card games do."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger

from croupier.clients.pettingzoo.table import Observation, Table


def agent_names(players: int) -> list[str]:
    return [f"player_{seat}" for seat in range(players)]


class SeatSpaces:
    """The same observation and action space for every agent, one object each (PettingZoo's
    ``observation_space(agent)`` must return the same object on every call)."""

    def make_spaces(self, table: Table) -> None:
        observation = spaces.Dict(
            {
                "observation": table.coding.layout.space(),
                "action_mask": spaces.Box(0, 1, shape=(table.coding.action_count,), dtype=np.int8),
            }
        )
        action = spaces.Discrete(table.coding.action_count)
        self.observation_spaces = dict.fromkeys(agent_names(table.players), observation)
        self.action_spaces = dict.fromkeys(agent_names(table.players), action)

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]


class CroupierEnv(SeatSpaces, AECEnv):  # type: ignore[misc]  # pettingzoo ships no type hints
    """A Croupier game as a PettingZoo AEC environment; build it with ``env(game, **options)``.

    ``player_i`` is seat i. The agent to act is the seat the engine waits on (in
    lockstep Pair Battle, the lowest seat that has not answered the tick). Rewards
    come once, when the match ends; a match that reaches ``max_steps`` actions is
    truncated with no reward. An illegal action (one the mask rules out) ends the
    episode as PettingZoo's classic games do (``TerminateIllegalWrapper``): nothing is
    applied, every agent terminates, the mover is rewarded ``illegal_reward`` and the
    others 0, and the mover's info says why (``"illegal"``). ``infos[agent]["view"]`` is
    the seat's engine view, current for the agent to act and, at the end, for every agent.
    """

    def __init__(
        self,
        game: str,
        *,
        render_mode: str | None = None,
        reward: str = "place",
        max_steps: int | None = None,
        illegal_reward: float = -1.0,
        **options: Any,
    ) -> None:
        super().__init__()
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.table = Table(game, options, reward)
        self.render_mode = render_mode
        self.max_steps = max_steps
        self.illegal_reward = illegal_reward
        name = f"croupier_{self.table.spec.name}_v0"
        self.metadata = {"render_modes": ["ansi"], "name": name, "is_parallelizable": False}
        self.possible_agents = agent_names(self.table.players)
        self.seats = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        self.make_spaces(self.table)
        self.reset()

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.table.reset(seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._settle()
        self._select()

    def observe(self, agent: str) -> Observation:
        return self.table.observe(self.seats[agent])

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        seat = self.seats[agent]
        move = self.table.action_in(seat, action)
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        if move is None:
            self._refuse(agent, self.table.illegal(seat, action))
            return
        self.table.apply(seat, move)
        self._settle()
        self._select()

    def _refuse(self, agent: str, reason: str) -> None:
        """End the episode on an illegal action, as TerminateIllegalWrapper does (the state is left
        as it was: the engine never applies an illegal action)."""
        EnvLogger.warn_on_illegal_move()
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.rewards[agent] = float(self.illegal_reward)
        self.terminations = dict.fromkeys(self.agents, True)
        self._accumulate_rewards()
        self._select()
        self.infos[agent]["illegal"] = reason

    def _settle(self) -> None:
        """End the episode if the match is over (rewarded) or has run ``max_steps`` actions (not).
        A Pair Battle deal nobody can play is over at the deal: that episode starts terminated."""
        if self.table.state.is_over():
            self.rewards = dict(zip(self.agents, self.table.rewards(), strict=True))
            self.terminations = dict.fromkeys(self.agents, True)
        elif self.max_steps is not None and len(self.table.actions) >= self.max_steps:
            self.truncations = dict.fromkeys(self.agents, True)
        self._accumulate_rewards()

    def _select(self) -> None:
        """Point ``agent_selection`` at the seat to act (the first agent once the match is done)
        and give it, or everyone at the end, a current view."""
        table = self.table
        if all(self.terminations.values()) or all(self.truncations.values()):
            self.agent_selection = self.agents[0]
            for agent in self.agents:
                self.infos[agent] = {"view": table.view(self.seats[agent])}
            return
        seats = table.to_act()
        if not seats:
            raise RuntimeError(f"{table.spec.name}: nobody may act and the match is not over")
        self.agent_selection = self.possible_agents[seats[0]]
        self.infos[self.agent_selection] = {"view": table.view(seats[0])}

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        return self.table.render(tuple(self.possible_agents))

    def close(self) -> None:
        """Nothing to release: the match lives in memory."""
