"""Train a small numpy policy on Chinese Ten in the AEC environment, then play it through the SDK.

    python -m croupier.clients.pettingzoo.example --episodes 3000 --matches 30 --games 2

The policy is linear: logits = W · observation + b over the legal actions only
(the action mask), a softmax while training and the best legal action when
playing. It learns by REINFORCE (a tiny policy gradient) with a running-mean
baseline, one three-player deal per episode (``target=1``), in a seat that
rotates, against the bundled heuristic bot playing the other seats through the
engine view the environment puts in ``info``. It then plays whole matches
(default options) through the SDK's ``play_offline``, a seat each time in
rotation, against the bundled random and heuristic bots; and last in
``croupier match``, as a bot process of its own (``croupier bot --strategy
croupier.clients.pettingzoo.example:PolicyBot``, the weights named by
$CROUPIER_POLICY) on an embedded referee, against the heuristic and random bots.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from croupier.clients.bots import chinese_ten as heuristic
from croupier.clients.bots import strategy
from croupier.clients.pettingzoo import CODINGS, env
from croupier.clients.sdk import Bot, BotFactory, Match, play_offline
from croupier.engine.core import Action
from croupier.engine.games import get_game

GAME = "chinese_ten"
CODING = CODINGS[GAME]
POLICY_FILE = "CROUPIER_POLICY"
"""The environment variable naming saved weights, for ``PolicyBot`` run by ``croupier bot``."""


class LinearPolicy:
    """Logits ``W · x + b`` over the legal slots; trained by REINFORCE."""

    def __init__(
        self, seed: int = 0, weights: np.ndarray | None = None, bias: np.ndarray | None = None
    ) -> None:
        self.rng = np.random.default_rng(seed)
        shape = (CODING.action_count, CODING.layout.size)
        self.weights = weights if weights is not None else np.zeros(shape, dtype=np.float64)
        self.bias = bias if bias is not None else np.zeros(CODING.action_count, dtype=np.float64)

    def probabilities(self, x: np.ndarray, legal: np.ndarray) -> np.ndarray:
        logits = self.weights[legal] @ x + self.bias[legal]
        logits -= logits.max()
        p = np.exp(logits)
        normalized: np.ndarray = p / p.sum()
        return normalized

    def sample(self, x: np.ndarray, legal: np.ndarray) -> int:
        return int(self.rng.choice(len(legal), p=self.probabilities(x, legal)))

    def best(self, x: np.ndarray, legal: np.ndarray) -> int:
        return int(np.argmax(self.weights[legal] @ x + self.bias[legal]))

    def learn(self, steps: list[tuple[np.ndarray, np.ndarray, int]], advantage: float, rate: float) -> None:
        """One REINFORCE update: raise the log-probability of each choice made, by ``advantage``."""
        for x, legal, chosen in steps:
            gradient = -self.probabilities(x, legal)
            gradient[chosen] += 1.0
            gradient *= rate * advantage
            self.weights[legal] += np.outer(gradient, x)
            self.bias[legal] += gradient

    def save(self, path: Path) -> None:
        np.savez(path, weights=self.weights, bias=self.bias)

    @classmethod
    def load(cls, path: Path) -> LinearPolicy:
        with np.load(path) as saved:
            return cls(weights=saved["weights"], bias=saved["bias"])


def train(episodes: int, seed: int, rate: float = 0.01) -> tuple[LinearPolicy, list[float]]:
    """Train against the heuristic; returns the policy and each episode's reward."""
    policy = LinearPolicy(seed)
    aec = env(GAME, players=3, target=1, reward="score")
    baseline, rewards = 0.0, []
    for episode in range(episodes):
        aec.reset(seed=seed * 1_000_003 + episode)
        learner = aec.possible_agents[episode % 3]
        steps: list[tuple[np.ndarray, np.ndarray, int]] = []
        for agent in aec.agent_iter():
            obs, reward, terminated, truncated, info = aec.last()
            if terminated or truncated:
                if agent == learner:
                    rewards.append(reward)
                aec.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            if agent == learner:
                choice = policy.sample(obs["observation"], legal)
                steps.append((obs["observation"], legal, choice))
                aec.step(int(legal[choice]))
            else:  # the bundled heuristic, from the engine view in info
                seat = aec.possible_agents.index(agent)
                moves = aec.table.state.legal_actions(seat)
                move = moves[heuristic.choose(info["view"], moves, aec.table.options)]
                aec.step(CODING.slot(move, seat, 3))
        score = rewards[-1] / 100  # points above the table's mean, in hundreds
        policy.learn(steps, score - baseline, rate)
        baseline += 0.05 * (score - baseline)
    return policy, rewards


class PolicyBot(Bot):
    """The trained policy as an SDK bot: the view encoded as the environment does, the best legal action."""

    saved: ClassVar[LinearPolicy | None] = None
    """The weights $CROUPIER_POLICY names, read once by ``setup``."""

    @classmethod
    def setup(cls) -> None:
        """Read the weights before connecting: without them every decision would be the clock's."""
        path = os.environ.get(POLICY_FILE)
        if not path:
            raise RuntimeError(f"set ${POLICY_FILE} to the weights the example saved with --save")
        try:
            cls.saved = LinearPolicy.load(Path(path))
        except (OSError, ValueError, KeyError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise RuntimeError(f"cannot read the weights ${POLICY_FILE} names, {path}: {why}") from None

    def __init__(self, match: Match, policy: LinearPolicy | None = None) -> None:
        super().__init__(match)
        if policy is None:
            if PolicyBot.saved is None:
                PolicyBot.setup()  # made without the SDK's start (play_offline)
            policy = PolicyBot.saved
        assert policy is not None
        self.policy = policy

    def choose(self, view: Any, legal: list[Action]) -> int:
        seat, players = self.match.seat, len(self.match.players)
        slots = np.array([CODING.slot(action, seat, players) for action in legal])
        return self.policy.best(CODING.encode(view), slots)


def evaluate(policy: LinearPolicy, opponent: str, matches: int, seed: int) -> list[int]:
    """The policy's place in each of ``matches`` whole matches against two bundled bots."""
    spec = get_game(GAME)
    options = spec.options({"players": 3})
    places = []
    for match in range(matches):
        seat = match % 3
        factories: list[BotFactory] = [strategy(opponent, seed=seed + match) for _ in range(3)]
        factories[seat] = lambda m: PolicyBot(m, policy)
        places.append(play_offline(spec, options, factories, seed + match).places[seat])
    return places


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=3000, help="training deals (default 3000)")
    parser.add_argument(
        "--matches", type=int, default=30, help="evaluation matches per opponent (default 30)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--save", type=Path, help="write the weights here (.npz), for PolicyBot on a referee")
    parser.add_argument(
        "--games",
        type=int,
        default=2,
        help="then croupier match against heuristic and random: deals, each in every rotation "
        "(default 2; 0: skip)",
    )
    parser.add_argument("--target", type=int, default=1000, help="Chinese Ten's target in croupier match")
    parser.add_argument("--data", type=Path, help="croupier match's --data (default: its own)")
    args = parser.parse_args(argv)
    policy, rewards = train(args.episodes, args.seed)
    tenth = max(1, len(rewards) // 10)
    first, last = np.mean(rewards[:tenth]), np.mean(rewards[-tenth:])
    print(
        f"trained on {args.episodes} deals: points above the table's mean "
        f"{first:+.1f} at first, {last:+.1f} at last"
    )
    weights = args.save or Path(tempfile.mkdtemp(prefix="croupier-policy-")) / "policy.npz"
    policy.save(weights)
    print(f"weights saved to {weights}")
    untrained = LinearPolicy()
    for opponent in ("random", "heuristic"):
        places = evaluate(policy, opponent, args.matches, args.seed)
        before = evaluate(untrained, opponent, args.matches, args.seed)
        print(
            f"vs {opponent} x2 over {args.matches} matches: mean place {np.mean(places):.2f} "
            f"(untrained {np.mean(before):.2f}), first in {places.count(1)}"
        )
    if not args.games:
        return 0
    return play_in_croupier_match(weights, args.games, args.target, args.data)


def play_in_croupier_match(weights: Path, games: int, target: int, data: Path | None) -> int:
    """``croupier match``, as a user runs it, on its embedded referee: PolicyBot through ``croupier
    bot``, a process of its own reading the weights, against the bundled heuristic and random bots."""
    bot = "croupier bot --strategy croupier.clients.pettingzoo.example:PolicyBot"
    argv = [sys.executable, "-m", "croupier.clients.cli", "match", GAME, "--bot", bot]
    argv += ["--bot", "heuristic", "--bot", "random", "--games", str(games), "--option", f"target={target}"]
    argv += ["--isolation", "off"]  # your own bot, whose weights an isolated uid could not read (0700, /tmp)
    argv += ["--data", str(data)] if data else []
    sys.stdout.flush()  # our lines first, then the match's
    return subprocess.run(argv, env={**os.environ, POLICY_FILE: str(weights)}, check=False).returncode


__all__ = ["LinearPolicy", "PolicyBot", "evaluate", "main", "play_in_croupier_match", "train"]

if __name__ == "__main__":
    raise SystemExit(main())
