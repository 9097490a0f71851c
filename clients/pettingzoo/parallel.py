"""The parallel environment of lockstep Pair Battle: every seat answers each tick at once."""

from __future__ import annotations

from typing import Any, ClassVar

from pettingzoo import ParallelEnv
from pettingzoo.utils.env_logger import EnvLogger

from croupier.clients.pettingzoo.aec import SeatSpaces, agent_names
from croupier.clients.pettingzoo.table import Observation, Table

Infos = dict[str, dict[str, Any]]


class PairBattleParallelEnv(SeatSpaces, ParallelEnv):  # type: ignore[misc]  # pettingzoo ships no type hints
    """Lockstep Pair Battle as a PettingZoo ``ParallelEnv``; build it with ``parallel_env(**options)``.

    ``step`` takes one action per live agent: one tick (a seat that cannot play
    may only pass, slot 182). The answers are submitted in seat order; the
    engine applies them in its own seeded order, so the order given changes
    nothing. Rewards, terminations, truncations, illegal actions and
    ``infos[agent]["view"]`` follow the AEC environment's rules: a tick with an
    illegal answer is not applied and ends the episode, each agent that answered
    illegally rewarded ``illegal_reward``, the others 0.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "name": "croupier_pair_battle_v0"}

    def __init__(
        self,
        *,
        render_mode: str | None = None,
        reward: str = "place",
        max_steps: int | None = None,
        illegal_reward: float = -1.0,
        **options: Any,
    ) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.table = Table("pair_battle", options, reward)
        self.render_mode = render_mode
        self.max_steps = max_steps
        """Ticks before the match is truncated (None: never)."""
        self.illegal_reward = illegal_reward
        self.ticks = 0
        self.possible_agents = agent_names(self.table.players)
        self.agents = self.possible_agents[:]
        self.make_spaces(self.table)

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Observation], Infos]:
        self.table.reset(seed)
        self.ticks = 0
        # A deal nobody can play is over at once: no agent is live, the episode has no step.
        self.agents = [] if self.table.state.is_over() else self.possible_agents[:]
        return self._observations(), self._infos()

    def step(
        self, actions: dict[str, Any]
    ) -> tuple[dict[str, Observation], dict[str, float], dict[str, bool], dict[str, bool], Infos]:
        missing = [agent for agent in self.agents if agent not in actions]
        unknown = [agent for agent in actions if agent not in self.agents]
        if missing or unknown:
            raise ValueError(f"give one action per live agent: missing {missing}, not live {unknown}")
        agents = self.agents
        seats = [self.possible_agents.index(agent) for agent in agents]
        # Every answer is checked before any applies: a tick is played whole or not at all.
        answers = [
            self.table.action_in(seat, actions[agent]) for seat, agent in zip(seats, agents, strict=True)
        ]
        refused = {
            agent: self.table.illegal(seat, actions[agent])
            for seat, agent, answer in zip(seats, agents, answers, strict=True)
            if answer is None
        }
        if refused:
            EnvLogger.warn_on_illegal_move()
            over, truncated = True, False
            rewards = {agent: float(self.illegal_reward) if agent in refused else 0.0 for agent in agents}
        else:
            for seat, answer in zip(seats, answers, strict=True):
                assert answer is not None
                self.table.apply(seat, answer)
            self.ticks += 1
            over = self.table.state.is_over()
            truncated = not over and self.max_steps is not None and self.ticks >= self.max_steps
            rewards = (
                dict(zip(agents, self.table.rewards(), strict=True)) if over else dict.fromkeys(agents, 0.0)
            )
        observations, infos = self._observations(), self._infos()
        for agent, reason in refused.items():
            infos[agent]["illegal"] = reason
        terminations = dict.fromkeys(agents, over)
        truncations = dict.fromkeys(agents, truncated)
        if over or truncated:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _observations(self) -> dict[str, Observation]:
        return {agent: self.table.observe(seat) for seat, agent in enumerate(self.possible_agents)}

    def _infos(self) -> Infos:
        return {agent: {"view": self.table.view(seat)} for seat, agent in enumerate(self.possible_agents)}

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        return self.table.render(tuple(self.possible_agents))

    def close(self) -> None:
        """Nothing to release: the match lives in memory."""
